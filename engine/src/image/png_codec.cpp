// PNG through libpng's classic API (the "simplified" png_image API would convert 16-bit samples
// as linear light, unlike Pillow). libpng reports errors by longjmp; to keep that well defined in
// C++ every libpng call that can jump runs inside a small function that calls setjmp, holds no
// object with a destructor, and writes its results only through references to objects in the
// caller's frame. The jump therefore only leaves libpng's own C frames and our callbacks (which
// hold nothing either); the caller then destroys the libpng structs in every case and throws.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "image/codec_formats.hpp"
#include "image/png_data_check.hpp"
#include "z123/error.hpp"
#include "z123/image/codec.hpp"

namespace z123 {
namespace image_detail {
namespace {

// Shared by the read and write callbacks: where the bytes are and the last libpng message.
struct PngIo {
  const std::uint8_t* data = nullptr; // reading
  std::size_t size = 0;
  std::size_t pos = 0;
  bool ran_out = false;                      // reading hit the end of the data
  std::vector<std::uint8_t>* sink = nullptr; // writing
  char message[256] = {};
};

PngIo& io_of_error(png_structp png) { return *static_cast<PngIo*>(png_get_error_ptr(png)); }

void on_error(png_structp png, png_const_charp message) {
  PngIo& io = io_of_error(png);
  std::snprintf(io.message, sizeof io.message, "%s", message ? message : "unknown error");
  png_longjmp(png, 1);
}

// Warnings (bad ancillary chunks, extra data after the image) do not change the pixels; Pillow
// ignores them too.
void on_warning(png_structp, png_const_charp) {}

void read_bytes(png_structp png, png_bytep out, std::size_t n) {
  PngIo& io = *static_cast<PngIo*>(png_get_io_ptr(png));
  if (n > io.size - io.pos) {
    io.ran_out = true;
    png_error(png, "unexpected end of data");
  }
  std::memcpy(out, io.data + io.pos, n);
  io.pos += n;
}

void write_bytes(png_structp png, png_bytep data, std::size_t n) {
  PngIo& io = *static_cast<PngIo*>(png_get_io_ptr(png));
  bool ok = true;
  try {
    io.sink->insert(io.sink->end(), data, data + n);
  } catch (...) { // never let an exception cross libpng's C frames
    ok = false;
  }
  if (!ok) png_error(png, "out of memory while writing the PNG stream");
}

void flush_bytes(png_structp) {}

struct PngHeader {
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0, interlace = 0;
};

// Reads the header into `h` (false: libpng failed, message in io).
bool read_header(png_structp png, png_infop info, PngHeader& h) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  png_get_IHDR(png, info, &h.width, &h.height, &h.bit_depth, &h.color_type, &h.interlace, nullptr, nullptr);
  return true;
}

// Sets up the conversions of the file comment in codec.hpp; `channels` gets the output count.
// Interlaced files are left to read_interlaced, pass by pass (no png_set_interlace_handling).
bool set_transforms(png_structp png, png_infop info, const PngHeader& h, int& channels) {
  if (setjmp(png_jmpbuf(png))) return false;
  if (h.bit_depth == 16) png_set_strip_16(png); // high byte, as Pillow's ";16B" unpackers
  if (h.color_type == PNG_COLOR_TYPE_PALETTE) {
    png_set_palette_to_rgb(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  } else if (h.color_type == PNG_COLOR_TYPE_GRAY && h.bit_depth < 8) {
    png_set_expand_gray_1_2_4_to_8(png);
  }
  if (h.color_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
  png_read_update_info(png, info);
  channels = png_get_channels(png, info);
  return true;
}

// Decodes the rows of a non-interlaced file into `out`, grown row by row so a truncated file
// that declares a large image fails before allocating all of it.
bool read_rows(png_structp png, Image& out) {
  if (setjmp(png_jmpbuf(png))) return false;
  const std::size_t rb = out.row_bytes();
  for (int y = 0; y < out.height; ++y) {
    out.pixels.resize((static_cast<std::size_t>(y) + 1) * rb);
    png_read_row(png, out.row(y), nullptr);
  }
  return true;
}

// Moves the pixels of Adam7 passes 1-6, kept packed pass after pass, to their places in `out`.
void spread_passes(const std::vector<std::uint8_t>& packed, Image& out) {
  const auto w = static_cast<std::uint32_t>(out.width), h = static_cast<std::uint32_t>(out.height);
  const auto px = static_cast<std::size_t>(out.channels);
  const std::uint8_t* src = packed.data();
  for (int pass = 0; pass < 6; ++pass) {
    const Adam7Pass& p = kAdam7[pass];
    const std::uint32_t cols = p.cols(w), rows = p.rows(h);
    if (cols == 0) continue;
    for (std::uint32_t r = 0; r < rows; ++r) {
      std::uint8_t* dst = out.row(static_cast<int>(p.y0 + r * p.dy));
      for (std::uint32_t c = 0; c < cols; ++c, src += px) std::memcpy(dst + (p.x0 + c * p.dx) * px, src, px);
    }
  }
}

// Interlaced files, without png_set_interlace_handling: libpng then hands each Adam7 pass as a
// small image of its own (rows of the pass's width, copied into a full-width `scratch` row).
// Passes 1-6 (all even rows) are kept packed in `packed` as they decode; the full image is
// allocated only when pass 7 (the odd rows) begins, once half of the pixels have really been
// decoded. So memory follows the data the file holds, not the size its header declares; combining
// the passes into a full-size buffer from the start would allocate it all before reading a byte.
bool read_interlaced(png_structp png, Image& out, std::vector<std::uint8_t>& packed,
                     std::vector<std::uint8_t>& scratch) {
  if (setjmp(png_jmpbuf(png))) return false;
  const auto w = static_cast<std::uint32_t>(out.width), h = static_cast<std::uint32_t>(out.height);
  const auto px = static_cast<std::size_t>(out.channels);
  for (int pass = 0; pass < 7; ++pass) {
    const Adam7Pass& p = kAdam7[pass];
    const std::uint32_t cols = p.cols(w), rows = p.rows(h);
    if (cols == 0 || rows == 0) continue; // empty passes store no rows; libpng skips them too
    if (pass == 6) {
      out.pixels.resize(out.size_bytes());
      spread_passes(packed, out);
      packed.clear(); // and give the memory back before pass 7 fills the odd rows
      packed.shrink_to_fit();
      for (std::uint32_t r = 0; r < rows; ++r) png_read_row(png, out.row(static_cast<int>(p.y0 + r * p.dy)), nullptr);
      return true;
    }
    for (std::uint32_t r = 0; r < rows; ++r) {
      png_read_row(png, scratch.data(), nullptr);
      packed.insert(packed.end(), scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(cols * px));
    }
  }
  // A single-row image has no pass 7.
  out.pixels.resize(out.size_bytes());
  spread_passes(packed, out);
  return true;
}

struct ReadStructs {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~ReadStructs() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

struct WriteStructs {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~WriteStructs() { png_destroy_write_struct(&png, info ? &info : nullptr); }
};

bool write_all(png_structp png, png_infop info, const Image& image) {
  if (setjmp(png_jmpbuf(png))) return false;
  const int color_type = image.channels == 1   ? PNG_COLOR_TYPE_GRAY
                         : image.channels == 3 ? PNG_COLOR_TYPE_RGB
                                               : PNG_COLOR_TYPE_RGB_ALPHA;
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width), static_cast<png_uint_32>(image.height), 8, color_type,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  // Speed over the last few percent of size: the CLI and the element write a 640x960 frame per
  // image, and zlib level 6 with all five filters took ~0.5 s of a 2.5 s image on an H100 host
  // (level 1 with the three cheap filters: about half the time, ~5% larger files).
  png_set_compression_level(png, 1);
  png_set_filter(png, 0, PNG_FILTER_NONE | PNG_FILTER_SUB | PNG_FILTER_UP);
  png_write_info(png, info);
  for (int y = 0; y < image.height; ++y) png_write_row(png, image.row(y));
  png_write_end(png, nullptr);
  return true;
}

std::string libpng_failure(const std::string& source, const PngIo& io) {
  if (io.ran_out) {
    return source + ": truncated PNG: the data ends after " + std::to_string(io.size) +
           " bytes, before the image is complete";
  }
  return source + ": corrupt PNG (libpng: " + io.message + ")";
}

} // namespace

Image decode_png(std::span<const std::uint8_t> bytes, const std::string& source) {
  PngIo io;
  io.data = bytes.data();
  io.size = bytes.size();
  ReadStructs s;
  s.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &io, on_error, on_warning);
  if (s.png) s.info = png_create_info_struct(s.png);
  if (!s.png || !s.info) throw internal_error(source + ": libpng could not allocate its decoder state");
  png_set_read_fn(s.png, &io, read_bytes);
  // Let check_image_dimensions below speak for oversized images, not libpng's 1e6 default.
  png_set_user_limits(s.png, 0x7fffffffU, 0x7fffffffU);

  PngHeader h;
  if (!read_header(s.png, s.info, h)) throw format_error(libpng_failure(source, io));
  check_image_dimensions(h.width, h.height, source);
  // Before anything is sized by the header (interlaced files need the whole image up front).
  check_png_data_size(bytes, h.width, h.height, h.bit_depth, h.color_type, h.interlace != PNG_INTERLACE_NONE, source);

  int channels = 0;
  if (!set_transforms(s.png, s.info, h, channels)) throw format_error(libpng_failure(source, io));
  if (channels != 1 && channels != 3 && channels != 4) {
    throw internal_error(source + ": PNG colour type " + std::to_string(h.color_type) + " decoded to " +
                         std::to_string(channels) + " channels, expected 1, 3 or 4");
  }
  Image out{static_cast<int>(h.width), static_cast<int>(h.height), channels, {}};
  if (png_get_rowbytes(s.png, s.info) != out.row_bytes()) {
    throw internal_error(source + ": libpng row size " + std::to_string(png_get_rowbytes(s.png, s.info)) +
                         " bytes, expected " + std::to_string(out.row_bytes()));
  }
  if (h.interlace == PNG_INTERLACE_NONE) {
    if (!read_rows(s.png, out)) throw format_error(libpng_failure(source, io));
  } else {
    std::vector<std::uint8_t> packed, scratch(out.row_bytes());
    if (!read_interlaced(s.png, out, packed, scratch)) throw format_error(libpng_failure(source, io));
  }
  // Trailing chunks after the image data are not read: like Pillow, a missing IEND is tolerated.
  return out;
}

} // namespace image_detail

std::vector<std::uint8_t> encode_png(const Image& image) {
  check_image(image, "encode_png");
  std::vector<std::uint8_t> bytes;
  image_detail::PngIo io;
  io.sink = &bytes;
  image_detail::WriteStructs s;
  s.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &io, image_detail::on_error, image_detail::on_warning);
  if (s.png) s.info = png_create_info_struct(s.png);
  if (!s.png || !s.info) throw internal_error("encode_png: libpng could not allocate its encoder state");
  png_set_write_fn(s.png, &io, image_detail::write_bytes, image_detail::flush_bytes);
  if (!image_detail::write_all(s.png, s.info, image)) {
    throw internal_error("encode_png: libpng failed on a " + std::to_string(image.width) + "x" +
                         std::to_string(image.height) + "x" + std::to_string(image.channels) + " image (" + io.message +
                         ")");
  }
  return bytes;
}

} // namespace z123
