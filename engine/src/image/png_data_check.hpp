// A PNG declares its size up front but holds its pixels in zlib data that may be short or absent.
// decode_png checks here, before allocating anything sized by the header, that the file holds at
// least as much compressed image data as any zlib stream needs to inflate to the declared pixels.
// Private to the image module; the helpers are separate so tests can check the bound itself.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace z123::image_detail {

// deflate's best case: a 258-byte match coded in 2 bits (1-bit length and distance codes), so one
// compressed byte never yields more than 1032 bytes. Block headers and the zlib header and
// checksum only lower the ratio, so no PNG that decodes exceeds it.
inline constexpr std::uint64_t kMaxDeflateRatio = 1032;

// Adam7: first column, first row, column step and row step of each of the 7 passes.
struct Adam7Pass {
  std::uint32_t x0, y0, dx, dy;
  std::uint32_t cols(std::uint32_t width) const { return width > x0 ? (width - x0 + dx - 1) / dx : 0; }
  std::uint32_t rows(std::uint32_t height) const { return height > y0 ? (height - y0 + dy - 1) / dy : 0; }
};
inline constexpr Adam7Pass kAdam7[7] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                                        {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};

// Bytes the zlib stream of a PNG with this IHDR inflates to: every scanline of every (non-empty)
// Adam7 pass or of the whole image, each with its filter-type byte.
std::uint64_t png_inflated_bytes(std::uint32_t width, std::uint32_t height, int bit_depth, int color_type,
                                 bool interlaced);

// Sum of the IDAT chunk payloads the file holds, counting only bytes actually present (a chunk
// cut short by the end of the file counts what is there). Reads the chunk layout only, no CRCs.
std::uint64_t png_idat_bytes(std::span<const std::uint8_t> file);

// Throws format_error naming `source` when the file's IDAT data is too small to inflate to the
// declared image (kMaxDeflateRatio): a truncated or corrupt file, or a decompression bomb.
void check_png_data_size(std::span<const std::uint8_t> file, std::uint32_t width, std::uint32_t height, int bit_depth,
                         int color_type, bool interlaced, const std::string& source);

} // namespace z123::image_detail
