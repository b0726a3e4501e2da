// Test helper: rewrites one weights file of a synthetic model folder tensor by tensor, so a test
// can drop, add, rename, reshape or retype tensors and then check what the loader reports.
#pragma once

#include "z123/io/safetensors.hpp"
#include "z123/io/safetensors_writer.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace z123::test {

struct RawTensor {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;
};

inline void edit_weights(const std::filesystem::path& path, const std::function<void(std::vector<RawTensor>&)>& edit) {
  std::vector<RawTensor> tensors;
  {
    const SafetensorsFile f = SafetensorsFile::open(path);
    for (const TensorView& t : f.tensors()) {
      tensors.push_back({t.name, stored_dtype_name(t.dtype), t.shape, {t.bytes.begin(), t.bytes.end()}});
    }
  }
  edit(tensors);
  SafetensorsWriter w;
  for (const RawTensor& t : tensors) w.add_raw(t.name, t.dtype, t.shape, t.bytes);
  w.write(path);
}

inline RawTensor* find_raw(std::vector<RawTensor>& tensors, const std::string& name) {
  for (RawTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

} // namespace z123::test
