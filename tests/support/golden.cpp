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

GoldenFile::GoldenFile(const std::string& file_name) : file_(SafetensorsFile::open(golden_dir() / file_name)) {}

GoldenTensor GoldenFile::at(const std::string& name) const {
  const TensorView& v = file_.at(name);
  return {v.shape, to_f32(v)};
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

} // namespace z123::test
