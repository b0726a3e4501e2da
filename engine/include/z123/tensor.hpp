// A tensor on the device: a shared buffer, an element type and a shape. Activations inside the
// networks are token-major (NHWC: [B, H, W, C] == [B, tokens, C]), so the transformer blocks
// need no permutes and convolutions read channel-contiguous rows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "z123/vk/device.hpp"
#include "z123/vk/memory.hpp"

namespace z123 {

enum class DType : uint32_t { F32 = 0, F16 = 1 };

inline size_t dtype_size(DType t) { return t == DType::F16 ? 2 : 4; }
inline const char* dtype_name(DType t) { return t == DType::F16 ? "f16" : "f32"; }

struct Tensor {
  std::shared_ptr<vk::Buffer> buffer;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;

  int64_t numel() const;
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  int64_t dim(int i) const { return shape.at(i < 0 ? shape.size() + i : i); }
  const vk::Buffer& buf() const { return *buffer; }
  std::string describe() const; // "name f16 [2, 9600, 320]"
};

std::string shape_string(const std::vector<int64_t>& shape);

Tensor make_tensor(vk::Device& device, DType dtype, std::vector<int64_t> shape, const std::string& name,
                   vk::MemoryUsage usage = vk::MemoryUsage::DeviceLocal, vk::MemoryTurn turn = vk::MemoryTurn::None);

// Host transfers in float32; fp16 tensors are converted (round-to-nearest-even) on the way.
void upload(vk::Device& device, const Tensor& t, const std::vector<float>& values);
std::vector<float> download(vk::Device& device, const Tensor& t);

} // namespace z123
