#include "z123/image/image.hpp"

#include <string>

#include "z123/error.hpp"

namespace z123 {
namespace {

std::string shape_text(std::int64_t w, std::int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

} // namespace

Image Image::blank(int width, int height, int channels) {
  if (width <= 0 || height <= 0 || (channels != 1 && channels != 3 && channels != 4)) {
    throw invalid_argument("image: cannot create a " + shape_text(width, height) + " image with " +
                           std::to_string(channels) + " channels (expected positive sides, 1, 3 or 4 channels)");
  }
  Image im{width, height, channels, {}};
  im.pixels.assign(im.size_bytes(), 0);
  return im;
}

void check_image(const Image& image, const std::string& what) {
  if (image.width <= 0 || image.height <= 0) {
    throw invalid_argument(what + ": image is " + shape_text(image.width, image.height) +
                           ", expected positive width and height");
  }
  if (image.channels != 1 && image.channels != 3 && image.channels != 4) {
    throw invalid_argument(what + ": image has " + std::to_string(image.channels) +
                           " channels, expected 1 (gray), 3 (RGB) or 4 (RGBA)");
  }
  const auto expected = static_cast<std::uint64_t>(image.width) * static_cast<std::uint64_t>(image.height) *
                        static_cast<std::uint64_t>(image.channels);
  if (image.pixels.size() != expected) {
    throw invalid_argument(what + ": " + shape_text(image.width, image.height) + "x" + std::to_string(image.channels) +
                           " image needs " + std::to_string(expected) + " bytes, found " +
                           std::to_string(image.pixels.size()));
  }
}

void check_image_dimensions(std::int64_t width, std::int64_t height, const std::string& source) {
  if (width <= 0 || height <= 0) {
    throw format_error(source + ": image declares size " + shape_text(width, height) +
                       ", expected positive width and height");
  }
  if (width > kMaxImageSide || height > kMaxImageSide || width * height > kMaxImagePixels) {
    throw format_error(source + ": image declares size " + shape_text(width, height) + ", more than the " +
                       std::to_string(kMaxImageSide) + " pixels per side / " + std::to_string(kMaxImagePixels) +
                       " pixels in total this engine accepts");
  }
}

} // namespace z123
