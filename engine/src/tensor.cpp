#include "z123/tensor.hpp"

#include "z123/error.hpp"
#include "z123/half.hpp"

namespace z123 {

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string Tensor::describe() const {
  return (buffer ? buffer->name() : std::string("<unallocated>")) + " " + dtype_name(dtype) + " " + shape_string(shape);
}

Tensor make_tensor(vk::Device& device, DType dtype, std::vector<int64_t> shape, const std::string& name,
                   vk::MemoryUsage usage, vk::MemoryTurn turn) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  for (int64_t d : t.shape)
    if (d <= 0) throw invalid_argument("tensor '" + name + "' has a non-positive dimension " + shape_string(t.shape));
  // Round up to 4 bytes so fp16 kernels may read/write whole words at the tail.
  size_t bytes = (t.bytes() + 3) & ~size_t(3);
  t.buffer = std::make_shared<vk::Buffer>(device.allocator().create_buffer(bytes, usage, name, false, turn));
  return t;
}

void upload(vk::Device& device, const Tensor& t, const std::vector<float>& values) {
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw invalid_argument("upload to " + t.describe() + ": " + std::to_string(values.size()) + " values given");
  if (t.dtype == DType::F32) {
    device.upload(t.buf(), values.data(), values.size() * 4);
  } else {
    std::vector<uint16_t> h(values.size());
    for (size_t i = 0; i < values.size(); ++i) h[i] = f32_to_f16(values[i]);
    device.upload(t.buf(), h.data(), h.size() * 2);
  }
}

std::vector<float> download(vk::Device& device, const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  if (t.dtype == DType::F32) {
    device.download(t.buf(), out.data(), out.size() * 4);
  } else {
    std::vector<uint16_t> h(out.size());
    device.download(t.buf(), h.data(), h.size() * 2);
    for (size_t i = 0; i < out.size(); ++i) out[i] = f16_to_f32(h[i]);
  }
  return out;
}

} // namespace z123
