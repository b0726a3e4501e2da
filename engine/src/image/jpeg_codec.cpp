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
  // Running out of data ends the decode at once, like an error: libjpeg would go on padding the
  // rest of the declared image with gray (for a progressive file, writing every coefficient
  // block of it), so a short file declaring 16384 x 15625 pixels would cost gigabytes and seconds
  // before failing. Warnings come only from libjpeg calls inside the setjmp functions below.
  if (cinfo->err->msg_code == JWRN_JPEG_EOF) {
    error_of(cinfo).ran_out = true;
    on_error_exit(cinfo);
  }
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

// Decodes into `out` (out.channels: what the file's colour space decodes to, see decode_jpeg),
// grown per row so a truncated file fails before a full allocation. CMYK rows go through
// `cmyk_row`, sized by the caller to one row of 4 samples.
bool read_pixels(Decompressor& d, Image& out, std::vector<std::uint8_t>& cmyk_row) {
  if (setjmp(d.err.jump)) return false;
  jpeg_start_decompress(&d.cinfo);
  const bool cmyk = d.cinfo.out_color_space == JCS_CMYK;
  if (static_cast<int>(d.cinfo.output_components) != (cmyk ? 4 : out.channels) ||
      (cmyk && cmyk_row.size() != 4 * static_cast<std::size_t>(out.width)) ||
      static_cast<int>(d.cinfo.output_width) != out.width || static_cast<int>(d.cinfo.output_height) != out.height) {
    ERREXIT(&d.cinfo, JERR_BAD_LENGTH); // cannot happen without scaling; never write out of bounds
  }
  const std::size_t rb = out.row_bytes();
  while (d.cinfo.output_scanline < d.cinfo.output_height) {
    const std::size_t y = d.cinfo.output_scanline;
    out.pixels.resize((y + 1) * rb);
    JSAMPROW row = cmyk ? cmyk_row.data() : out.pixels.data() + y * rb;
    jpeg_read_scanlines(&d.cinfo, &row, 1);
    if (cmyk) adobe_cmyk_to_rgb(cmyk_row.data(), out.pixels.data() + y * rb, static_cast<std::size_t>(out.width));
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

std::string failure(const std::string& source, std::size_t size, const JpegError& e, const char* part) {
  if (e.ran_out) {
    return source + ": truncated JPEG: the data ends after " + std::to_string(size) +
           " bytes, before the image is complete";
  }
  return source + ": corrupt JPEG " + part + " (libjpeg: " + e.message + ")";
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

// Pillow reads every 4-component JPEG with Adobe polarity (raw mode "CMYK;I": stored 0 = full
// ink), with or without an Adobe APP14 marker, so each sample is inverted first. convert("RGB")
// then takes, per channel, (255 - K) scaled down by the ink: nk - nk * ink / 255, rounded to
// nearest (the product over 255 is never exactly halfway, so +127 rounds it).
void adobe_cmyk_to_rgb(const std::uint8_t* cmyk, std::uint8_t* rgb, std::size_t pixels) {
  for (std::size_t i = 0; i < pixels; ++i, cmyk += 4, rgb += 3) {
    const unsigned nk = cmyk[3]; // 255 - (255 - stored K)
    for (int c = 0; c < 3; ++c) {
      const unsigned ink = 255u - cmyk[c];
      rgb[c] = static_cast<std::uint8_t>(nk - (ink * nk + 127u) / 255u);
    }
  }
}

Image decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& source) {
  Decompressor d;
  install(d.err);
  if (!read_header(d, bytes)) throw format_error(failure(source, bytes.size(), d.err, "header"));
  check_image_dimensions(d.cinfo.image_width, d.cinfo.image_height, source);
  Image out{static_cast<int>(d.cinfo.image_width), static_cast<int>(d.cinfo.image_height), 0, {}};
  std::vector<std::uint8_t> cmyk_row; // one decoded CMYK row, for 4-component files only
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
  case JCS_CMYK:
  case JCS_YCCK: // libjpeg converts YCCK to CMYK; Pillow opens both as mode CMYK
    d.cinfo.out_color_space = JCS_CMYK;
    out.channels = 3; // converted per row, as the pipeline's convert("RGB")
    cmyk_row.resize(4 * static_cast<std::size_t>(out.width));
    break;
  default:
    throw unsupported(source + ": JPEG colour space " + color_space_name(d.cinfo.jpeg_color_space) + " (" +
                      std::to_string(d.cinfo.num_components) +
                      " components); expected grayscale, YCbCr/RGB or CMYK/YCCK, convert the image to RGB first");
  }
  if (!read_pixels(d, out, cmyk_row)) throw format_error(failure(source, bytes.size(), d.err, "data"));
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
