// The zero123pp plugin: registers the element and the pose meta it attaches to its buffers.
#include "gstzero123pp.hpp"
#include "poses_meta.hpp"

#ifndef Z123_VERSION
#error "Z123_VERSION is set by gst-plugin/CMakeLists.txt"
#endif

static gboolean plugin_init(GstPlugin* plugin) {
  z123gst::register_poses_meta();
  return GST_ELEMENT_REGISTER(zero123pp, plugin);
}

// No license file in the project yet: GStreamer's "unknown" keeps the plugin loadable.
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, zero123pp,
                  "Zero123++ v1.2 novel-view synthesis on Vulkan (six views of an object from one frame)", plugin_init,
                  Z123_VERSION, "MIT/X11", "zero123pp-vk", "zero123pp-vk source tree")
