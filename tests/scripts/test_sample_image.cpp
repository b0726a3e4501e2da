// zero123pp-sample-image, the main job's input: an RGBA PNG of the asked size with a transparent
// background around an opaque cube whose three visible faces are lit differently, the same bytes
// on every run; --white fills the background; bad arguments exit 2 with a reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <tuple>

#include "script_util.hpp"
#include "z123/image/codec.hpp"

namespace fs = std::filesystem;
using namespace z123;
using namespace z123::test;

namespace {

const std::string kTool = shell_quoted(Z123_SAMPLE_TOOL);

std::string file_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

} // namespace

TEST(SampleImage, TransparentBackgroundOpaqueLitCubeSameBytesEveryRun) {
  const fs::path dir = test_dir();
  ShellResult r = shell(kTool + " --size 200 " + shell_quoted(dir / "a.png") + " && " + kTool + " --size 200 " +
                        shell_quoted(dir / "b.png"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(file_bytes(dir / "a.png"), file_bytes(dir / "b.png")) << "not deterministic";
  const Image img = load_image(dir / "a.png");
  ASSERT_EQ(img.width, 200);
  ASSERT_EQ(img.height, 200);
  ASSERT_EQ(img.channels, 4);
  // Corners are background, the centre is the cube.
  for (auto [x, y] : {std::pair{0, 0}, {199, 0}, {0, 199}, {199, 199}}) EXPECT_EQ(img.at(x, y, 3), 0) << x << "," << y;
  EXPECT_EQ(img.at(100, 100, 3), 255);
  // The cube covers a fair part of the frame (it is the subject), but not all of it.
  int opaque = 0;
  std::set<std::tuple<int, int, int>> colours;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x)
      if (img.at(x, y, 3) == 255) {
        ++opaque;
        colours.insert({img.at(x, y, 0), img.at(x, y, 1), img.at(x, y, 2)});
      }
  EXPECT_GT(opaque, 200 * 200 / 5);
  EXPECT_LT(opaque, 200 * 200 * 3 / 4);
  // Flat-shaded faces: inside the cube there are exactly three colours (the visible faces), plus
  // a few blends on the edges between them where samples of two faces mix.
  EXPECT_GE(colours.size(), 3u);
  int big = 0;
  for (const auto& c : colours) {
    int n = 0;
    for (int y = 0; y < img.height; ++y)
      for (int x = 0; x < img.width; ++x)
        if (img.at(x, y, 3) == 255 && std::tuple<int, int, int>{img.at(x, y, 0), img.at(x, y, 1), img.at(x, y, 2)} == c)
          ++n;
    if (n > opaque / 10) ++big;
  }
  EXPECT_EQ(big, 3) << "three visible faces, each with its own shade";
}

TEST(SampleImage, WhiteBackgroundOption) {
  const fs::path dir = test_dir();
  ShellResult r = shell(kTool + " --white --size 64 " + shell_quoted(dir / "w.png"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Image img = load_image(dir / "w.png");
  ASSERT_EQ(img.width, 64);
  for (int c = 0; c < 4; ++c) EXPECT_EQ(img.at(0, 0, c), 255) << c;
  EXPECT_NE(img.at(32, 32, 0), 255); // the cube
}

TEST(SampleImage, UsageErrorsExit2WithAReason) {
  for (auto [args, says] : {std::pair{"", "need an OUTPUT.png"},
                            {"--size 8 x.png", "from 16 to 4096"},
                            {"--size x.png", "from 16 to 4096"},
                            {"--bogus x.png", "unknown option --bogus"},
                            {"a.png b.png", "only one OUTPUT.png"}}) {
    ShellResult r = shell(kTool + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << args << "\n" << r.out;
  }
  ShellResult r = shell(kTool + " /no-such-dir/x.png");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("cannot write /no-such-dir/x.png"), std::string::npos) << r.out;
}
