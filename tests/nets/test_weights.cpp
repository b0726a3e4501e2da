// Weights stored fused (nets::FusedWeight): the fused tensor holds its parts' rows, converted and
// in order, exactly as the parts load on their own; the parts are not stored, unless a fused
// tensor of one part keeps one alone; groups whose parts are missing, not 2-D, of other widths or
// repeated are refused.
#include <gtest/gtest.h>

#include "support/check.hpp"
#include "support/golden.hpp"
#include "support/vk_env.hpp"
#include "z123/error.hpp"
#include "z123/kernels/winograd.hpp"
#include "z123/nets/weights.hpp"

using namespace z123;

namespace {

class FusedWeights : public test::VkTest {};

const std::string kAttn = "down_blocks.0.attentions.0.transformer_blocks.0.attn1";

} // namespace

TEST_F(FusedWeights, HoldTheirPartsRowsInOrder) {
  ModelFolder folder = ModelFolder::open(test::tiny_model_dir());
  for (DType dt : {DType::F32, DType::F16}) {
    SCOPED_TRACE(dtype_name(dt));
    nets::Weights plain(device(), folder, ModelModule::Unet, dt);
    const std::vector<std::string> parts{kAttn + ".to_k.weight", kAttn + ".to_v.weight", kAttn + ".to_q.weight"};
    nets::Weights fused(device(), folder, ModelModule::Unet, dt, {}, nullptr, {{kAttn + ".to_kvq.weight", parts}});
    std::vector<float> want;
    int64_t rows = 0;
    for (const std::string& p : parts) {
      std::vector<float> v = download(device(), plain.at(p));
      want.insert(want.end(), v.begin(), v.end());
      rows += plain.at(p).dim(0);
      EXPECT_FALSE(fused.has(p)) << p << " is stored besides the fused tensor";
    }
    const Tensor& f = fused.at(kAttn + ".to_kvq.weight");
    EXPECT_EQ(f.shape, (std::vector<int64_t>{rows, plain.at(parts[0]).dim(1)}));
    EXPECT_EQ(download(device(), f), want);
    EXPECT_EQ(fused.count(), plain.count() - 2);
  }
}

// A part in a group and in a fused tensor of its own under its own name (the query projection the
// UNet's reference pass runs alone): stored in both, with the same values.
TEST_F(FusedWeights, APartMayAlsoBeKeptAlone) {
  ModelFolder folder = ModelFolder::open(test::tiny_model_dir());
  nets::Weights plain(device(), folder, ModelModule::Unet, DType::F16);
  const std::string q = kAttn + ".to_q.weight";
  nets::Weights fused(device(), folder, ModelModule::Unet, DType::F16, {}, nullptr,
                      {{kAttn + ".to_kvq.weight", {kAttn + ".to_k.weight", kAttn + ".to_v.weight", q}}, {q, {q}}});
  ASSERT_TRUE(fused.has(q));
  EXPECT_EQ(fused.at(q).shape, plain.at(q).shape);
  const std::vector<float> alone = download(device(), fused.at(q)),
                           kvq = download(device(), fused.at(kAttn + ".to_kvq.weight"));
  EXPECT_EQ(alone, download(device(), plain.at(q)));
  EXPECT_EQ(std::vector<float>(kvq.end() - static_cast<std::ptrdiff_t>(alone.size()), kvq.end()), alone);
  EXPECT_EQ(fused.count(), plain.count() - 1);
}

TEST_F(FusedWeights, RefuseGroupsThatDoNotFit) {
  ModelFolder folder = ModelFolder::open(test::tiny_model_dir());
  const std::vector<std::vector<std::string>> bad{
      {kAttn + ".to_k.weight", kAttn + ".no_such.weight"},                                         // missing
      {kAttn + ".to_k.weight", kAttn + ".to_out.0.bias"},                                          // not 2-D
      {kAttn + ".to_k.weight", "down_blocks.0.resnets.0.conv1.weight"},                            // 4-D
      {kAttn + ".to_k.weight", "down_blocks.0.attentions.0.transformer_blocks.0.ff.net.2.weight"}, // wider
      {kAttn + ".to_k.weight", kAttn + ".to_k.weight"},                                            // twice
  };
  for (const auto& parts : bad) {
    SCOPED_TRACE(parts[1]);
    EXPECT_THROW(nets::Weights(device(), folder, ModelModule::Unet, DType::F32, {}, nullptr, {{"fused.weight", parts}}),
                 Error);
  }
}

// Weights in Winograd form (the `winograd` names): [Cout, 16, Cin] holding
// kernels::conv_weight_to_winograd of the checkpoint's values, rounded once to the storage type;
// names that are not 3x3 conv weights are refused.
class WinogradWeights : public test::VkTest {};

TEST_F(WinogradWeights, HoldTheTransformOfTheCheckpointWeight) {
  ModelFolder folder = ModelFolder::open(test::tiny_model_dir());
  const std::string name = "down_blocks.0.resnets.0.conv1.weight";
  nets::Weights plain(device(), folder, ModelModule::Unet, DType::F32);
  const Tensor& w = plain.at(name); // [Cout, 3, 3, Cin]
  const int64_t cout = w.dim(0), cin = w.dim(3);
  std::vector<float> khwc = download(device(), w), oihw(khwc.size());
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t t = 0; t < 9; ++t)
      for (int64_t c = 0; c < cin; ++c) oihw[(o * cin + c) * 9 + t] = khwc[(o * 9 + t) * cin + c];
  const std::vector<float> want = kernels::conv_weight_to_winograd(oihw, cout, cin);
  for (DType dt : {DType::F32, DType::F16}) {
    SCOPED_TRACE(dtype_name(dt));
    nets::Weights wino(device(), folder, ModelModule::Unet, dt, {}, nullptr, {}, {name});
    const Tensor& u = wino.at(name);
    EXPECT_EQ(u.shape, (std::vector<int64_t>{cout, 16, cin}));
    EXPECT_EQ(download(device(), u), dt == DType::F16 ? test::as_stored(want, dt) : want);
    EXPECT_EQ(wino.count(), plain.count());
  }
}

TEST_F(WinogradWeights, RefuseWhatIsNotA3x3Conv) {
  ModelFolder folder = ModelFolder::open(test::tiny_model_dir());
  for (const char* name : {"down_blocks.0.resnets.0.norm1.weight", "no_such.weight", "conv_out.bias"}) {
    SCOPED_TRACE(name);
    EXPECT_THROW(nets::Weights(device(), folder, ModelModule::Unet, DType::F32, {}, nullptr, {}, {name}), Error);
  }
}
