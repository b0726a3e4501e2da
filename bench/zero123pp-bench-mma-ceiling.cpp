// zero123pp-bench-mma-ceiling [--device SEL] [--iters N]
//
// What bounds the KHR cooperative-matrix GEMM (shaders/gemm_coopmat.comp) on this device: its
// inner loop run with parts taken away (shaders/coopmat_ceiling.comp), for several subgroup grids
// and block sizes, 8 workgroups per SM:
//   m0  products on operands already in registers (the tensor cores' own rate on this driver)
//   m2  per K step the tile stores, two workgroup barriers, the fragment loads from shared memory
//       and the products: the GEMM's loop without its global loads
//   m3  m2 without the fragment loads
//   m4  no shared memory, no barriers: every subgroup loads its fragments from global memory
//       (the same rows for every workgroup, so from the caches)
//   m5  m2 with the workgroup split into two independent halves, each with its own tiles and its
//       own barrier (a spin on an arrival count in shared memory)
//   m6  m5's tiles with the workgroup barrier (the control for m5)
// Read m2, m4, m5 and m6 only: in m0 and m3 the operands never change inside the loop, and the driver
// evidently reduces that work (the 4- and 8-subgroup configurations printed 1,317 TFLOP/s there,
// above the H100's 989 TFLOP/s dense fp16 peak; bench/NOTES.md session 17).
// Prints TFLOP/s per mode (median of 5 timed submissions after a warm-up). Needs a build with
// Z123_BENCH_VARIANTS=ON and a device with KHR cooperative matrices (16 x 16 x 16 fp16 -> fp32).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "z123/error.hpp"
#include "z123/vk/device.hpp"
#include "z123/vk/recording.hpp"

using namespace z123;

int main(int argc, char** argv) {
  std::string device_sel;
  uint32_t iters = 4096;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--device" && i + 1 < argc)
      device_sel = argv[++i];
    else if (a == "--iters" && i + 1 < argc)
      iters = static_cast<uint32_t>(std::max(1, std::atoi(argv[++i])));
    else {
      std::printf("usage: zero123pp-bench-mma-ceiling [--device SEL] [--iters N]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  try {
    vk::Instance instance;
    vk::Device dev(instance, vk::choose_device(instance, device_sel));
    const uint32_t sms = std::max<uint32_t>(1, dev.info().compute_units);
    std::printf("device: %s, driver %s, %u compute units, %u K steps of 64 per workgroup\n", dev.info().name.c_str(),
                dev.info().driver_info.c_str(), sms, iters);
    // m4's operands: (BM + BN) rows of 1,024 halves for the largest tile (coopmat_ceiling.comp GK).
    vk::Buffer src = dev.allocator().create_buffer(512ull * 1024 * 2, vk::MemoryUsage::DeviceLocal, "ceiling src");
    {
      vk::Recording fill(dev);
      fill.fill(src, 0x3c003c00u); // 1.0 halves
      dev.run(fill);
    }
    struct Config {
      const char* name;
      uint32_t subgroups, fm, fn, bk;
      std::vector<int> modes;
    };
    // shaders/variants/ceiling.cmake builds the same configurations.
    const std::vector<int> all{0, 2, 3, 4}, split{6, 5};
    for (const Config& c : {Config{"w4x4", 16, 2, 2, 64, all}, Config{"w4x4k32", 16, 2, 2, 32, all},
                            Config{"w2x4", 8, 4, 2, 64, all}, Config{"w4x4f42", 16, 4, 2, 32, all},
                            Config{"w2x2f44", 4, 4, 4, 64, all}, Config{"w4x4k80", 16, 2, 2, 80, all},
                            Config{"w4x4k32", 16, 2, 2, 32, split}, Config{"w4x4k48", 16, 2, 2, 48, split},
                            Config{"w8x2k32", 16, 2, 2, 32, split}, Config{"w8x2k48", 16, 2, 2, 48, split}})
      for (int mode : c.modes) {
        const std::string name = "coopmat_ceiling_m" + std::to_string(mode) + "_" + c.name;
        const uint32_t groups = sms * 8, nw = c.subgroups;
        vk::Buffer out =
            dev.allocator().create_buffer(uint64_t{groups} * nw * 32 * 4, vk::MemoryUsage::DeviceLocal, "ceiling out");
        const vk::Pipeline& pipe = dev.pipelines().get({name, 2, 4, {}, 32});
        vk::Recording rec(dev, 2);
        rec.timestamp("start");
        rec.dispatch(pipe, {vk::out(out), vk::in(src)}, &iters, 4, groups, 1, 1, name);
        rec.timestamp("run");
        std::vector<double> ms;
        for (int s = 0; s < 8; ++s) {
          dev.run(rec);
          if (s >= 3)
            for (const auto& t : rec.timings())
              if (t.first == "run") ms.push_back(t.second);
        }
        std::sort(ms.begin(), ms.end());
        // Per K step: bk / 16 fragment steps of fm x fn products of 16 x 16 x 16.
        const double flops = 2.0 * groups * nw * (c.bk / 16.0) * c.fm * c.fn * iters * 16 * 16 * 16;
        std::printf("%-28s %2u subgroups of %2u x %2u, BK %2u: %8.3f ms, %6.1f TFLOP/s (%.1f-%.1f)\n", name.c_str(), nw,
                    16 * c.fm, 16 * c.fn, c.bk, ms[ms.size() / 2], flops / ms[ms.size() / 2] / 1e9,
                    flops / ms.back() / 1e9, flops / ms.front() / 1e9);
        std::fflush(stdout);
      }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "zero123pp-bench-mma-ceiling: %s\n", e.what());
    return 1;
  }
}
