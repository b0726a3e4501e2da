// Image files: PNG (libpng) and JPEG (libjpeg-turbo) to and from z123::Image.
//
// Decoding follows what Pillow hands the reference pipeline, so a file yields the same pixels here
// as `np.array(Image.open(f))` there:
//  * PNG: gray, RGB, RGBA as stored; 1/2/4-bit gray scaled to 8 bits; 16-bit samples keep their
//    high byte (Pillow's ";16B" unpackers); palette images expand to RGB, or RGBA when they carry
//    a tRNS chunk (Pillow's convert("RGBA")); gray+alpha becomes RGBA (convert("RGBA")); a tRNS
//    colour key on gray/RGB is ignored, as Pillow keeps those images opaque; gAMA/iCCP are ignored.
//  * JPEG: libjpeg's default decode (islow DCT, fancy upsampling, as Pillow uses it), gray ->
//    1 channel, YCbCr/RGB -> RGB; CMYK and YCCK (print workflows) -> RGB as the pipeline's
//    Image.open(f).convert("RGB"): Pillow reads every 4-component JPEG as Adobe-inverted CMYK,
//    marker or not, then R = (255 - K) * (1 - C / 255) rounded, likewise G from M and B from Y.
// EXIF orientation and colour profiles are not applied (Image.open does not apply them either).
// The format is sniffed from the signature, never from the file name.
//
// Every failure is a z123::Error naming `source` (the file): empty, unknown signature, truncated
// or corrupt data -> format_error; dimensions beyond kMaxImageSide / kMaxImagePixels, or a PNG
// whose compressed data is too small to hold the declared pixels -> format_error before any pixel
// buffer is allocated. libpng's longjmp and libjpeg's error_exit are caught in
// the codec and turned into these errors without leaking the decoder state.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "z123/image/image.hpp"

namespace z123 {

enum class ImageFormat { Unknown, Png, Jpeg };

// From the first bytes: PNG's 8-byte signature, JPEG's FF D8 FF.
ImageFormat sniff_image_format(std::span<const std::uint8_t> bytes);

// Reads and decodes a file (io_error when it cannot be read).
Image load_image(const std::filesystem::path& path);
// Decodes an in-memory file; `source` names it in error messages.
Image decode_image(std::span<const std::uint8_t> bytes, const std::string& source);

// Lossless; 1, 3 or 4 channels (gray, RGB, RGBA). zlib level 6, Pillow's default.
std::vector<std::uint8_t> encode_png(const Image& image);
void save_png(const std::filesystem::path& path, const Image& image);

// 1 or 3 channels (JPEG has no alpha: composite with to_rgb first); quality 1..100, 4:2:0 chroma.
std::vector<std::uint8_t> encode_jpeg(const Image& image, int quality = 95);
void save_jpeg(const std::filesystem::path& path, const Image& image, int quality = 95);

} // namespace z123
