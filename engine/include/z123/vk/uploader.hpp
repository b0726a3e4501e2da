// Batched host -> device uploads: data is packed into one large staging buffer and copied with a
// single submission per batch, so loading ~1,800 weight tensors costs a handful of submits
// instead of one round trip each. Buffers that are host-mapped (UMA devices) are written directly.
#pragma once

#include <cstdint>
#include <vector>

#include "z123/vk/device.hpp"
#include "z123/vk/memory.hpp"
#include "z123/vk/recording.hpp"

namespace z123::vk {

class BatchUploader {
public:
  explicit BatchUploader(Device& device, uint64_t staging_bytes = 64ull << 20);
  ~BatchUploader();
  BatchUploader(const BatchUploader&) = delete;
  BatchUploader& operator=(const BatchUploader&) = delete;

  // Copies bytes now (into staging or the mapped destination); the device copy happens at the
  // next flush. dst must outlive the flush.
  void upload(const Buffer& dst, const void* data, uint64_t bytes, uint64_t dst_offset = 0);
  // Reserves space and returns a pointer to fill (avoids a temporary for converted data).
  void* reserve(const Buffer& dst, uint64_t bytes, uint64_t dst_offset = 0);
  void flush(); // submits pending copies and waits

private:
  Device& device_;
  Buffer staging_;
  uint64_t used_ = 0;
  std::unique_ptr<Recording> rec_;
  std::vector<uint8_t> direct_scratch_;
};

} // namespace z123::vk
