// Throughput of the GEMM kernels on the model's shapes. Disabled by default (timing, not
// correctness); run with --gtest_also_run_disabled_tests --gtest_filter='*GemmBench*'.
// Z123_BENCH_FULL=1 uses the real sizes (GPU); otherwise scaled-down ones that finish on
// lavapipe. Prints GFLOP/s per case and path; Z123_BENCH_ONLY=<case name, e.g. nvcoopmat_f16>
// restricts it to one path.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "reference_gemm.hpp"
#include "support/check.hpp"
#include "support/vk_env.hpp"
#include "z123/kernels/conv2d.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/vk/recording.hpp"

using namespace z123;

namespace {

bool full_size() {
  const char* f = std::getenv("Z123_BENCH_FULL");
  return f && *f && std::string(f) != "0";
}

// Median-free simple timing: one warm-up submission, then `reps` dispatches in one recording
// timed by GPU timestamps (wall clock where the device has none).
double time_ms(vk::Device& dev, const std::function<void(vk::Recording&)>& record, int reps) {
  {
    vk::Recording warm(dev);
    record(warm);
    warm.finish();
    dev.run(warm);
  }
  vk::Recording rec(dev, 4);
  rec.timestamp("start");
  for (int i = 0; i < reps; ++i) record(rec);
  rec.timestamp("end");
  rec.finish();
  auto t0 = std::chrono::steady_clock::now();
  dev.run(rec);
  double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (dev.info().timestamps) return rec.timings().back().second / reps;
  return wall / reps;
}

} // namespace

class GemmBench : public test::VkTest {};

TEST_F(GemmBench, DISABLED_ModelShapes) {
  const bool full = full_size();
  const int reps = full ? 20 : 4;
  struct LinearCase {
    const char* name;
    int64_t M, N, K;
  };
  struct ConvCase {
    const char* name;
    int64_t B, H, W, Cin, Cout, k;
    kernels::Conv2dParams p;
  };
  std::vector<LinearCase> lin =
      full ? std::vector<LinearCase>{{"unet L0 geglu proj 19200x2560x320", 19200, 2560, 320},
                                     {"unet L0 ff out 19200x320x1280", 19200, 320, 1280},
                                     {"unet L0 q 19200x320x320", 19200, 320, 320},
                                     {"unet L2 proj 1200x1280x1280", 1200, 1280, 1280}}
           : std::vector<LinearCase>{{"1024x320x320", 1024, 320, 320}, {"256x1280x160", 256, 1280, 160}};
  std::vector<ConvCase> conv =
      full ? std::vector<ConvCase>{{"vae dec 960x640 256->128 3x3", 1, 960, 640, 256, 128, 3, kernels::conv_pad(1)},
                                   {"vae dec 480x320 512->512 3x3", 1, 480, 320, 512, 512, 3, kernels::conv_pad(1)},
                                   {"unet L0 320->320 3x3 B2", 2, 120, 80, 320, 320, 3, kernels::conv_pad(1)},
                                   {"unet L3 1280->1280 3x3 B2", 2, 15, 10, 1280, 1280, 3, kernels::conv_pad(1)},
                                   {"vae dec conv_out 128->3", 1, 960, 640, 128, 3, 3, kernels::conv_pad(1)}}
           : std::vector<ConvCase>{{"64x64 128->128 3x3", 1, 64, 64, 128, 128, 3, kernels::conv_pad(1)},
                                   {"32x32 3->64 3x3", 1, 32, 32, 3, 64, 3, kernels::conv_pad(1)}};

  const char* only = std::getenv("Z123_BENCH_ONLY"); // e.g. "nvcoopmat_f16"
  for (const test::GemmCase& gc : test::gemm_test_cases()) {
    kernels::Kernels k(device());
    if (!k.path_available(gc.path)) continue;
    if (only && *only && test::gemm_case_name(gc) != only) continue;
    k.set_matmul_path(gc.path);
    const DType dt = gc.dtype;
    for (const auto& c : lin) {
      Tensor x = test::device_tensor(device(), dt, {c.M, c.K}, test::random_uniform(c.M * c.K, 1), "x");
      Tensor w = test::device_tensor(device(), dt, {c.N, c.K}, test::random_uniform(c.N * c.K, 2, -0.05f, 0.05f), "w");
      Tensor b = test::device_tensor(device(), dt, {c.N}, test::random_uniform(c.N, 3), "b");
      Tensor y = make_tensor(device(), dt, {c.M, c.N}, "y");
      double ms = time_ms(
          device(), [&](vk::Recording& r) { kernels::linear(k, r, x, w, &b, y); }, reps);
      std::printf("%-12s %-40s %9.3f ms %9.1f GFLOP/s\n", test::gemm_case_name(gc).c_str(), c.name, ms,
                  2.0 * c.M * c.N * c.K / ms * 1e-6);
    }
    for (const auto& c : conv) {
      Tensor x = test::device_tensor(device(), dt, {c.B, c.H, c.W, c.Cin},
                                     test::random_uniform(c.B * c.H * c.W * c.Cin, 1), "x");
      Tensor w = test::device_tensor(device(), dt, {c.Cout, c.k, c.k, c.Cin},
                                     test::random_uniform(c.Cout * c.k * c.k * c.Cin, 2, -0.05f, 0.05f), "w");
      Tensor b = test::device_tensor(device(), dt, {c.Cout}, test::random_uniform(c.Cout, 3), "b");
      auto ys = kernels::conv2d_output_shape(x, w, c.p);
      Tensor y = make_tensor(device(), dt, ys, "y");
      double ms = time_ms(
          device(), [&](vk::Recording& r) { kernels::conv2d(k, r, x, w, &b, y, c.p); }, reps);
      double flop = 2.0 * ys[0] * ys[1] * ys[2] * ys[3] * c.k * c.k * c.Cin;
      std::printf("%-12s %-40s %9.3f ms %9.1f GFLOP/s\n", test::gemm_case_name(gc).c_str(), c.name, ms,
                  flop / ms * 1e-6);
    }
  }
}
