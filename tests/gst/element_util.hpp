// Helpers shared by the element tests: a zero123pp element set up for fast runs on the fast synthetic model,
// the input frame they push, and message helpers.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "z123/image/image.hpp"

namespace z123::test {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr int kViewSize = 64; // 128x192 output: the smallest the engine renders
constexpr guint64 kSeed = 7;
constexpr int kInputWidth = 95, kInputHeight = 80; // odd width: RGB rows are padded to 288 bytes
inline constexpr const char* kInputCaps = "video/x-raw,format=RGB,width=95,height=80,framerate=30/1";

// A zero123pp element on the fast synthetic model (golden.hpp: 64 px VAE branch) and the test device, view-size 64, 1
// step, seed kSeed (still in NULL); nullptr when the plugin is missing.
GstElement* make_element();
// Sets the same fast properties on an element made elsewhere (e.g. by gst_parse_launch).
void set_fast_properties(GstElement* zero123pp);

// The golden input image as RGB, cropped to kInputWidth x kInputHeight.
Image input_image();
// A width x height buffer of `format` with the given timestamps (DTS = PTS); write_row(dst, y)
// fills row y (GStreamer's stride, so rows may be padded).
GstBuffer* make_video_buffer(GstVideoFormat format, int width, int height, GstClockTime pts, GstClockTime duration,
                             const std::function<void(std::uint8_t* dst, int y)>& write_row);
// An RGB buffer of `img` with the given timestamps (DTS = PTS).
GstBuffer* make_buffer(const Image& img, GstClockTime pts, GstClockTime duration);

// "message | debug" of an error message.
std::string error_text(GstMessage* m);
// A zero123pp-progress element message.
bool is_progress(GstMessage* m);

} // namespace z123::test
