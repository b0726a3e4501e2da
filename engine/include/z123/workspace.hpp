// Activation memory for recorded networks. Intermediate tensors are taken from a pool and given
// back as soon as the recording no longer needs them, so a later layer reuses the buffer; the
// recording's hazard tracking (vk::Recording) orders the reuse on the GPU. Buffers stay owned by
// the pool, so recordings that reference them can be replayed as long as the workspace lives.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "z123/tensor.hpp"

namespace z123 {

class Workspace {
public:
  // turn: the pooled buffers take this turn of the shared device memory (vk::MemoryTurn).
  explicit Workspace(vk::Device& device, std::string name = "workspace", vk::MemoryTurn turn = vk::MemoryTurn::None);

  // A tensor backed by a pooled buffer: the one the plan gives this request (end_planning), else
  // the smallest free one of sufficient size (in an unplanned pool at most twice the need, so
  // small tensors do not pin large buffers), else a new one.
  Tensor acquire(DType dtype, std::vector<int64_t> shape, const std::string& what);
  // Returns the tensor's buffer to the pool. The tensor must not be used by later recording calls.
  void release(Tensor& t);
  // Like release() for pooled tensors; leaves tensors owned elsewhere (network inputs) alone.
  void release_if_owned(Tensor& t);

  // Planning. Taken first come, first served, buffers pile up: a buffer is reused only by a
  // request of about its size, so a network whose tensors change size along the way (a decoder
  // growing its images) ends up holding far more than it ever uses at once (1,542 MiB of pool for
  // a 750 MiB live peak at 640x960). Between begin_planning() and end_planning(), every request
  // gets a buffer of its own with no memory behind it (the recordings made meanwhile are never
  // run: vk::Recording skips their dispatches), and its size and lifetime are noted.
  // end_planning() then lays out slots: the requests from the largest down each join the
  // smallest slot whose requests' lifetimes do not overlap its own, or a new one. When the same
  // requests come again in the same order, each takes its slot (971 MiB at 640x960); any request
  // beyond or unlike the plan falls back to first come, first served.
  void begin_planning();
  void end_planning();

  uint64_t pooled_bytes() const { return pooled_bytes_; }
  size_t buffers() const { return slots_.size(); }

private:
  struct Slot {
    std::shared_ptr<vk::Buffer> buffer; // null until a planned slot is first taken
    uint64_t planned_bytes = 0;         // the largest request the plan gives this slot
    bool in_use = false;
  };
  // A request noted while planning: its size and its lifetime in acquire/release events.
  struct Noted {
    uint64_t need, begin, end;
  };
  std::shared_ptr<vk::Buffer> new_buffer(uint64_t bytes, const std::string& what);

  vk::Device& device_;
  std::string name_;
  vk::MemoryTurn turn_;
  std::vector<Slot> slots_;
  uint64_t pooled_bytes_ = 0;
  bool planning_ = false;
  std::vector<Noted> noted_;
  std::map<const vk::Buffer*, size_t> open_; // planning: unbacked buffer -> its noted request
  uint64_t events_ = 0;
  std::vector<size_t> plan_; // request k (in acquire order) -> slot
  size_t next_request_ = 0;
};

} // namespace z123
