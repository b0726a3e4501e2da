#include "z123/vk/recording.hpp"

#include <algorithm>

#include "z123/vk/device.hpp"
#include "z123/vk/memory.hpp"
#include "z123/vk/pipeline.hpp"
#include "z123/vk/profiler.hpp"
#include "z123/vk/vulkan_error.hpp"

namespace z123::vk {
namespace {

constexpr uint32_t kSetsPerPool = 256;
// Z123_PROFILE: commands timed per recording (a UNet step records about 1,500); later ones are
// left out of the profile.
constexpr uint32_t kProfileQueries = 8192;
constexpr VkPipelineStageFlags kWorkStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;

// Every compute or transfer write before it is visible to every such access after it.
void write_barrier(VkCommandBuffer cmd) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(cmd, kWorkStages, kWorkStages, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

// A timestamp query pool of `count` queries, reset at the start of `cmd` (so on every replay).
VkQueryPool timestamp_pool(VkDevice device, VkCommandBuffer cmd, uint32_t count) {
  VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = count;
  VkQueryPool pool = VK_NULL_HANDLE;
  check(vkCreateQueryPool(device, &qi, nullptr, &pool), "vkCreateQueryPool");
  vkCmdResetQueryPool(cmd, pool, 0, count);
  return pool;
}

} // namespace

Recording::Recording(Device& device, QueueRole role) : Recording(device, 0, role) {}

Recording::Recording(Device& device, uint32_t max_timestamps, QueueRole role)
    : device_(device), role_(role), max_timestamps_(max_timestamps) {
  if (role == QueueRole::Side && !device.has_side_queue())
    throw internal_error("a side-queue recording on a device without a side queue");
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = device.command_pool(role);
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  {
    std::lock_guard<std::mutex> lock(device.pool_mutex(role));
    check(vkAllocateCommandBuffers(device.handle(), &ai, &cmd_), "vkAllocateCommandBuffers");
  }
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
  if (max_timestamps_ > 0) {
    if (!device.info().timestamps)
      throw Error(ErrorKind::Unsupported, "device '" + device.info().name + "' has no compute timestamps");
    queries_ = timestamp_pool(device.handle(), cmd_, max_timestamps_);
  }
  // Side-queue recordings are not profiled: the profile times commands one after another on one
  // queue (the engine keeps the reference pass on the main queue when profiling).
  if (Profiler::requested() && device.info().timestamps && role == QueueRole::Main) {
    profile_queries_ = timestamp_pool(device.handle(), cmd_, kProfileQueries);
    vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, profile_queries_, 0);
  }
}

Recording::~Recording() {
  // A recording must not be destroyed while the GPU still runs it.
  if (last_submit) {
    try {
      device_.wait(role_, last_submit);
    } catch (...) {
    }
  }
  for (VkDescriptorPool p : pools_) vkDestroyDescriptorPool(device_.handle(), p, nullptr);
  device_.forget(this);
  if (queries_) vkDestroyQueryPool(device_.handle(), queries_, nullptr);
  if (profile_queries_) vkDestroyQueryPool(device_.handle(), profile_queries_, nullptr);
  if (level_queries_) vkDestroyQueryPool(device_.handle(), level_queries_, nullptr);
  std::lock_guard<std::mutex> lock(device_.pool_mutex(role_));
  vkFreeCommandBuffers(device_.handle(), device_.command_pool(role_), 1, &cmd_);
}

VkDescriptorSet Recording::allocate_set(VkDescriptorSetLayout layout, uint32_t buffers) {
  if (pools_.empty() || pool_sets_left_ == 0 || pool_buffers_left_ < buffers) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * 8};
    VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pi.maxSets = kSetsPerPool;
    pi.poolSizeCount = 1;
    pi.pPoolSizes = &size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    check(vkCreateDescriptorPool(device_.handle(), &pi, nullptr, &pool), "vkCreateDescriptorPool");
    pools_.push_back(pool);
    pool_sets_left_ = kSetsPerPool;
    pool_buffers_left_ = kSetsPerPool * 8;
  }
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pools_.back();
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(vkAllocateDescriptorSets(device_.handle(), &ai, &set), "vkAllocateDescriptorSets");
  pool_sets_left_--;
  pool_buffers_left_ -= buffers;
  return set;
}

void Recording::barrier() {
  if (by_levels_) {
    floor_ = levels_.size();
    return;
  }
  defer(write_barrier);
  written_since_barrier_.clear();
  read_since_barrier_.clear();
  ++barriers_;
}

void Recording::order_by_levels() {
  if (!pending_.empty() || dispatches_ || !labels_.empty())
    throw internal_error("order_by_levels after commands were recorded");
  if (profile_queries_ || queries_) return; // timed: each command's time must be its own
  by_levels_ = true;
  // Side-queue recordings are not profiled (as for Z123_PROFILE): the device folds the main
  // queue's submissions.
  if (Profiler::levels_requested() && device_.info().timestamps && role_ == QueueRole::Main)
    level_queries_ = timestamp_pool(device_.handle(), cmd_, kProfileQueries);
}

void Recording::place(const std::vector<VkBuffer>& reads, const std::vector<VkBuffer>& writes,
                      std::function<void(VkCommandBuffer)> command, const std::string& label) {
  if (finished_) throw internal_error("command recorded into a finished recording");
  auto after = [](const std::map<VkBuffer, size_t>& m, VkBuffer h) {
    auto it = m.find(h);
    return it == m.end() ? size_t{0} : it->second;
  };
  size_t level = floor_;
  for (VkBuffer h : reads) level = std::max(level, after(after_write_, h));
  for (VkBuffer h : writes) level = std::max({level, after(after_write_, h), after(after_read_, h)});
  for (VkBuffer h : reads) after_read_[h] = std::max(after(after_read_, h), level + 1);
  for (VkBuffer h : writes) after_write_[h] = level + 1;
  if (levels_.size() <= level) levels_.resize(level + 1);
  levels_[level].push_back(std::move(command));
  if (level_queries_) {
    if (level_commands_.size() <= level) level_commands_.resize(level + 1);
    level_commands_[level].push_back(label);
  }
}

void Recording::track(const Buffer* buffer, bool written) {
  (written ? written_since_barrier_ : read_since_barrier_).insert(buffer->handle());
}

void Recording::dispatch(const Pipeline& pipeline, std::initializer_list<Binding> bindings, const void* push,
                         uint32_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz, const std::string& detail) {
  dispatch(pipeline, std::vector<Binding>(bindings), push, push_bytes, gx, gy, gz, detail);
}

void Recording::dispatch(const Pipeline& pipeline, const std::vector<Binding>& bindings, const void* push,
                         uint32_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz, const std::string& detail) {
  if (finished_) throw internal_error("dispatch of '" + pipeline.name + "' into a finished recording");
  if (bindings.size() != pipeline.num_buffers)
    throw internal_error("kernel '" + pipeline.name + "' takes " + std::to_string(pipeline.num_buffers) +
                         " buffers, got " + std::to_string(bindings.size()));
  if (push_bytes != pipeline.push_constant_bytes)
    throw internal_error("kernel '" + pipeline.name + "' takes " + std::to_string(pipeline.push_constant_bytes) +
                         " push-constant bytes, got " + std::to_string(push_bytes));
  const auto& lim = device_.info().max_workgroup_count;
  if (gx == 0 || gy == 0 || gz == 0) return; // empty problem: nothing to do
  if (gx > lim[0] || gy > lim[1] || gz > lim[2])
    throw internal_error("kernel '" + pipeline.name + "' grid " + std::to_string(gx) + "x" + std::to_string(gy) + "x" +
                         std::to_string(gz) + " exceeds the device's workgroup-count limits");

  // A buffer with no memory (a Workspace being planned) makes this a recording that is never run:
  // descriptors cannot point at it, and nothing else of the dispatch is needed.
  for (const Binding& b : bindings)
    if (!b.buffer->backed()) unbacked_ = true;
  if (unbacked_) return;

  if (!by_levels_) {
    bool hazard = false;
    for (const Binding& b : bindings) {
      VkBuffer h = b.buffer->handle();
      if (written_since_barrier_.count(h) || (b.written && read_since_barrier_.count(h))) hazard = true;
    }
    if (hazard) barrier();
  }

  VkDescriptorSet set = allocate_set(pipeline.set_layout, pipeline.num_buffers);
  std::vector<VkDescriptorBufferInfo> infos(bindings.size());
  std::vector<VkWriteDescriptorSet> writes(bindings.size());
  for (size_t i = 0; i < bindings.size(); ++i) {
    infos[i] = {bindings[i].buffer->handle(), bindings[i].offset, bindings[i].range};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(device_.handle(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  std::vector<uint8_t> constants(static_cast<const uint8_t*>(push), static_cast<const uint8_t*>(push) + push_bytes);
  const Pipeline* pipe = &pipeline;
  auto command = [pipe, set, constants = std::move(constants), gx, gy, gz](VkCommandBuffer cmd) {
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe->handle());
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe->layout, 0, 1, &set, 0, nullptr);
    if (!constants.empty())
      vkCmdPushConstants(cmd, pipe->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, static_cast<uint32_t>(constants.size()),
                         constants.data());
    vkCmdDispatch(cmd, gx, gy, gz);
  };
  dispatch_labels_.push_back(pipeline.name + " [" + std::to_string(gx) + "x" + std::to_string(gy) + "x" +
                             std::to_string(gz) + "]" + (detail.empty() ? "" : " " + detail));
  if (by_levels_) {
    std::vector<VkBuffer> read, written;
    for (const Binding& b : bindings) (b.written ? written : read).push_back(b.buffer->handle());
    place(read, written, std::move(command), dispatch_labels_.back());
  } else {
    defer(std::move(command));
    for (const Binding& b : bindings) track(b.buffer, b.written);
  }
  dispatches_++;
  if (profile_queries_) profile_mark(dispatch_labels_.back());
}

void Recording::profile_mark(const std::string& label) {
  if (profile_labels_.size() + 1 >= kProfileQueries) return;
  profile_labels_.push_back(label);
  defer([pool = profile_queries_, query = static_cast<uint32_t>(profile_labels_.size())](VkCommandBuffer cmd) {
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, query);
  });
}

std::vector<double> Recording::timestamps_ms(VkQueryPool pool, size_t count, double* first_ms) const {
  std::vector<uint64_t> ticks(count);
  check(vkGetQueryPoolResults(device_.handle(), pool, 0, static_cast<uint32_t>(count), count * sizeof(uint64_t),
                              ticks.data(), sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  const double period_ms = device_.info().timestamp_period_ns * 1e-6;
  std::vector<double> ms(count);
  for (size_t i = 0; i < count; ++i) ms[i] = static_cast<double>(ticks[i] - ticks[0]) * period_ms;
  if (first_ms) *first_ms = static_cast<double>(ticks[0]) * period_ms;
  return ms;
}

void Recording::fold_profile(Profiler& profiler) const {
  // Interval i of `labels` ends at query i + 1 of `pool`. A level-ordered pass also reports its
  // span (query 0 before its first level, the last after its last) for the queue's idle time.
  auto fold = [&](VkQueryPool pool, const std::vector<std::string>& labels, bool pass) {
    if (!pool || labels.empty()) return;
    double start = 0;
    const std::vector<double> t = timestamps_ms(pool, labels.size() + 1, &start);
    for (size_t i = 0; i < labels.size(); ++i) profiler.add(labels[i], t[i + 1] - t[i]);
    if (pass) profiler.add_pass(last_submit, start, start + t.back());
  };
  fold(profile_queries_, profile_labels_, false);
  fold(level_queries_, level_labels_, true);
}

void Recording::copy(const Buffer& src, const Buffer& dst, VkDeviceSize bytes, VkDeviceSize src_offset,
                     VkDeviceSize dst_offset) {
  if (src_offset + bytes > src.size() || dst_offset + bytes > dst.size())
    throw invalid_argument("copy of " + std::to_string(bytes) + " bytes from '" + src.name() + "' to '" + dst.name() +
                           "' is out of range");
  if (!src.backed() || !dst.backed()) unbacked_ = true;
  VkBufferCopy region{src_offset, dst_offset, bytes};
  auto command = [s = src.handle(), d = dst.handle(), region](VkCommandBuffer cmd) {
    vkCmdCopyBuffer(cmd, s, d, 1, &region);
  };
  if (by_levels_) {
    place({src.handle()}, {dst.handle()}, std::move(command), "copy");
    return;
  }
  if (written_since_barrier_.count(src.handle()) || written_since_barrier_.count(dst.handle()) ||
      read_since_barrier_.count(dst.handle()))
    barrier();
  defer(std::move(command));
  track(&src, false);
  track(&dst, true);
  if (profile_queries_) profile_mark("copy");
}

void Recording::fill(const Buffer& dst, uint32_t value, VkDeviceSize offset, VkDeviceSize bytes) {
  if (!dst.backed()) unbacked_ = true;
  auto command = [d = dst.handle(), offset, bytes, value](VkCommandBuffer cmd) {
    vkCmdFillBuffer(cmd, d, offset, bytes, value);
  };
  if (by_levels_) {
    place({}, {dst.handle()}, std::move(command), "fill");
    return;
  }
  if (written_since_barrier_.count(dst.handle()) || read_since_barrier_.count(dst.handle())) barrier();
  defer(std::move(command));
  track(&dst, true);
  if (profile_queries_) profile_mark("fill");
}

void Recording::timestamp(const std::string& label) {
  if (!queries_) throw internal_error("timestamp '" + label + "' in a recording made without timestamps");
  if (labels_.size() >= max_timestamps_)
    throw internal_error("more than " + std::to_string(max_timestamps_) + " timestamps in one recording");
  defer([pool = queries_, query = static_cast<uint32_t>(labels_.size())](VkCommandBuffer cmd) {
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, query);
  });
  labels_.push_back(label);
}

void Recording::defer(std::function<void(VkCommandBuffer)> command) {
  if (finished_) throw internal_error("command recorded into a finished recording");
  pending_.push_back(std::move(command));
}

void Recording::finish() {
  if (finished_) return;
  if (unbacked_)
    throw internal_error("a recording that uses buffers with no memory (Workspace planning) cannot be run");
  // The commands go into the command buffer only now: by this time the pipelines they bind
  // have been compiling in the background since they were first asked for.
  for (auto& command : pending_) command(cmd_);
  pending_.clear();
  pending_.shrink_to_fit();
  bool first = true;
  for (size_t l = 0; l < levels_.size(); ++l) {
    if (levels_[l].empty()) continue; // below an explicit barrier's floor: nothing came there
    if (!first) {
      write_barrier(cmd_);
      ++barriers_;
    } else if (level_queries_) {
      vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, level_queries_, 0);
    }
    first = false;
    for (auto& command : levels_[l]) command(cmd_);
    if (level_queries_ && level_labels_.size() + 1 < kProfileQueries) { // when the level's work is done
      std::string label = "level " + std::to_string(level_labels_.size()) + ":";
      for (const std::string& c : level_commands_[l]) label += " | " + c;
      level_labels_.push_back(label);
      vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, level_queries_,
                          static_cast<uint32_t>(level_labels_.size()));
    }
  }
  levels_.clear();
  level_commands_.clear();
  after_write_.clear();
  after_read_.clear();
  // Make every write visible to the host (downloads read mapped memory after the wait).
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd_, kWorkStages, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  finished_ = true;
}

std::vector<std::pair<std::string, double>> Recording::timings() const {
  std::vector<std::pair<std::string, double>> out;
  if (labels_.empty()) return out;
  const std::vector<double> t = timestamps_ms(queries_, labels_.size());
  for (size_t i = 1; i < labels_.size(); ++i) out.emplace_back(labels_[i], t[i] - t[i - 1]);
  return out;
}

} // namespace z123::vk
