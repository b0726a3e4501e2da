#include "convert.hpp"

#include <cstring>
#include <stdexcept>

namespace z123gst {

bool is_supported_format(GstVideoFormat format) {
  switch (format) {
  case GST_VIDEO_FORMAT_RGB:
  case GST_VIDEO_FORMAT_BGR:
  case GST_VIDEO_FORMAT_RGBA:
  case GST_VIDEO_FORMAT_BGRA:
  case GST_VIDEO_FORMAT_RGBx:
  case GST_VIDEO_FORMAT_BGRx:
  case GST_VIDEO_FORMAT_GRAY8: return true;
  default: return false;
  }
}

namespace {

struct Swizzle {
  int channels_in;  // bytes per input pixel
  int channels_out; // channels of the Image
  int r, g, b, a;   // byte offsets of each component inside an input pixel (a < 0: none)
};

Swizzle swizzle_for(GstVideoFormat format) {
  switch (format) {
  case GST_VIDEO_FORMAT_RGB: return {3, 3, 0, 1, 2, -1};
  case GST_VIDEO_FORMAT_BGR: return {3, 3, 2, 1, 0, -1};
  case GST_VIDEO_FORMAT_RGBA: return {4, 4, 0, 1, 2, 3};
  case GST_VIDEO_FORMAT_BGRA: return {4, 4, 2, 1, 0, 3};
  case GST_VIDEO_FORMAT_RGBx: return {4, 3, 0, 1, 2, -1};
  case GST_VIDEO_FORMAT_BGRx: return {4, 3, 2, 1, 0, -1};
  case GST_VIDEO_FORMAT_GRAY8: return {1, 1, 0, 0, 0, -1};
  default: throw std::invalid_argument("unsupported video format");
  }
}

} // namespace

z123::Image image_from_frame(const GstVideoFrame& frame) {
  const Swizzle s = swizzle_for(GST_VIDEO_FRAME_FORMAT(&frame));
  const int w = GST_VIDEO_FRAME_WIDTH(&frame), h = GST_VIDEO_FRAME_HEIGHT(&frame);
  const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);
  const auto* src = static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0));
  z123::Image img = z123::Image::blank(w, h, s.channels_out);
  for (int y = 0; y < h; ++y) {
    const std::uint8_t* in = src + static_cast<std::ptrdiff_t>(y) * stride;
    std::uint8_t* out = img.row(y);
    if (s.channels_out == 1) {
      std::memcpy(out, in, static_cast<std::size_t>(w));
      continue;
    }
    for (int x = 0; x < w; ++x, in += s.channels_in, out += s.channels_out) {
      out[0] = in[s.r];
      out[1] = in[s.g];
      out[2] = in[s.b];
      if (s.channels_out == 4) out[3] = in[s.a];
    }
  }
  return img;
}

} // namespace z123gst
