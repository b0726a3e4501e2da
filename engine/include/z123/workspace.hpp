// Activation memory for recorded networks. Intermediate tensors are taken from a pool and given
// back as soon as the recording no longer needs them, so a later layer reuses the buffer; the
// recording's hazard tracking (vk::Recording) orders the reuse on the GPU. Buffers stay owned by
// the pool, so recordings that reference them can be replayed as long as the workspace lives.
//
// Ownership: a Tensor from acquire() shares its buffer with the pool, and the slot is free again
// once no Tensor refers to it any more (the last copy destroyed, reassigned or release()d). A copy
// (a reshaped view, a skip kept for later) therefore keeps its slot from being handed out, where
// a hand-written release could leave it aliasing a reused slot. The pool notices freed slots at
// its next request, which is the only moment a free slot matters. Networks drop a tensor early
// with release() where it dies before the end of its scope, to keep the peak low.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "z123/tensor.hpp"

namespace z123 {

class Workspace {
public:
  // turn: the pooled buffers take this turn of the shared device memory (vk::MemoryTurn).
  // own_memory: each pooled buffer in device memory of its own size (vk::Allocator::create_buffer),
  // for a small pool made beside the large one, whose few tens of MiB would otherwise open a new
  // shared block (256 MiB).
  explicit Workspace(vk::Device& device, std::string name = "workspace", vk::MemoryTurn turn = vk::MemoryTurn::None,
                     bool own_memory = false);

  // A tensor backed by a pooled buffer: the one the plan gives this request (end_planning), else
  // the smallest free one of sufficient size (in an unplanned pool at most twice the need, so
  // small tensors do not pin large buffers), else a new one.
  Tensor acquire(DType dtype, std::vector<int64_t> shape, const std::string& what);
  // Drops this handle now (t becomes empty); the slot is free once no other copy refers to it.
  // Throws if t is empty or not from this pool (a mistake in the caller's bookkeeping).
  void release(Tensor& t);

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
  // After end_planning(): the bytes the plan's slots will hold once the planned programs are
  // recorded (for memory reserved up front: vk::Allocator::reserve_turn_memory).
  uint64_t planned_bytes() const;
  size_t buffers() const { return slots_.size(); }

private:
  struct Slot {
    std::shared_ptr<vk::Buffer> buffer; // null until a planned slot is first taken
    uint64_t planned_bytes = 0;         // the largest request the plan gives this slot
    // Free when no tensor holds the buffer: the pool's reference is then the only one.
    bool free() const { return !buffer || buffer.use_count() == 1; }
  };
  // A request noted while planning: its size and its lifetime in acquire/release events.
  struct Noted {
    uint64_t need, begin, end;
  };
  // A planning request still held by some tensor: its buffer (for the use count) and its note.
  struct Open {
    std::shared_ptr<vk::Buffer> buffer;
    size_t noted;
  };
  std::shared_ptr<vk::Buffer> new_buffer(uint64_t bytes, const std::string& what);
  // Planning: ends the lifetimes of the requests no tensor holds any more.
  void note_freed();
  bool owns(const vk::Buffer* buffer) const;

  vk::Device& device_;
  std::string name_;
  vk::MemoryTurn turn_;
  bool own_memory_;
  std::vector<Slot> slots_;
  uint64_t pooled_bytes_ = 0;
  bool planning_ = false;
  std::vector<Noted> noted_;
  std::vector<Open> open_; // planning: the requests not yet seen freed
  uint64_t events_ = 0;
  std::vector<size_t> plan_; // request k (in acquire order) -> slot
  size_t next_request_ = 0;
};

} // namespace z123
