// GStreamer set-up shared by the element tests: the plugin of this build, a private registry, the
// test device, and small helpers (messages collected from a bus, the plugin's test hook).
#pragma once

#include <gst/gst.h>

#include <string>
#include <vector>

namespace z123::test {

// Sets GST_PLUGIN_PATH (this build's gst-plugin folder) and GST_REGISTRY (a file in the build
// tree) unless already set, then gst_init; once per process.
void init_gstreamer();

// The Vulkan device tests run on: $Z123_TEST_DEVICE or "" (the default device).
std::string test_device();

// Every message of `type` currently queued on `bus` (popped; others are dropped).
std::vector<GstMessage*> pop_messages(GstBus* bus, GstMessageType type);
void unref_messages(std::vector<GstMessage*>& messages);

// Engines currently open in the plugin (its gst_zero123pp_live_engines test hook), -1 if absent.
int live_engines();

} // namespace z123::test
