#include "z123/workspace.hpp"

#include <algorithm>
#include <limits>

#include "z123/error.hpp"

namespace z123 {

Workspace::Workspace(vk::Device& device, std::string name, vk::MemoryTurn turn, bool own_memory)
    : device_(device), name_(std::move(name)), turn_(turn), own_memory_(own_memory) {}

std::shared_ptr<vk::Buffer> Workspace::new_buffer(uint64_t bytes, const std::string& what) {
  auto buf = std::make_shared<vk::Buffer>(
      device_.allocator().create_buffer(bytes, vk::MemoryUsage::DeviceLocal, name_ + ":" + what, own_memory_, turn_));
  pooled_bytes_ += buf->size();
  return buf;
}

Tensor Workspace::acquire(DType dtype, std::vector<int64_t> shape, const std::string& what) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  for (int64_t d : t.shape)
    if (d <= 0) throw invalid_argument("workspace tensor '" + what + "' has shape " + shape_string(t.shape));
  uint64_t need = (t.bytes() + 3) & ~uint64_t(3);
  if (planning_) {
    note_freed();
    t.buffer = std::make_shared<vk::Buffer>(device_.allocator().create_unbacked_buffer(need, name_ + ":" + what));
    open_.push_back({t.buffer, noted_.size()});
    noted_.push_back({need, events_++, std::numeric_limits<uint64_t>::max()});
    return t;
  }
  const size_t request = next_request_++;
  if (request < plan_.size()) {
    Slot& s = slots_[plan_[request]];
    if (s.free() && s.planned_bytes >= need) {
      if (!s.buffer) s.buffer = new_buffer(s.planned_bytes, what);
      t.buffer = s.buffer;
      return t;
    }
  }
  // First come: the smallest free buffer that fits, at most twice the need in an unplanned pool
  // (so that small tensors do not pin large buffers), any size past a plan (one-off recordings
  // between runs of the planned programs: slots they would pin are free again when those run).
  const uint64_t most = plan_.empty() ? 2 * need + 4096 : std::numeric_limits<uint64_t>::max();
  Slot* best = nullptr;
  for (Slot& s : slots_) {
    if (!s.buffer || !s.free() || s.buffer->size() < need || s.buffer->size() > most) continue;
    if (!best || s.buffer->size() < best->buffer->size()) best = &s;
  }
  if (!best) {
    slots_.push_back({new_buffer(need, what), need});
    best = &slots_.back();
  }
  t.buffer = best->buffer;
  return t;
}

void Workspace::note_freed() {
  std::erase_if(open_, [&](const Open& o) {
    if (o.buffer.use_count() > 1) return false;
    noted_[o.noted].end = events_++;
    return true;
  });
}

bool Workspace::owns(const vk::Buffer* buffer) const {
  if (planning_)
    return std::any_of(open_.begin(), open_.end(), [&](const Open& o) { return o.buffer.get() == buffer; });
  return std::any_of(slots_.begin(), slots_.end(), [&](const Slot& s) { return s.buffer.get() == buffer; });
}

void Workspace::release(Tensor& t) {
  if (!t.buffer) throw internal_error("workspace '" + name_ + "': tensor " + t.describe() + " released twice");
  if (!owns(t.buffer.get()))
    throw internal_error("tensor " + t.describe() + " was not taken from workspace '" + name_ + "'");
  t.buffer.reset();
}

uint64_t Workspace::planned_bytes() const {
  uint64_t b = 0;
  for (const Slot& s : slots_) b += s.planned_bytes;
  return b;
}

void Workspace::begin_planning() {
  if (planning_) throw internal_error("workspace '" + name_ + "': planning begun twice");
  planning_ = true;
  noted_.clear();
  open_.clear();
  events_ = 0;
}

void Workspace::end_planning() {
  if (!planning_) throw internal_error("workspace '" + name_ + "': planning ended without a beginning");
  note_freed();
  planning_ = false;
  open_.clear(); // requests still held end with the planning: their intervals stay open
  // Largest first, so a slot's first request sets its size and every later one fits it.
  std::vector<size_t> order(noted_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return noted_[a].need > noted_[b].need; });
  const size_t first = slots_.size();
  std::vector<std::vector<size_t>> members; // per new slot: its requests
  plan_.assign(noted_.size(), 0);
  for (size_t i : order) {
    const Noted& r = noted_[i];
    size_t chosen = members.size();
    for (size_t k = 0; k < members.size(); ++k) {
      const bool disjoint = std::all_of(members[k].begin(), members[k].end(),
                                        [&](size_t j) { return noted_[j].end <= r.begin || r.end <= noted_[j].begin; });
      if (disjoint &&
          (chosen == members.size() || slots_[first + k].planned_bytes < slots_[first + chosen].planned_bytes))
        chosen = k;
    }
    if (chosen == members.size()) {
      members.emplace_back();
      slots_.push_back({nullptr, r.need});
    }
    members[chosen].push_back(i);
    plan_[i] = first + chosen;
  }
  noted_.clear();
  next_request_ = 0;
}

} // namespace z123
