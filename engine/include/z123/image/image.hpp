// An 8-bit host image: the currency between the image codecs (codec.hpp) and the CPU
// preprocessing (preprocess.hpp). Kept a plain aggregate so callers can build one directly
// (`Image{w, h, 3, std::move(bytes)}`); check_image() validates one that came from outside.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace z123 {

// Decoders refuse anything larger before allocating, so a tiny file that declares a huge image
// (a "decompression bomb") fails with a clear message instead of exhausting memory.
inline constexpr int kMaxImageSide = 16384;
inline constexpr std::int64_t kMaxImagePixels = 256'000'000;
// Largest image file load_image() reads (a 16384 x 16384 RGBA PNG without compression).
inline constexpr std::size_t kMaxImageFileBytes = std::size_t{1} << 30;

struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;                 // 1 = gray, 3 = RGB, 4 = RGBA (straight, not premultiplied alpha)
  std::vector<std::uint8_t> pixels; // row-major, channels interleaved, no row padding

  std::size_t row_bytes() const { return static_cast<std::size_t>(width) * static_cast<std::size_t>(channels); }
  std::size_t size_bytes() const { return row_bytes() * static_cast<std::size_t>(height); }
  std::uint8_t* row(int y) { return pixels.data() + static_cast<std::size_t>(y) * row_bytes(); }
  const std::uint8_t* row(int y) const { return pixels.data() + static_cast<std::size_t>(y) * row_bytes(); }
  std::uint8_t at(int x, int y, int c) const { return row(y)[static_cast<std::size_t>(x) * channels + c]; }

  // A zero-filled image; throws invalid_argument for a bad shape (see check_image).
  static Image blank(int width, int height, int channels);
};

// Throws invalid_argument naming `what` unless width, height > 0, channels is 1, 3 or 4 and
// pixels holds exactly width*height*channels bytes.
void check_image(const Image& image, const std::string& what);

// Throws `format_error` naming `source` when a declared size is non-positive or exceeds
// kMaxImageSide / kMaxImagePixels (used by the decoders before they allocate).
void check_image_dimensions(std::int64_t width, std::int64_t height, const std::string& source);

} // namespace z123
