// scripts/download-weights.sh without Hugging Face: a file:// mirror laid out like
// huggingface.co/<repo>/resolve/<revision>/ (the bundled tiny model plus the tokenizer files)
// stands in for the server. Checked: every listed file arrives byte for byte and the folder is
// then checked by zero123pp-inspect; a second run fetches nothing; an interrupted download
// resumes from its .part file instead of starting again; an unreachable server and bad
// arguments fail with a clear message and leave no half file in place.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "script_util.hpp"
#include "support/golden.hpp"

namespace fs = std::filesystem;
using namespace z123::test;

namespace {

const std::string kScript = "scripts/download-weights.sh";
const std::string kRepoPath = "sudo-ai/zero123plus-v1.2/resolve/main";

std::string file_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// <dir>/mirror holding the tiny model where the script looks for the real one; returns the
// endpoint URL.
std::string make_mirror(const fs::path& dir) {
  const fs::path m = dir / "mirror" / kRepoPath;
  fs::create_directories(m);
  fs::copy(tiny_model_dir(), m, fs::copy_options::recursive);
  // The tiny model lacks the tokenizer's vocabulary files (the engine never reads them).
  std::ofstream(m / "tokenizer" / "vocab.json") << "{\"!\": 0}\n";
  std::ofstream(m / "tokenizer" / "merges.txt") << "#version: 0.2\n";
  return "file://" + (dir / "mirror").string();
}

std::string env(const std::string& endpoint) {
  return "Z123_HF_ENDPOINT=" + shell_quoted(endpoint) + " Z123_BUILD_DIR=" + shell_quoted(Z123_BUILD_DIR) + " ";
}

} // namespace

TEST(DownloadWeights, FetchesEveryFileThenInspectsAndSkipsThemNextTime) {
  const fs::path dir = test_dir();
  const std::string endpoint = make_mirror(dir);
  ShellResult r = shell(env(endpoint) + kScript + " " + shell_quoted(dir / "model"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const fs::path src = dir / "mirror" / kRepoPath;
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = fs::relative(e.path(), src);
    EXPECT_EQ(file_bytes(dir / "model" / rel), file_bytes(e.path())) << rel;
    ++files;
  }
  EXPECT_EQ(files, 16); // every file of the script's list (the mirror holds exactly those)
  EXPECT_NE(r.out.find("All 16 files present"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result: OK"), std::string::npos) << "zero123pp-inspect did not run\n" << r.out;
  for (const auto& e : fs::recursive_directory_iterator(dir / "model"))
    EXPECT_NE(e.path().extension(), ".part") << e.path();

  r = shell(env(endpoint) + kScript + " " + shell_quoted(dir / "model"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("fetch"), std::string::npos) << "complete files were fetched again\n" << r.out;
}

TEST(DownloadWeights, ResumesAnInterruptedFile) {
  const fs::path dir = test_dir();
  const std::string endpoint = make_mirror(dir);
  const std::string unet = "unet/diffusion_pytorch_model.safetensors";
  const std::string whole = file_bytes(dir / "mirror" / kRepoPath / unet);
  ASSERT_GT(whole.size(), 100000u);
  // A .part file as an interrupted run leaves it, but with a marker instead of the real first
  // bytes: a resumed download keeps it, a restarted one would overwrite it.
  fs::create_directories(dir / "model" / "unet");
  const std::string marker(50000, 'x');
  std::ofstream(dir / "model" / (unet + ".part"), std::ios::binary) << marker;
  ShellResult r = shell(env(endpoint) + "Z123_BUILD_DIR=/nonexistent " + kScript + " " + shell_quoted(dir / "model"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(file_bytes(dir / "model" / unet), marker + whole.substr(marker.size()));
  EXPECT_NE(r.out.find("zero123pp-inspect not built"), std::string::npos) << r.out;
}

TEST(DownloadWeights, UnreachableServerFailsClearlyAndLeavesNoFile) {
  const fs::path dir = test_dir();
  // Port 9 (discard) on the loopback: nothing listens there, the connection is refused at once.
  ShellResult r =
      shell("Z123_DOWNLOAD_RETRIES=0 " + env("http://127.0.0.1:9") + kScript + " " + shell_quoted(dir / "m"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("error: downloading http://127.0.0.1:9/sudo-ai/zero123plus-v1.2/resolve/main/model_index.json "
                       "failed: cannot connect to the server"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir / "m" / "model_index.json"));
  // A missing file on the server (here: a mirror without the weights) names the file.
  const std::string endpoint = make_mirror(dir);
  fs::remove(dir / "mirror" / kRepoPath / "vae" / "diffusion_pytorch_model.safetensors");
  r = shell(env(endpoint) + kScript + " " + shell_quoted(dir / "m"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("vae/diffusion_pytorch_model.safetensors failed"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "m" / "vae" / "diffusion_pytorch_model.safetensors"));
}

TEST(DownloadWeights, UsageErrorsExit2) {
  for (auto [args, says] : {std::pair{"--bogus", "unknown option --bogus"},
                            {"a b", "only one destination folder"},
                            {"--revision", "--revision needs a value"}}) {
    ShellResult r = shell(kScript + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << args << "\n" << r.out;
  }
  ShellResult r = shell(kScript + " --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--revision"), std::string::npos) << r.out;
  r = shell("Z123_DOWNLOAD_RETRIES=many " + kScript + " /tmp/x");
  EXPECT_EQ(r.exit_code, 2) << r.out;
}
