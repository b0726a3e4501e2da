// JPEG through libjpeg(-turbo). libjpeg's error_exit must not return, so ours longjmps; as in
// png_codec.cpp every libjpeg call runs inside a small setjmp function that holds no object with
// a destructor and writes only through references into the caller's frame, and the caller
// destroys the codec state (and frees jpeg_mem_dest's buffer) on every path before throwing.
#include <cstdio> // jpeglib.h needs FILE and size_t declared first
#include <jerror.h>
#include <jpeglib.h>

#include <csetjmp>
#include <cstdlib>
#include <string>
#include <vector>

#include "image/codec_formats.hpp"
#include "z123/error.hpp"
#include "z123/image/codec.hpp"

namespace z123 {
namespace image_detail {
namespace {

struct JpegError {
  jpeg_error_mgr pub; // first member: libjpeg hands back a pointer to it
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
  bool ran_out = false; // "Premature end of JPEG file": libjpeg pads with gray, Pillow raises
};

JpegError& error_of(j_common_ptr cinfo) { return *reinterpret_cast<JpegError*>(cinfo->err); }

[[noreturn]] void on_error_exit(j_common_ptr cinfo) {
  JpegError& e = error_of(cinfo);
  (*cinfo->err->format_message)(cinfo, e.message);
  std::longjmp(e.jump, 1);
}

void on_emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return; // trace messages
  cinfo->err->num_warnings++;
  if (cinfo->err->msg_code == JWRN_JPEG_EOF) error_of(cinfo).ran_out = true;
  // Other warnings (extraneous bytes, a marker inside entropy data) are tolerated, as by Pillow.
}

void on_output_message(j_common_ptr) {} // libjpeg would print to stderr

void install(JpegError& e) {
  jpeg_std_error(&e.pub);
  e.pub.error_exit = on_error_exit;
  e.pub.emit_message = on_emit_message;
  e.pub.output_message = on_output_message;
}

struct Decompressor {
  JpegError err;
  jpeg_decompress_struct cinfo{};
  bool created = false;
  ~Decompressor() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

struct Compressor {
  JpegError err;
  jpeg_compress_struct cinfo{};
  bool created = false;
  unsigned char* buffer = nullptr; // owned by us once jpeg_mem_dest has set it (malloc'ed)
  unsigned long size = 0;
  ~Compressor() {
    if (created) jpeg_destroy_compress(&cinfo);
    std::free(buffer);
  }
};

bool read_header(Decompressor& d, std::span<const std::uint8_t> bytes) {
  if (setjmp(d.err.jump)) return false;
  d.cinfo.err = &d.err.pub;
  d.created = true; // jpeg_create_decompress leaves cinfo.mem null until it succeeds
  jpeg_create_decompress(&d.cinfo);
  jpeg_mem_src(&d.cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&d.cinfo, TRUE);
  return true;
}

bool read_pixels(Decompressor& d, Image& out) {
  if (setjmp(d.err.jump)) return false;
  jpeg_start_decompress(&d.cinfo);
  if (static_cast<int>(d.cinfo.output_components) != out.channels ||
      static_cast<int>(d.cinfo.output_width) != out.width || static_cast<int>(d.cinfo.output_height) != out.height) {
    ERREXIT(&d.cinfo, JERR_BAD_LENGTH); // cannot happen without scaling; never write out of bounds
  }
  const std::size_t rb = out.row_bytes();
  while (d.cinfo.output_scanline < d.cinfo.output_height) {
    const std::size_t y = d.cinfo.output_scanline;
    out.pixels.resize((y + 1) * rb); // grown per row: truncated files fail before a full allocation
    JSAMPROW row = out.pixels.data() + y * rb;
    jpeg_read_scanlines(&d.cinfo, &row, 1);
  }
  jpeg_finish_decompress(&d.cinfo);
  return true;
}

bool compress(Compressor& c, const Image& image, int quality) {
  if (setjmp(c.err.jump)) return false;
  c.cinfo.err = &c.err.pub;
  c.created = true;
  jpeg_create_compress(&c.cinfo);
  jpeg_mem_dest(&c.cinfo, &c.buffer, &c.size);
  c.cinfo.image_width = static_cast<JDIMENSION>(image.width);
  c.cinfo.image_height = static_cast<JDIMENSION>(image.height);
  c.cinfo.input_components = image.channels;
  c.cinfo.in_color_space = image.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c.cinfo);
  jpeg_set_quality(&c.cinfo, quality, TRUE);
  jpeg_start_compress(&c.cinfo, TRUE);
  while (c.cinfo.next_scanline < c.cinfo.image_height) {
    // libjpeg's API is not const-correct; it only reads the rows.
    JSAMPROW row = const_cast<std::uint8_t*>(image.row(static_cast<int>(c.cinfo.next_scanline)));
    jpeg_write_scanlines(&c.cinfo, &row, 1);
  }
  jpeg_finish_compress(&c.cinfo);
  return true;
}

const char* color_space_name(J_COLOR_SPACE cs) {
  switch (cs) {
  case JCS_GRAYSCALE: return "grayscale";
  case JCS_RGB: return "RGB";
  case JCS_YCbCr: return "YCbCr";
  case JCS_CMYK: return "CMYK";
  case JCS_YCCK: return "YCCK";
  default: return "unknown";
  }
}

} // namespace

Image decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& source) {
  Decompressor d;
  install(d.err);
  if (!read_header(d, bytes)) {
    throw format_error(source + ": corrupt JPEG header (libjpeg: " + d.err.message + ")");
  }
  check_image_dimensions(d.cinfo.image_width, d.cinfo.image_height, source);
  Image out{static_cast<int>(d.cinfo.image_width), static_cast<int>(d.cinfo.image_height), 0, {}};
  switch (d.cinfo.jpeg_color_space) {
  case JCS_GRAYSCALE:
    d.cinfo.out_color_space = JCS_GRAYSCALE;
    out.channels = 1;
    break;
  case JCS_YCbCr:
  case JCS_RGB:
    d.cinfo.out_color_space = JCS_RGB;
    out.channels = 3;
    break;
  default:
    throw unsupported(source + ": JPEG colour space " + color_space_name(d.cinfo.jpeg_color_space) + " (" +
                      std::to_string(d.cinfo.num_components) +
                      " components); expected grayscale or YCbCr/RGB, convert the image to RGB first");
  }
  if (!read_pixels(d, out)) throw format_error(source + ": corrupt JPEG data (libjpeg: " + d.err.message + ")");
  if (d.err.ran_out) {
    throw format_error(source + ": truncated JPEG: the data ends after " + std::to_string(bytes.size()) +
                       " bytes, before the image is complete");
  }
  return out;
}

} // namespace image_detail

std::vector<std::uint8_t> encode_jpeg(const Image& image, int quality) {
  check_image(image, "encode_jpeg");
  if (image.channels != 1 && image.channels != 3) {
    throw invalid_argument("encode_jpeg: image has " + std::to_string(image.channels) +
                           " channels, expected 1 or 3 (JPEG has no alpha: composite with to_rgb first)");
  }
  if (quality < 1 || quality > 100) {
    throw invalid_argument("encode_jpeg: quality " + std::to_string(quality) + ", expected 1..100");
  }
  image_detail::Compressor c;
  image_detail::install(c.err);
  if (!image_detail::compress(c, image, quality)) {
    throw internal_error("encode_jpeg: libjpeg failed on a " + std::to_string(image.width) + "x" +
                         std::to_string(image.height) + " image (" + c.err.message + ")");
  }
  return {c.buffer, c.buffer + c.size};
}

} // namespace z123
