#include "image/png_data_check.hpp"

#include <algorithm>
#include <cstring>

#include "z123/error.hpp"

namespace z123::image_detail {
namespace {

int samples_per_pixel(int color_type) {
  switch (color_type) {
  case 0: return 1;  // gray
  case 2: return 3;  // RGB
  case 3: return 1;  // palette index
  case 4: return 2;  // gray + alpha
  case 6: return 4;  // RGBA
  default: return 4; // libpng rejects other types before this is asked; assume the largest
  }
}

// One pass (or the whole image) of `cols` x `rows` pixels: rows * (filter byte + packed samples).
std::uint64_t scanline_bytes(std::uint64_t cols, std::uint64_t rows, std::uint64_t bits_per_pixel) {
  if (cols == 0 || rows == 0) return 0; // empty Adam7 passes store no scanlines at all
  return rows * (1 + (cols * bits_per_pixel + 7) / 8);
}

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

} // namespace

std::uint64_t png_inflated_bytes(std::uint32_t width, std::uint32_t height, int bit_depth, int color_type,
                                 bool interlaced) {
  const std::uint64_t bpp = static_cast<std::uint64_t>(bit_depth) * samples_per_pixel(color_type);
  if (!interlaced) return scanline_bytes(width, height, bpp);
  std::uint64_t total = 0;
  for (const Adam7Pass& p : kAdam7) total += scanline_bytes(p.cols(width), p.rows(height), bpp);
  return total;
}

std::uint64_t png_idat_bytes(std::span<const std::uint8_t> file) {
  if (file.size() < 8) return 0;
  std::uint64_t total = 0;
  std::size_t pos = 8; // after the signature; each chunk: length(4) type(4) data(length) CRC(4)
  while (file.size() - pos >= 8) {
    const std::uint64_t length = be32(&file[pos]);
    const std::uint64_t present = std::min<std::uint64_t>(length, file.size() - pos - 8);
    if (std::memcmp(&file[pos + 4], "IDAT", 4) == 0) total += present;
    if (length + 12 > file.size() - pos) break;
    pos += static_cast<std::size_t>(length) + 12;
  }
  return total;
}

void check_png_data_size(std::span<const std::uint8_t> file, std::uint32_t width, std::uint32_t height, int bit_depth,
                         int color_type, bool interlaced, const std::string& source) {
  const std::uint64_t inflated = png_inflated_bytes(width, height, bit_depth, color_type, interlaced);
  const std::uint64_t idat = png_idat_bytes(file);
  if (inflated <= idat * kMaxDeflateRatio) return;
  throw format_error(source + ": truncated or corrupt PNG: it declares " + std::to_string(width) + "x" +
                     std::to_string(height) + " pixels (" + std::to_string(inflated) +
                     " bytes of scanlines) but holds only " + std::to_string(idat) +
                     " bytes of image data (IDAT), while deflate needs at least 1 byte per " +
                     std::to_string(kMaxDeflateRatio) + " bytes of scanlines");
}

} // namespace z123::image_detail
