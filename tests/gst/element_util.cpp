#include "element_util.hpp"

#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <cstring>

#include "gst_env.hpp"
#include "support/golden.hpp"
#include "z123/image/codec.hpp"
#include "z123/image/preprocess.hpp"

namespace z123::test {

void set_fast_properties(GstElement* e) {
  g_object_set(e, "model", fast_model_dir().c_str(), "device", test_device().c_str(), "view-size", kViewSize, "steps",
               1, "seed", kSeed, nullptr);
}

GstElement* make_element() {
  init_gstreamer();
  GstElement* e = gst_element_factory_make("zero123pp", nullptr);
  if (e) set_fast_properties(e);
  return e;
}

Image input_image() {
  Image rgb = to_rgb(load_image(golden_dir() / "pipeline_input.png"));
  Image out = Image::blank(kInputWidth, kInputHeight, 3);
  for (int y = 0; y < kInputHeight; ++y) std::memcpy(out.row(y), rgb.row(y), out.row_bytes());
  return out;
}

GstBuffer* make_video_buffer(GstVideoFormat format, int width, int height, GstClockTime pts, GstClockTime duration,
                             const std::function<void(std::uint8_t* dst, int y)>& write_row) {
  GstVideoInfo info;
  gst_video_info_set_format(&info, format, width, height);
  GstBuffer* b = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
  GstVideoFrame f;
  EXPECT_TRUE(gst_video_frame_map(&f, &info, b, GST_MAP_WRITE));
  for (int y = 0; y < height; ++y)
    write_row(static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&f, 0)) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0),
              y);
  gst_video_frame_unmap(&f);
  GST_BUFFER_PTS(b) = pts;
  GST_BUFFER_DTS(b) = pts;
  GST_BUFFER_DURATION(b) = duration;
  return b;
}

GstBuffer* make_buffer(const Image& img, GstClockTime pts, GstClockTime duration) {
  return make_video_buffer(GST_VIDEO_FORMAT_RGB, img.width, img.height, pts, duration,
                           [&](std::uint8_t* dst, int y) { std::memcpy(dst, img.row(y), img.row_bytes()); });
}

std::string error_text(GstMessage* m) {
  GError* err = nullptr;
  gchar* debug = nullptr;
  gst_message_parse_error(m, &err, &debug);
  std::string s = std::string(err ? err->message : "") + " | " + (debug ? debug : "");
  g_clear_error(&err);
  g_free(debug);
  return s;
}

bool is_progress(GstMessage* m) {
  const GstStructure* s = gst_message_get_structure(m);
  return s && gst_structure_has_name(s, "zero123pp-progress");
}

} // namespace z123::test
