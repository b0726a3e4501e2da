// Config bounds (z123/model/config_limits.hpp): every number a parser reads is refused outside
// its range, before anything is sized by it, with a message naming the file, the key the user
// wrote and the allowed range; a value at a bound is accepted and one just past it is refused.
// Also: the hostile configs a tester found (a two-billion layers_per_block, a 2^30 channel
// count), negative and zero values, out-of-range floats, wrong types and absurd nesting.
#include "io_test_util.hpp"
#include "z123/model/config_limits.hpp"
#include "z123/model/configs.hpp"
#include "z123/model/expected_tensors.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace {

using namespace z123;
using z123::test::expect_error;
namespace limits = z123::config_limits;

using Parse = std::function<void(const std::string&)>;

const Parse kUnet = [](const std::string& t) { (void)parse_unet_config(t, "unet/config.json"); };
const Parse kVae = [](const std::string& t) { (void)parse_vae_config(t, "vae/config.json"); };
const Parse kText = [](const std::string& t) { (void)parse_clip_text_config(t, "text_encoder/config.json"); };
const Parse kVision = [](const std::string& t) { (void)parse_clip_vision_config(t, "vision_encoder/config.json"); };
const Parse kScheduler = [](const std::string& t) {
  (void)parse_scheduler_config(t, "scheduler/scheduler_config.json");
};
const Parse kPreprocessor = [](const std::string& t) {
  (void)parse_preprocessor_config(t, "pre/preprocessor_config.json");
};

// "{<base>, <extra>}" (base may be empty).
std::string object(const std::string& base, const std::string& extra) {
  return "{" + base + (base.empty() || extra.empty() ? "" : ", ") + extra + "}";
}

const std::string kUnetBase = R"("use_linear_projection": true)";

struct Bound {
  const char* what; // for SCOPED_TRACE
  Parse parse;
  std::string base;     // keys that make the file otherwise valid
  std::string accepted; // the key at its bound
  std::string refused;  // the key just past it
  std::string message;  // what the refusal must say (file, key, value, range)
};

void check_bound(const Bound& b) {
  SCOPED_TRACE(std::string(b.what) + ": " + b.refused);
  EXPECT_NO_THROW(b.parse(object(b.base, b.accepted))) << b.accepted;
  expect_error([&] { b.parse(object(b.base, b.refused)); }, ErrorKind::Model, {b.message});
}

std::string ints(int value, int count) {
  std::string s = "[";
  for (int i = 0; i < count; ++i) s += (i ? ", " : "") + std::to_string(value);
  return s + "]";
}

std::string strings(const char* value, int count) {
  std::string s = "[";
  for (int i = 0; i < count; ++i) s += std::string(i ? ", " : "") + "\"" + value + "\"";
  return s + "]";
}

TEST(ConfigLimitsTest, HostileLayersPerBlockIsRefusedBeforeAnyWalk) {
  // Found by a tester: the CLI grew to 24 GB walking two billion resnets per block.
  expect_error([] { kUnet(object(kUnetBase, R"("layers_per_block": 2000000000)")); }, ErrorKind::Model,
               {"unet/config.json: key 'layers_per_block' is 2000000000, expected an integer in 1..16"});
  expect_error([] { kUnet(object(kUnetBase, R"("layers_per_block": [2, 2, 2000000000, 2])")); }, ErrorKind::Model,
               {"unet/config.json: key 'layers_per_block': entry 2 is 2000000000, expected an integer in 1..16"});
  expect_error([] { kVae(R"({"layers_per_block": 2000000000})"); }, ErrorKind::Model,
               {"vae/config.json: key 'layers_per_block' is 2000000000, expected an integer in 1..16"});
  expect_error([] { kText(R"({"num_hidden_layers": 2000000000})"); }, ErrorKind::Model,
               {"text_encoder/config.json: key 'num_hidden_layers' is 2000000000, expected an integer in 1..256"});
}

TEST(ConfigLimitsTest, HugeChannelCountNamesTheKeyTheUserWrote) {
  // Found by a tester: 2^30 overflowed int in 4 * block_out_channels[0] (UBSan) and the error
  // then named time_embedding_dim, which the file never set.
  const std::string text = object(kUnetBase, R"("block_out_channels": [1073741824, 640, 1280, 1280])");
  expect_error([&] { kUnet(text); }, ErrorKind::Model,
               {"unet/config.json: key 'block_out_channels': entry 0 is 1073741824, expected an integer in 1..16384"});
  try {
    kUnet(text);
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("time_embedding_dim"), std::string::npos) << e.what();
  }
}

TEST(ConfigLimitsTest, UnetBounds) {
  const std::string heads512 = kUnetBase + R"(, "block_out_channels": [512, 512, 512, 512])";
  const std::string groups1024 = kUnetBase + R"(, "block_out_channels": [1024, 1024, 1024, 1024])";
  const std::string one_level = kUnetBase + R"(, "down_block_types": ["DownBlock2D"], "up_block_types": ["UpBlock2D"])";
  const std::string eight_levels = kUnetBase + ", \"down_block_types\": " + strings("DownBlock2D", 8) +
                                   ", \"up_block_types\": " + strings("UpBlock2D", 8);
  const Bound bounds[] = {
      {"in", kUnet, kUnetBase, R"("in_channels": 256)", R"("in_channels": 257)",
       "unet/config.json: key 'in_channels' is 257, expected an integer in 1..256"},
      {"out", kUnet, kUnetBase, R"("out_channels": 256)", R"("out_channels": 257)",
       "key 'out_channels' is 257, expected an integer in 1..256"},
      {"channels", kUnet, one_level, R"("block_out_channels": [16384])", R"("block_out_channels": [16385])",
       "key 'block_out_channels': entry 0 is 16385, expected an integer in 1..16384"},
      {"layers", kUnet, kUnetBase, R"("layers_per_block": 16)", R"("layers_per_block": 17)",
       "key 'layers_per_block' is 17, expected an integer in 1..16"},
      {"heads", kUnet, heads512, R"("attention_head_dim": 256)", R"("attention_head_dim": [8, 8, 257, 8])",
       "key 'attention_head_dim': entry 2 is 257, expected an integer in 1..256"},
      {"heads override", kUnet, heads512, R"("num_attention_heads": 256)", R"("num_attention_heads": 257)",
       "key 'num_attention_heads' is 257, expected an integer in 1..256"},
      {"transformer layers", kUnet, kUnetBase, R"("transformer_layers_per_block": 32)",
       R"("transformer_layers_per_block": 33)",
       "key 'transformer_layers_per_block' is 33, expected an integer in 1..32"},
      {"cross", kUnet, kUnetBase, R"("cross_attention_dim": 16384)", R"("cross_attention_dim": 16385)",
       "key 'cross_attention_dim' is 16385, expected an integer in 1..16384"},
      {"groups", kUnet, groups1024, R"("norm_num_groups": 1024)", R"("norm_num_groups": 1025)",
       "key 'norm_num_groups' is 1025, expected an integer in 1..1024"},
      {"kernel", kUnet, kUnetBase, R"("conv_in_kernel": 15)", R"("conv_in_kernel": 17)",
       "key 'conv_in_kernel' is 17, expected an integer in 1..15"},
      {"time embedding", kUnet, kUnetBase, R"("time_embedding_dim": 65536)", R"("time_embedding_dim": 65537)",
       "key 'time_embedding_dim' is 65537, expected an integer in 1..65536"},
      {"sample", kUnet, kUnetBase, R"("sample_size": 16384)", R"("sample_size": 16385)",
       "key 'sample_size' is 16385, expected an integer in 1..16384"},
      {"sample list", kUnet, kUnetBase, R"("sample_size": [16384, 16384])", R"("sample_size": [16384, 16385])",
       "key 'sample_size': entry 1 is 16385, expected an integer in 1..16384"},
      {"freq shift", kUnet, kUnetBase, R"("freq_shift": 16)", R"("freq_shift": 17)",
       "key 'freq_shift' is 17, expected an integer in 0..16"},
      {"levels", kUnet, eight_levels, "\"block_out_channels\": " + ints(32, 8),
       "\"block_out_channels\": " + ints(32, 9), "key 'block_out_channels': expected 1..8 entries, found 9"},
      {"eps", kUnet, kUnetBase, R"("norm_eps": 1.0)", R"("norm_eps": 1.5)",
       "key 'norm_eps' is 1.5, expected a number in (0, 1]"},
  };
  for (const Bound& b : bounds) check_bound(b);
}

TEST(ConfigLimitsTest, VaeBounds) {
  const Bound bounds[] = {
      {"in", kVae, "", R"("in_channels": 256)", R"("in_channels": 257)",
       "vae/config.json: key 'in_channels' is 257, expected an integer in 1..256"},
      {"latent", kVae, "", R"("latent_channels": 256)", R"("latent_channels": 257)",
       "key 'latent_channels' is 257, expected an integer in 1..256"},
      {"channels", kVae, "", R"("block_out_channels": [16384])", R"("block_out_channels": [16385])",
       "key 'block_out_channels': entry 0 is 16385, expected an integer in 1..16384"},
      {"layers", kVae, "", R"("layers_per_block": 16)", R"("layers_per_block": 17)",
       "key 'layers_per_block' is 17, expected an integer in 1..16"},
      {"groups", kVae, R"("block_out_channels": [1024])", R"("norm_num_groups": 1024)", R"("norm_num_groups": 1025)",
       "key 'norm_num_groups' is 1025, expected an integer in 1..1024"},
      {"scaling", kVae, "", R"("scaling_factor": 1000)", R"("scaling_factor": 1000.5)",
       "key 'scaling_factor' is 1000.5, expected a number in (0, 1000]"},
      {"shift", kVae, "", R"("shift_factor": -1000)", R"("shift_factor": -1001)",
       "key 'shift_factor' is -1001, expected a number in [-1000, 1000]"},
      {"sample", kVae, "", R"("sample_size": 16384)", R"("sample_size": 16385)",
       "key 'sample_size' is 16385, expected an integer in 1..16384"},
  };
  for (const Bound& b : bounds) check_bound(b);
}

TEST(ConfigLimitsTest, ClipBounds) {
  const Bound bounds[] = {
      {"hidden", kText, "", R"("hidden_size": 16384)", R"("hidden_size": 16385)",
       "text_encoder/config.json: key 'hidden_size' is 16385, expected an integer in 1..16384"},
      {"mlp", kText, "", R"("intermediate_size": 65536)", R"("intermediate_size": 65537)",
       "key 'intermediate_size' is 65537, expected an integer in 1..65536"},
      {"heads", kText, R"("hidden_size": 1024)", R"("num_attention_heads": 256)", R"("num_attention_heads": 257)",
       "key 'num_attention_heads' is 257, expected an integer in 1..256"},
      {"layers", kText, "", R"("num_hidden_layers": 256)", R"("num_hidden_layers": 257)",
       "key 'num_hidden_layers' is 257, expected an integer in 1..256"},
      {"positions", kText, "", R"("max_position_embeddings": 4096)", R"("max_position_embeddings": 4097)",
       "key 'max_position_embeddings' is 4097, expected an integer in 1..4096"},
      {"vocab", kText, "", R"("vocab_size": 1048576)", R"("vocab_size": 1048577)",
       "key 'vocab_size' is 1048577, expected an integer in 1..1048576"},
      {"projection", kText, "", R"("projection_dim": 16384)", R"("projection_dim": 16385)",
       "key 'projection_dim' is 16385, expected an integer in 1..16384"},
      {"eps", kText, "", R"("layer_norm_eps": 1)", R"("layer_norm_eps": 1.5)",
       "key 'layer_norm_eps' is 1.5, expected a number in (0, 1]"},
      {"image", kVision, "", R"("image_size": 4096)", R"("image_size": 4097)",
       "vision_encoder/config.json: key 'image_size' is 4097, expected an integer in 1..4096"},
      {"patch", kVision, R"("image_size": 4096)", R"("patch_size": 4096)", R"("patch_size": 4097)",
       "key 'patch_size' is 4097, expected an integer in 1..4096"},
      {"channels", kVision, "", R"("num_channels": 256)", R"("num_channels": 257)",
       "key 'num_channels' is 257, expected an integer in 1..256"},
      {"vision layers", kVision, "", R"("num_hidden_layers": 256)", R"("num_hidden_layers": 257)",
       "key 'num_hidden_layers' is 257, expected an integer in 1..256"},
      // (image / patch)^2 + 1 positions: 224 / 1 gives 50177, 256 / 1 gives 65537.
      {"positions", kVision, R"("patch_size": 1)", R"("image_size": 224)", R"("image_size": 256)",
       "key 'patch_size' = 1 with image_size = 256 gives 65537 positions ((image_size / patch_size)^2 + 1), "
       "expected at most 65536"},
  };
  for (const Bound& b : bounds) check_bound(b);
}

TEST(ConfigLimitsTest, SchedulerPreprocessorAndIndexBounds) {
  std::string ramp = "[";
  for (int i = 0; i < 76; ++i) ramp += "0.5, ";
  const Bound bounds[] = {
      {"timesteps", kScheduler, "", R"("num_train_timesteps": 100000)", R"("num_train_timesteps": 100001)",
       "scheduler/scheduler_config.json: key 'num_train_timesteps' is 100001, expected an integer in 2..100000"},
      {"one timestep", kScheduler, "", R"("num_train_timesteps": 2)", R"("num_train_timesteps": 1)",
       "key 'num_train_timesteps' is 1, expected an integer in 2..100000"},
      {"offset", kScheduler, R"("num_train_timesteps": 1000)", R"("steps_offset": 999)", R"("steps_offset": 1000)",
       "key 'steps_offset' is 1000, expected an integer in 0..999 (below num_train_timesteps = 1000)"},
      {"size", kPreprocessor, "", R"("size": 4096)", R"("size": 4097)",
       "pre/preprocessor_config.json: key 'size' is 4097, expected an integer in 1..4096"},
      {"shortest edge", kPreprocessor, "", R"("size": {"shortest_edge": 4096})", R"("size": {"shortest_edge": 4097})",
       "key 'size.shortest_edge' is 4097, expected an integer in 1..4096"},
      {"crop", kPreprocessor, "", R"("crop_size": {"height": 4096, "width": 4096})",
       R"("crop_size": {"height": 4096, "width": 4097})",
       "key 'crop_size.width' is 4097, expected an integer in 1..4096"},
      {"crop int", kPreprocessor, "", R"("crop_size": 4096)", R"("crop_size": 4097)",
       "key 'crop_size' is 4097, expected an integer in 1..4096"},
      {"rescale", kPreprocessor, "", R"("rescale_factor": 1)", R"("rescale_factor": 1.5)",
       "key 'rescale_factor' is 1.5, expected a number in (0, 1]"},
      {"mean", kPreprocessor, "", R"("image_mean": [-255, 0.5, 255])", R"("image_mean": [0.5, 255.5, 0.5])",
       "key 'image_mean[1]' is 255.5, expected a number in [-255, 255]"},
      {"std", kPreprocessor, "", R"("image_std": 1e-6)", R"("image_std": 256)",
       "key 'image_std' is 256, expected a number in [1e-06, 255]"},
      {"ramp", [](const std::string& t) { (void)parse_pipeline_index(t, "model_index.json"); }, R"("_class_name": "X")",
       "\"ramping_coefficients\": " + ramp + "100]", "\"ramping_coefficients\": " + ramp + "-100.5]",
       "model_index.json: key 'ramping_coefficients[76]' is -100.5, expected a number in [-100, 100]"},
  };
  for (const Bound& b : bounds) check_bound(b);
}

TEST(ConfigLimitsTest, NegativeAndZeroValues) {
  struct Case {
    Parse parse;
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {kUnet, object(kUnetBase, R"("in_channels": -4)"), "key 'in_channels' is -4, expected an integer in 1..256"},
      {kUnet, object(kUnetBase, R"("block_out_channels": [320, -640, 1280, 1280])"),
       "key 'block_out_channels': entry 1 is -640, expected an integer in 1..16384"},
      {kUnet, object(kUnetBase, R"("layers_per_block": 0)"),
       "key 'layers_per_block' is 0, expected an integer in 1..16"},
      {kUnet, object(kUnetBase, R"("attention_head_dim": [5, 0, 20, 20])"),
       "key 'attention_head_dim': entry 1 is 0, expected an integer in 1..256"},
      {kUnet, object(kUnetBase, R"("cross_attention_dim": -1024)"),
       "key 'cross_attention_dim' is -1024, expected an integer in 1..16384"},
      {kUnet, object(kUnetBase, R"("norm_num_groups": 0)"),
       "key 'norm_num_groups' is 0, expected an integer in 1..1024"},
      {kUnet, object(kUnetBase, R"("time_embedding_dim": 0)"),
       "key 'time_embedding_dim' is 0, expected an integer in 1..65536"},
      {kUnet, object(kUnetBase, R"("freq_shift": -1)"), "key 'freq_shift' is -1, expected an integer in 0..16"},
      {kUnet, object(kUnetBase, R"("sample_size": 0)"), "key 'sample_size' is 0, expected an integer in 1..16384"},
      {kUnet, object(kUnetBase, R"("norm_eps": 0)"), "key 'norm_eps' is 0, expected a number in (0, 1]"},
      {kUnet, object(kUnetBase, R"("norm_eps": -1e-5)"), "key 'norm_eps' is -1e-05, expected a number in (0, 1]"},
      {kVae, R"({"latent_channels": 0})", "key 'latent_channels' is 0, expected an integer in 1..256"},
      {kVae, R"({"scaling_factor": 0})", "key 'scaling_factor' is 0, expected a number in (0, 1000]"},
      {kVae, R"({"scaling_factor": -0.18215})", "key 'scaling_factor' is -0.18215, expected a number in (0, 1000]"},
      {kText, R"({"num_attention_heads": 0})", "key 'num_attention_heads' is 0, expected an integer in 1..256"},
      {kText, R"({"vocab_size": -1})", "key 'vocab_size' is -1, expected an integer in 1..1048576"},
      {kText, R"({"layer_norm_eps": 0})", "key 'layer_norm_eps' is 0, expected a number in (0, 1]"},
      {kVision, R"({"patch_size": 0})", "key 'patch_size' is 0, expected an integer in 1..4096"},
      {kVision, R"({"image_size": -224})", "key 'image_size' is -224, expected an integer in 1..4096"},
      {kScheduler, R"({"num_train_timesteps": 0})", "key 'num_train_timesteps' is 0, expected an integer in 2..100000"},
      {kScheduler, R"({"num_train_timesteps": -1000})",
       "key 'num_train_timesteps' is -1000, expected an integer in 2..100000"},
      {kScheduler, R"({"steps_offset": -1})", "key 'steps_offset' is -1, expected an integer in 0..999"},
      {kPreprocessor, R"({"size": 0})", "key 'size' is 0, expected an integer in 1..4096"},
      {kPreprocessor, R"({"crop_size": {"height": -224, "width": 224}})",
       "key 'crop_size.height' is -224, expected an integer in 1..4096"},
      {kPreprocessor, R"({"rescale_factor": 0})", "key 'rescale_factor' is 0, expected a number in (0, 1]"},
      {kPreprocessor, R"({"image_std": [0.5, 0, 0.5]})", "key 'image_std[1]' is 0, expected a number in [1e-06, 255]"},
      {kPreprocessor, R"({"image_std": -0.8})", "key 'image_std' is -0.8, expected a number in [1e-06, 255]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    expect_error([&] { c.parse(c.text); }, ErrorKind::Model, {c.message});
  }
}

TEST(ConfigLimitsTest, FreqShiftStaysBelowHalfTheTimeEmbeddingWidth) {
  // The sinusoid divides by (block_out_channels[0] / 2 - freq_shift).
  const std::string base = kUnetBase + R"(, "block_out_channels": [16, 32], "norm_num_groups": 8,
    "attention_head_dim": 2, "down_block_types": ["DownBlock2D", "DownBlock2D"],
    "up_block_types": ["UpBlock2D", "UpBlock2D"])";
  EXPECT_NO_THROW(kUnet(object(base, R"("freq_shift": 7)")));
  expect_error([&] { kUnet(object(base, R"("freq_shift": 8)")); }, ErrorKind::Model,
               {"key 'freq_shift' is 8, expected an integer in 0..7 (below block_out_channels[0] / 2 = 8)"});
}

TEST(ConfigLimitsTest, DownsamplePaddingOtherThanOneIsUnsupported) {
  EXPECT_NO_THROW(kUnet(object(kUnetBase, R"("downsample_padding": 1)")));
  for (const char* v : {"0", "2", "-1"}) {
    SCOPED_TRACE(v);
    expect_error(
        [&] { kUnet(object(kUnetBase, std::string(R"("downsample_padding": )") + v)); }, ErrorKind::Unsupported,
        {"unet/config.json: key 'downsample_padding' is " + std::string(v) + "; the engine implements only 1"});
  }
}

TEST(ConfigLimitsTest, FloatsOutsideDoubleRangeOrNotNumbers) {
  // nlohmann refuses 1e400 / -1e400 (out_of_range, no inf ever reaches a parser) and has no NaN
  // or Infinity literals; 1e-400 underflows to 0 and then meets the lower bounds.
  for (const char* v : {"1e400", "-1e400"}) {
    SCOPED_TRACE(v);
    expect_error([&] { kUnet(object(kUnetBase, std::string(R"("norm_eps": )") + v)); }, ErrorKind::Format,
                 {"unet/config.json: invalid JSON", v});
    expect_error([&] { kPreprocessor(std::string(R"({"image_mean": [0.5, )") + v + ", 0.5]}"); }, ErrorKind::Format,
                 {"invalid JSON", v});
  }
  for (const char* v : {"NaN", "nan", "Infinity", "-Infinity", "inf"}) {
    SCOPED_TRACE(v);
    expect_error([&] { kVae(std::string(R"({"scaling_factor": )") + v + "}"); }, ErrorKind::Format,
                 {"vae/config.json: invalid JSON"});
  }
  expect_error([] { kUnet(object(kUnetBase, R"("norm_eps": 1e-400)")); }, ErrorKind::Model,
               {"key 'norm_eps' is 0, expected a number in (0, 1]"});
  expect_error([] { kVae(R"({"scaling_factor": 1e308})"); }, ErrorKind::Model,
               {"key 'scaling_factor' is 1e+308, expected a number in (0, 1000]"});
  expect_error([] { kScheduler(R"({"beta_end": 1e-400})"); }, ErrorKind::Model,
               {"'beta_end' = 0: expected 0 < beta_start <= beta_end < 1"});
}

TEST(ConfigLimitsTest, WrongTypesForBoundedKeys) {
  struct Case {
    Parse parse;
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {kUnet, object(kUnetBase, R"("layers_per_block": "2")"),
       "key 'layers_per_block': expected integer or list of integers, found string \"2\""},
      {kUnet, object(kUnetBase, R"("layers_per_block": 2.0)"),
       "key 'layers_per_block': expected integer or list of integers, found number 2.0"},
      {kUnet, object(kUnetBase, R"("layers_per_block": [2, true, 2, 2])"),
       "key 'layers_per_block[1]': expected integer, found boolean true"},
      {kUnet, object(kUnetBase, R"("block_out_channels": 320)"),
       "key 'block_out_channels': expected list of integers, found number 320"},
      {kUnet, object(kUnetBase, R"("layers_per_block": 3000000000)"),
       "key 'layers_per_block': expected integer in int range, found number 3000000000"},
      {kUnet, object(kUnetBase, R"("norm_eps": "1e-5")"), "key 'norm_eps': expected number, found string"},
      {kUnet, object(kUnetBase, R"("sample_size": [96, "96"])"), "key 'sample_size[1]': expected integer"},
      {kVae, R"({"scaling_factor": [0.18215]})", "key 'scaling_factor': expected number, found array of 1"},
      {kVae, R"({"shift_factor": "0.1"})", "key 'shift_factor': expected number, found string"},
      {kText, R"({"vocab_size": 49408.5})", "key 'vocab_size': expected integer, found number 49408.5"},
      {kText, R"({"hidden_size": -9223372036854775809})", "key 'hidden_size': expected integer"},
      {kScheduler, R"({"num_train_timesteps": 1e3})", "key 'num_train_timesteps': expected integer, found number"},
      {kPreprocessor, R"({"size": 224.0})", "key 'size': expected object {\"shortest_edge\": N} or integer"},
      {kPreprocessor, R"({"rescale_factor": null})", "key 'rescale_factor': expected number, found null"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    expect_error([&] { c.parse(c.text); }, ErrorKind::Format, {c.message});
  }
}

TEST(ConfigLimitsTest, DeepNestingIsRefusedBeforeParsing) {
  // dump() and comparisons recurse, so an error message quoting a million nested lists would
  // overflow the stack: the parser refuses anything nested deeper than a config can be.
  const std::string deep(1'000'000, '[');
  expect_error([&] { kScheduler(R"({"trained_betas": )" + deep + "]}"); }, ErrorKind::Format,
               {"scheduler/scheduler_config.json: invalid JSON: nested deeper than 64 levels at byte 81"});
  // 64 levels (the object and 63 lists) are fine; brackets inside strings do not count.
  const std::string ok_text =
      R"({"_name_or_path": "[[[[{{{{\"[[[[", "x": )" + std::string(63, '[') + std::string(63, ']') + "}";
  EXPECT_NO_THROW(kScheduler(ok_text));
  expect_error([] { kScheduler(R"({"x": )" + std::string(64, '[') + std::string(64, ']') + "}"); }, ErrorKind::Format,
               {"nested deeper than 64 levels"});
}

TEST(ConfigLimitsTest, MessagesQuoteLongValuesCutShort) {
  auto message_size = [](const std::string& text) -> std::size_t {
    try {
      kScheduler(text);
    } catch (const Error& e) {
      return std::string(e.what()).size();
    }
    ADD_FAILURE() << "accepted";
    return 0;
  };
  std::string long_list = "[";
  for (int i = 0; i < 300'000; ++i) long_list += "0.5, ";
  long_list += "0.5]";
  EXPECT_LT(message_size(R"({"trained_betas": )" + long_list + "}"), 300u); // quoted by require_null
  EXPECT_LT(message_size(R"({"prediction_type": ")" + std::string(1'000'000, 'x') + "\"}"), 300u);
  // nlohmann's own messages quote the offending token, which may be a megabyte long.
  EXPECT_LT(message_size(R"({"beta_end": )" + std::string(1'000'000, '9') + "}"), 400u);
  EXPECT_LT(message_size(R"({"beta_end": ")" + std::string(1'000'000, 'x') + "\x01\"}"), 400u);
}

TEST(ConfigLimitsTest, LargestAllowedUnetStaysSmall) {
  // At every bound that multiplies the tensor walk, the expected list stays well under a few
  // hundred thousand entries, and every shape product fits in 64 bits.
  const std::string text =
      object(kUnetBase, "\"block_out_channels\": " + ints(limits::kMaxChannels, limits::kMaxLevels) +
                            ", \"down_block_types\": " + strings("CrossAttnDownBlock2D", limits::kMaxLevels) +
                            ", \"up_block_types\": " + strings("CrossAttnUpBlock2D", limits::kMaxLevels) +
                            ", \"layers_per_block\": 16, \"transformer_layers_per_block\": 32, "
                            "\"attention_head_dim\": 256, \"cross_attention_dim\": 16384");
  const UNetConfig config = parse_unet_config(text, "unet/config.json");
  const std::vector<ExpectedTensor> tensors = expected_unet_tensors(config);
  EXPECT_LT(tensors.size(), 200'000u);
  double params = 0;
  for (const ExpectedTensor& t : tensors) {
    double n = 1;
    for (std::int64_t d : t.shape) n *= static_cast<double>(d);
    params += n;
  }
  EXPECT_LT(params, 1e18);
  EXPECT_DOUBLE_EQ(static_cast<double>(total_numel(tensors)), params);
}

} // namespace
