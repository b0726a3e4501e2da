#include "z123/vk/uploader.hpp"

#include <cstring>

#include "z123/error.hpp"

namespace z123::vk {

BatchUploader::BatchUploader(Device& device, uint64_t staging_bytes) : device_(device) {
  staging_ = device.allocator().create_buffer(staging_bytes, MemoryUsage::Upload, "upload staging");
}

BatchUploader::~BatchUploader() {
  try {
    flush();
  } catch (...) {
    // Destructors must not throw; a failed final flush surfaces on the next device use.
  }
}

void* BatchUploader::reserve(const Buffer& dst, uint64_t bytes, uint64_t dst_offset) {
  if (dst_offset + bytes > dst.size())
    throw invalid_argument("upload of " + std::to_string(bytes) + " bytes overruns buffer '" + dst.name() + "'");
  if (dst.mapped()) return static_cast<char*>(dst.mapped()) + dst_offset;
  if (bytes > staging_.size()) {
    // Larger than the staging buffer: a one-off staging buffer through the device's own path.
    direct_scratch_.resize(bytes);
    flush();
    return nullptr;
  }
  uint64_t offset = (used_ + 15) & ~uint64_t(15);
  if (offset + bytes > staging_.size()) {
    flush();
    offset = 0;
  }
  if (!rec_) rec_ = std::make_unique<Recording>(device_);
  rec_->copy(staging_, dst, bytes, offset, dst_offset);
  used_ = offset + bytes;
  return static_cast<char*>(staging_.mapped()) + offset;
}

void BatchUploader::upload(const Buffer& dst, const void* data, uint64_t bytes, uint64_t dst_offset) {
  if (bytes == 0) return;
  void* p = reserve(dst, bytes, dst_offset);
  if (p) {
    std::memcpy(p, data, bytes);
  } else {
    device_.upload(dst, data, bytes, dst_offset);
  }
}

void BatchUploader::flush() {
  if (rec_) {
    device_.run(*rec_);
    rec_.reset();
  }
  used_ = 0;
}

} // namespace z123::vk
