// Model folder: a synthetic tiny folder opens and checks clean; the real v1.2 layout (configs
// plus sparse, header-valid weights) checks clean with the TSV counts; and every corruption
// (missing file / config / component, missing, extra, mis-shaped or mis-typed tensor, truncated
// weights) is reported precisely.
#include "io_test_util.hpp"
#include "model_folder_edit.hpp"
#include "support/synthetic_model.hpp"
#include "z123/half.hpp"
#include "z123/model/model_folder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

namespace {

using namespace z123;
using z123::test::edit_weights;
using z123::test::expect_error;
using z123::test::find_raw;
using z123::test::RawTensor;
namespace fs = std::filesystem;

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const std::size_t pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << "fixture text lacks: " << from;
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class ModelFolderTest : public ::testing::Test {
protected:
  void SetUp() override { test::write_synthetic_model(dir_.path()); }
  fs::path dir() const { return dir_.path(); }
  fs::path weights(ModelModule m) const { return dir() / module_weights_path(m); }
  const ModuleCheck& module(const FolderCheck& c, ModelModule m) { return c.modules.at(static_cast<std::size_t>(m)); }

  test::TempDir dir_{"z123-model-folder"};
};

TEST_F(ModelFolderTest, SyntheticFolderChecksClean) {
  const ModelFolder folder = ModelFolder::open(dir());
  EXPECT_EQ(folder.configs().unet.block_out_channels, (std::vector<int>{32, 64, 64, 64}));
  EXPECT_EQ(folder.configs().index.ramping_coefficients.size(), 77u);
  const FolderCheck check = check_model_folder(folder);
  EXPECT_TRUE(check.ok());
  EXPECT_TRUE(check.consistency_problems.empty());
  const std::size_t counts[] = {684, 180, 36, 40};
  for (ModelModule m : kModelModules) {
    SCOPED_TRACE(module_name(m));
    const ModuleCheck& mc = module(check, m);
    const TensorCheckReport& r = mc.tensors;
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.file_tensors, counts[static_cast<int>(m)]);
    EXPECT_EQ(r.expected_tensors, r.file_tensors);
    EXPECT_EQ(r.file_parameters, r.expected_parameters);
    const StoredDType dtype = m == ModelModule::Unet ? StoredDType::F32 : StoredDType::F16;
    EXPECT_EQ(r.file_tensor_bytes, r.file_parameters * stored_dtype_size(dtype));
    ASSERT_EQ(r.dtype_counts.size(), 1u);
    EXPECT_EQ(r.dtype_counts.begin()->first, dtype);
    EXPECT_EQ(r.stored_names.size(), r.expected_tensors);
    for (const auto& [canonical, stored] : r.stored_names) EXPECT_EQ(canonical, stored);
    EXPECT_EQ(mc.weights_file, weights(m));
  }
  EXPECT_EQ(module(check, ModelModule::Unet).class_name, "UNet2DConditionModel");
  EXPECT_EQ(module(check, ModelModule::VisionEncoder).class_name, "CLIPVisionModelWithProjection");
  // Weights are loadable values, not just headers.
  const std::vector<float> w = to_f32(folder.weights(ModelModule::Unet).at("conv_in.weight"));
  EXPECT_EQ(w.size(), 32u * 4 * 3 * 3);
  EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](float x) { return x != 0.0f; }));
}

TEST_F(ModelFolderTest, TextEncoderWithoutPrefixAndPositionIds) {
  test::SyntheticModelOptions options;
  options.text_encoder_prefix = false; // transformers 5.x
  options.add_position_ids = true;     // old transformers buffers (int64)
  test::write_synthetic_model(dir(), options);
  const ModelFolder folder = ModelFolder::open(dir());
  const FolderCheck check = check_model_folder(folder);
  EXPECT_TRUE(check.ok());
  const TensorCheckReport& text = module(check, ModelModule::TextEncoder).tensors;
  EXPECT_EQ(text.stored_names.at("text_model.final_layer_norm.weight"), "final_layer_norm.weight");
  EXPECT_EQ(text.ignored, std::vector<std::string>{"embeddings.position_ids"});
  EXPECT_EQ(module(check, ModelModule::VisionEncoder).tensors.ignored,
            std::vector<std::string>{"vision_model.embeddings.position_ids"});
  EXPECT_EQ(text.file_tensors, 36u); // the buffer is not counted
}

TEST_F(ModelFolderTest, BothTextSpellingsIsADuplicate) {
  edit_weights(weights(ModelModule::TextEncoder), [](std::vector<RawTensor>& t) {
    RawTensor copy = *find_raw(t, "text_model.final_layer_norm.bias");
    copy.name = "final_layer_norm.bias";
    t.push_back(copy);
  });
  const FolderCheck check = check_model_folder(ModelFolder::open(dir()));
  EXPECT_EQ(module(check, ModelModule::TextEncoder).tensors.unexpected,
            std::vector<std::string>{"final_layer_norm.bias"});
}

TEST_F(ModelFolderTest, MissingTensor) {
  edit_weights(weights(ModelModule::Unet), [](std::vector<RawTensor>& t) {
    t.erase(std::remove_if(t.begin(), t.end(), [](const RawTensor& r) { return r.name == "conv_in.weight"; }), t.end());
  });
  const FolderCheck check = check_model_folder(ModelFolder::open(dir()));
  EXPECT_FALSE(check.ok());
  const TensorCheckReport& r = module(check, ModelModule::Unet).tensors;
  EXPECT_EQ(r.missing, std::vector<std::string>{"conv_in.weight"});
  EXPECT_TRUE(r.unexpected.empty());
  EXPECT_TRUE(module(check, ModelModule::Vae).tensors.ok());
}

TEST_F(ModelFolderTest, ExtraTensor) {
  edit_weights(weights(ModelModule::Vae), [](std::vector<RawTensor>& t) {
    t.push_back({"encoder.extra.weight", "F16", {3}, std::vector<std::byte>(6)});
  });
  const FolderCheck check = check_model_folder(ModelFolder::open(dir()));
  const TensorCheckReport& r = module(check, ModelModule::Vae).tensors;
  EXPECT_EQ(r.unexpected, std::vector<std::string>{"encoder.extra.weight"});
  EXPECT_TRUE(r.missing.empty());
  EXPECT_EQ(r.file_tensors, 181u);
}

TEST_F(ModelFolderTest, WrongShape) {
  edit_weights(weights(ModelModule::Unet), [](std::vector<RawTensor>& t) {
    find_raw(t, "conv_in.weight")->shape = {32, 4, 9}; // same byte count, wrong shape
  });
  const FolderCheck check = check_model_folder(ModelFolder::open(dir()));
  const TensorCheckReport& r = module(check, ModelModule::Unet).tensors;
  ASSERT_EQ(r.mis_shaped.size(), 1u);
  EXPECT_EQ(r.mis_shaped[0].name, "conv_in.weight");
  EXPECT_EQ(r.mis_shaped[0].expected, (std::vector<std::int64_t>{32, 4, 3, 3}));
  EXPECT_EQ(r.mis_shaped[0].found, (std::vector<std::int64_t>{32, 4, 9}));
  EXPECT_FALSE(check.ok());
}

TEST_F(ModelFolderTest, WrongDtype) {
  edit_weights(weights(ModelModule::Unet), [](std::vector<RawTensor>& t) {
    find_raw(t, "conv_in.bias")->dtype = "I32"; // same 4-byte elements
  });
  expect_error(
      [&] { ModelFolder::open(dir()); }, ErrorKind::Unsupported,
      {"unet/diffusion_pytorch_model.safetensors: tensor 'conv_in.bias' has dtype 'I32'", "expected F32, F16 or BF16"});
}

TEST_F(ModelFolderTest, MixedFloatDtypesAreAllowedAndReported) {
  edit_weights(weights(ModelModule::Unet), [](std::vector<RawTensor>& t) {
    RawTensor& b = *find_raw(t, "conv_in.bias");
    std::vector<std::byte> half(b.bytes.size() / 2);
    for (std::size_t i = 0; i < half.size() / 2; ++i) {
      float f;
      std::memcpy(&f, b.bytes.data() + 4 * i, 4);
      const std::uint16_t h = f32_to_f16(f);
      std::memcpy(half.data() + 2 * i, &h, 2);
    }
    b.dtype = "F16";
    b.bytes = half;
  });
  const FolderCheck check = check_model_folder(ModelFolder::open(dir()));
  const TensorCheckReport& r = module(check, ModelModule::Unet).tensors;
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.dtype_counts.at(StoredDType::F16), 1u);
  EXPECT_EQ(r.dtype_counts.at(StoredDType::F32), 683u);
}

TEST_F(ModelFolderTest, TruncatedWeights) {
  fs::resize_file(weights(ModelModule::VisionEncoder), fs::file_size(weights(ModelModule::VisionEncoder)) - 100);
  expect_error([&] { ModelFolder::open(dir()); }, ErrorKind::Format,
               {"vision_encoder/model.safetensors: tensor '", "is past the end of the data area", "truncated?"});
}

TEST_F(ModelFolderTest, MissingWeightsFile) {
  fs::remove(weights(ModelModule::Vae));
  expect_error([&] { ModelFolder::open(dir()); }, ErrorKind::Io,
               {"vae/diffusion_pytorch_model.safetensors: missing weights file of component 'vae'"});
  test::write_text_file(dir() / "vae/diffusion_pytorch_model.bin", "pickle");
  expect_error([&] { ModelFolder::open(dir()); }, ErrorKind::Io,
               {"found instead: diffusion_pytorch_model.bin", "only single-file, non-variant .safetensors"});
}

TEST_F(ModelFolderTest, MissingConfigsAndIndex) {
  fs::remove(dir() / "unet/config.json");
  expect_error([&] { ModelFolder::open(dir()); }, ErrorKind::Io,
               {"unet/config.json: missing config of component 'unet'"});
  fs::remove(dir() / "model_index.json");
  expect_error([&] { ModelFolder::open(dir()); }, ErrorKind::Io, {"model_index.json: missing pipeline index"});
  expect_error([&] { ModelFolder::open(dir() / "nope"); }, ErrorKind::Io, {"nope: not a directory"});
}

TEST_F(ModelFolderTest, BadModelIndex) {
  const std::string index = test::tiny_model_index_json();
  test::write_text_file(dir() / "model_index.json",
                        replace(index, R"("vision_encoder": ["transformers", "CLIPVisionModelWithProjection"])",
                                R"("vision_encoder": [null, null])"));
  expect_error([&] { ModelFolder::open(dir()); }, ErrorKind::Model,
               {"model_index.json: component 'vision_encoder' is null; expected [\"transformers\", "
                "\"CLIPVisionModelWithProjection\"]"});
  test::write_text_file(dir() / "model_index.json",
                        replace(index, R"("unet": ["diffusers", "UNet2DConditionModel"],)", ""));
  expect_error([&] { ModelFolder::open(dir()); }, ErrorKind::Model,
               {"component 'unet' is missing; expected [\"diffusers\", \"UNet2DConditionModel\"]"});
  test::write_text_file(dir() / "model_index.json", replace(index, R"("vae": ["diffusers", "AutoencoderKL"])",
                                                            R"("vae": ["diffusers", "VQModel"])"));
  expect_error([&] { ModelFolder::open(dir()); }, ErrorKind::Unsupported,
               {"component 'vae' has class \"VQModel\"; expected \"AutoencoderKL\""});
  test::write_text_file(dir() / "model_index.json", replace(index, R"("safety_checker": [null, null],)",
                                                            R"("tokenizer": ["transformers", "CLIPTokenizer"],)"));
  expect_error([&] { ModelFolder::open(dir()); }, ErrorKind::Io,
               {"tokenizer: missing folder of component 'tokenizer' (listed in"});
}

TEST_F(ModelFolderTest, BadConfigNamesFile) {
  test::write_text_file(dir() / "vae/config.json", "{\"block_out_channels\": [32,");
  expect_error([&] { ModelFolder::open(dir()); }, ErrorKind::Format, {"vae/config.json: invalid JSON"});
  test::write_text_file(dir() / "vae/config.json",
                        replace(test::tiny_vae_config_json(), "\"latent_channels\": 4", "\"latent_channels\": \"4\""));
  expect_error([&] { ModelFolder::open(dir()); }, ErrorKind::Format,
               {"vae/config.json: key 'latent_channels': expected integer, found string \"4\""});
}

TEST_F(ModelFolderTest, LegacyVaeAttentionNames) {
  const char* renames[][2] = {{"to_q", "query"}, {"to_k", "key"}, {"to_v", "value"}, {"to_out.0", "proj_attn"}};
  edit_weights(weights(ModelModule::Vae), [&](std::vector<RawTensor>& t) {
    for (RawTensor& r : t) {
      for (const auto& rn : renames) {
        const std::string from = std::string(".attentions.0.") + rn[0] + ".";
        const std::size_t pos = r.name.find(from);
        if (pos != std::string::npos) r.name.replace(pos, from.size(), std::string(".attentions.0.") + rn[1] + ".");
      }
    }
  });
  const FolderCheck check = check_model_folder(ModelFolder::open(dir()));
  const TensorCheckReport& r = module(check, ModelModule::Vae).tensors;
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.stored_names.at("encoder.mid_block.attentions.0.to_q.weight"),
            "encoder.mid_block.attentions.0.query.weight");
  EXPECT_EQ(r.stored_names.at("decoder.mid_block.attentions.0.to_out.0.bias"),
            "decoder.mid_block.attentions.0.proj_attn.bias");
}

TEST_F(ModelFolderTest, LegacyVaeNamesThatAreNotSimpleAreUnexpected) {
  edit_weights(weights(ModelModule::Vae), [&](std::vector<RawTensor>& t) {
    RawTensor& q = *find_raw(t, "encoder.mid_block.attentions.0.to_q.weight");
    q.name = "encoder.mid_block.attentions.0.query.weight";
    q.shape = {64, 64, 1, 1}; // old conv-style layout: not a pure rename
    // And a legacy duplicate of a tensor that is present under its modern name.
    RawTensor dup = *find_raw(t, "decoder.mid_block.attentions.0.to_k.bias");
    dup.name = "decoder.mid_block.attentions.0.key.bias";
    t.push_back(dup);
  });
  const FolderCheck check = check_model_folder(ModelFolder::open(dir()));
  const TensorCheckReport& r = module(check, ModelModule::Vae).tensors;
  EXPECT_EQ(r.missing, std::vector<std::string>{"encoder.mid_block.attentions.0.to_q.weight"});
  EXPECT_TRUE(contains(r.unexpected, "encoder.mid_block.attentions.0.query.weight"));
  EXPECT_TRUE(contains(r.unexpected, "decoder.mid_block.attentions.0.key.bias"));
  EXPECT_EQ(r.stored_names.at("decoder.mid_block.attentions.0.to_k.bias"), "decoder.mid_block.attentions.0.to_k.bias");
}

TEST_F(ModelFolderTest, CrossModuleConsistency) {
  test::write_text_file(
      dir() / "vision_encoder/config.json",
      replace(test::tiny_vision_encoder_config_json(), "\"projection_dim\": 32", "\"projection_dim\": 48"));
  const FolderCheck check = check_model_folder(ModelFolder::open(dir()));
  EXPECT_FALSE(check.ok());
  ASSERT_EQ(check.consistency_problems.size(), 1u);
  EXPECT_NE(check.consistency_problems[0].find(
                "vision_encoder/config.json projection_dim is 48, expected text_encoder/config.json hidden_size 32"),
            std::string::npos)
      << check.consistency_problems[0];
  // The weights were written for 32, so the projection is mis-shaped too.
  ASSERT_EQ(module(check, ModelModule::VisionEncoder).tensors.mis_shaped.size(), 1u);
  EXPECT_EQ(module(check, ModelModule::VisionEncoder).tensors.mis_shaped[0].name, "visual_projection.weight");
}

// The real v1.2 layout: configs from the spec, full-size (sparse) weight files.
TEST(ModelFolderRealLayoutTest, V12ConfigsWithSparseWeightsCheckClean) {
  test::TempDir dir("z123-v12-layout");
  test::write_sparse_model(dir.path(), test::v12_configs());
  const ModelFolder folder = ModelFolder::open(dir.path());
  const FolderCheck check = check_model_folder(folder);
  EXPECT_TRUE(check.ok());
  EXPECT_TRUE(check.consistency_problems.empty());
  struct Want {
    std::size_t tensors;
    std::uint64_t params, bytes;
  };
  const Want want[] = {{686, 865'910'724, 3'463'642'896},
                       {248, 83'653'863, 167'307'726},
                       {372, 340'387'840, 680'775'680},
                       {520, 632'076'800, 1'264'153'600}};
  for (ModelModule m : kModelModules) {
    SCOPED_TRACE(module_name(m));
    const TensorCheckReport& r = check.modules[static_cast<std::size_t>(m)].tensors;
    const Want& w = want[static_cast<int>(m)];
    EXPECT_EQ(r.file_tensors, w.tensors);
    EXPECT_EQ(r.file_parameters, w.params);
    EXPECT_EQ(r.file_tensor_bytes, w.bytes);
  }
  EXPECT_EQ(folder.configs().unet.num_attention_heads, (std::vector<int>{5, 10, 20, 20}));
}

} // namespace
