// libFuzzer target: the input is an image file, decoded from memory by decode_image (PNG through
// libpng, JPEG through libjpeg, sniffed from the signature). The decoder must return a valid
// image or throw z123::Error; a crash, a sanitizer report, another exception type, a leak (an
// error path that forgets the decoder state) or an absurd allocation is a bug. A decoded image
// must be self-consistent, and a small one must survive a lossless PNG round trip unchanged.
#include "z123/error.hpp"
#include "z123/image/codec.hpp"
#include "z123/image/image.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  z123::Image image;
  try {
    image = z123::decode_image(std::span<const std::uint8_t>(data, size), "fuzz");
  } catch (const z123::Error&) {
    return 0; // rejected with a typed error: the expected outcome for most inputs
  }
  try {
    z123::check_image(image, "decoded image");
  } catch (const z123::Error&) {
    __builtin_trap(); // the decoder returned a malformed image
  }
  if (image.size_bytes() <= (1u << 16)) { // encoding is linear; keep runs fast
    const std::vector<std::uint8_t> png = z123::encode_png(image);
    const z123::Image back = z123::decode_image(png, "round trip");
    if (back.width != image.width || back.height != image.height || back.channels != image.channels ||
        back.pixels != image.pixels) {
      __builtin_trap();
    }
  }
  return 0;
}
