// The zero123pp CLI end to end on the bundled tiny model (lavapipe): usage errors, bad inputs,
// bad models (each with its exit code and a message naming the problem), and real runs whose
// outputs are checked: size, the six view files against the grid, the pose JSON, and that the
// same seed gives the same pixels through files, through stdin/stdout and in a batch. Every
// option at and past its limits: test_cli_options.cpp; signals: test_cli_signals.cpp.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_util.hpp"
#include "support/golden.hpp"
#include "z123/image/codec.hpp"
#include "z123/image/preprocess.hpp"

namespace fs = std::filesystem;
using namespace z123;
using test::cli;
using test::CliResult;
using test::q;

namespace {

fs::path temp_dir() { return test::cli_temp_dir(); }

// The fast synthetic model (64 px VAE branch): these tests check the plumbing, not the numbers.
const std::string kModel = "--model " + q(test::fast_model_dir());
const std::string kFast = kModel + " --steps 1 --size 128x192 --seed 7 --quiet";

bool same_pixels(const Image& a, const Image& b) {
  return a.width == b.width && a.height == b.height && a.channels == b.channels && a.pixels == b.pixels;
}

} // namespace

TEST(CliUsage, HelpIsAManPage) {
  CliResult r = cli("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* section : {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "--views-dir"})
    EXPECT_NE(r.out.find(section), std::string::npos) << section;
}

TEST(CliUsage, UsageErrorsExit2WithAReason) {
  struct Case {
    const char* args;
    const char* says;
  };
  for (Case c : {Case{"", "need an INPUT and an OUTPUT"}, Case{"a.png", "need an INPUT and an OUTPUT"},
                 Case{"--bogus a b", "unknown option --bogus"}, Case{"--steps 0 a b", "between 1 and 200"},
                 Case{"--steps x a b", "expects a whole number"}, Case{"--sampler ddpm a b", "sampler"},
                 Case{"--spacing odd a b", "spacing"}, Case{"--size 100x64 a b", "multiples of 64"},
                 Case{"--size 64x64 a b", "2 x 3 grid"}, Case{"--size 8192x192 a b", "between 64 and 4096"},
                 Case{"--guidance nan a b", "guidance scale"}, Case{"--guidance inf a b", "guidance scale"},
                 Case{"--guidance 1e30 a b", "guidance scale"}, Case{"--guidance -2 a b", "guidance scale"},
                 Case{"--seed -1 a b", "expects a whole number"}, Case{"--precision f8 a b", "--precision"},
                 Case{"- - /tmp", "standard input can be read only once"}}) {
    CliResult r = cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
  }
}

TEST(CliBadInput, UnreadableInputsExit3NamingTheFile) {
  fs::path garbage = temp_dir() / "garbage.png";
  std::ofstream(garbage) << "this is not a png";
  fs::path empty = temp_dir() / "empty.jpg";
  std::ofstream(empty).flush();
  for (const fs::path& in : {temp_dir() / "missing.png", garbage, empty}) {
    CliResult r = cli(kFast + " " + q(in) + " " + q(temp_dir() / "o.png"));
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_NE(r.out.find(in.filename().string()), std::string::npos) << r.out;
  }
}

// The engine's smallest input (kMinInputSide), refused when the file is read: exit 3 with a
// missing model folder shows it came before the model loads. The GIMP plug-in says the same words.
TEST(CliBadInput, TooSmallImagesExit3BeforeTheModelLoads) {
  fs::path tiny = temp_dir() / "tiny.png";
  save_png(tiny, Image::blank(4, 100, 4));
  CliResult r = cli("--model " + q(temp_dir() / "nomodel") + " --quiet " + q(tiny) + " " + q(temp_dir() / "o.png"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(
      r.out.find("zero123pp: " + tiny.string() + ": 4x100 pixels is too small; each side must be at least 8 pixels"),
      std::string::npos)
      << r.out;
}

TEST(CliBadInput, UnwritableOutputsExit3BeforeAnyWork) {
  fs::path in = test::golden_dir() / "pipeline_input.png";
  CliResult r = cli(kFast + " " + q(in) + " " + q(temp_dir() / "no" / "such" / "dir" / "o.png"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("does not exist"), std::string::npos) << r.out;
  r = cli(kFast + " " + q(in) + " " + q(temp_dir() / "o.tiff"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("unknown extension"), std::string::npos) << r.out;
  // With a model folder that does not exist, exit 3 (not 4) shows the output was checked first.
  const std::string no_model = "--model " + q(temp_dir() / "nomodel") + " --quiet ";
  fs::path file = temp_dir() / "a-file";
  std::ofstream(file) << "x";
  r = cli(no_model + "--views-dir " + q(file) + " " + q(in) + " " + q(temp_dir() / "o.png"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("is not a directory"), std::string::npos) << r.out;
  if (fs::exists("/proc/self")) { // /proc refuses new files, even to root
    r = cli(no_model + q(in) + " /proc/zero123pp-test.png");
    EXPECT_EQ(r.exit_code, 3) << r.out;
    EXPECT_NE(r.out.find("cannot write"), std::string::npos) << r.out;
    r = cli(no_model + "--views-dir /proc/zero123pp-views " + q(in) + " " + q(temp_dir() / "o.png"));
    EXPECT_EQ(r.exit_code, 3) << r.out;
  }
}

TEST(CliUsage, InputsThatWouldOverwriteEachOtherAreRefused) {
  fs::path in = test::golden_dir() / "pipeline_input.png";
  fs::create_directories(temp_dir() / "c1");
  fs::create_directories(temp_dir() / "c2");
  fs::copy_file(in, temp_dir() / "c1" / "x.png", fs::copy_options::overwrite_existing);
  fs::copy_file(in, temp_dir() / "c2" / "x.png", fs::copy_options::overwrite_existing);
  CliResult r = cli(kFast + " " + q(temp_dir() / "c1" / "x.png") + " " + q(temp_dir() / "c2" / "x.png") + " " +
                    q(temp_dir() / "collide"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("would both be written as"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(temp_dir() / "collide")); // refused before anything was created
}

TEST(CliBadModel, MissingOrBrokenModelExit4) {
  fs::path in = test::golden_dir() / "pipeline_input.png";
  CliResult r = cli("--model " + q(temp_dir() / "nomodel") + " --quiet " + q(in) + " " + q(temp_dir() / "o.png"));
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("nomodel"), std::string::npos) << r.out;
  // A copy of the tiny model with a truncated UNet weights file.
  fs::path broken = temp_dir() / "broken-model";
  fs::remove_all(broken);
  fs::copy(test::tiny_model_dir(), broken, fs::copy_options::recursive);
  fs::path w = broken / "unet" / "diffusion_pytorch_model.safetensors";
  fs::resize_file(w, fs::file_size(w) / 2);
  r = cli("--model " + q(broken) + " --quiet " + q(in) + " " + q(temp_dir() / "o.png"));
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("diffusion_pytorch_model.safetensors"), std::string::npos) << r.out;
  // A dtype the engine does not implement (I16 in place of F16: same size, valid file) and a
  // model_index.json without ramping_coefficients are bad models too (they exited 1 before).
  fs::remove_all(broken);
  fs::copy(test::tiny_model_dir(), broken, fs::copy_options::recursive);
  {
    std::fstream f(w, std::ios::in | std::ios::out | std::ios::binary);
    std::string head(4096, '\0');
    f.read(head.data(), static_cast<std::streamsize>(head.size()));
    size_t at = head.find("\"F16\"");
    ASSERT_NE(at, std::string::npos);
    f.seekp(static_cast<std::streamoff>(at + 1));
    f.write("I", 1);
  }
  r = cli("--model " + q(broken) + " --quiet " + q(in) + " " + q(temp_dir() / "o.png"));
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("I16"), std::string::npos) << r.out;
  fs::remove_all(broken);
  fs::copy(test::tiny_model_dir(), broken, fs::copy_options::recursive);
  {
    std::ifstream in_index(broken / "model_index.json");
    std::string text((std::istreambuf_iterator<char>(in_index)), std::istreambuf_iterator<char>());
    size_t key = text.find("\"ramping_coefficients\"");
    ASSERT_NE(key, std::string::npos);
    size_t end = text.find(']', key);
    text.replace(key, end + 1 - key, "\"ramping_coefficients_removed\": 0");
    std::ofstream(broken / "model_index.json") << text;
  }
  r = cli("--model " + q(broken) + " --quiet " + q(in) + " " + q(temp_dir() / "o.png"));
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("ramping_coefficients"), std::string::npos) << r.out;
}

// The real runs share one reference result (same seed, same input).
class CliRun : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    input_ = test::golden_dir() / "pipeline_input.png";
    out_ = temp_dir() / "single.png";
    CliResult r = cli(kFast + " --views-dir " + q(temp_dir() / "views") + " " + q(input_) + " " + q(out_));
    run_ = r;
    if (r.exit_code == 0) image_ = load_image(out_);
  }
  static inline fs::path input_, out_;
  static inline CliResult run_;
  static inline Image image_;
};

TEST_F(CliRun, WritesTheGridAndTheSixViewsWithPoses) {
  ASSERT_EQ(run_.exit_code, 0) << run_.out;
  EXPECT_EQ(image_.width, 128);
  EXPECT_EQ(image_.height, 192);
  ASSERT_EQ(image_.channels, 4);
  // Not a blank frame: random tiny weights still give varied pixels.
  int lo = 255, hi = 0;
  for (size_t i = 0; i < image_.pixels.size(); i += 4) {
    lo = std::min<int>(lo, image_.pixels[i]);
    hi = std::max<int>(hi, image_.pixels[i]);
  }
  EXPECT_GT(hi - lo, 20);
  std::ifstream js(temp_dir() / "views" / "pipeline_input_views.json");
  ASSERT_TRUE(js);
  nlohmann::json j = nlohmann::json::parse(js);
  ASSERT_EQ(j["views"].size(), 6u);
  const float az[6] = {30, 90, 150, 210, 270, 330}, el[6] = {20, -10, 20, -10, 20, -10};
  for (int i = 0; i < 6; ++i) {
    const auto& v = j["views"][size_t(i)];
    EXPECT_EQ(v["azimuth_deg"].get<float>(), az[i]);
    EXPECT_EQ(v["elevation_deg"].get<float>(), el[i]);
    EXPECT_EQ(v["fov_deg"].get<float>(), 30.0f);
    Image view = load_image(temp_dir() / "views" / v["file"].get<std::string>());
    ASSERT_EQ(view.width, 64);
    ASSERT_EQ(view.height, 64);
    int x0 = (i % 2) * 64, y0 = (i / 2) * 64;
    for (int y = 0; y < 64; ++y)
      for (int x = 0; x < 64; ++x)
        for (int c = 0; c < 4; ++c) ASSERT_EQ(view.at(x, y, c), image_.at(x0 + x, y0 + y, c)) << "view " << i;
  }
}

TEST_F(CliRun, StdinToStdoutGivesTheSamePixels) {
  ASSERT_EQ(run_.exit_code, 0) << run_.out;
  fs::path piped = temp_dir() / "piped.png";
  std::string cmd = std::string("cat ") + q(input_) + " | " + Z123_CLI + " " + kFast + " - - > " + q(piped);
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_TRUE(same_pixels(load_image(piped), image_));
}

TEST_F(CliRun, SeveralInputsToAFolderInOneLoad) {
  ASSERT_EQ(run_.exit_code, 0) << run_.out;
  fs::path jpg = temp_dir() / "second.jpg";
  save_jpeg(jpg, to_rgb(load_image(input_)), 95);
  fs::path dir = temp_dir() / "batch";
  CliResult r = cli(kModel + " --steps 1 --size 128x192 --seed 7 " + q(input_) + " " + q(jpg) + " " + q(dir));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // One model load for both images.
  size_t loads = 0;
  for (size_t p = r.out.find("loaded in"); p != std::string::npos; p = r.out.find("loaded in", p + 1)) ++loads;
  EXPECT_EQ(loads, 1u) << r.out;
  EXPECT_TRUE(same_pixels(load_image(dir / "pipeline_input.png"), image_));
  Image second = load_image(dir / "second.png");
  EXPECT_EQ(second.width, 128);
  EXPECT_EQ(second.height, 192);
}
