#include "z123/vk/uploader.hpp"

#include <algorithm>
#include <chrono>

#include "z123/error.hpp"
#include "z123/parallel.hpp"

namespace z123::vk {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Slices handed to one thread at a time: small enough that a few large tensors still spread
// over every core, large enough that the per-slice overhead vanishes.
constexpr uint64_t kSliceBytes = 2ull << 20;

struct Slice {
  const UploadJob* job;
  uint64_t first, count;
  std::byte* out;
};

// Cuts [first, first + count) of a job into slices of about kSliceBytes on unit boundaries.
void add_slices(std::vector<Slice>& slices, const UploadJob& job, uint64_t first, uint64_t count, std::byte* out) {
  const uint64_t step = std::max<uint64_t>(job.unit, kSliceBytes / job.unit * job.unit);
  for (uint64_t done = 0; done < count; done += step) {
    uint64_t n = std::min(step, count - done);
    slices.push_back({&job, first + done, n, out + done});
  }
}

void produce_all(const std::vector<Slice>& slices) {
  parallel_for(slices.size(),
               [&](size_t i) { slices[i].job->produce(slices[i].out, slices[i].first, slices[i].count); });
}

} // namespace

StreamingUploader::StreamingUploader(Device& device, uint64_t slot_bytes, unsigned slots)
    : device_(device), slot_bytes_(slot_bytes), slots_(std::max(1u, slots)) {}

StreamingUploader::~StreamingUploader() {
  for (Slot& s : slots_) {
    try {
      wait_slot(s);
    } catch (...) {
      // Destructors must not throw; a lost device surfaces on its next use.
    }
  }
}

void StreamingUploader::wait_slot(Slot& slot) {
  if (!slot.copies) return;
  auto t0 = Clock::now();
  device_.wait(slot.copies->last_submit);
  slot.copies.reset();
  stats_.wait_ms += ms_since(t0);
}

void StreamingUploader::run(const std::vector<UploadJob>& jobs) {
  for (const UploadJob& j : jobs) {
    if (!j.dst || j.bytes > j.dst->size())
      throw invalid_argument("upload of " + std::to_string(j.bytes) + " bytes overruns buffer '" +
                             (j.dst ? j.dst->name() : std::string("(none)")) + "'");
    if (j.unit == 0 || j.bytes % j.unit != 0)
      throw internal_error("upload to '" + j.dst->name() + "': slice unit " + std::to_string(j.unit) +
                           " does not divide " + std::to_string(j.bytes) + " bytes");
  }

  // Host-mapped destinations: produced in place, all at once.
  std::vector<Slice> direct;
  for (const UploadJob& j : jobs)
    if (j.dst->mapped() && j.bytes) {
      add_slices(direct, j, 0, j.bytes, static_cast<std::byte*>(j.dst->mapped()));
      stats_.direct_bytes += j.bytes;
    }
  auto t0 = Clock::now();
  produce_all(direct);
  stats_.produce_ms += ms_since(t0);

  // The rest through the staging ring, in batches of up to one slot.
  struct Copy {
    const Buffer* dst;
    uint64_t src_offset, dst_offset, bytes;
  };
  std::vector<Slice> batch;
  std::vector<Copy> copies;
  uint64_t used = 0;
  auto submit_batch = [&] {
    if (copies.empty()) return;
    Slot& slot = slots_[next_slot_];
    auto tp = Clock::now();
    produce_all(batch);
    stats_.produce_ms += ms_since(tp);
    slot.copies = std::make_unique<Recording>(device_);
    for (const Copy& c : copies) slot.copies->copy(slot.staging, *c.dst, c.bytes, c.src_offset, c.dst_offset);
    device_.submit(*slot.copies);
    stats_.staged_bytes += used;
    batch.clear();
    copies.clear();
    used = 0;
    next_slot_ = (next_slot_ + 1) % slots_.size();
  };
  auto begin_batch = [&] {
    Slot& slot = slots_[next_slot_];
    wait_slot(slot); // its previous copies must be done before it is written again
    if (!slot.staging)
      slot.staging = device_.allocator().create_buffer(slot_bytes_, MemoryUsage::Upload, "upload staging");
  };
  bool open = false;
  for (const UploadJob& j : jobs) {
    if (j.dst->mapped()) continue;
    uint64_t done = 0;
    while (done < j.bytes) {
      if (!open) {
        begin_batch();
        open = true;
      }
      uint64_t offset = (used + 15) & ~uint64_t(15);
      uint64_t room = offset < slot_bytes_ ? (slot_bytes_ - offset) / j.unit * j.unit : 0;
      if (room == 0) {
        if (copies.empty())
          throw internal_error("upload to '" + j.dst->name() + "': a slice unit of " + std::to_string(j.unit) +
                               " bytes does not fit a staging slot of " + std::to_string(slot_bytes_));
        submit_batch();
        open = false;
        continue;
      }
      uint64_t n = std::min(room, j.bytes - done);
      std::byte* base = static_cast<std::byte*>(slots_[next_slot_].staging.mapped());
      add_slices(batch, j, done, n, base + offset);
      copies.push_back({j.dst, offset, done, n});
      used = offset + n;
      done += n;
    }
  }
  if (open) submit_batch();
  for (Slot& s : slots_) wait_slot(s);
}

} // namespace z123::vk
