// Per-format decoders behind z123/image/codec.hpp's decode_image (which sniffs the format).
// Private to the image module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "z123/image/image.hpp"

namespace z123::image_detail {

Image decode_png(std::span<const std::uint8_t> bytes, const std::string& source);
Image decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& source);

// `pixels` CMYK samples as libjpeg decodes them from a 4-component JPEG (Adobe polarity, also
// what YCCK becomes) -> RGB exactly as Pillow's Image.open(f).convert("RGB"). Exposed for tests.
void adobe_cmyk_to_rgb(const std::uint8_t* cmyk, std::uint8_t* rgb, std::size_t pixels);

} // namespace z123::image_detail
