// Float64 CPU references for the GEMM family (linear, conv2d). Inputs are the float values the
// device holds (callers round them to fp16 first for F16 tests); every product and sum is in
// double, so the reference carries no accumulation error of its own.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <memory>

#include "kernels/gemm_dispatch.hpp"
#include "support/vk_env.hpp"
#include "vk/shader_table.hpp"
#include "z123/kernels/conv2d.hpp"
#include "z123/kernels/kernels.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/tensor.hpp"

namespace z123::test {

// act(v) in double: GELU with std::erf, SiLU with std::exp.
double reference_activation(double v, kernels::Epilogue act);

// y[M, N] = act(x[M, K] · w[N, K]^T + bias[N]) + residual[M, N]; bias/residual may be empty.
std::vector<double> reference_linear(const std::vector<float>& x, const std::vector<float>& w,
                                     const std::vector<float>& bias, const std::vector<float>& residual, int64_t M,
                                     int64_t N, int64_t K, kernels::Epilogue act);

struct ConvRefShape {
  int64_t B, H, W, Cin, Cout, KH, KW;
};

// Direct convolution with NHWC x [B, H, W, Cin] and the CHECKPOINT weight layout
// [Cout, Cin, kh, kw] (independent of conv_weight_to_khwc), nearest upsampling, asymmetric
// zero padding and stride as in Conv2dParams. Output NHWC [B, Ho, Wo, Cout].
std::vector<double> reference_conv2d_nhwc(const std::vector<float>& x, const std::vector<float>& w_oihw,
                                          const std::vector<float>& bias, const std::vector<float>& residual,
                                          const ConvRefShape& s, const kernels::Conv2dParams& p, kernels::Epilogue act,
                                          int64_t& Ho, int64_t& Wo);

// ---- shared by test_matmul.cpp and test_conv2d.cpp ----

// One implementation path and storage dtype: the GEMM tests run every case once per entry of
// gemm_test_cases() (portable f32, portable f16, NV cooperative matrix f16, NV cooperative
// matrix 2 f16; the coopmat cases skip where the path is unavailable).
struct GemmCase {
  kernels::Path path;
  DType dtype;
};
std::vector<GemmCase> gemm_test_cases();
std::string gemm_case_name(const GemmCase& c); // "portable_f32", for test names

// Fixture of the tests parameterized by GemmCase: a kernel context with the case's matmul path
// (the test is skipped where the device lacks it).
class GemmPathTest : public VkTest, public ::testing::WithParamInterface<GemmCase> {
protected:
  void SetUp() override {
    VkTest::SetUp();
    kernels_ = std::make_unique<kernels::Kernels>(device());
    if (!kernels_->path_available(GetParam().path))
      GTEST_SKIP() << kernels::path_name(GetParam().path) << " is not available on " << device().info().name;
    kernels_->set_matmul_path(GetParam().path);
  }
  // Makes kernels_ again with `tuning` (on the case's path): the knobs a test pins.
  void use_tuning(const Tuning& tuning) {
    kernels_ = std::make_unique<kernels::Kernels>(device(), tuning);
    kernels_->set_matmul_path(GetParam().path);
  }
  // Runs `checks` once per configuration of the tiled portable kernel (128 x 128 and 64 x 64
  // tiles, packed fp16 and fp32 products), each pinned through the device's knobs and named in the
  // test's trace.
  template <typename Checks>
  void for_each_tiled_portable_config(Checks checks) {
    using PG = Tuning::PortableGemm;
    using PA = Tuning::PortableArith;
    for (PG tiles : {PG::Tiled128, PG::Tiled64})
      for (PA products : {PA::Packed, PA::Fp32}) {
        SCOPED_TRACE(std::string(tiles == PG::Tiled128 ? "128 x 128" : "64 x 64") + " tiles, " +
                     (products == PA::Packed ? "packed" : "fp32") + " products");
        Tuning t = device().tuning();
        t.portable_gemm = tiles;
        t.portable_arith = products;
        use_tuning(t);
        checks();
      }
  }
  // Runs `checks` once per Tuning::gemm_fixed_geometry mode (all, taps, k, none) on the kernel
  // that reads it for this case: the cooperative-matrix GEMM on its paths, the tiled portable
  // one (64 x 64, packed products) for portable fp16; portable fp32's plain kernel ignores it.
  template <typename Checks>
  void for_each_fixed_geometry(Checks checks) {
    using GF = Tuning::GemmFixedGeometry;
    const std::pair<GF, const char*> modes[] = {{GF::All, "all"}, {GF::Taps, "taps"}, {GF::K, "k"}, {GF::None, "none"}};
    for (const auto& [mode, name] : modes) {
      SCOPED_TRACE(std::string("Z123_GEMM_FIXED_GEOMETRY=") + name);
      Tuning t = device().tuning();
      t.gemm_fixed_geometry = mode;
      if (GetParam().path == kernels::Path::Portable && GetParam().dtype == DType::F16)
        t.portable_gemm = Tuning::PortableGemm::Tiled64;
      use_tuning(t);
      checks();
    }
  }
  // Runs `checks` once per KHR tiling this build embeds (Z123_GEMM_TILE: every name of
  // kernels::detail::khr_tiling_names(), the bench-only ones where Z123_BENCH_VARIANTS built them),
  // each pinned through the device's knobs and named in the test's trace. The rule picks some
  // tilings only at shapes far larger than a test's (128 x 256 for convolutions of 1,024+
  // workgroups), so without this they run first in a model. Skipped off the KHR path, where the
  // knob does not apply.
  template <typename Checks>
  void for_each_khr_tiling(Checks checks) {
    if (GetParam().path != kernels::Path::KhrCoopMat) GTEST_SKIP() << "the KHR tilings apply to the KHR path only";
    const kernels::CoopmatShape* shape = kernels_->khr_gemm_shape();
    if (!shape || *shape->suffix) // gemm_dispatch.cpp khr_tilings_apply
      GTEST_SKIP() << "the KHR tilings are built for the default fragment shape only";
    int ran = 0;
    for (const std::string& name : kernels::detail::khr_tiling_names()) {
      bool built = true;
      for (const std::string& v : kernels::detail::khr_tiling_variants(name)) built = built && vk::find_shader(v);
      if (!built) continue;
      SCOPED_TRACE("Z123_GEMM_TILE=" + name);
      Tuning t = device().tuning();
      t.gemm_tile = name;
      use_tuning(t);
      checks();
      ++ran;
    }
    EXPECT_GE(ran, 3) << "the rule's tilings are always built";
  }
  std::unique_ptr<kernels::Kernels> kernels_;
};

// Outputs are O(1) in these tests (weights scaled by 1/sqrt(K)).
// fp32: accumulation order differs from the reference by ~sqrt(K) roundings of 2^-24 on O(1)
// partial sums (< 2e-6 for K <= 1000) -> atol 1e-5, rtol 1e-5.
// fp16: additionally the single rounding of the output to fp16, 2^-11 relative -> rtol 1e-3.
struct Tolerance {
  double atol, rtol;
};
Tolerance gemm_tolerance(DType dtype);

// Checks a GEMM-family output against its float64 reference with the tolerance of how the kernel
// computed it: gemm_tolerance, and where it summed packed fp16 products (the tiled portable
// kernel's F16_ARITH; kernels::detail::gemm_sums_fp16_products says when) also
//  - per element, the fp16 summation bound kFp16SumGamma (support/check.hpp) times
//    sum_k |x_k w_k|, times 1.2 for the steepest activation slope (GELU's 1.13); abs_products is
//    the reference run on |x| and |w| without bias, residual or activation;
//  - overall, a relative L2 error of at most 2e-3: fp16 partial sums gave 2.4e-4 to 5.3e-4 on
//    the tests' shapes (fp32 products 1-2e-4, the output's own rounding), while one product
//    missing from a sum of K is an error near 1 / sqrt(K), 9e-3 at the UNet's largest K.
::testing::AssertionResult gemm_close(const std::vector<float>& got, const std::vector<double>& ref, DType dtype,
                                      const std::vector<double>* abs_products);
// |v| for each element (the inputs of abs_products above).
std::vector<float> abs_values(std::vector<float> v);

// A device tensor holding `values` (rounded to fp16 when dtype is F16).
Tensor device_tensor(vk::Device& device, DType dtype, const std::vector<int64_t>& shape,
                     const std::vector<float>& values, const std::string& name);

} // namespace z123::test
