#include "support/golden.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "support/synthetic_model.hpp"

namespace z123::test {

std::filesystem::path golden_dir() {
  const char* d = std::getenv("Z123_TEST_DATA");
  std::filesystem::path base = d && *d ? d : Z123_SOURCE_TEST_DATA;
  return base / "golden";
}

std::filesystem::path tiny_model_dir() { return golden_dir() / "tiny-model"; }

std::filesystem::path fast_model_dir() {
  // Every test process writes its own (~10 MiB) and removes it at exit.
  struct Folder {
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("z123-fast-model-" + std::to_string(::getpid()));
    Folder() { write_synthetic_model(dir); }
    ~Folder() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  };
  static const Folder folder;
  return folder.dir;
}

std::filesystem::path tlpb2_golden_dir() { return golden_dir().parent_path() / "golden-tlpb2"; }

std::filesystem::path tlpb2_model_dir() {
  struct Folder {
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("z123-tlpb2-model-" + std::to_string(::getpid()));
    Folder() {
      namespace fs = std::filesystem;
      fs::remove_all(dir);
      fs::copy(tiny_model_dir(), dir, fs::copy_options::recursive);
      fs::remove_all(dir / "unet");
      fs::copy(tlpb2_golden_dir() / "tiny-model" / "unet", dir / "unet", fs::copy_options::recursive);
    }
    ~Folder() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  };
  static const Folder folder;
  return folder.dir;
}

GoldenFile::GoldenFile(const std::string& file_name) : GoldenFile(golden_dir(), file_name) {}

GoldenFile::GoldenFile(const std::filesystem::path& dir, const std::string& file_name)
    : file_(SafetensorsFile::open(dir / file_name)) {}

GoldenTensor GoldenFile::at(const std::string& name) const {
  const TensorView& v = file_.at(name);
  return {v.shape, to_f32(v)};
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

} // namespace z123::test
