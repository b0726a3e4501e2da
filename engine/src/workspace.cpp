#include "z123/workspace.hpp"

#include "z123/error.hpp"

namespace z123 {

Workspace::Workspace(vk::Device& device, std::string name, vk::MemoryTurn turn)
    : device_(device), name_(std::move(name)), turn_(turn) {}

Tensor Workspace::acquire(DType dtype, std::vector<int64_t> shape, const std::string& what) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  for (int64_t d : t.shape)
    if (d <= 0) throw invalid_argument("workspace tensor '" + what + "' has shape " + shape_string(t.shape));
  uint64_t need = (t.bytes() + 3) & ~uint64_t(3);
  Slot* best = nullptr;
  for (Slot& s : slots_) {
    if (s.in_use || s.buffer->size() < need || s.buffer->size() > 2 * need + 4096) continue;
    if (!best || s.buffer->size() < best->buffer->size()) best = &s;
  }
  if (!best) {
    auto buf = std::make_shared<vk::Buffer>(
        device_.allocator().create_buffer(need, vk::MemoryUsage::DeviceLocal, name_ + ":" + what, false, turn_));
    pooled_bytes_ += buf->size();
    slots_.push_back({std::move(buf), false});
    best = &slots_.back();
  }
  best->in_use = true;
  t.buffer = best->buffer;
  return t;
}

void Workspace::release(Tensor& t) {
  for (Slot& s : slots_) {
    if (s.buffer == t.buffer) {
      if (!s.in_use) throw internal_error("workspace tensor released twice: " + t.describe());
      s.in_use = false;
      t.buffer.reset();
      return;
    }
  }
  throw internal_error("tensor " + t.describe() + " was not taken from workspace '" + name_ + "'");
}

void Workspace::release_if_owned(Tensor& t) {
  for (Slot& s : slots_)
    if (s.buffer == t.buffer) {
      release(t);
      return;
    }
}

} // namespace z123
