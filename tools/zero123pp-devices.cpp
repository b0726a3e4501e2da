// zero123pp-devices: lists the Vulkan devices the engine can use and what each supports
// (the same listing as `zero123pp --list-devices`).
#include <cstdio>
#include <cstring>

#include "z123/error.hpp"
#include "z123/vk/instance.hpp"

int main(int argc, char** argv) {
  z123::vk::InstanceOptions opts;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--validation")) {
      opts.validation = true;
    } else {
      std::printf("usage: zero123pp-devices [--validation]\n"
                  "Lists Vulkan devices (index, name, type, limits, fp16 and cooperative-matrix "
                  "support).\nThe default device is marked with '*'.\n");
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
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
