// Linked into every program and library of a sanitizer build (Z123_SANITIZE), nowhere else.
//
// The Vulkan loader unloads the driver and the layers (dlclose) when the instance is destroyed.
// Memory they never free (process-lifetime caches, by design) is then reported by LeakSanitizer
// at exit from an "<unknown module>": the code is unmapped, so the frames cannot be named and
// tests/sanitizers/lsan.supp, which suppresses by library, cannot match them. Loading them once
// more here with RTLD_NODELETE keeps them mapped until the process ends, so their leaks are named
// (and suppressed), while anything of ours still shows up. A library that is not installed is
// simply skipped.
#include <dlfcn.h>

#include <initializer_list>

namespace {

__attribute__((constructor)) void pin_vulkan_driver_and_layers() {
  for (const char* library : {"libvulkan_lvp.so", "libVkLayer_khronos_validation.so", "libvulkan.so.1"})
    dlopen(library, RTLD_LAZY | RTLD_NODELETE);
}

} // namespace
