// Per-format decoders behind z123/image/codec.hpp's decode_image (which sniffs the format).
// Private to the image module.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "z123/image/image.hpp"

namespace z123::image_detail {

Image decode_png(std::span<const std::uint8_t> bytes, const std::string& source);
Image decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& source);

} // namespace z123::image_detail
