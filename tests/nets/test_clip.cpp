// CLIP text and vision towers on the bundled tiny model vs the official transformers modules
// (goldens from tests/reference/make_goldens.py), in fp32 and fp16 storage.
//
// Tolerances: fp32 storage differs from the fp32 CPU golden only by accumulation order
// (~1e-6 relative per op over a few layers): rel L2 <= 1e-4. fp16 storage rounds every
// activation and weight product input to 11 bits (2^-11 ≈ 4.9e-4 relative per rounding), which
// accumulates over ~10 rounded stages: rel L2 <= 1e-2 (the fp16 target).
#include <gtest/gtest.h>

#include "support/check.hpp"
#include "support/golden.hpp"
#include "support/vk_env.hpp"
#include "z123/nets/clip.hpp"

using namespace z123;

namespace {

double tolerance(DType dt) { return dt == DType::F32 ? 1e-4 : 1e-2; }

class ClipParity : public test::VkTest, public ::testing::WithParamInterface<DType> {};

} // namespace

TEST_P(ClipParity, TextEncoderMatchesTransformers) {
  DType dt = GetParam();
  kernels::Kernels k(device());
  ModelFolder folder = ModelFolder::open(test::tiny_model_dir());
  nets::ClipTextEncoder enc(k, folder, dt);
  test::GoldenFile g("text.safetensors");
  auto ids_f = g.at("input_ids").values;
  std::vector<int32_t> ids(ids_f.begin(), ids_f.end());
  EXPECT_EQ(ids, enc.empty_prompt_ids());
  Tensor out = enc.encode(ids);
  auto want = g.at("last_hidden_state");
  auto got = download(device(), out);
  auto rep = test::compare(got, test::to_double(want.values));
  EXPECT_LE(rep.rel_l2, tolerance(dt)) << rep.summary();
  EXPECT_EQ(rep.nonfinite, 0u);
}

TEST_P(ClipParity, VisionEncoderMatchesTransformers) {
  DType dt = GetParam();
  kernels::Kernels k(device());
  ModelFolder folder = ModelFolder::open(test::tiny_model_dir());
  nets::ClipVisionEncoder enc(k, folder, dt);
  test::GoldenFile g("vision.safetensors");
  auto px = g.at("pixel_values");
  int64_t S = px.shape[2];
  Tensor pixels = make_tensor(device(), dt, {1, S, S, 3}, "pixels");
  upload(device(), pixels, test::nchw_to_nhwc(px.values, 1, 3, S, S));
  Tensor embeds = make_tensor(device(), dt, {1, enc.config().projection_dim}, "image_embeds");
  test::poison(device(), embeds);
  Workspace ws(device());
  vk::Recording rec(device());
  enc.record(rec, ws, pixels, embeds);
  device().run(rec);
  auto got = download(device(), embeds);
  auto rep = test::compare(got, test::to_double(g.at("image_embeds").values));
  EXPECT_LE(rep.rel_l2, tolerance(dt)) << rep.summary();
  EXPECT_EQ(rep.nonfinite, 0u);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ClipParity, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& param_info) { return std::string(dtype_name(param_info.param)); });
