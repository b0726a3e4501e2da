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

std::vector<float> nchw_to_nhwc(const std::vector<float>& v, int64_t b, int64_t c, int64_t h, int64_t w) {
  std::vector<float> r(v.size());
  for (int64_t n = 0; n < b; ++n)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) r[((n * h + y) * w + x) * c + ch] = v[((n * c + ch) * h + y) * w + x];
  return r;
}

std::vector<float> nhwc_to_nchw(const std::vector<float>& v, int64_t b, int64_t h, int64_t w, int64_t c) {
  std::vector<float> r(v.size());
  for (int64_t n = 0; n < b; ++n)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) r[((n * c + ch) * h + y) * w + x] = v[((n * h + y) * w + x) * c + ch];
  return r;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

} // namespace z123::test
