#include "support/golden.hpp"

#include <cstdlib>

namespace z123::test {

std::filesystem::path golden_dir() {
  const char* d = std::getenv("Z123_TEST_DATA");
  std::filesystem::path base = d && *d ? d : Z123_SOURCE_TEST_DATA;
  return base / "golden";
}

std::filesystem::path tiny_model_dir() { return golden_dir() / "tiny-model"; }

GoldenFile::GoldenFile(const std::string& file_name) : file_(SafetensorsFile::open(golden_dir() / file_name)) {}

GoldenTensor GoldenFile::at(const std::string& name) const {
  const TensorView& v = file_.at(name);
  return {v.shape, to_f32(v)};
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

} // namespace z123::test
