// The GIMP 2.10 plug-in run by real GIMP in batch mode (gimp-console-2.10, no display), as a
// Script-Fu user runs it: the sample cube is loaded, plug-in-zero123pp runs non-interactively
// with the tiny model (1 step, seed 7, 640x960 as always) and its six layers and grid are
// exported as PNGs, which must hold exactly the pixels the zero123pp command line writes for the
// same file, model, device and seed; the parasite must be the CLI's poses JSON byte for byte. The
// error paths (missing model folder, truncated weights, no such device, a layer too small) must
// say the CLI's words, leave no new image and let GIMP exit cleanly (exit status 0, no crash,
// within a timeout). GIMP's user folder is a temporary one (GIMP2_DIRECTORY) holding only this
// build's plug-in, so the user's ~/.config is never read or written. Vulkan validation is on
// (Z123_VALIDATION=1) for the CLI and the plug-in, and any validation error fails the test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "script_util.hpp"
#include "support/golden.hpp"
#include "z123/image/codec.hpp"

namespace fs = std::filesystem;
using namespace z123;
using namespace z123::test;

namespace {

const char* kSeed = "7";

std::string device() {
  const char* d = std::getenv("Z123_TEST_DEVICE");
  return d ? d : "";
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Scheme string literal for a path (the test folders hold no quotes or backslashes).
std::string scm(const fs::path& p) { return "\"" + p.string() + "\""; }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// What every run must not show: a crash of the plug-in or of GIMP, a validation error.
void expect_clean(const ShellResult& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 0) << what << "\n" << r.out;
  for (const char* bad :
       {"[vulkan ERROR]", "crashed", "Segmentation", "core dumped", "terminated abnormally", "wire_read", "Aborted"})
    EXPECT_EQ(r.out.find(bad), std::string::npos) << what << ": output has '" << bad << "'\n" << r.out;
}

class Gimp : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("z123-gimp-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    // GIMP's user folder: only this build's plug-in, in a folder of its own name as GIMP 2.10
    // wants; GIMP's system plug-ins (Script-Fu, PNG) come from its own installation.
    fs::create_directories(dir_ / "gimp2" / "plug-ins" / "zero123pp");
    // GIMP saves its data folders at exit and complains when they are missing.
    for (const char* data : {"brushes", "gradients", "patterns", "palettes", "tool-presets"})
      fs::create_directories(dir_ / "gimp2" / data);
    fs::create_symlink(Z123_GIMP_PLUGIN, dir_ / "gimp2" / "plug-ins" / "zero123pp" / "zero123pp");
    fs::create_directories(dir_ / "out");
    ShellResult r = shell(shell_quoted(Z123_SAMPLE_TOOL) + " " + shell_quoted(dir_ / "cube.png"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  static void TearDownTestSuite() {
    if (!::testing::Test::HasFailure()) fs::remove_all(dir_);
  }

  // gimp-console-2.10 with `commands` as batch commands (each its own -b; a failing one does not
  // stop the next), then (gimp-quit 0); `env` adds environment variables.
  static ShellResult gimp(const std::vector<std::string>& commands, const std::string& env = "") {
    std::string cmd = "GIMP2_DIRECTORY=" + shell_quoted(dir_ / "gimp2") +
                      " Z123_VALIDATION=1 Z123_DEVICE=" + shell_quoted(device()) + " " + env + " timeout 1200 " +
                      Z123_GIMP_CONSOLE + " -i -d -f";
    for (const std::string& c : commands) cmd += " -b " + shell_quoted(c);
    cmd += " -b '(gimp-quit 0)' < /dev/null";
    return shell(cmd);
  }

  // Script-Fu that loads `file` and binds image and drawable for `body`.
  static std::string with_image(const fs::path& file, const std::string& body) {
    return "(let* ((image (car (gimp-file-load RUN-NONINTERACTIVE " + scm(file) + " " + scm(file.filename()) +
           "))) (drawable (car (gimp-image-get-active-drawable image)))) " + body + ")";
  }
  // The plug-in's call with the test's settings.
  static std::string call(const fs::path& model, int mode) {
    return "(car (plug-in-zero123pp RUN-NONINTERACTIVE image drawable " + scm(model) + " 1 4.0 " + kSeed + " " +
           std::to_string(mode) + "))";
  }
  // Prints the number of open images ("images: N"), after a failed call: no new one may exist.
  static std::string count_images() {
    return "(gimp-message (string-append \"images: \" (number->string (car (gimp-image-list)))))";
  }

  // The CLI's message for the same mistake (its stderr after "zero123pp: ").
  static std::string cli_words(const std::string& args) {
    ShellResult r = shell(std::string(Z123_CLI) + " --quiet " + args + " " + shell_quoted(dir_ / "cli-out.png"));
    EXPECT_NE(r.exit_code, 0) << r.out;
    const std::string prefix = "zero123pp: ";
    std::string line = r.out.substr(0, r.out.find('\n'));
    return line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : line;
  }

  static inline fs::path dir_;
};

TEST_F(Gimp, SixLayersAndTheGridAreTheCommandLinesPixels) {
  const fs::path cube = dir_ / "cube.png", out = dir_ / "out", views = dir_ / "cli-views";
  auto t0 = std::chrono::steady_clock::now();
  ShellResult cli = shell(
      "Z123_VALIDATION=1 " + std::string(Z123_CLI) + " --quiet --model " + shell_quoted(tiny_model_dir()) +
      (device().empty() ? "" : " --device " + shell_quoted(device())) + " --steps 1 --guidance 4 --seed " + kSeed +
      " --views-dir " + shell_quoted(views) + " " + shell_quoted(cube) + " " + shell_quoted(dir_ / "cli-grid.png"));
  ASSERT_EQ(cli.exit_code, 0) << cli.out;
  EXPECT_EQ(cli.out.find("[vulkan ERROR]"), std::string::npos) << cli.out;
  std::printf("[ timing ] CLI (tiny model, 640x960, 1 step): %.1f s\n", seconds_since(t0));

  // Six layers: each exported on its own (file-png-save2 writes the drawable it is given), names
  // and the parasite written out; then the 2x3 grid.
  const std::string layers =
      "(let* ((new " + call(tiny_model_dir(), 0) +
      ") (layers (vector->list (cadr (gimp-image-get-layers new)))) (i 0)"
      " (names (open-output-file " +
      scm(out / "names.txt") +
      ")))"
      " (for-each (lambda (layer)"
      "   (display (car (gimp-item-get-name layer)) names) (newline names)"
      "   (file-png-save2 RUN-NONINTERACTIVE new layer (string-append " +
      scm(out / "layer") +
      " (number->string i) \".png\") \"layer.png\" 0 9 0 0 0 0 0 0 1)"
      "   (set! i (+ i 1))) layers)"
      " (close-output-port names)"
      " (let ((port (open-output-file " +
      scm(out / "poses.json") +
      "))) (display (caddr (car (gimp-image-get-parasite new \"zero123pp-poses\"))) port) (close-output-port port))"
      " (gimp-message (string-append \"size \" (number->string (car (gimp-image-width new))) \"x\""
      "   (number->string (car (gimp-image-height new))))))";
  const std::string grid = "(let* ((new " + call(tiny_model_dir(), 1) +
                           ")) (file-png-save2 RUN-NONINTERACTIVE new (car (gimp-image-get-active-drawable new)) " +
                           scm(out / "grid.png") + " \"grid.png\" 0 9 0 0 0 0 0 0 1))";
  t0 = std::chrono::steady_clock::now();
  ShellResult r = gimp({with_image(cube, layers), with_image(cube, grid)});
  std::printf("[ timing ] gimp-console, two plug-in runs (six layers, grid): %.1f s\n", seconds_since(t0));
  expect_clean(r, "plug-in runs");
  EXPECT_EQ(r.out.find("execution error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("size 320x320"), std::string::npos) << r.out;

  for (int i = 0; i < 6; ++i) {
    const fs::path layer = out / ("layer" + std::to_string(i) + ".png");
    ASSERT_TRUE(fs::exists(layer)) << r.out;
    const Image mine = load_image(layer), theirs = load_image(views / ("cube_view" + std::to_string(i) + ".png"));
    EXPECT_EQ(mine.width, 320);
    EXPECT_EQ(mine.height, 320);
    EXPECT_EQ(mine.channels, theirs.channels);
    EXPECT_TRUE(mine.pixels == theirs.pixels) << "layer " << i << " differs from the CLI's view " << i;
  }
  EXPECT_EQ(read_file(out / "names.txt"),
            "View 1: azimuth 30°, elevation 20°\nView 2: azimuth 90°, elevation -10°\n"
            "View 3: azimuth 150°, elevation 20°\nView 4: azimuth 210°, elevation -10°\n"
            "View 5: azimuth 270°, elevation 20°\nView 6: azimuth 330°, elevation -10°\n");
  // The parasite names the files as the CLI does for this input (cube.png -> cube_view<i>.png).
  EXPECT_EQ(read_file(out / "poses.json"), read_file(views / "cube_views.json"));
  ASSERT_TRUE(fs::exists(out / "grid.png")) << r.out;
  const Image grid_mine = load_image(out / "grid.png"), grid_cli = load_image(dir_ / "cli-grid.png");
  EXPECT_EQ(grid_mine.width, 640);
  EXPECT_EQ(grid_mine.height, 960);
  EXPECT_TRUE(grid_mine.pixels == grid_cli.pixels) << "the grid differs from the CLI's";
}

// Each mistake: the CLI's words on GIMP's console, no image made, GIMP exits 0.
TEST_F(Gimp, ErrorsSayTheCommandLinesWordsAndMakeNoImage) {
  const fs::path cube = dir_ / "cube.png";
  const fs::path missing = dir_ / "nomodel";
  const fs::path broken = dir_ / "broken-model";
  fs::copy(tiny_model_dir(), broken, fs::copy_options::recursive);
  const fs::path w = broken / "unet" / "diffusion_pytorch_model.safetensors";
  fs::resize_file(w, fs::file_size(w) / 2);
  const fs::path tiny = dir_ / "tiny.png";
  save_png(tiny, Image::blank(4, 100, 4));

  const std::string dev = device().empty() ? " " : " --device " + shell_quoted(device()) + " ";
  const std::string missing_words = cli_words("--model " + shell_quoted(missing) + dev + shell_quoted(cube));
  const std::string broken_words = cli_words("--model " + shell_quoted(broken) + dev + shell_quoted(cube));
  // The CLI names the file, the plug-in the layer (GIMP calls a PNG's only layer "Background"):
  // the rest is the same.
  std::string tiny_words = cli_words("--model " + shell_quoted(tiny_model_dir()) + dev + shell_quoted(tiny));
  ASSERT_EQ(tiny_words.rfind(tiny.string() + ": ", 0), 0u) << tiny_words;
  tiny_words = "layer 'Background': " + tiny_words.substr(tiny.string().size() + 2);
  const std::string device_words =
      cli_words("--model " + shell_quoted(tiny_model_dir()) + " --device no-such-device " + shell_quoted(cube));
  for (const std::string& words : {missing_words, broken_words, tiny_words, device_words}) ASSERT_FALSE(words.empty());

  auto t0 = std::chrono::steady_clock::now();
  ShellResult r = gimp({with_image(cube, call(missing, 0)), with_image(cube, call(broken, 0)),
                        with_image(tiny, call(tiny_model_dir(), 0)), count_images()});
  std::printf("[ timing ] gimp-console, three failing calls: %.1f s\n", seconds_since(t0));
  expect_clean(r, "failing calls");
  for (const std::string& words : {missing_words, broken_words, tiny_words})
    EXPECT_NE(r.out.find("Zero123++: " + words), std::string::npos) << "lacks: " << words << "\n" << r.out;
  EXPECT_NE(r.out.find("images: 3"), std::string::npos) << "a failed call left an image\n" << r.out;

  r = gimp({with_image(cube, call(tiny_model_dir(), 0)), count_images()}, "Z123_DEVICE=no-such-device");
  expect_clean(r, "no device");
  // Its first line: the CLI's message goes on with the list of devices.
  EXPECT_NE(r.out.find("Zero123++: " + device_words), std::string::npos) << "lacks: " << device_words << "\n" << r.out;
  EXPECT_NE(r.out.find("images: 1"), std::string::npos) << r.out;

  // A bad output mode is a calling error, said before anything loads.
  r = gimp({with_image(cube, call(tiny_model_dir(), 9))});
  expect_clean(r, "bad output mode");
  EXPECT_NE(r.out.find("output-mode 9"), std::string::npos) << r.out;
}

} // namespace
