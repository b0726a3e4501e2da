// zero123pp-devices: lists the Vulkan devices the engine can use and what each supports
// (the same listing as `zero123pp --list-devices`).
#include <cstdio>
#include <cstring>

#include "z123/error.hpp"
#include "z123/vk/instance.hpp"

namespace {

const char* kHelp = R"(NAME
    zero123pp-devices - list the Vulkan devices zero123pp can run on

SYNOPSIS
    zero123pp-devices [--validation]

DESCRIPTION
    Lists every Vulkan 1.2 device with a compute queue: index, name, type, memory, limits, fp16
    and cooperative-matrix support. The device zero123pp and the GStreamer element pick by
    default is marked with '*'; select another with --device (CLI), the device property
    (element) or Z123_DEVICE (scripts), by index or name substring.

OPTIONS
    --validation       enable the Khronos validation layer while listing
    -h, --help         this text

EXIT STATUS
    0 success; 1 no usable Vulkan device; 2 usage error
)";

} // namespace

int main(int argc, char** argv) {
  z123::vk::InstanceOptions opts;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--validation")) {
      opts.validation = true;
    } else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::fputs(kHelp, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "zero123pp-devices: unknown option %s\nTry 'zero123pp-devices --help'.\n", argv[i]);
      return 2;
    }
  }
  try {
    z123::vk::Instance instance(opts);
    if (instance.devices().empty()) {
      std::fprintf(stderr, "no Vulkan 1.2 device with a compute queue found\n");
      return 1;
    }
    const auto& chosen = z123::vk::choose_device(instance, "");
    for (const auto& d : instance.devices())
      std::printf("%s%s", d.index == chosen.index ? "* " : "  ", z123::vk::describe_device(d).c_str());
    return 0;
  } catch (const z123::Error& e) {
    std::fprintf(stderr, "zero123pp-devices: %s\n", e.what());
    return 1;
  }
}
