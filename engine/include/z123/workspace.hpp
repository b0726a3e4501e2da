// Activation memory for recorded networks. Intermediate tensors are taken from a pool and given
// back as soon as the recording no longer needs them, so a later layer reuses the buffer; the
// recording's hazard tracking (vk::Recording) orders the reuse on the GPU. Buffers stay owned by
// the pool, so recordings that reference them can be replayed as long as the workspace lives.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "z123/tensor.hpp"

namespace z123 {

class Workspace {
public:
  // turn: the pooled buffers take this turn of the shared device memory (vk::MemoryTurn).
  explicit Workspace(vk::Device& device, std::string name = "workspace", vk::MemoryTurn turn = vk::MemoryTurn::None);

  // A tensor backed by a free pooled buffer of sufficient size (at most twice the need, so small
  // tensors do not pin large buffers), or by a new buffer.
  Tensor acquire(DType dtype, std::vector<int64_t> shape, const std::string& what);
  // Returns the tensor's buffer to the pool. The tensor must not be used by later recording calls.
  void release(Tensor& t);
  // Like release() for pooled tensors; leaves tensors owned elsewhere (network inputs) alone.
  void release_if_owned(Tensor& t);

  uint64_t pooled_bytes() const { return pooled_bytes_; }
  size_t buffers() const { return slots_.size(); }

private:
  struct Slot {
    std::shared_ptr<vk::Buffer> buffer;
    bool in_use = false;
  };
  vk::Device& device_;
  std::string name_;
  vk::MemoryTurn turn_;
  std::vector<Slot> slots_;
  uint64_t pooled_bytes_ = 0;
};

} // namespace z123
