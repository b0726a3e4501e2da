// The example pipelines of pipelines/ end to end: each script runs gst-launch-1.0 with this
// build's plugin on the test device. The first test runs them as a user without weights does: the
// scripts fall back to the bundled tiny model (view-size 64, 1 step; Z123_MODEL_DIR points at an
// empty folder) and say so. The others point Z123_MODEL_DIR at the fast synthetic model (64 px VAE
// branch, support/golden.hpp) with the same view size and step count, which is ~5x cheaper on
// lavapipe: they check plumbing, not numbers. Checked: exit status, the files written (count,
// names, PNG size for the view size and tiling), and pixels against the zero123pp command-line
// tool on the same model and seed, which reaches the engine without GStreamer. webcam.sh needs a
// camera and a display: not tested.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "script_util.hpp"
#include "support/golden.hpp"
#include "z123/image/codec.hpp"

namespace fs = std::filesystem;
using namespace z123;
using namespace z123::test;

namespace {

constexpr int kView = 64; // the scripts' view size with the tiny model
const std::string kSeed = "7";

// Environment of every script run: this build's plugin and a registry of its own (a user's
// registry may predate this build), the test device, a fixed seed and `options` (more element
// properties). `model` empty: no weights (the scripts fall back to the tiny model); otherwise that
// folder with the fallback's view size and step count.
std::string script_env(const std::string& options = "", const fs::path& model = {}) {
  const char* device = std::getenv("Z123_TEST_DEVICE");
  const std::string model_options = model.empty() ? "" : "view-size=" + std::to_string(kView) + " steps=1 ";
  return "GST_PLUGIN_PATH=" + shell_quoted(Z123_GST_PLUGIN_DIR) +
         " GST_REGISTRY=" + shell_quoted(fs::path(Z123_BUILD_DIR) / "gst-registry-pipelines.bin") +
         " Z123_BUILD_DIR=" + shell_quoted(Z123_BUILD_DIR) +
         " Z123_MODEL_DIR=" + shell_quoted(model.empty() ? fs::path("/nonexistent/no-weights") : model) +
         " Z123_DEVICE=" + shell_quoted(device ? device : "") +
         " Z123_GST_OPTS=" + shell_quoted(model_options + "seed=" + kSeed + " " + options) + " ";
}

// The fast synthetic model (written once per test process).
fs::path fast_model() { return z123::test::fast_model_dir(); }

// The sample image of the main job (a lit cube on a transparent background, RGBA).
fs::path sample_input(const fs::path& dir, const std::string& name, const std::string& options = "") {
  const fs::path p = dir / name;
  ShellResult r = shell(shell_quoted(Z123_SAMPLE_TOOL) + " --size 100 " + options + " " + shell_quoted(p));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return p;
}

// The CLI on `input` with the scripts' settings and `model`: 2x3 grid to `out`, six views into
// `views_dir`.
void cli_views(const fs::path& model, const fs::path& input, const fs::path& out, const fs::path& views_dir) {
  const char* device = std::getenv("Z123_TEST_DEVICE");
  ShellResult r = shell(shell_quoted(Z123_CLI) + " --quiet --model " + shell_quoted(model) + " --device " +
                        shell_quoted(device ? device : "") + " --steps 1 --seed " + kSeed + " --size " +
                        std::to_string(2 * kView) + "x" + std::to_string(3 * kView) + " --views-dir " +
                        shell_quoted(views_dir) + " " + shell_quoted(input) + " " + shell_quoted(out));
  ASSERT_EQ(r.exit_code, 0) << r.out;
}

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

void expect_size(const Image& img, int w, int h, const std::string& what) {
  EXPECT_EQ(img.width, w) << what;
  EXPECT_EQ(img.height, h) << what;
}

bool same_pixels(const Image& a, const Image& b) {
  return a.width == b.width && a.height == b.height && a.channels == b.channels && a.pixels == b.pixels;
}

} // namespace

// filesrc ! decodebin ! videoconvert ! zero123pp ! videoconvert ! pngenc ! filesink: the grid of
// the CLI, pixel for pixel (RGBA in, the alpha composited by the engine on both paths).
TEST(Pipelines, ImageToPngEqualsTheCli) {
  const fs::path dir = test_dir();
  const fs::path in = sample_input(dir, "in.png");
  ShellResult r =
      shell(script_env() + "pipelines/image-to-png.sh " + shell_quoted(in) + " " + shell_quoted(dir / "views.png"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("TINY TEST MODEL"), std::string::npos) << "the fallback must be announced\n" << r.out;
  const Image got = load_image(dir / "views.png");
  expect_size(got, 2 * kView, 3 * kView, "views.png");
  cli_views("tests/data/golden/tiny-model", in, dir / "cli.png", dir / "cli-views");
  const Image want = load_image(dir / "cli.png");
  EXPECT_TRUE(same_pixels(got, want)) << "the element's views differ from the CLI's for the same seed";
}

// multifilesrc ! … ! multifilesink: one output per input, in order, none dropped.
TEST(Pipelines, ImageSequenceGivesOneOutputPerInput) {
  const fs::path dir = test_dir();
  fs::create_directories(dir / "frames");
  sample_input(dir / "frames", "0000.png");
  sample_input(dir / "frames", "0001.png", "--white");
  ShellResult r = shell(script_env("", fast_model()) + "pipelines/image-sequence.sh " +
                        shell_quoted(dir / "frames" / "%04d.png") + " " + shell_quoted(dir / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(files_in(dir / "out"), (std::set<std::string>{"views-0000.png", "views-0001.png"}));
  const Image a = load_image(dir / "out" / "views-0000.png"), b = load_image(dir / "out" / "views-0001.png");
  expect_size(a, 2 * kView, 3 * kView, "views-0000.png");
  expect_size(b, 2 * kView, 3 * kView, "views-0001.png");
  // Different inputs (transparent vs white background), same seed: different views. Guards
  // against one frame being written twice.
  EXPECT_FALSE(same_pixels(a, b));
}

// videotestsrc num-buffers=2 ! … tiling=6x1 ! … ! multifilesink: two files of 6 views in a row,
// and gst-launch -m shows one progress message per frame (1 step each).
TEST(Pipelines, TestSourceWritesEveryFrameInTheTiling) {
  const fs::path dir = test_dir();
  ShellResult r =
      shell(script_env("tiling=6x1", fast_model()) + "pipelines/test-source.sh 2 " + shell_quoted(dir / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(files_in(dir / "out"), (std::set<std::string>{"test-00.png", "test-01.png"}));
  for (const char* f : {"test-00.png", "test-01.png"}) expect_size(load_image(dir / "out" / f), 6 * kView, kView, f);
  size_t progress = 0;
  for (size_t at = r.out.find("zero123pp-progress"); at != std::string::npos;
       at = r.out.find("zero123pp-progress", at + 1))
    ++progress;
  EXPECT_EQ(progress, 2u) << r.out;
  EXPECT_NE(r.out.find("wrote 2 file(s)"), std::string::npos) << r.out;
}

// tee with one videocrop branch per view: six 64x64 files equal to the CLI's --views-dir views.
TEST(Pipelines, SplitViewsEqualTheClisViews) {
  const fs::path dir = test_dir();
  const fs::path in = sample_input(dir, "in.png");
  ShellResult r = shell(script_env("", fast_model()) + "pipelines/split-views.sh " + shell_quoted(in) + " " +
                        shell_quoted(dir / "views"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(files_in(dir / "views"),
            (std::set<std::string>{"view0.png", "view1.png", "view2.png", "view3.png", "view4.png", "view5.png"}));
  cli_views(fast_model(), in, dir / "cli.png", dir / "cli-views");
  for (int i = 0; i < 6; ++i) {
    const std::string name = "view" + std::to_string(i) + ".png";
    const Image got = load_image(dir / "views" / name);
    expect_size(got, kView, kView, name);
    const Image want = load_image(dir / "cli-views" / ("in_view" + std::to_string(i) + ".png"));
    EXPECT_TRUE(same_pixels(got, want)) << name << " differs from the CLI's view " << i;
  }
}
