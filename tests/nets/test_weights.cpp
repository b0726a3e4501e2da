// Weights stored fused (nets::FusedWeight): the fused tensor holds its parts' rows, converted and
// in order, exactly as the parts load on their own; the parts are not stored; groups whose parts
// are missing, not 2-D or of other widths are refused.
#include <gtest/gtest.h>

#include "support/golden.hpp"
#include "support/vk_env.hpp"
#include "z123/error.hpp"
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
