// The camera poses of the six views, attached to every output buffer as a GstCustomMeta named
// "Zero123ppPosesMeta" so downstream code (an appsink, a muxer of 3D data) knows what each tile
// shows without re-deriving the model's fixed camera layout. Fields of its structure:
//   columns, rows, view-size (gint)       the tiling of the frame
//   seed (guint64)                        the noise seed this frame was generated with
//   azimuth-deg, elevation-deg, fov-deg   GstValueArray of 6 gfloat, one per tile in
//                                         row-major tile order (tile i = view i)
#pragma once

#include <gst/gst.h>

#include <cstdint>

#include "settings.hpp"

namespace z123gst {

inline constexpr const char* kPosesMetaName = "Zero123ppPosesMeta";

// Registers the meta once (plugin init); later calls are no-ops.
void register_poses_meta();
void add_poses_meta(GstBuffer* buffer, Layout layout, int view_size, std::uint64_t seed);

} // namespace z123gst
