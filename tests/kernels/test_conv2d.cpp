// conv2d(): the convolutions the networks use (3x3 pad 1, UNet stride-2 downsample, VAE
// asymmetric downsample, 1x1 shortcuts, CLIP 14x14/14 patch embedding with Cin 3, conv_out with
// Cout 3, fused nearest upsampling) against a direct float64 NHWC reference that takes the
// checkpoint's [Cout, Cin, kh, kw] weights (so conv_weight_to_khwc is checked end to end), on
// every path/dtype, outputs poisoned first.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "kernels/gemm_dispatch.hpp"
#include "reference_gemm.hpp"
#include "support/check.hpp"
#include "support/vk_env.hpp"
#include "z123/error.hpp"
#include "z123/kernels/conv2d.hpp"
#include "z123/vk/recording.hpp"

using namespace z123;
using kernels::Conv2dParams;
using kernels::Epilogue;

namespace {

Conv2dParams pads(int top, int left, int bottom, int right, int stride, int upsample = 1) {
  return Conv2dParams{stride, top, left, bottom, right, upsample};
}

class Conv2d : public test::GemmPathTest {
protected:
  void check(const test::ConvRefShape& s, const Conv2dParams& p, bool with_bias, bool with_residual, Epilogue act) {
    const DType dt = GetParam().dtype;
    const uint64_t seed = test::test_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + " (Z123_TEST_SEED)");
    const int64_t K = s.KH * s.KW * s.Cin;
    const float wscale = 1.0f / std::sqrt(static_cast<float>(K));
    auto xv = test::as_stored(test::random_uniform(s.B * s.H * s.W * s.Cin, seed, -1, 1), dt);
    auto w_oihw = test::as_stored(test::random_uniform(s.Cout * K, seed + 1, -wscale, wscale), dt);
    std::vector<float> bv, rv;
    if (with_bias) bv = test::as_stored(test::random_uniform(s.Cout, seed + 2, -0.5f, 0.5f), dt);
    int64_t Ho = 0, Wo = 0;
    std::vector<double> ref0 = test::reference_conv2d_nhwc(xv, w_oihw, bv, {}, s, p, act, Ho, Wo);
    std::vector<int64_t> ys{s.B, Ho, Wo, s.Cout};
    if (with_residual) rv = test::as_stored(test::random_uniform(ref0.size(), seed + 3, -1, 1), dt);

    Tensor x = test::device_tensor(device(), dt, {s.B, s.H, s.W, s.Cin}, xv, "x");
    Tensor w = test::device_tensor(device(), dt, {s.Cout, s.KH, s.KW, s.Cin},
                                   kernels::conv_weight_to_khwc(w_oihw, s.Cout, s.Cin, s.KH, s.KW), "w");
    ASSERT_EQ(kernels::conv2d_output_shape(x, w, p), ys);
    Tensor y = make_tensor(device(), dt, ys, "y");
    std::unique_ptr<Tensor> b, r;
    if (with_bias) b = std::make_unique<Tensor>(test::device_tensor(device(), dt, {s.Cout}, bv, "bias"));
    if (with_residual) r = std::make_unique<Tensor>(test::device_tensor(device(), dt, ys, rv, "residual"));
    test::poison(device(), y);

    vk::Recording rec(device());
    kernels::conv2d(*kernels_, rec, x, w, b.get(), y, p, act, r.get());
    rec.finish();
    device().run(rec);

    std::vector<double> ref = with_residual ? test::reference_conv2d_nhwc(xv, w_oihw, bv, rv, s, p, act, Ho, Wo) : ref0;
    std::vector<double> abs_products;
    const bool fp16_sums =
        kernels::detail::gemm_sums_fp16_products(*kernels_, dt, static_cast<uint32_t>(s.Cout), false);
    if (fp16_sums) {
      int64_t ho = 0, wo = 0;
      abs_products = test::reference_conv2d_nhwc(test::abs_values(xv), test::abs_values(w_oihw), {}, {}, s, p,
                                                 Epilogue::None, ho, wo);
    }
    EXPECT_TRUE(test::gemm_close(download(device(), y), ref, dt, fp16_sums ? &abs_products : nullptr));
  }
  // What the shared tile loader (common/gemm_tile_loader.glsl) walks: 3x3 with padding over
  // several row tiles, Cin % 8 != 0 (gathers that span taps), stride 2, nearest upsampling, and
  // few tiles with a long K (split K).
  void check_tile_loader_cases() {
    check({1, 20, 24, 40, 136, 3, 3}, kernels::conv_pad(1), true, true, Epilogue::None);
    check({1, 11, 11, 3, 40, 3, 3}, kernels::conv_pad(1), true, false, Epilogue::Silu);
    check({2, 9, 7, 16, 48, 3, 3}, kernels::conv_pad(1, 2), true, false, Epilogue::Gelu);
    check({1, 5, 6, 8, 40, 3, 3}, pads(1, 1, 1, 1, 1, 2), true, false, Epilogue::None);
    check({2, 6, 5, 96, 200, 3, 3}, kernels::conv_pad(1), true, true, Epilogue::Silu);
  }
};

} // namespace

//                                       B   H   W  Cin Cout kh kw
TEST_P(Conv2d, K3Pad1Bias) { check({2, 9, 7, 8, 12, 3, 3}, kernels::conv_pad(1), true, false, Epilogue::None); }
TEST_P(Conv2d, K3Stride2Pad1UNetDownsample) {
  check({2, 10, 7, 16, 16, 3, 3}, kernels::conv_pad(1, 2), true, false, Epilogue::None);
}
TEST_P(Conv2d, VaeEncoderDownsamplePadBottomRight) {
  check({1, 8, 10, 12, 8, 3, 3}, pads(0, 0, 1, 1, 2), true, false, Epilogue::None);
}
TEST_P(Conv2d, OneByOneShortcutWithResidual) {
  check({2, 5, 6, 24, 40, 1, 1}, kernels::conv_pad(0), true, true, Epilogue::None);
}
TEST_P(Conv2d, ClipPatchEmbedCin3) {
  check({2, 28, 28, 3, 32, 14, 14}, kernels::conv_pad(0, 14), false, false, Epilogue::None);
}
TEST_P(Conv2d, Width64TilesCout192) {
  check({2, 9, 15, 64, 192, 3, 3}, kernels::conv_pad(1), true, true, Epilogue::None);
}
TEST_P(Conv2d, Cin3Cout4Silu) { check({1, 11, 11, 3, 4, 3, 3}, kernels::conv_pad(1), true, false, Epilogue::Silu); }
TEST_P(Conv2d, ConvOutCout3) { check({1, 6, 9, 16, 3, 3, 3}, kernels::conv_pad(1), true, false, Epilogue::None); }
TEST_P(Conv2d, ResnetConv2ResidualGelu) {
  check({2, 6, 5, 32, 32, 3, 3}, kernels::conv_pad(1), true, true, Epilogue::Gelu);
}
TEST_P(Conv2d, Cin4PostQuant1x1NoBias) {
  check({1, 7, 5, 4, 4, 1, 1}, kernels::conv_pad(0), false, false, Epilogue::None);
}
// Cout 8 (quant_conv): the portable kernel's one-column workgroups with 8-wide blocks.
TEST_P(Conv2d, QuantConv1x1Cout8) { check({2, 6, 7, 8, 8, 1, 1}, kernels::conv_pad(0), true, false, Epilogue::None); }
TEST_P(Conv2d, NearestUpsample2Then3x3) {
  check({1, 5, 6, 8, 8, 3, 3}, pads(1, 1, 1, 1, 1, 2), true, false, Epilogue::None);
}
// Several coopmat tiles in M (480 pixels) and N (136 > 128), Cin % 8 == 0.
TEST_P(Conv2d, MultiTile) { check({1, 20, 24, 40, 136, 3, 3}, kernels::conv_pad(1), true, true, Epilogue::None); }
// Cin % 4 == 0 but % 8 != 0: the coopmat kernel's element-wise loader, the portable vec4 one.
TEST_P(Conv2d, Cin12Stride2Pad1) {
  check({1, 9, 9, 12, 20, 3, 3}, kernels::conv_pad(1, 2), false, true, Epilogue::None);
}

// Fused upsampling over several row tiles, with residual and SiLU, Cin % 8 == 0.
TEST_P(Conv2d, NearestUpsample2MultiTileResidualSilu) {
  check({2, 9, 11, 24, 40, 3, 3}, pads(1, 1, 1, 1, 1, 2), true, true, Epilogue::Silu);
}
// Stride 2 on the coopmat2 kernel's 128 x 256 tiles (pinned): K = 648, ten whole 64-deep steps
// and a partial one, a partial second tile in N.
// An innermost UNet level in miniature: few output pixels, many input channels, so the coopmat
// kernels split K (864 = 9 x 96 into 3 ranges of 320, the last partial); residual and SiLU go
// through the reduction kernel.
TEST_P(Conv2d, SplitKSmallImageManyChannels) {
  check({2, 6, 5, 96, 200, 3, 3}, kernels::conv_pad(1), true, true, Epilogue::Silu);
}
// The portable kernel's split K on a conv (forced, as Linear.PortableSplitKForced): K = 864 in 3
// ranges of 320 that cut taps in the middle of their 96 channels.
TEST_P(Conv2d, PortableSplitKCutsTaps) {
  kernels::detail::force_portable_split_k_for_testing(3);
  check({2, 6, 5, 96, 20, 3, 3}, kernels::conv_pad(1), true, true, Epilogue::Silu);
  kernels::detail::force_portable_split_k_for_testing(0);
}
// The tiled portable kernel (forced as Linear.TiledPortableKernel) on the tile loader's cases.
TEST_P(Conv2d, TiledPortableKernel) {
  for_each_tiled_portable_config([&] { check_tile_loader_cases(); });
}
// Every Z123_GEMM_FIXED_GEOMETRY mode (for_each_fixed_geometry): the tile loader's cases, and a 1x1.
TEST_P(Conv2d, EveryFixedGeometry) {
  for_each_fixed_geometry([&] {
    check_tile_loader_cases();
    check({1, 7, 9, 24, 40, 1, 1}, kernels::conv_pad(0), true, true, Epilogue::None);
  });
}
// Every KHR tiling (for_each_khr_tiling; the VAE decoder's large convolutions take 128 x 256
// tiles, which no smaller shape gets from the rule): the tile loader's cases, and whole 128 x 256
// tiles with partial ones beside them in both directions.
TEST_P(Conv2d, EveryKhrTiling) {
  for_each_khr_tiling([&] {
    check_tile_loader_cases();
    check({1, 20, 24, 40, 264, 3, 3}, kernels::conv_pad(1), true, true, Epilogue::Silu);
  });
}
TEST_P(Conv2d, Stride2WideTilesGelu) {
  Tuning wide = device().tuning();
  wide.gemm_cm2_tile_n = 256;
  use_tuning(wide);
  check({1, 17, 15, 72, 264, 3, 3}, kernels::conv_pad(1, 2), true, false, Epilogue::Gelu);
}

INSTANTIATE_TEST_SUITE_P(Gemm, Conv2d, ::testing::ValuesIn(test::gemm_test_cases()),
                         [](const auto& param_info) { return test::gemm_case_name(param_info.param); });

class Conv2dArgs : public test::VkTest {};

namespace {
template <class F>
void expect_invalid(F&& f, const char* what) {
  try {
    f();
    ADD_FAILURE() << what << ": no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << what << ": " << e.what();
  }
}
} // namespace

TEST_F(Conv2dArgs, WrongShapesAndParamsThrowInvalidArgument) {
  kernels::Kernels k(device());
  vk::Recording rec(device());
  Tensor x = make_tensor(device(), DType::F32, {1, 6, 6, 4}, "x");
  Tensor w = make_tensor(device(), DType::F32, {8, 3, 3, 4}, "w");
  Tensor y = make_tensor(device(), DType::F32, {1, 6, 6, 8}, "y");
  Tensor w_cin = make_tensor(device(), DType::F32, {8, 3, 3, 5}, "w_cin");
  Tensor w_big = make_tensor(device(), DType::F32, {8, 9, 9, 4}, "w_big");
  Tensor x_3d = make_tensor(device(), DType::F32, {6, 6, 4}, "x_3d");
  Tensor y_bad = make_tensor(device(), DType::F32, {1, 3, 3, 8}, "y_bad");
  Tensor b_bad = make_tensor(device(), DType::F32, {4}, "b_bad");
  Tensor y16 = make_tensor(device(), DType::F16, {1, 6, 6, 8}, "y16");
  auto p = kernels::conv_pad(1);
  expect_invalid([&] { kernels::conv2d(k, rec, x, w_cin, nullptr, y, p); }, "Cin mismatch");
  expect_invalid([&] { kernels::conv2d(k, rec, x_3d, w, nullptr, y, p); }, "3-D input");
  expect_invalid([&] { kernels::conv2d(k, rec, x, w, nullptr, y_bad, p); }, "wrong output shape");
  expect_invalid([&] { kernels::conv2d(k, rec, x, w, &b_bad, y, p); }, "wrong bias shape");
  expect_invalid([&] { kernels::conv2d(k, rec, x, w, nullptr, y, p, Epilogue::None, &y_bad); }, "wrong residual");
  expect_invalid([&] { kernels::conv2d(k, rec, x, w, nullptr, y16, p); }, "dtype mismatch");
  expect_invalid([&] { kernels::conv2d(k, rec, x, w_big, nullptr, y, kernels::conv_pad(0)); }, "kernel > input");
  expect_invalid([&] { kernels::conv2d(k, rec, x, w, nullptr, y, kernels::conv_pad(1, 0)); }, "stride 0");
  expect_invalid([&] { kernels::conv2d(k, rec, x, w, nullptr, y, kernels::conv_pad(-1)); }, "negative padding");
  expect_invalid([&] { kernels::conv_weight_to_khwc(std::vector<float>(10), 8, 4, 3, 3); }, "weight size");
  EXPECT_EQ(rec.dispatch_count(), 0u);
}

TEST(ConvWeights, OihwToKhwcMovesEveryElement) {
  const int64_t co = 3, ci = 5, kh = 2, kw = 3;
  std::vector<float> oihw(co * ci * kh * kw);
  for (size_t i = 0; i < oihw.size(); ++i) oihw[i] = static_cast<float>(i);
  auto khwc = kernels::conv_weight_to_khwc(oihw, co, ci, kh, kw);
  ASSERT_EQ(khwc.size(), oihw.size());
  for (int64_t o = 0; o < co; ++o)
    for (int64_t i = 0; i < ci; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          ASSERT_EQ(khwc[((o * kh + y) * kw + x) * ci + i], oihw[((o * ci + i) * kh + y) * kw + x])
              << o << " " << i << " " << y << " " << x;
}

TEST(ConvWeights, OutputShapes) {
  // Shapes only: conv2d_output_shape needs no buffers, so null-buffer tensors suffice.
  auto t = [](std::vector<int64_t> s) { return Tensor{nullptr, DType::F32, std::move(s)}; };
  using V = std::vector<int64_t>;
  EXPECT_EQ(kernels::conv2d_output_shape(t({2, 120, 80, 320}), t({320, 3, 3, 320}), kernels::conv_pad(1, 2)),
            (V{2, 60, 40, 320}));
  EXPECT_EQ(kernels::conv2d_output_shape(t({1, 512, 512, 128}), t({128, 3, 3, 128}), pads(0, 0, 1, 1, 2)),
            (V{1, 256, 256, 128}));
  EXPECT_EQ(kernels::conv2d_output_shape(t({1, 224, 224, 3}), t({1280, 14, 14, 3}), kernels::conv_pad(0, 14)),
            (V{1, 16, 16, 1280}));
  EXPECT_EQ(kernels::conv2d_output_shape(t({1, 480, 320, 256}), t({256, 3, 3, 256}), pads(1, 1, 1, 1, 1, 2)),
            (V{1, 960, 640, 256}));
}
