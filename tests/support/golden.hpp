// Access to the reference goldens in tests/data/golden (made by tests/reference/make_goldens.py
// from the official transformers/diffusers modules): tensors as float vectors, layout helpers,
// and the bundled tiny model folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "z123/io/safetensors.hpp"

namespace z123::test {

std::filesystem::path golden_dir();     // tests/data/golden
std::filesystem::path tiny_model_dir(); // tests/data/golden/tiny-model

struct GoldenTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

class GoldenFile {
public:
  explicit GoldenFile(const std::string& file_name); // e.g. "text.safetensors"
  GoldenTensor at(const std::string& name) const;

private:
  SafetensorsFile file_;
};

// [B, C, H, W] -> [B, H, W, C] and back, on the host.
std::vector<float> nchw_to_nhwc(const std::vector<float>& v, int64_t b, int64_t c, int64_t h, int64_t w);
std::vector<float> nhwc_to_nchw(const std::vector<float>& v, int64_t b, int64_t h, int64_t w, int64_t c);
std::vector<double> to_double(const std::vector<float>& v);

} // namespace z123::test
