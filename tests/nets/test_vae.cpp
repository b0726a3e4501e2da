// The VAE on the bundled tiny model vs the official diffusers AutoencoderKL (goldens from
// tests/reference/make_goldens.py): encoder moments and decoder output, fp32 and fp16 storage.
// Tolerances as in test_clip.cpp: fp32 1e-4 relative L2 (accumulation order only), fp16 1e-2
// (11-bit rounding of every stored activation over ~20 stages).
#include <gtest/gtest.h>

#include "support/check.hpp"
#include "support/golden.hpp"
#include "support/vk_env.hpp"
#include "z123/nets/vae.hpp"

using namespace z123;

namespace {

double tolerance(DType dt) { return dt == DType::F32 ? 1e-4 : 1e-2; }

class VaeParity : public test::VkTest, public ::testing::WithParamInterface<DType> {};

} // namespace

TEST_P(VaeParity, EncoderMomentsMatchDiffusers) {
  DType dt = GetParam();
  kernels::Kernels k(device());
  ModelFolder folder = ModelFolder::open(test::tiny_model_dir());
  nets::Vae vae(k, folder, dt);
  test::GoldenFile g("vae.safetensors");
  auto in = g.at("enc.input");
  int64_t H = in.shape[2], W = in.shape[3], f = vae.downscale();
  Tensor image = make_tensor(device(), dt, {1, H, W, 3}, "image");
  upload(device(), image, test::nchw_to_nhwc(in.values, 1, 3, H, W));
  Tensor moments = make_tensor(device(), dt, {1, H / f, W / f, 8}, "moments");
  test::poison(device(), moments);
  Workspace ws(device());
  vk::Recording rec(device());
  vae.record_encode(rec, ws, image, moments);
  device().run(rec);
  auto got = test::nhwc_to_nchw(download(device(), moments), 1, H / f, W / f, 8);
  auto rep = test::compare(got, test::to_double(g.at("enc.moments").values));
  EXPECT_LE(rep.rel_l2, tolerance(dt)) << rep.summary();
  EXPECT_EQ(rep.nonfinite, 0u);
}

TEST_P(VaeParity, DecoderOutputMatchesDiffusers) {
  DType dt = GetParam();
  kernels::Kernels k(device());
  ModelFolder folder = ModelFolder::open(test::tiny_model_dir());
  nets::Vae vae(k, folder, dt);
  test::GoldenFile g("vae.safetensors");
  auto lat = g.at("dec.latent");
  int64_t h = lat.shape[2], w = lat.shape[3], f = vae.downscale();
  Tensor latent = make_tensor(device(), dt, {1, h, w, 4}, "latent");
  upload(device(), latent, test::nchw_to_nhwc(lat.values, 1, 4, h, w));
  Tensor image = make_tensor(device(), dt, {1, h * f, w * f, 3}, "image");
  test::poison(device(), image);
  Workspace ws(device());
  vk::Recording rec(device());
  vae.record_decode(rec, ws, latent, image);
  device().run(rec);
  auto got = test::nhwc_to_nchw(download(device(), image), 1, h * f, w * f, 3);
  auto rep = test::compare(got, test::to_double(g.at("dec.output").values));
  EXPECT_LE(rep.rel_l2, tolerance(dt)) << rep.summary();
  EXPECT_EQ(rep.nonfinite, 0u);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, VaeParity, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& param_info) { return std::string(dtype_name(param_info.param)); });
