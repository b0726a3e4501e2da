// zero123pp-devices: lists the Vulkan devices the engine can use and what each supports (the
// listing of `zero123pp --list-devices`), then the kernel each operation takes there.
#include <cstdio>
#include <cstring>
#include <string>

#include "z123/error.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/kernels/kernels.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/kernels/winograd.hpp"
#include "z123/vk/device.hpp"
#include "z123/vk/instance.hpp"

namespace {

const char* kHelp = R"(NAME
    zero123pp-devices - list the Vulkan devices zero123pp can run on

SYNOPSIS
    zero123pp-devices [--validation]

DESCRIPTION
    Lists every Vulkan 1.2 device with a compute queue: index, name, type, memory, limits, fp16
    and cooperative-matrix support, then the kernel each operation of an fp16 model takes on it
    (fp32 models take the portable kernels everywhere). The device zero123pp and the GStreamer
    element pick by default is marked with '*'; select another with --device (CLI), the device
    property (element) or Z123_DEVICE (scripts), by index or name substring. The environment
    variables that force paths (Z123_FORCE_PORTABLE, Z123_KERNEL_PATH, Z123_COOPMAT_SHAPE) and the
    reference pass's queue (Z123_REFERENCE_QUEUE) change the listing as they change the engine.

OPTIONS
    --validation       enable the Khronos validation layer while listing
    -h, --help         this text

EXIT STATUS
    0 success; 1 no usable Vulkan device; 2 usage error
)";

// The kernel each operation of an fp16 model takes on `info` (opens the device to ask).
void print_routes(z123::vk::Instance& instance, const z123::vk::DeviceInfo& info) {
  using namespace z123::kernels;
  try {
    z123::vk::Device device(instance, info);
    Kernels k(device);
    const z123::DType h = z123::DType::F16;
    auto attn = [&](int64_t head, bool causal) {
      std::string shader = choose_attention_kernel(k, h, head, causal, true).shader;
      // The variant for large problems; smaller ones may take the 8-subgroup twin (choose_attention_kernel).
      if (shader == khr_attention_knob_variant("khrcm_cv_nw16")) shader += " (khrcm_cv where it fills waves better)";
      return shader;
    };
    std::printf("   kernels, fp16 model:\n");
    std::printf("     linear, conv             %s\n", gemm_route(k, h).c_str());
    std::printf("     UNet 3x3 convs           %s\n", unet_conv3x3_route(k, h).c_str());
    std::printf("     attention UNet (d64)     %s\n", attn(64, false).c_str());
    std::printf("     attention CLIP text      %s\n", attn(64, true).c_str());
    std::printf("     attention CLIP vision    %s\n", attn(80, false).c_str());
    std::printf("     attention VAE (d512)     two GEMMs (linear route, fp32 scores) and softmax_rows\n");
    std::printf("     norms, pointwise         portable (memory-bound on every device)\n");
    // Where the step's reference pass runs (Z123_REFERENCE_QUEUE, Z123_REFERENCE_STEPS; the
    // normal memory layout).
    const int steps = device.tuning().reference_steps;
    const std::string ahead = steps == 1 ? "one step ahead" : "ahead, one pass for " + std::to_string(steps) + " steps";
    if (!device.has_side_queue())
      std::printf("   reference pass: in the main pass's program, side by side by levels\n");
    else if (device.side_queue_is_main())
      std::printf("   reference pass: %s, on the main queue (Z123_REFERENCE_QUEUE=shared)\n", ahead.c_str());
    else
      std::printf("   reference pass: %s, on a queue of compute family %u (main: family %u)\n", ahead.c_str(),
                  info.side_compute_queue_family, info.compute_queue_family);
  } catch (const z123::Error& e) {
    std::printf("   kernels: cannot open this device: %s\n", e.what());
  }
}

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
    for (const auto& d : instance.devices()) {
      std::printf("%s%s", d.index == chosen.index ? "* " : "  ", z123::vk::describe_device(d).c_str());
      print_routes(instance, d);
    }
    return 0;
  } catch (const z123::Error& e) {
    std::fprintf(stderr, "zero123pp-devices: %s\n", e.what());
    return 1;
  }
}
