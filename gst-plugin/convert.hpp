// Pixel copies between GStreamer frames and engine images: an input video frame (any supported
// format, padded rows) into a tight z123::Image, and the engine's 2x3 grid into the output frame
// with the views re-arranged for the chosen tiling.
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

// Copies view i of `grid` (2 columns x 3 rows of view_size squares, RGBA) to cell i of a
// layout.columns x layout.rows frame at `dst` (rows `stride` bytes apart), filled row by row.
void write_tiled(const z123::Image& grid, int view_size, Layout layout, std::uint8_t* dst, std::size_t stride);

} // namespace z123gst
