// Expected tensor lists: the real v1.2 configs must reproduce zero123pp-v1.2-tensors.tsv exactly
// (names, shapes, order) and the published parameter totals; the tiny test configs are checked
// against counts worked out by hand, block by block, independently of the generator's loops.
#include "io_test_util.hpp"
#include "support/synthetic_model.hpp"
#include "z123/model/expected_tensors.hpp"
#include "z123/model/model_folder.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

namespace {

using namespace z123;
using z123::test::shared_test_data;
using z123::test::v12_configs;

struct TsvRow {
  std::string name;
  std::string shape; // "[320, 4, 3, 3]"
  std::uint64_t numel = 0;
};

std::map<std::string, std::vector<TsvRow>> load_tsv() {
  std::ifstream in(shared_test_data() / "zero123pp-v1.2-tensors.tsv");
  EXPECT_TRUE(in) << "cannot open the tensor TSV";
  std::map<std::string, std::vector<TsvRow>> rows;
  std::string line;
  std::getline(in, line); // header
  EXPECT_EQ(line, "module\ttensor\tshape\tnumel");
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string module, numel;
    TsvRow r;
    std::getline(ls, module, '\t');
    std::getline(ls, r.name, '\t');
    std::getline(ls, r.shape, '\t');
    std::getline(ls, numel, '\t');
    r.numel = std::stoull(numel);
    rows[module].push_back(r);
  }
  return rows;
}

void expect_matches_tsv(const std::vector<ExpectedTensor>& got, const std::vector<TsvRow>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].name, want[i].name) << "row " << i;
    ASSERT_EQ(format_shape(got[i].shape), want[i].shape) << got[i].name;
    ASSERT_EQ(got[i].numel(), want[i].numel) << got[i].name;
  }
}

class ExpectedTensorsTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    tsv_ = new std::map<std::string, std::vector<TsvRow>>(load_tsv());
    configs_ = new ModelConfigs();
    configs_->unet = load_unet_config(v12_configs() / "unet/config.json");
    configs_->vae = load_vae_config(v12_configs() / "vae/config.json");
    configs_->text_encoder = load_clip_text_config(v12_configs() / "text_encoder/config.json");
    configs_->vision_encoder = load_clip_vision_config(v12_configs() / "vision_encoder/config.json");
  }
  static void TearDownTestSuite() {
    delete tsv_;
    delete configs_;
  }
  static std::map<std::string, std::vector<TsvRow>>* tsv_;
  static ModelConfigs* configs_;
};
std::map<std::string, std::vector<TsvRow>>* ExpectedTensorsTest::tsv_ = nullptr;
ModelConfigs* ExpectedTensorsTest::configs_ = nullptr;

TEST_F(ExpectedTensorsTest, UnetMatchesTsv) {
  const auto t = expected_unet_tensors(configs_->unet);
  EXPECT_EQ(t.size(), 686u);
  expect_matches_tsv(t, tsv_->at("unet"));
  EXPECT_EQ(total_numel(t), 865'910'724u);
}

TEST_F(ExpectedTensorsTest, VaeMatchesTsv) {
  const auto t = expected_vae_tensors(configs_->vae);
  EXPECT_EQ(t.size(), 248u);
  expect_matches_tsv(t, tsv_->at("vae"));
  EXPECT_EQ(total_numel(t), 83'653'863u);
}

TEST_F(ExpectedTensorsTest, TextEncoderMatchesTsv) {
  const auto t = expected_clip_text_tensors(configs_->text_encoder);
  EXPECT_EQ(t.size(), 372u);
  expect_matches_tsv(t, tsv_->at("text_encoder"));
  EXPECT_EQ(total_numel(t), 340'387'840u);
}

TEST_F(ExpectedTensorsTest, VisionEncoderMatchesTsv) {
  const auto t = expected_clip_vision_tensors(configs_->vision_encoder);
  EXPECT_EQ(t.size(), 520u);
  expect_matches_tsv(t, tsv_->at("vision_encoder"));
  EXPECT_EQ(total_numel(t), 632'076'800u);
}

// Spec §13.1 parameter split per top-level block.
TEST_F(ExpectedTensorsTest, UnetParameterSplitMatchesSpec) {
  std::map<std::string, std::uint64_t> split;
  for (const auto& t : expected_unet_tensors(configs_->unet)) {
    std::string key = t.name.substr(0, t.name.find('.'));
    if (key == "down_blocks" || key == "up_blocks") key = t.name.substr(0, t.name.find('.', key.size() + 1));
    split[key] += t.numel();
  }
  EXPECT_EQ(split["conv_in"], 11'840u);
  EXPECT_EQ(split["time_embedding"], 2'050'560u);
  EXPECT_EQ(split["down_blocks.0"], 10'852'160u);
  EXPECT_EQ(split["down_blocks.1"], 37'473'920u);
  EXPECT_EQ(split["down_blocks.2"], 141'303'040u);
  EXPECT_EQ(split["down_blocks.3"], 62'277'120u);
  EXPECT_EQ(split["mid_block"], 97'693'440u);
  EXPECT_EQ(split["up_blocks.0"], 162'241'280u);
  EXPECT_EQ(split["up_blocks.1"], 260'296'960u);
  EXPECT_EQ(split["up_blocks.2"], 72'396'160u);
  EXPECT_EQ(split["up_blocks.3"], 19'302'080u);
  EXPECT_EQ(split["conv_norm_out"], 640u);
  EXPECT_EQ(split["conv_out"], 11'524u);
}

// ---- tiny configs, counted by hand -------------------------------------------------------------

struct Count {
  std::uint64_t tensors = 0;
  std::uint64_t params = 0;
  Count& operator+=(const Count& o) {
    tensors += o.tensors;
    params += o.params;
    return *this;
  }
};
Count conv(std::uint64_t out, std::uint64_t in, std::uint64_t k) { return {2, out * in * k * k + out}; }
Count lin(std::uint64_t out, std::uint64_t in, bool bias = true) {
  return {bias ? 2u : 1u, out * in + (bias ? out : 0)};
}
Count norm(std::uint64_t c) { return {2, 2 * c}; }
Count res(std::uint64_t cin, std::uint64_t cout, std::uint64_t temb) { // temb 0: VAE resnet
  Count c;
  c += norm(cin);
  c += conv(cout, cin, 3);
  if (temb) c += lin(cout, temb);
  c += norm(cout);
  c += conv(cout, cout, 3);
  if (cin != cout) c += conv(cout, cin, 1);
  return c;
}
Count transformer(std::uint64_t c, std::uint64_t ctx) {
  Count t;
  t += norm(c);
  t += lin(c, c); // proj_in
  t += norm(c);   // norm1
  t += lin(c, c, false);
  t += lin(c, c, false);
  t += lin(c, c, false);
  t += lin(c, c); // attn1
  t += norm(c);   // norm2
  t += lin(c, c, false);
  t += lin(c, ctx, false);
  t += lin(c, ctx, false);
  t += lin(c, c); // attn2
  t += norm(c);   // norm3
  t += lin(8 * c, c);
  t += lin(c, 4 * c);
  t += lin(c, c); // proj_out
  return t;
}
Count vae_attn(std::uint64_t c) {
  Count a = norm(c);
  for (int i = 0; i < 4; ++i) a += lin(c, c);
  return a;
}
Count clip_layer(std::uint64_t h, std::uint64_t mlp) {
  Count l;
  for (int i = 0; i < 4; ++i) l += lin(h, h);
  l += norm(h);
  l += lin(mlp, h);
  l += lin(h, mlp);
  l += norm(h);
  return l;
}

Count tiny_unet_by_hand() {
  const std::uint64_t te = 128, x = 32; // time embedding 4*32, context width 32
  Count c;
  c += conv(32, 4, 3);
  c += lin(te, 32);
  c += lin(te, te);
  // down 0..3 (32, 64, 64, 64), 2 resnets each, attention on 0..2, downsample on 0..2
  c += res(32, 32, te);
  c += transformer(32, x);
  c += res(32, 32, te);
  c += transformer(32, x);
  c += conv(32, 32, 3);
  c += res(32, 64, te);
  c += transformer(64, x);
  c += res(64, 64, te);
  c += transformer(64, x);
  c += conv(64, 64, 3);
  c += res(64, 64, te);
  c += transformer(64, x);
  c += res(64, 64, te);
  c += transformer(64, x);
  c += conv(64, 64, 3);
  c += res(64, 64, te);
  c += res(64, 64, te);
  // mid
  c += res(64, 64, te);
  c += transformer(64, x);
  c += res(64, 64, te);
  // up 0 (no attention): skips 64, 64, 64
  c += res(128, 64, te);
  c += res(128, 64, te);
  c += res(128, 64, te);
  c += conv(64, 64, 3);
  // up 1: skips 64, 64, 64 (down1's downsample output)
  for (int i = 0; i < 3; ++i) {
    c += res(128, 64, te);
    c += transformer(64, x);
  }
  c += conv(64, 64, 3);
  // up 2: skips 64, 64, 32 (down0's downsample output)
  c += res(128, 64, te);
  c += transformer(64, x);
  c += res(128, 64, te);
  c += transformer(64, x);
  c += res(96, 64, te);
  c += transformer(64, x);
  c += conv(64, 64, 3);
  // up 3: skips 32, 32, 32, hidden 64 then 32
  c += res(96, 32, te);
  c += transformer(32, x);
  c += res(64, 32, te);
  c += transformer(32, x);
  c += res(64, 32, te);
  c += transformer(32, x);
  c += norm(32);
  c += conv(4, 32, 3);
  return c;
}

Count tiny_vae_by_hand() {
  Count c;
  c += conv(32, 3, 3);
  c += res(32, 32, 0);
  c += conv(32, 32, 3);
  c += res(32, 64, 0);
  c += conv(64, 64, 3);
  c += res(64, 64, 0);
  c += conv(64, 64, 3);
  c += res(64, 64, 0);
  c += res(64, 64, 0);
  c += vae_attn(64);
  c += res(64, 64, 0);
  c += norm(64);
  c += conv(8, 64, 3);
  c += conv(8, 8, 1);
  c += conv(4, 4, 1);
  c += conv(64, 4, 3);
  c += res(64, 64, 0);
  c += vae_attn(64);
  c += res(64, 64, 0);
  for (int i = 0; i < 3; ++i) {
    c += res(64, 64, 0);
    c += res(64, 64, 0);
    c += conv(64, 64, 3);
  }
  c += res(64, 32, 0);
  c += res(32, 32, 0);
  c += norm(32);
  c += conv(3, 32, 3);
  return c;
}

Count tiny_text_by_hand() {
  Count c{2, 49408 * 32 + 77 * 32};
  c += clip_layer(32, 64);
  c += clip_layer(32, 64);
  c += norm(32);
  return c;
}

Count tiny_vision_by_hand() {
  Count c{3, 32 + 32 * 3 * 14 * 14 + 257 * 32};
  c += norm(32);
  c += clip_layer(32, 64);
  c += clip_layer(32, 64);
  c += norm(32);
  c += lin(32, 32, false);
  return c;
}

TEST(ExpectedTensorsTinyTest, CountsMatchHandCount) {
  const auto unet = expected_unet_tensors(parse_unet_config(test::tiny_unet_config_json(), "tiny"));
  const auto vae = expected_vae_tensors(parse_vae_config(test::tiny_vae_config_json(), "tiny"));
  const auto text = expected_clip_text_tensors(parse_clip_text_config(test::tiny_text_encoder_config_json(), "tiny"));
  const auto vision =
      expected_clip_vision_tensors(parse_clip_vision_config(test::tiny_vision_encoder_config_json(), "tiny"));
  const Count u = tiny_unet_by_hand(), v = tiny_vae_by_hand(), t = tiny_text_by_hand(), vi = tiny_vision_by_hand();
  EXPECT_EQ(unet.size(), u.tensors);
  EXPECT_EQ(total_numel(unet), u.params);
  EXPECT_EQ(vae.size(), v.tensors);
  EXPECT_EQ(total_numel(vae), v.params);
  EXPECT_EQ(text.size(), t.tensors);
  EXPECT_EQ(total_numel(text), t.params);
  EXPECT_EQ(vision.size(), vi.tensors);
  EXPECT_EQ(total_numel(vision), vi.params);
  // The numbers the inspect-tool test looks for.
  EXPECT_EQ(u.tensors, 684u);
  EXPECT_EQ(v.tensors, 180u);
  EXPECT_EQ(t.tensors, 36u);
  EXPECT_EQ(vi.tensors, 40u);
}

TEST(ExpectedTensorsTinyTest, GeneratorFollowsConfigOptions) {
  UNetConfig u = parse_unet_config(R"({
    "use_linear_projection": true, "block_out_channels": [32, 64], "norm_num_groups": 32,
    "down_block_types": ["CrossAttnDownBlock2D", "DownBlock2D"], "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D"],
    "attention_head_dim": [2, 4], "layers_per_block": [1, 2], "transformer_layers_per_block": [2, 1],
    "cross_attention_dim": 48, "conv_in_kernel": 1, "in_channels": 9, "out_channels": 3})",
                                   "u.json");
  const auto t = expected_unet_tensors(u);
  auto shape_of = [&](const std::string& name) -> std::string {
    for (const auto& e : t) {
      if (e.name == name) return format_shape(e.shape);
    }
    return "absent";
  };
  EXPECT_EQ(shape_of("conv_in.weight"), "[32, 9, 1, 1]");
  EXPECT_EQ(shape_of("conv_out.weight"), "[3, 32, 3, 3]");
  EXPECT_EQ(shape_of("down_blocks.0.attentions.0.transformer_blocks.1.attn2.to_k.weight"), "[32, 48]");
  EXPECT_EQ(shape_of("down_blocks.0.resnets.1.conv1.weight"), "absent"); // layers_per_block[0] = 1
  EXPECT_EQ(shape_of("down_blocks.1.resnets.1.conv1.weight"), "[64, 64, 3, 3]");
  EXPECT_EQ(shape_of("down_blocks.1.downsamplers.0.conv.weight"), "absent"); // last level
  // up_blocks.0 mirrors level 1 (3 resnets), up_blocks.1 mirrors level 0 (2 resnets).
  EXPECT_EQ(shape_of("up_blocks.0.resnets.2.conv1.weight"), "[64, 96, 3, 3]"); // 64 + skip 32
  EXPECT_EQ(shape_of("up_blocks.1.resnets.1.conv1.weight"), "[32, 64, 3, 3]");
  EXPECT_EQ(shape_of("up_blocks.1.resnets.2.conv1.weight"), "absent");
  EXPECT_EQ(shape_of("up_blocks.1.attentions.0.transformer_blocks.1.norm1.weight"), "[32]");
  EXPECT_EQ(shape_of("mid_block.attentions.0.transformer_blocks.0.ff.net.0.proj.weight"), "[512, 64]");

  VaeConfig v = parse_vae_config(R"({"block_out_channels": [32], "use_quant_conv": false,
    "mid_block_add_attention": false, "latent_channels": 16})",
                                 "v.json");
  const auto vt = expected_vae_tensors(v);
  for (const auto& e : vt) {
    EXPECT_EQ(e.name.find("quant_conv.weight") == 0, false) << e.name;
    EXPECT_EQ(e.name.find("attentions"), std::string::npos) << e.name;
  }
  EXPECT_EQ(vt.front().name, "encoder.conv_in.weight");
  EXPECT_EQ(
      std::count_if(vt.begin(), vt.end(), [](const ExpectedTensor& e) { return e.name == "post_quant_conv.weight"; }),
      1);
}

TEST(ExpectedTensorsTinyTest, NameNormalization) {
  EXPECT_EQ(canonical_tensor_name(ModelModule::TextEncoder, "text_model.final_layer_norm.weight"),
            "text_model.final_layer_norm.weight");
  EXPECT_EQ(canonical_tensor_name(ModelModule::TextEncoder, "final_layer_norm.weight"),
            "text_model.final_layer_norm.weight"); // transformers 5.x spelling
  EXPECT_EQ(canonical_tensor_name(ModelModule::TextEncoder, "text_model.embeddings.position_ids"), std::nullopt);
  EXPECT_EQ(canonical_tensor_name(ModelModule::TextEncoder, "embeddings.position_ids"), std::nullopt);
  EXPECT_EQ(canonical_tensor_name(ModelModule::VisionEncoder, "vision_model.embeddings.position_ids"), std::nullopt);
  EXPECT_EQ(canonical_tensor_name(ModelModule::Unet, "conv_in.weight"), "conv_in.weight");

  EXPECT_EQ(legacy_vae_attention_name("encoder.mid_block.attentions.0.query.weight"),
            "encoder.mid_block.attentions.0.to_q.weight");
  EXPECT_EQ(legacy_vae_attention_name("decoder.mid_block.attentions.0.proj_attn.bias"),
            "decoder.mid_block.attentions.0.to_out.0.bias");
  EXPECT_EQ(legacy_vae_attention_name("decoder.mid_block.attentions.0.key.bias"),
            "decoder.mid_block.attentions.0.to_k.bias");
  EXPECT_EQ(legacy_vae_attention_name("encoder.mid_block.attentions.0.to_q.weight"), std::nullopt);
  EXPECT_EQ(legacy_vae_attention_name("encoder.conv_in.weight"), std::nullopt);
}

} // namespace
