// Every option of the zero123pp CLI at and just past its limits: non-finite and out-of-range
// floats, negative and overflowing integers, garbage suffixes, empty strings. A bad value exits 2
// with a message naming the option before anything is read or loaded (the inputs here do not
// exist, so a value that got through would exit 3 instead). Valid edge values get through the
// checks (shown by reaching the missing model: exit 4), and the extremes run for real (exit 0).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "support/golden.hpp"
#include "z123/image/codec.hpp"

namespace fs = std::filesystem;
using namespace z123;
using test::cli;
using test::CliResult;
using test::q;

namespace {

struct Case {
  std::string options; // before the INPUT and OUTPUT
  std::string says;    // part of the error message
};

} // namespace

TEST(CliOptions, BadValuesExit2NamingTheProblemBeforeAnyWork) {
  const std::string files = " missing-in.png missing-out.png";
  const Case cases[] = {
      // --steps: 1..200, a whole number.
      {"--steps 0", "steps must be between 1 and 200, not 0"},
      {"--steps 201", "steps must be between 1 and 200, not 201"},
      {"--steps -1", "steps must be between 1 and 200, not -1"},
      {"--steps 99999999999", "--steps expects a whole number, got '99999999999' (out of range)"},
      {"--steps -99999999999", "'-99999999999' (out of range)"},
      {"--steps 28x", "--steps expects a whole number, got '28x'"},
      {"--steps 1.5", "got '1.5'"},
      {"--steps 1e3", "got '1e3'"},
      {"--steps 0x1C", "got '0x1C'"},
      {"--steps ' 28'", "got ' 28'"},
      {"--steps ''", "--steps expects a whole number, got an empty value"},
      {"--steps -", "got '-'"},
      // --guidance: a finite number in [0, 100].
      {"--guidance nan", "guidance scale must be a number between 0 and 100"},
      {"--guidance -nan", "guidance scale must be a number between 0 and 100"},
      {"--guidance inf", "not inf"},
      {"--guidance -inf", "not -inf"},
      {"--guidance infinity", "not inf"},
      {"--guidance 1e30", "not 1e+30"},
      {"--guidance 1e39", "--guidance expects a number, got '1e39' (out of range of a float)"},
      {"--guidance 1e-400", "got '1e-400' (out of range of a float)"},
      {"--guidance -0.001", "not -0.001"},
      {"--guidance 100.001", "not 100.001"},
      {"--guidance 1.5.2", "--guidance expects a number, got '1.5.2'"},
      {"--guidance 4x", "got '4x'"},
      {"--guidance ''", "--guidance expects a number, got an empty value"},
      {"--guidance ' 4'", "got ' 4'"},
      // --seed: 0..2^64-1.
      {"--seed -1", "--seed expects a whole number from 0 to 18446744073709551615, got '-1'"},
      {"--seed ' -1'", "got ' -1'"},
      {"--seed -0", "got '-0'"},
      {"--seed 18446744073709551616", "got '18446744073709551616' (more than 18446744073709551615)"},
      {"--seed 99999999999999999999999", "(more than 18446744073709551615)"},
      {"--seed 7x", "got '7x'"},
      {"--seed 1.0", "got '1.0'"},
      {"--seed ''", "got an empty value"},
      // --size: WxH, multiples of 64 in 64..4096, the height also of 3.
      {"--size 100x64", "multiples of 64"},
      {"--size 64x64", "2 x 3 grid"},
      {"--size 0x0", "between 64 and 4096"},
      {"--size 4160x192", "between 64 and 4096"},
      {"--size 128x4224", "between 64 and 4096"},
      {"--size 99999999999x192", "--size expects a whole number, got '99999999999' (out of range)"},
      {"--size -64x192", "--size expects WxH, e.g. 640x960, got '-64x192'"},
      {"--size 128x", "got '128x'"},
      {"--size x192", "got 'x192'"},
      {"--size 128x192x", "got '128x192x'"},
      {"--size 128X192", "got '128X192'"},
      {"--size 128*192", "got '128*192'"},
      {"--size ' 128x192'", "got ' 128x192'"},
      {"--size ''", "--size expects WxH"},
      // Names: one of a list, never empty.
      {"--sampler ''", "sampler must be euler_a or euler, not ''"},
      {"--sampler EULER", "not 'EULER'"},
      {"--spacing ''", "spacing must be trailing, linspace or leading, not ''"},
      {"--precision ''", "--precision must be auto, f16 or f32, not ''"},
      {"--precision f64", "not 'f64'"},
      {"--memory ''", "--memory must be auto, normal or low, not ''"},
      {"--memory LOW", "not 'LOW'"},
      // Paths and devices: an empty string is a mistake, not "the default".
      {"--model ''", "--model needs a model folder, got an empty string"},
      {"--views-dir ''", "--views-dir needs a folder, got an empty string"},
      {"--device ''", "--device needs a device index or name, got an empty string"},
      {"--device 99999999999999999999", "--device index 99999999999999999999 is out of range"},
      // Missing values and unknown options.
      {"--list-devices --steps", "--steps needs a value"},
      {"--seed", "--seed needs a value"},
      {"--steps=5", "unknown option --steps=5"},
      {"-x", "unknown option -x"},
  };
  for (const Case& c : cases) {
    // The option last for "needs a value" (nothing after it), else before the files.
    const bool last = c.says.find("needs a value") != std::string::npos;
    CliResult r = cli(last ? c.options : c.options + files);
    EXPECT_EQ(r.exit_code, 2) << c.options << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.options << "\nwanted: " << c.says << "\ngot: " << r.out;
    EXPECT_NE(r.out.find("Try 'zero123pp --help'"), std::string::npos) << c.options << "\n" << r.out;
  }
}

TEST(CliOptions, EmptyPathsExit2) {
  for (const Case& c :
       {Case{"'' out.png", "an INPUT path is empty"}, Case{"a.png '' out.png", "an INPUT path is empty"},
        Case{"a.png ''", "the OUTPUT path is empty"}}) {
    CliResult r = cli(c.options);
    EXPECT_EQ(r.exit_code, 2) << c.options << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.options << "\n" << r.out;
  }
}

// Valid values at the limits pass every check: with a model folder that does not exist, the run
// gets as far as loading it (exit 4), after reading the input and checking the output.
TEST(CliOptions, EdgeValuesPassTheChecks) {
  const fs::path in = test::golden_dir() / "pipeline_input.png";
  const std::string tail = " --model " + q(test::cli_temp_dir() / "nomodel") + " --quiet " + q(in) + " " +
                           q(test::cli_temp_dir() / "edge.png");
  for (const std::string& options : std::vector<std::string>{"--steps 1",
                                                             "--steps 200",
                                                             "--steps +5",
                                                             "--steps 007",
                                                             "--guidance 0",
                                                             "--guidance 100",
                                                             "--guidance -0",
                                                             "--guidance 1e-40",
                                                             "--guidance 0x1p2",
                                                             "--guidance 1",
                                                             "--seed 0",
                                                             "--seed 18446744073709551615",
                                                             "--size 64x192",
                                                             "--size 4096x4032",
                                                             "--size 4032x4032",
                                                             "--sampler euler",
                                                             "--spacing leading",
                                                             "--spacing linspace",
                                                             "--precision f32",
                                                             "--precision f16",
                                                             "--memory low",
                                                             "--memory normal",
                                                             "--device 0",
                                                             "--steps 5 --steps 6",
                                                             "--views-dir " + q(test::cli_temp_dir() / "edge-views")}) {
    CliResult r = cli(options + tail);
    EXPECT_EQ(r.exit_code, 4) << options << "\n" << r.out;
    EXPECT_NE(r.out.find("nomodel"), std::string::npos) << options << "\n" << r.out;
  }
  // "--" ends the options: a file named like an option is an input (run from its folder).
  fs::copy_file(in, test::cli_temp_dir() / "-dashed.png", fs::copy_options::overwrite_existing);
  const fs::path cwd = fs::current_path();
  fs::current_path(test::cli_temp_dir());
  CliResult r = cli("--model nomodel --quiet -- -dashed.png edge.png");
  fs::current_path(cwd);
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("nomodel"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(test::cli_temp_dir() / "edge.png"));
}

// Edge values that change the work, run for real, on the fast synthetic model (a run of the tiny
// model costs minutes on lavapipe).
TEST(CliOptions, EdgeValuesRun) {
  const fs::path in = test::golden_dir() / "pipeline_input.png";
  const fs::path out = test::cli_temp_dir() / "edge-run.png";
  CliResult r = cli("--model " + q(test::fast_model_dir()) +
                    " --quiet --steps 1 --size 128x192 --guidance 100 --seed 18446744073709551615 --sampler euler "
                    "--spacing leading --memory low --verbose " +
                    q(in) + " " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Image img = load_image(out);
  EXPECT_EQ(img.width, 128);
  EXPECT_EQ(img.height, 192);
  // --verbose says where the memory went, in the layout asked for.
  EXPECT_NE(r.out.find("memory (low-memory layout)"), std::string::npos) << r.out;
}
