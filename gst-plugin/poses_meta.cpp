#include "poses_meta.hpp"

#include <gst/video/video.h>

#include "z123/engine.hpp"

namespace z123gst {

void register_poses_meta() {
  // Tagged "video" so video-only transforms keep it; no transform function: a copied buffer
  // (e.g. through a tee) gets a copy of the structure, which is what the default copy does.
  static const gchar* tags[] = {GST_META_TAG_VIDEO_STR, nullptr};
  static const GstMetaInfo* info = gst_meta_register_custom(kPosesMetaName, tags, nullptr, nullptr, nullptr);
  (void)info;
}

namespace {

void set_float_array(GstStructure* s, const char* field, const float (&values)[6]) {
  GValue array = G_VALUE_INIT;
  gst_value_array_init(&array, 6);
  for (float v : values) {
    GValue item = G_VALUE_INIT;
    g_value_init(&item, G_TYPE_FLOAT);
    g_value_set_float(&item, v);
    gst_value_array_append_and_take_value(&array, &item);
  }
  gst_structure_take_value(s, field, &array);
}

} // namespace

void add_poses_meta(GstBuffer* buffer, Layout layout, int view_size, std::uint64_t seed) {
  GstCustomMeta* meta = gst_buffer_add_custom_meta(buffer, kPosesMetaName);
  if (!meta) return; // not registered: nothing to attach (never happens after plugin init)
  GstStructure* s = gst_custom_meta_get_structure(meta);
  gst_structure_set(s, "columns", G_TYPE_INT, layout.columns, "rows", G_TYPE_INT, layout.rows, "view-size", G_TYPE_INT,
                    view_size, "seed", G_TYPE_UINT64, static_cast<guint64>(seed), nullptr);
  const auto poses = z123::view_poses();
  float az[6], el[6], fov[6];
  for (std::size_t i = 0; i < 6; ++i) {
    az[i] = poses[i].azimuth_deg;
    el[i] = poses[i].elevation_deg;
    fov[i] = poses[i].fov_deg;
  }
  set_float_array(s, "azimuth-deg", az);
  set_float_array(s, "elevation-deg", el);
  set_float_array(s, "fov-deg", fov);
}

} // namespace z123gst
