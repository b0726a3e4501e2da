#include "gst_env.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace z123::test {

void init_gstreamer() {
  static std::once_flag once;
  std::call_once(once, [] {
    setenv("GST_PLUGIN_PATH", Z123_GST_PLUGIN_DIR, 0);
    // A registry of our own: the user's one may predate this build of the plugin.
    setenv("GST_REGISTRY", Z123_GST_REGISTRY, 0);
    gst_init(nullptr, nullptr);
  });
}

std::string test_device() {
  const char* d = std::getenv("Z123_TEST_DEVICE");
  return d ? d : "";
}

std::vector<GstMessage*> pop_messages(GstBus* bus, GstMessageType type) {
  std::vector<GstMessage*> out;
  while (GstMessage* m = gst_bus_pop(bus)) {
    if (GST_MESSAGE_TYPE(m) & type)
      out.push_back(m);
    else
      gst_message_unref(m);
  }
  return out;
}

void unref_messages(std::vector<GstMessage*>& messages) {
  for (GstMessage* m : messages) gst_message_unref(m);
  messages.clear();
}

int live_engines() {
  GstPlugin* plugin = gst_registry_find_plugin(gst_registry_get(), "zero123pp");
  if (!plugin) return -1;
  int n = -1;
  // The plugin is loaded by now (an element was made); RTLD_NOLOAD only looks it up.
  if (void* handle = dlopen(gst_plugin_get_filename(plugin), RTLD_LAZY | RTLD_NOLOAD)) {
    if (auto fn = reinterpret_cast<int (*)()>(dlsym(handle, "gst_zero123pp_live_engines"))) n = fn();
    dlclose(handle);
  }
  gst_object_unref(plugin);
  return n;
}

} // namespace z123::test
