// Config parsers: the real v1.2 files (tests/data/v1.2-configs, written from spec §2 in the
// HF layout) parse to the documented values; defaults fill missing keys; wrong types, missing
// required keys and unsupported options fail with messages naming file, key, expected vs found.
#include "io_test_util.hpp"
#include "z123/model/configs.hpp"

#include <gtest/gtest.h>

namespace {

using namespace z123;
using z123::test::expect_error;
using z123::test::v12_configs;

TEST(ConfigsTest, RealPipelineIndex) {
  const PipelineIndex idx = load_pipeline_index(v12_configs() / "model_index.json");
  EXPECT_EQ(idx.class_name, "Zero123PlusPipeline");
  EXPECT_EQ(idx.diffusers_version, "0.24.0");
  ASSERT_EQ(idx.ramping_coefficients.size(), 77u);
  EXPECT_DOUBLE_EQ(idx.ramping_coefficients.front(), 0.00301829120144248);
  EXPECT_DOUBLE_EQ(idx.ramping_coefficients[46], 0.49558719992637634);
  EXPECT_DOUBLE_EQ(idx.ramping_coefficients.back(), 1.1983819007873535);
  EXPECT_EQ(idx.components.size(), 9u); // 8 components + safety_checker [null, null]
  ASSERT_NE(idx.find("unet"), nullptr);
  EXPECT_EQ(idx.find("unet")->library, "diffusers");
  EXPECT_EQ(idx.find("unet")->class_name, "UNet2DConditionModel");
  EXPECT_EQ(idx.find("vision_encoder")->class_name, "CLIPVisionModelWithProjection");
  EXPECT_EQ(idx.find("tokenizer")->class_name, "CLIPTokenizer");
  ASSERT_NE(idx.find("safety_checker"), nullptr);
  EXPECT_TRUE(idx.find("safety_checker")->is_null());
  EXPECT_EQ(idx.find("ramping_coefficients"), nullptr);
}

TEST(ConfigsTest, RealScheduler) {
  const SchedulerConfig s = load_scheduler_config(v12_configs() / "scheduler/scheduler_config.json");
  EXPECT_EQ(s.class_name, "EulerAncestralDiscreteScheduler");
  EXPECT_DOUBLE_EQ(s.beta_start, 0.00085);
  EXPECT_DOUBLE_EQ(s.beta_end, 0.012);
  EXPECT_EQ(s.beta_schedule, "linear");
  EXPECT_EQ(s.num_train_timesteps, 1000);
  EXPECT_EQ(s.prediction_type, "v_prediction");
  EXPECT_EQ(s.timestep_spacing, "linspace");
  EXPECT_EQ(s.steps_offset, 1);
  EXPECT_FALSE(s.rescale_betas_zero_snr);
}

TEST(ConfigsTest, RealUnet) {
  const UNetConfig u = load_unet_config(v12_configs() / "unet/config.json");
  EXPECT_EQ(u.in_channels, 4);
  EXPECT_EQ(u.out_channels, 4);
  EXPECT_EQ(u.block_out_channels, (std::vector<int>{320, 640, 1280, 1280}));
  EXPECT_EQ(u.layers_per_block, (std::vector<int>{2, 2, 2, 2}));
  EXPECT_EQ(u.num_attention_heads, (std::vector<int>{5, 10, 20, 20})); // from attention_head_dim
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(u.head_dim(i), 64);
  EXPECT_EQ(u.cross_attention_dim, (std::vector<int>{1024, 1024, 1024, 1024}));
  EXPECT_EQ(u.transformer_layers_per_block, (std::vector<int>{1, 1, 1, 1}));
  using K = UNetBlockKind;
  EXPECT_EQ(u.down_blocks, (std::vector<K>{K::CrossAttention, K::CrossAttention, K::CrossAttention, K::Plain}));
  EXPECT_EQ(u.up_blocks, (std::vector<K>{K::Plain, K::CrossAttention, K::CrossAttention, K::CrossAttention}));
  EXPECT_EQ(u.norm_num_groups, 32);
  EXPECT_DOUBLE_EQ(u.norm_eps, 1e-5);
  EXPECT_TRUE(u.use_linear_projection);
  EXPECT_TRUE(u.flip_sin_to_cos);
  EXPECT_EQ(u.freq_shift, 0);
  EXPECT_EQ(u.downsample_padding, 1);
  EXPECT_EQ(u.conv_in_kernel, 3);
  EXPECT_EQ(u.conv_out_kernel, 3);
  EXPECT_EQ(u.time_embedding_dim, 1280); // null -> 4 * 320
  EXPECT_FALSE(u.upcast_attention);
  EXPECT_EQ(u.sample_size, 96);
}

TEST(ConfigsTest, RealVae) {
  const VaeConfig v = load_vae_config(v12_configs() / "vae/config.json");
  EXPECT_EQ(v.in_channels, 3);
  EXPECT_EQ(v.out_channels, 3);
  EXPECT_EQ(v.latent_channels, 4);
  EXPECT_EQ(v.block_out_channels, (std::vector<int>{128, 256, 512, 512}));
  EXPECT_EQ(v.layers_per_block, 2);
  EXPECT_EQ(v.norm_num_groups, 32);
  EXPECT_EQ(v.sample_size, 256);
  EXPECT_DOUBLE_EQ(v.scaling_factor, 0.18215);
  EXPECT_FALSE(v.shift_factor.has_value());
  EXPECT_TRUE(v.force_upcast);
  EXPECT_TRUE(v.use_quant_conv);
  EXPECT_TRUE(v.use_post_quant_conv);
  EXPECT_TRUE(v.mid_block_add_attention);
}

TEST(ConfigsTest, RealClipText) {
  const ClipTextConfig t = load_clip_text_config(v12_configs() / "text_encoder/config.json");
  EXPECT_EQ(t.hidden_size, 1024);
  EXPECT_EQ(t.intermediate_size, 4096);
  EXPECT_EQ(t.num_attention_heads, 16);
  EXPECT_EQ(t.head_dim(), 64);
  EXPECT_EQ(t.num_hidden_layers, 23);
  EXPECT_EQ(t.max_position_embeddings, 77);
  EXPECT_EQ(t.vocab_size, 49408);
  EXPECT_DOUBLE_EQ(t.layer_norm_eps, 1e-5);
  EXPECT_EQ(t.hidden_act, ClipActivation::Gelu);
  EXPECT_EQ(t.projection_dim, 512);
  EXPECT_EQ(t.torch_dtype, "float16");
}

TEST(ConfigsTest, RealClipVision) {
  const ClipVisionConfig v = load_clip_vision_config(v12_configs() / "vision_encoder/config.json");
  EXPECT_EQ(v.hidden_size, 1280);
  EXPECT_EQ(v.intermediate_size, 5120);
  EXPECT_EQ(v.num_attention_heads, 16);
  EXPECT_EQ(v.head_dim(), 80);
  EXPECT_EQ(v.num_hidden_layers, 32);
  EXPECT_EQ(v.image_size, 224);
  EXPECT_EQ(v.patch_size, 14);
  EXPECT_EQ(v.num_positions(), 257);
  EXPECT_EQ(v.projection_dim, 1024);
  EXPECT_EQ(v.num_channels, 3);
  EXPECT_EQ(v.hidden_act, ClipActivation::Gelu);
}

TEST(ConfigsTest, RealPreprocessors) {
  const PreprocessorConfig vae =
      load_preprocessor_config(v12_configs() / "feature_extractor_vae/preprocessor_config.json");
  EXPECT_EQ(vae.processor_type, "CLIPImageProcessor");
  EXPECT_EQ(vae.shortest_edge, 512);
  EXPECT_EQ(vae.crop_height, 512);
  EXPECT_EQ(vae.crop_width, 512);
  EXPECT_EQ(vae.resample, 2);
  EXPECT_STREQ(resample_name(vae.resample), "bilinear");
  EXPECT_DOUBLE_EQ(vae.rescale_factor, 0.00392156862745098);
  for (int c = 0; c < 3; ++c) {
    EXPECT_DOUBLE_EQ(vae.image_mean[c], 0.5); // scalar expanded to 3 channels
    EXPECT_DOUBLE_EQ(vae.image_std[c], 0.8);
  }
  EXPECT_TRUE(vae.do_resize && vae.do_center_crop && vae.do_rescale && vae.do_normalize && vae.do_convert_rgb);

  const PreprocessorConfig clip =
      load_preprocessor_config(v12_configs() / "feature_extractor_clip/preprocessor_config.json");
  EXPECT_EQ(clip.shortest_edge, 224);
  EXPECT_EQ(clip.crop_height, 224);
  EXPECT_EQ(clip.resample, 3);
  EXPECT_DOUBLE_EQ(clip.image_mean[0], 0.48145466);
  EXPECT_DOUBLE_EQ(clip.image_mean[2], 0.40821073);
  EXPECT_DOUBLE_EQ(clip.image_std[1], 0.26130258);
}

TEST(ConfigsTest, DefaultsForMissingKeys) {
  const SchedulerConfig s = parse_scheduler_config("{}", "sched.json");
  EXPECT_EQ(s.timestep_spacing, "linspace");
  EXPECT_EQ(s.prediction_type, "epsilon");
  EXPECT_DOUBLE_EQ(s.beta_start, 0.0001);
  EXPECT_EQ(s.steps_offset, 0);

  // diffusers defaults are SD-1.x shaped: 8 heads per level, 1280-wide context.
  const UNetConfig u = parse_unet_config(R"({"use_linear_projection": true})", "unet.json");
  EXPECT_EQ(u.block_out_channels, (std::vector<int>{320, 640, 1280, 1280}));
  EXPECT_EQ(u.num_attention_heads, (std::vector<int>{8, 8, 8, 8}));
  EXPECT_EQ(u.cross_attention_dim, (std::vector<int>{1280, 1280, 1280, 1280}));
  EXPECT_EQ(u.layers_per_block, (std::vector<int>{2, 2, 2, 2}));
  EXPECT_EQ(u.time_embedding_dim, 1280);
  EXPECT_FALSE(u.sample_size.has_value());

  const VaeConfig v = parse_vae_config("{}", "vae.json");
  EXPECT_EQ(v.block_out_channels, std::vector<int>{64});
  EXPECT_EQ(v.layers_per_block, 1);

  const ClipTextConfig t = parse_clip_text_config("{}", "text.json");
  EXPECT_EQ(t.hidden_size, 512);
  EXPECT_EQ(t.hidden_act, ClipActivation::QuickGelu);

  const ClipVisionConfig vi = parse_clip_vision_config("{}", "vision.json");
  EXPECT_EQ(vi.patch_size, 32);
  EXPECT_EQ(vi.num_positions(), 50);

  const PreprocessorConfig p = parse_preprocessor_config("{}", "pre.json");
  EXPECT_EQ(p.shortest_edge, 224);
  EXPECT_EQ(p.resample, 3);
  EXPECT_DOUBLE_EQ(p.image_std[0], 0.26862954);

  const PipelineIndex idx = parse_pipeline_index(R"({"_class_name": "X"})", "index.json");
  EXPECT_TRUE(idx.ramping_coefficients.empty());
  EXPECT_TRUE(idx.components.empty());
}

TEST(ConfigsTest, UnetListOptionsAndOverrides) {
  const UNetConfig u = parse_unet_config(R"({
    "use_linear_projection": true, "block_out_channels": [64, 128], "norm_num_groups": 32,
    "down_block_types": ["CrossAttnDownBlock2D", "DownBlock2D"],
    "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D"],
    "attention_head_dim": 8, "num_attention_heads": [2, 4], "layers_per_block": [1, 3],
    "transformer_layers_per_block": [2, 1], "cross_attention_dim": [16, 24], "time_embedding_dim": 100,
    "sample_size": [32, 48], "only_cross_attention": [false, false]})",
                                         "unet.json");
  EXPECT_EQ(u.num_attention_heads, (std::vector<int>{2, 4})); // num_attention_heads wins
  EXPECT_EQ(u.layers_per_block, (std::vector<int>{1, 3}));
  EXPECT_EQ(u.transformer_layers_per_block, (std::vector<int>{2, 1}));
  EXPECT_EQ(u.cross_attention_dim, (std::vector<int>{16, 24}));
  EXPECT_EQ(u.time_embedding_dim, 100);
  EXPECT_FALSE(u.sample_size.has_value()); // [h, w] form is informational only
}

TEST(ConfigsTest, BadJsonNamesFileAndPosition) {
  expect_error([] { parse_unet_config("{\n  \"in_channels\": 4,\n  oops\n}", "x/unet/config.json"); },
               ErrorKind::Format, {"x/unet/config.json: invalid JSON", "line 3"});
  expect_error([] { parse_vae_config("[]", "x/vae/config.json"); }, ErrorKind::Format,
               {"x/vae/config.json: expected a JSON object at the top level, found array of 0"});
  expect_error([] { parse_scheduler_config("", "s.json"); }, ErrorKind::Format, {"s.json: invalid JSON"});
  // Out-of-range numbers are a different nlohmann exception type; found by fuzz_configs.
  expect_error([] { parse_scheduler_config(R"({"beta_end": 1e400})", "s.json"); }, ErrorKind::Format,
               {"s.json: invalid JSON", "1e400"});
}

TEST(ConfigsTest, WrongTypesNameKeyExpectedAndFound) {
  expect_error([] { parse_unet_config(R"({"use_linear_projection": true, "in_channels": "4"})", "unet/config.json"); },
               ErrorKind::Format, {"unet/config.json: key 'in_channels': expected integer, found string \"4\""});
  expect_error([] { parse_unet_config(R"({"use_linear_projection": true, "in_channels": 4.5})", "u.json"); },
               ErrorKind::Format, {"key 'in_channels': expected integer, found number 4.5"});
  expect_error(
      [] { parse_unet_config(R"({"use_linear_projection": true, "block_out_channels": [320, "x"]})", "u.json"); },
      ErrorKind::Format, {"key 'block_out_channels[1]': expected integer, found string"});
  expect_error([] { parse_unet_config(R"({"use_linear_projection": "yes"})", "u.json"); }, ErrorKind::Format,
               {"key 'use_linear_projection': expected boolean, found string \"yes\""});
  expect_error([] { parse_unet_config(R"({"use_linear_projection": true, "norm_eps": null})", "u.json"); },
               ErrorKind::Format, {"key 'norm_eps': expected number, found null"});
  expect_error([] { parse_clip_text_config(R"({"hidden_size": 1e40})", "text_encoder/config.json"); },
               ErrorKind::Format, {"text_encoder/config.json: key 'hidden_size': expected integer"});
  expect_error([] { parse_clip_vision_config(R"({"num_hidden_layers": 3000000000})", "v.json"); }, ErrorKind::Format,
               {"key 'num_hidden_layers': expected integer in int range, found number 3000000000"});
  expect_error([] { parse_scheduler_config(R"({"beta_schedule": 1})", "s.json"); }, ErrorKind::Format,
               {"key 'beta_schedule': expected string, found number 1"});
  expect_error([] { parse_preprocessor_config(R"({"size": {"shortest_edge": "512"}})", "p.json"); }, ErrorKind::Format,
               {"p.json: key 'size.shortest_edge': expected integer, found string"});
  expect_error([] { parse_preprocessor_config(R"({"image_mean": [0.5, 0.5]})", "p.json"); }, ErrorKind::Model,
               {"key 'image_mean': expected 3 values, found 2"});
  expect_error([] { parse_preprocessor_config(R"({"image_std": "0.8"})", "p.json"); }, ErrorKind::Format,
               {"key 'image_std': expected number or list of numbers, found string"});
  expect_error([] { parse_pipeline_index(R"({"_class_name": "X", "ramping_coefficients": "a"})", "m.json"); },
               ErrorKind::Format, {"key 'ramping_coefficients': expected list of numbers, found string"});
  expect_error([] { parse_pipeline_index(R"({"_class_name": "X", "ramping_coefficients": [1, null]})", "m.json"); },
               ErrorKind::Format, {"key 'ramping_coefficients[1]': expected number, found null"});
}

TEST(ConfigsTest, MissingRequiredKeys) {
  expect_error([] { parse_pipeline_index("{}", "model_index.json"); }, ErrorKind::Format,
               {"model_index.json: key '_class_name': required key is missing (expected string)"});
  expect_error([] { parse_preprocessor_config(R"({"crop_size": {"height": 224}})", "p.json"); }, ErrorKind::Format,
               {"key 'crop_size.width': required key is missing (expected integer)"});
}

TEST(ConfigsTest, RampingCoefficientsMustBe77) {
  std::string list = "[";
  for (int i = 0; i < 76; ++i) list += (i ? ", " : "") + std::to_string(i * 0.01);
  list += "]";
  expect_error(
      [&] {
        parse_pipeline_index(R"({"_class_name": "X", "ramping_coefficients": )" + list + "}", "model_index.json");
      },
      ErrorKind::Model,
      {"model_index.json: key 'ramping_coefficients': expected 77 values (one per text token), found 76"});
}

TEST(ConfigsTest, UnsupportedUnetOptions) {
  const std::string base = R"({"use_linear_projection": true, )";
  struct Case {
    std::string extra;
    std::string message;
  };
  const Case cases[] = {
      {R"("class_embed_type": "timestep")", "key 'class_embed_type' is \"timestep\"; the engine implements only null"},
      {R"("addition_embed_type": "text_time")", "key 'addition_embed_type' is \"text_time\""},
      {R"("resnet_time_scale_shift": "scale_shift")",
       "key 'resnet_time_scale_shift' is \"scale_shift\"; the engine implements only \"default\""},
      {R"("act_fn": "gelu")", "key 'act_fn' is \"gelu\""},
      {R"("time_embedding_type": "fourier")", "key 'time_embedding_type' is \"fourier\""},
      {R"("dual_cross_attention": true)", "key 'dual_cross_attention' is true; the engine implements only false"},
      {R"("only_cross_attention": [false, true, false, false])",
       "key 'only_cross_attention' is [false,true,false,false]"},
      {R"("center_input_sample": true)", "key 'center_input_sample' is true"},
      {R"("mid_block_type": "UNetMidBlock2DSimpleCrossAttn")",
       "key 'mid_block_type' is \"UNetMidBlock2DSimpleCrossAttn\""},
      {R"("mid_block_type": null)", "key 'mid_block_type' is null (no mid block)"},
      {R"("resnet_out_scale_factor": 2.0)", "key 'resnet_out_scale_factor' is 2; the engine implements only 1"},
      {R"("conv_in_kernel": 4)", "key 'conv_in_kernel' is 4; the engine implements only odd kernel sizes"},
      {R"("down_block_types": ["AttnDownBlock2D", "DownBlock2D", "DownBlock2D", "DownBlock2D"])",
       "key 'down_block_types': entry 0 is \"AttnDownBlock2D\""},
      {R"("norm_num_groups": null)", "key 'norm_num_groups' is null"},
      {R"("_class_name": "UNet2DModel")", "key '_class_name' is \"UNet2DModel\", expected \"UNet2DConditionModel\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.extra);
    expect_error([&] { parse_unet_config(base + c.extra + "}", "unet/config.json"); }, ErrorKind::Unsupported,
                 {"unet/config.json: " + c.message});
  }
  expect_error([] { parse_unet_config(R"({"use_linear_projection": false})", "unet/config.json"); },
               ErrorKind::Unsupported,
               {"unet/config.json: key 'use_linear_projection' is false", "implements only true"});
  expect_error([] { parse_unet_config("{}", "unet/config.json"); }, ErrorKind::Unsupported,
               {"key 'use_linear_projection' is false"}); // diffusers default is false
}

TEST(ConfigsTest, InconsistentUnetValues) {
  expect_error([] { parse_unet_config(R"({"use_linear_projection": true, "attention_head_dim": [5, 10]})", "u.json"); },
               ErrorKind::Model, {"u.json: key 'attention_head_dim': expected 4 entries (one per block), found 2"});
  expect_error(
      [] { parse_unet_config(R"({"use_linear_projection": true, "attention_head_dim": [5, 10, 20, 30]})", "u.json"); },
      ErrorKind::Model, {"key 'attention_head_dim': entry 3 = 30 heads do not divide 1280 channels"});
  expect_error(
      [] {
        parse_unet_config(R"({"use_linear_projection": true, "block_out_channels": [320, 640, 1280, 1000]})", "u.json");
      },
      ErrorKind::Model, {"key 'block_out_channels': entry 3 = 1000 is not divisible by norm_num_groups = 32"});
  expect_error(
      [] { parse_unet_config(R"({"use_linear_projection": true, "up_block_types": ["UpBlock2D"]})", "u.json"); },
      ErrorKind::Model, {"key 'up_block_types': expected 4 entries (one per block_out_channels entry), found 1"});
  expect_error([] { parse_unet_config(R"({"use_linear_projection": true, "layers_per_block": 0})", "u.json"); },
               ErrorKind::Model, {"key 'layers_per_block' is 0, expected an integer in 1..16"});
  expect_error([] { parse_unet_config(R"({"use_linear_projection": true, "block_out_channels": []})", "u.json"); },
               ErrorKind::Model, {"key 'block_out_channels': expected 1..8 entries, found 0"});
}

TEST(ConfigsTest, UnsupportedOrInvalidOtherConfigs) {
  expect_error(
      [] {
        parse_vae_config(
            R"({"block_out_channels": [64, 64], "down_block_types": ["DownEncoderBlock2D", "AttnDownEncoderBlock2D"], "up_block_types": ["UpDecoderBlock2D", "UpDecoderBlock2D"]})",
            "vae/config.json");
      },
      ErrorKind::Unsupported, {"vae/config.json: key 'down_block_types': entry 1 is \"AttnDownEncoderBlock2D\""});
  expect_error([] { parse_vae_config(R"({"block_out_channels": [48]})", "vae/config.json"); }, ErrorKind::Model,
               {"key 'block_out_channels': entry 0 = 48 is not divisible by norm_num_groups = 32"});
  expect_error([] { parse_vae_config(R"({"block_out_channels": [64, 64]})", "vae/config.json"); }, ErrorKind::Model,
               {"key 'down_block_types': expected 2 entries"});
  expect_error(
      [] { parse_clip_text_config(R"({"hidden_act": "relu"})", "text_encoder/config.json"); }, ErrorKind::Unsupported,
      {"text_encoder/config.json: key 'hidden_act' is \"relu\"; the engine implements only \"gelu\", \"quick_gelu\""});
  expect_error([] { parse_clip_text_config(R"({"architectures": ["CLIPModel"]})", "t.json"); }, ErrorKind::Unsupported,
               {"key 'architectures' is [\"CLIPModel\"], expected it to contain \"CLIPTextModel\""});
  expect_error([] { parse_clip_text_config(R"({"hidden_size": 100, "num_attention_heads": 16})", "t.json"); },
               ErrorKind::Model, {"key 'num_attention_heads' = 16 does not divide hidden_size = 100"});
  expect_error([] { parse_clip_vision_config(R"({"model_type": "clip"})", "v.json"); }, ErrorKind::Unsupported,
               {"key 'model_type' is \"clip\", expected \"clip_vision_model\""});
  expect_error([] { parse_clip_vision_config(R"({"image_size": 224, "patch_size": 15})", "v.json"); }, ErrorKind::Model,
               {"key 'patch_size' = 15 does not divide image_size = 224"});
  expect_error([] { parse_scheduler_config(R"({"beta_schedule": "squaredcos_cap_v2"})", "s.json"); },
               ErrorKind::Unsupported, {"key 'beta_schedule' is \"squaredcos_cap_v2\""});
  expect_error([] { parse_scheduler_config(R"({"trained_betas": [0.1, 0.2]})", "s.json"); }, ErrorKind::Unsupported,
               {"key 'trained_betas' is [0.1,0.2]; the engine implements only null"});
  expect_error([] { parse_scheduler_config(R"({"prediction_type": "sample"})", "s.json"); }, ErrorKind::Unsupported,
               {"key 'prediction_type' is \"sample\""});
  expect_error([] { parse_scheduler_config(R"({"beta_start": 0.5, "beta_end": 0.1})", "s.json"); }, ErrorKind::Model,
               {"'beta_start' = 0.5 and 'beta_end' = 0.1: expected 0 < beta_start <= beta_end < 1"});
  EXPECT_EQ(parse_scheduler_config(R"({"timestep_spacing": "trailing"})", "s.json").timestep_spacing, "trailing");
  expect_error([] { parse_preprocessor_config(R"({"size": {"height": 224, "width": 224}})", "p.json"); },
               ErrorKind::Unsupported, {"p.json: key 'size.shortest_edge' is missing", "only shortest-edge"});
  expect_error([] { parse_preprocessor_config(R"({"resample": 1})", "p.json"); }, ErrorKind::Unsupported,
               {"key 'resample' is 1 (lanczos); the engine implements only 2 (bilinear), 3 (bicubic)"});
  expect_error([] { parse_preprocessor_config(R"({"image_std": [0.5, 0, 0.5]})", "p.json"); }, ErrorKind::Model,
               {"key 'image_std[1]' is 0, expected a number in [1e-06, 255]"});
  expect_error([] { parse_preprocessor_config(R"({"image_processor_type": "SiglipImageProcessor"})", "p.json"); },
               ErrorKind::Unsupported, {"processor type \"SiglipImageProcessor\""});
  // Legacy integer forms.
  const PreprocessorConfig p = parse_preprocessor_config(R"({"size": 256, "crop_size": 200})", "p.json");
  EXPECT_EQ(p.shortest_edge, 256);
  EXPECT_EQ(p.crop_height, 200);
  EXPECT_EQ(p.crop_width, 200);
}

TEST(ConfigsTest, LoadNamesMissingFile) {
  expect_error([] { load_unet_config("/nonexistent/unet/config.json"); }, ErrorKind::Io,
               {"/nonexistent/unet/config.json: cannot open"});
}

} // namespace
