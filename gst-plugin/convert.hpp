// Pixel copies between GStreamer frames and engine images: an input video frame (any supported
// format, padded rows) into a tight z123::Image. (The grid goes into the output frame through
// z123::write_tiled.)
#pragma once

#include <gst/video/video.h>

#include <cstddef>
#include <cstdint>

#include "settings.hpp"
#include "z123/image/image.hpp"

namespace z123gst {

// Formats the sink pad accepts (the caps string list and the check share this).
#define Z123GST_SINK_FORMATS "{ RGB, BGR, RGBA, BGRA, RGBx, BGRx, GRAY8 }"
bool is_supported_format(GstVideoFormat format);

// RGB, BGR, RGBx, BGRx -> 3-channel RGB; RGBA, BGRA -> 4-channel RGBA (the engine composites
// alpha on gray as the model expects); GRAY8 -> 1 channel (replicated to RGB by the engine).
z123::Image image_from_frame(const GstVideoFrame& frame);

// The engine's grid goes into the output frame through z123::write_tiled (z123/views.hpp).

} // namespace z123gst
