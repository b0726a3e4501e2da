// Runs the built zero123pp-inspect binary (path from CMake) on synthetic and corrupted folders
// and checks its exit status and what it prints.
#include "io_test_util.hpp"
#include "model_folder_edit.hpp"
#include "support/synthetic_model.hpp"
#include "z123/model/model_folder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <sys/wait.h>

namespace {

using namespace z123;
using z123::test::edit_weights;
using z123::test::find_raw;
using z123::test::RawTensor;
namespace fs = std::filesystem;

struct RunResult {
  int status = -1;
  std::string output; // stdout + stderr
};

// `limits` is a shell prefix run before the tool (e.g. "ulimit -v N; timeout 60").
RunResult run_inspect_with_limits(const std::string& limits, const std::string& args) {
  const std::string cmd = limits + " '" + Z123_INSPECT_TOOL + "' " + args + " 2>&1";
  RunResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int raw = ::pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

RunResult run_inspect(const std::string& args) { return run_inspect_with_limits("", args); }

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

#define EXPECT_OUTPUT_HAS(result, text)                                                                                \
  EXPECT_NE((result).output.find(text), std::string::npos) << "output lacks: " << (text) << "\n" << (result).output

class InspectToolTest : public ::testing::Test {
protected:
  void SetUp() override { test::write_synthetic_model(dir_.path()); }
  fs::path dir() const { return dir_.path(); }
  fs::path weights(ModelModule m) const { return dir() / module_weights_path(m); }
  test::TempDir dir_{"z123-inspect"};
};

TEST_F(InspectToolTest, SyntheticFolderIsOk) {
  const RunResult r = run_inspect(quote(dir()));
  EXPECT_EQ(r.status, 0) << r.output;
  // Counts worked out by hand in test_expected_tensors.cpp (ExpectedTensorsTinyTest).
  const ModelFolder folder = ModelFolder::open(dir());
  const FolderCheck check = check_model_folder(folder);
  EXPECT_OUTPUT_HAS(r, "pipeline: Zero123PlusPipeline (diffusers 0.24.0), 77 ramping coefficients");
  EXPECT_OUTPUT_HAS(r, "UNet2DConditionModel");
  EXPECT_OUTPUT_HAS(r, "CLIPVisionModelWithProjection");
  EXPECT_OUTPUT_HAS(r, "   684 tensors");
  EXPECT_OUTPUT_HAS(r, "   180 tensors");
  EXPECT_OUTPUT_HAS(r, "    36 tensors");
  EXPECT_OUTPUT_HAS(r, "    40 tensors");
  for (const ModuleCheck& m : check.modules) {
    std::string params = std::to_string(m.tensors.expected_parameters);
    for (int i = static_cast<int>(params.size()) - 3; i > 0; i -= 3) params.insert(static_cast<std::size_t>(i), ",");
    EXPECT_OUTPUT_HAS(r, " " + params + " params");
  }
  EXPECT_OUTPUT_HAS(r, "block_out_channels [32, 64, 64, 64], layers_per_block [2, 2, 2, 2], heads [2, 2, 2, 2] (head "
                       "dim [16, 32, 32, 32])");
  EXPECT_OUTPUT_HAS(r, "EulerAncestralDiscreteScheduler: linear betas 0.00085..0.012 over 1000, v_prediction, "
                       "timestep_spacing linspace");
  EXPECT_OUTPUT_HAS(r, "unet            OK (684 of 684 expected tensors)");
  EXPECT_OUTPUT_HAS(r, "result: OK");
}

TEST_F(InspectToolTest, RealLayoutCounts) {
  test::TempDir real("z123-inspect-v12");
  test::write_sparse_model(real.path(), test::v12_configs());
  const RunResult r = run_inspect(quote(real.path()));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_OUTPUT_HAS(r, "F32          686 tensors   865,910,724 params   3,463,642,896 bytes");
  EXPECT_OUTPUT_HAS(r, "F16          248 tensors    83,653,863 params     167,307,726 bytes");
  EXPECT_OUTPUT_HAS(r, "F16          372 tensors   340,387,840 params     680,775,680 bytes");
  EXPECT_OUTPUT_HAS(r, "F16          520 tensors   632,076,800 params   1,264,153,600 bytes");
  EXPECT_OUTPUT_HAS(r,
                    "heads [5, 10, 20, 20] (head dim [64, 64, 64, 64]), cross_attention_dim [1024, 1024, 1024, 1024]");
  EXPECT_OUTPUT_HAS(
      r, "hidden 1280, layers 32, heads 16, mlp 5120, image 224 patch 14 (257 positions), projection 1024, act gelu");
  EXPECT_OUTPUT_HAS(
      r,
      "feature_extractor_vae   shortest_edge 512, crop 512x512, bilinear, mean [0.5, 0.5, 0.5], std [0.8, 0.8, 0.8]");
}

TEST_F(InspectToolTest, Usage) {
  RunResult r = run_inspect("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_OUTPUT_HAS(r, "SYNOPSIS\n    zero123pp-inspect MODEL_DIR");
  EXPECT_OUTPUT_HAS(r, "EXIT STATUS");
  r = run_inspect("");
  EXPECT_EQ(r.status, 2);
  EXPECT_OUTPUT_HAS(r, "usage: zero123pp-inspect MODEL_DIR");
  EXPECT_OUTPUT_HAS(r, "Try 'zero123pp-inspect --help'");
  r = run_inspect("a b");
  EXPECT_EQ(r.status, 2);
  r = run_inspect("--frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_OUTPUT_HAS(r, "unknown option '--frobnicate'");
}

TEST_F(InspectToolTest, ListsTensorProblems) {
  edit_weights(weights(ModelModule::Unet), [](std::vector<RawTensor>& t) {
    t.erase(std::remove_if(t.begin(), t.end(), [](const RawTensor& x) { return x.name == "conv_out.bias"; }), t.end());
    find_raw(t, "conv_in.weight")->shape = {32, 36};
    t.push_back({"extra.bias", "F32", {2}, std::vector<std::byte>(8)});
  });
  const RunResult r = run_inspect(quote(dir()));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_OUTPUT_HAS(r,
                    "PROBLEMS in " + weights(ModelModule::Unet).string() + ": 1 missing, 1 unexpected, 1 mis-shaped");
  EXPECT_OUTPUT_HAS(r, "missing tensor 'conv_out.bias' (expected shape [4])");
  EXPECT_OUTPUT_HAS(r, "unexpected tensor 'extra.bias' (shape [2], F32)");
  EXPECT_OUTPUT_HAS(r, "mis-shaped tensor 'conv_in.weight': expected [32, 4, 3, 3], found [32, 36]");
  EXPECT_OUTPUT_HAS(r, "vae             OK");
  EXPECT_OUTPUT_HAS(r, "result: 3 problems");
}

TEST_F(InspectToolTest, LongListsAreCut) {
  edit_weights(weights(ModelModule::TextEncoder), [](std::vector<RawTensor>& t) {
    t.erase(std::remove_if(t.begin(), t.end(),
                           [](const RawTensor& x) { return x.name.find("layers.1.") != std::string::npos; }),
            t.end()); // 16 tensors
    t.erase(std::remove_if(t.begin(), t.end(),
                           [](const RawTensor& x) { return x.name.find("layers.0.") != std::string::npos; }),
            t.end()); // 16 more
  });
  const RunResult r = run_inspect(quote(dir()));
  EXPECT_EQ(r.status, 1);
  EXPECT_OUTPUT_HAS(r, "32 missing, 0 unexpected, 0 mis-shaped (expected 36 tensors)");
  EXPECT_OUTPUT_HAS(r, "... and 12 more missing tensors");
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n') < 60, true) << r.output;
}

TEST_F(InspectToolTest, FatalProblemsAreOneClearLine) {
  edit_weights(weights(ModelModule::Vae),
               [](std::vector<RawTensor>& t) { find_raw(t, "encoder.conv_in.bias")->dtype = "I16"; });
  RunResult r = run_inspect(quote(dir()));
  EXPECT_EQ(r.status, 1);
  EXPECT_OUTPUT_HAS(r, "zero123pp-inspect: unsupported error: " + weights(ModelModule::Vae).string() +
                           ": tensor 'encoder.conv_in.bias' has dtype 'I16'");

  fs::resize_file(weights(ModelModule::Vae), 20);
  r = run_inspect(quote(dir()));
  EXPECT_EQ(r.status, 1);
  EXPECT_OUTPUT_HAS(r, "format error: " + weights(ModelModule::Vae).string() + ": header length");

  fs::remove(weights(ModelModule::Vae));
  r = run_inspect(quote(dir()));
  EXPECT_EQ(r.status, 1);
  EXPECT_OUTPUT_HAS(r, "io error: " + weights(ModelModule::Vae).string() + ": missing weights file of component 'vae'");

  fs::remove(dir() / "scheduler/scheduler_config.json");
  r = run_inspect(quote(dir()));
  EXPECT_EQ(r.status, 1);
  EXPECT_OUTPUT_HAS(r, "scheduler/scheduler_config.json: missing config of component 'scheduler'");
}

TEST_F(InspectToolTest, TruncatedWeightsNameTheTensor) {
  const fs::path unet = weights(ModelModule::Unet);
  fs::resize_file(unet, fs::file_size(unet) - 4);
  const RunResult r = run_inspect(quote(dir()));
  EXPECT_EQ(r.status, 1);
  EXPECT_OUTPUT_HAS(r, "format error: " + unet.string() + ": tensor 'conv_out.bias'");
  EXPECT_OUTPUT_HAS(r, "is past the end of the data area");
}

TEST_F(InspectToolTest, ConsistencyProblemsFailTheCheck) {
  test::write_text_file(dir() / "feature_extractor_clip/preprocessor_config.json",
                        R"({"crop_size": 196, "size": 196, "resample": 3})");
  const RunResult r = run_inspect(quote(dir()));
  EXPECT_EQ(r.status, 1);
  EXPECT_OUTPUT_HAS(r, "inconsistent: feature_extractor_clip/preprocessor_config.json crop_size is 196x196, "
                       "expected vision_encoder/config.json image_size 224");
  EXPECT_OUTPUT_HAS(r, "result: 1 problem\n");
}

// A hostile config is refused while the configs are read, the same way by ModelFolder::open (and
// so Engine::open) and by the tool, before anything is sized by it. The tool runs under a time
// and address-space limit, so a regression fails here instead of exhausting the machine.
TEST_F(InspectToolTest, HostileConfigsAreRefusedLikeOpeningDoes) {
  struct Case {
    const char* file;
    const char* from;
    const char* to;
    const char* message;
  };
  const Case cases[] = {
      {"unet/config.json", R"("layers_per_block": 2,)", R"("layers_per_block": 2000000000,)",
       "unet/config.json: key 'layers_per_block' is 2000000000, expected an integer in 1..16"},
      {"unet/config.json", R"("block_out_channels": [32, 64, 64, 64])",
       R"("block_out_channels": [1073741824, 64, 64, 64])",
       "unet/config.json: key 'block_out_channels': entry 0 is 1073741824, expected an integer in 1..16384"},
      {"text_encoder/config.json", R"("num_hidden_layers": 2,)", R"("num_hidden_layers": 2000000000,)",
       "text_encoder/config.json: key 'num_hidden_layers' is 2000000000, expected an integer in 1..256"},
      {"feature_extractor_clip/preprocessor_config.json", R"("width": 224})", R"("width": 100000})",
       "feature_extractor_clip/preprocessor_config.json: key 'crop_size.width' is 100000, expected an integer in "
       "1..4096"},
  };
  const std::string originals[] = {test::tiny_unet_config_json(), test::tiny_unet_config_json(),
                                   test::tiny_text_encoder_config_json(), test::tiny_feature_extractor_clip_json()};
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.to);
    std::string text = originals[i];
    const std::size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << "fixture lacks " << c.from;
    test::write_text_file(dir() / c.file, text.replace(at, std::string(c.from).size(), c.to));

    std::string opened;
    try {
      (void)ModelFolder::open(dir());
      ADD_FAILURE() << "ModelFolder::open accepted " << c.to;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Model) << e.what();
      opened = e.what();
    }
    EXPECT_NE(opened.find(c.message), std::string::npos) << opened;

#if defined(__SANITIZE_ADDRESS__)
    const std::string limit = "timeout 60"; // ASan reserves terabytes of address space: no ulimit -v
#else
    const std::string limit = "ulimit -v 4194304; timeout 60"; // 4 GiB, 60 s
#endif
    const RunResult r = run_inspect_with_limits(limit, quote(dir()));
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_OUTPUT_HAS(r, "zero123pp-inspect: model error: " + opened);

    test::write_text_file(dir() / c.file, originals[i]);
  }
  EXPECT_EQ(run_inspect(quote(dir())).status, 0); // the fixture was restored each time
}

} // namespace
