// Streaming host -> device uploads for model loading. Each job describes the contents of one
// device buffer as a function that can write any slice of it; jobs are cut into slices and
// produced on every core straight into staging memory (or into the buffer itself where it is
// host-mapped: integrated GPUs, host-streamed weights). Staging is a ring of slots: while the GPU
// copies one batch, the cores fill the next, so reading, converting and the bus overlap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "z123/vk/device.hpp"
#include "z123/vk/memory.hpp"
#include "z123/vk/recording.hpp"

namespace z123::vk {

struct UploadJob {
  const Buffer* dst = nullptr;
  uint64_t bytes = 0; // bytes of dst to fill, from its start
  // Slices start and end at multiples of this many bytes (an element, or a row that is produced
  // in one piece); must divide `bytes`.
  uint64_t unit = 1;
  // Writes bytes [first, first + count) of dst's contents to out. Called from several threads at
  // once for disjoint slices.
  std::function<void(std::byte* out, uint64_t first, uint64_t count)> produce;
};

struct UploadStats {
  uint64_t staged_bytes = 0; // copied through staging by the GPU
  uint64_t direct_bytes = 0; // written straight into host-mapped buffers
  double produce_ms = 0;     // wall time the cores spent producing data
  double wait_ms = 0;        // wall time spent waiting for the GPU's copies
};

class StreamingUploader {
public:
  explicit StreamingUploader(Device& device, uint64_t slot_bytes = 64ull << 20, unsigned slots = 3);
  ~StreamingUploader(); // waits for copies still in flight
  StreamingUploader(const StreamingUploader&) = delete;
  StreamingUploader& operator=(const StreamingUploader&) = delete;

  // Produces and uploads every job; returns when all of it is on the device. The destination
  // buffers must outlive the call.
  void run(const std::vector<UploadJob>& jobs);
  const UploadStats& stats() const { return stats_; }

private:
  struct Slot {
    Buffer staging;
    std::unique_ptr<Recording> copies; // the batch last copied out of this slot
  };
  void wait_slot(Slot& slot);

  Device& device_;
  uint64_t slot_bytes_;
  std::vector<Slot> slots_;
  unsigned next_slot_ = 0;
  UploadStats stats_;
};

} // namespace z123::vk
