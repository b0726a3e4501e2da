#include "z123/vk/memory.hpp"
#include "z123/fault.hpp"

#include <algorithm>

#include "z123/vk/instance.hpp"
#include "z123/vk/vulkan_error.hpp"

namespace z123::vk {
namespace {

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::string mib(uint64_t b) {
  return std::to_string(b >> 20) + "." + std::to_string(((b & ((1u << 20) - 1)) * 10) >> 20) + " MiB";
}

const char* usage_name(MemoryUsage u) {
  switch (u) {
  case MemoryUsage::DeviceLocal: return "device-local";
  case MemoryUsage::Upload: return "upload";
  case MemoryUsage::Download: return "download";
  case MemoryUsage::HostStreamed: return "host-streamed";
  }
  return "?";
}

} // namespace

// ---------------------------------------------------------------------------------------------
Buffer::~Buffer() { reset(); }

Buffer::Buffer(Buffer&& o) noexcept { *this = std::move(o); }

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    reset();
    owner_ = o.owner_;
    buffer_ = o.buffer_;
    size_ = o.size_;
    usage_ = o.usage_;
    mapped_ = o.mapped_;
    block_ = o.block_;
    offset_ = o.offset_;
    reserved_ = o.reserved_;
    turn_ = o.turn_;
    name_ = std::move(o.name_);
    o.owner_ = nullptr;
    o.buffer_ = VK_NULL_HANDLE;
    o.mapped_ = nullptr;
    o.block_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

void Buffer::reset() {
  if (owner_) owner_->release(*this);
  owner_ = nullptr;
  buffer_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
  block_ = nullptr;
  size_ = 0;
}

// ---------------------------------------------------------------------------------------------
Allocator::Allocator(VkDevice device, VkPhysicalDevice physical, const DeviceInfo& info, uint64_t block_bytes,
                     bool map_device_local)
    : device_(device), map_device_local_(map_device_local),
      uma_(info.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU || info.type == VK_PHYSICAL_DEVICE_TYPE_CPU),
      max_allocation_(info.max_memory_allocation_size ? info.max_memory_allocation_size : (1ull << 30)),
      max_storage_range_(info.max_storage_buffer_range) {
  vkGetPhysicalDeviceMemoryProperties(physical, &props_);
  block_bytes_ = std::min(block_bytes, max_allocation_);
}

Allocator::~Allocator() {
  for (auto& b : blocks_) {
    if (b->mapped) vkUnmapMemory(device_, b->memory);
    vkFreeMemory(device_, b->memory, nullptr);
  }
}

int memory_type_score(VkMemoryPropertyFlags f, MemoryUsage usage, bool uma) {
  bool local = f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  bool visible = f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  bool coherent = f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  bool cached = f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  switch (usage) {
  case MemoryUsage::DeviceLocal:
    // Shared-memory devices (iGPU, CPU): host-visible device memory lets uploads skip staging.
    // Discrete GPUs: prefer plain VRAM; their host-visible VRAM is the BAR window (possibly
    // small, and not what the driver optimizes for), and uploads go through staging anyway.
    if (local) return 10 + (visible && coherent ? (uma ? 1 : -1) : 0);
    return 1; // fallback: any memory works, just slower
  case MemoryUsage::Upload: return visible && coherent ? 10 + (local ? 0 : 1) : -1;
  case MemoryUsage::Download: return visible && coherent ? 10 + (cached ? 2 : 0) + (local ? 0 : 1) : -1;
  case MemoryUsage::HostStreamed:
    // Discrete: system memory (not device-local) first; UMA: as for device-local tensors.
    if (uma) return local ? 10 + (visible && coherent ? 1 : 0) : 1;
    return visible && coherent ? (local ? 5 : 10) : 1;
  }
  return -1;
}

uint32_t Allocator::pick_memory_type(uint32_t type_bits, MemoryUsage usage) const {
  // The highest-scoring allowed type wins (memory_type_score).
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < props_.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    int score = memory_type_score(props_.memoryTypes[i].propertyFlags, usage, uma_);
    if (score > best_score) {
      best_score = score;
      best = static_cast<int>(i);
    }
  }
  if (best < 0)
    throw Error(ErrorKind::Unsupported, std::string("no Vulkan memory type suits ") + usage_name(usage) + " buffers");
  return static_cast<uint32_t>(best);
}

Allocator::Block* Allocator::new_block(uint64_t size, uint32_t type_index, bool dedicated, bool map,
                                       const std::string& why, bool turns) {
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = size;
  ai.memoryTypeIndex = type_index;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  VkResult r = fault_fires(FaultPoint::AllocateMemory) ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                                                       : vkAllocateMemory(device_, &ai, nullptr, &mem);
  if (r != VK_SUCCESS)
    throw Error(ErrorKind::OutOfMemory, "allocating " + mib(size) + " of device memory for " + why + " failed (" +
                                            result_name(r) + "); already held: " + mib(stats_.allocated_bytes) +
                                            " in " + std::to_string(stats_.blocks) + " blocks");
  auto b = std::make_unique<Block>();
  b->memory = mem;
  b->size = size;
  b->type_index = type_index;
  b->dedicated = dedicated;
  b->want_map = map;
  b->turns = turns;
  b->free_ranges[0] = size;
  if (turns) b->second_free_ranges[0] = size;
  // Only coherent memory is mapped: the engine never flushes or invalidates by hand.
  VkMemoryPropertyFlags host_flags = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  if (map && (props_.memoryTypes[type_index].propertyFlags & host_flags) == host_flags) {
    r = vkMapMemory(device_, mem, 0, VK_WHOLE_SIZE, 0, &b->mapped);
    if (r != VK_SUCCESS) {
      vkFreeMemory(device_, mem, nullptr);
      throw VulkanError(r, "vkMapMemory for " + why);
    }
  }
  bool local = props_.memoryTypes[type_index].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  stats_.allocated_bytes += size;
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  if (local) {
    stats_.device_local_allocated_bytes += size;
    stats_.peak_device_local_allocated_bytes =
        std::max(stats_.peak_device_local_allocated_bytes, stats_.device_local_allocated_bytes);
  }
  stats_.blocks++;
  blocks_.push_back(std::move(b));
  return blocks_.back().get();
}

bool Allocator::Block::empty() const {
  auto whole = [&](const std::map<uint64_t, uint64_t>& r) { return r.size() == 1 && r.begin()->second == size; };
  return whole(free_ranges) && (!turns || whole(second_free_ranges));
}

bool Allocator::carve(std::map<uint64_t, uint64_t>& ranges, uint64_t size, uint64_t alignment, uint64_t& offset) {
  for (auto it = ranges.begin(); it != ranges.end(); ++it) {
    uint64_t start = align_up(it->first, alignment);
    uint64_t end = it->first + it->second;
    if (start + size > end) continue;
    uint64_t range_start = it->first;
    ranges.erase(it);
    if (start > range_start) ranges[range_start] = start - range_start;
    if (start + size < end) ranges[start + size] = end - (start + size);
    offset = start;
    return true;
  }
  return false;
}

void Allocator::reserve_turn_memory(uint64_t bytes, const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = 256;
  bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer probe = VK_NULL_HANDLE;
  check(vkCreateBuffer(device_, &bi, nullptr, &probe), "vkCreateBuffer (memory type probe)");
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device_, probe, &req);
  vkDestroyBuffer(device_, probe, nullptr);
  const uint32_t type = pick_memory_type(req.memoryTypeBits, MemoryUsage::DeviceLocal);
  // Turn blocks that nothing uses (an earlier reservation whose buffers are gone, or never came)
  // would stand beside the new one.
  for (size_t i = blocks_.size(); i-- > 0;)
    if (blocks_[i]->turns && blocks_[i]->empty()) free_block(blocks_[i].get());
  for (uint64_t left = align_up(bytes, 256); left > 0;) {
    const uint64_t size = std::min(left, max_allocation_);
    new_block(size, type, false, map_device_local_, why, true);
    left -= size;
  }
}

void Allocator::check_size(VkDeviceSize bytes, bool storage, const std::string& name) const {
  if (bytes == 0) throw invalid_argument("buffer '" + name + "': size 0 requested");
  if (storage && bytes > max_storage_range_)
    throw Error(ErrorKind::Unsupported, "buffer '" + name + "' needs " + std::to_string(bytes) +
                                            " bytes, over this device's " + "maxStorageBufferRange of " +
                                            std::to_string(max_storage_range_) +
                                            " bytes; split the tensor or use a device with a larger limit");
  if (bytes > max_allocation_)
    throw Error(ErrorKind::OutOfMemory, "buffer '" + name + "' needs " + std::to_string(bytes) +
                                            " bytes, over maxMemoryAllocationSize " + std::to_string(max_allocation_));
}

VkBuffer Allocator::create_handle(VkDeviceSize bytes, bool bindable, const std::string& name, bool may_fault) {
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = bytes;
  bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
             (bindable ? VK_BUFFER_USAGE_STORAGE_BUFFER_BIT : 0);
  bi.sharingMode = sharing_families_.size() > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE;
  if (bi.sharingMode == VK_SHARING_MODE_CONCURRENT) {
    bi.queueFamilyIndexCount = static_cast<uint32_t>(sharing_families_.size());
    bi.pQueueFamilyIndices = sharing_families_.data();
  }
  VkBuffer vb = VK_NULL_HANDLE;
  check(may_fault && fault_fires(FaultPoint::CreateBuffer) ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                                                           : vkCreateBuffer(device_, &bi, nullptr, &vb),
        ("vkCreateBuffer for '" + name + "'").c_str());
  return vb;
}

Buffer Allocator::create_unbacked_buffer(VkDeviceSize bytes, const std::string& name) {
  check_size(bytes, true, name);
  // No fault injection here: nothing is allocated, and the fault tests count real buffers.
  VkBuffer vb = create_handle(bytes, true, name, false);
  Buffer buf;
  buf.owner_ = this;
  buf.buffer_ = vb;
  buf.size_ = bytes;
  buf.name_ = name;
  return buf;
}

Buffer Allocator::create_buffer(VkDeviceSize bytes, MemoryUsage usage, const std::string& name, bool own_memory,
                                MemoryTurn turn) {
  bool storage = usage == MemoryUsage::DeviceLocal;
  check_size(bytes, storage, name);

  // Host-visible buffers may be bound as storage too when small enough (per-step parameters and
  // noise read by kernels straight from host memory); large staging buffers stay transfer-only.
  const bool bindable = storage || bytes <= max_storage_range_;
  VkBuffer vb = create_handle(bytes, bindable, name, true);
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device_, vb, &req);

  std::lock_guard<std::mutex> lock(mutex_);
  try {
    uint32_t type = pick_memory_type(req.memoryTypeBits, usage);
    uint64_t size = align_up(req.size, 256); // keep neighbouring buffers apart
    bool map = usage != MemoryUsage::DeviceLocal || map_device_local_;
    Block* block = nullptr;
    uint64_t offset = 0;
    if (turn != MemoryTurn::None) {
      if (usage != MemoryUsage::DeviceLocal)
        throw internal_error("buffer '" + name + "': only device-local buffers take turns");
      for (auto& b : blocks_)
        if (b->turns && b->type_index == type && carve(b->free_for(turn), size, req.alignment, offset)) {
          block = b.get();
          break;
        }
      if (!block) {
        block = new_block(std::max(size, block_bytes_), type, false, map, "'" + name + "'", true);
        carve(block->free_for(turn), size, req.alignment, offset);
      }
    } else if (own_memory || size > block_bytes_ / 2) {
      block = new_block(size, type, true, map, "'" + name + "'");
      offset = 0;
      block->free_ranges.clear();
    } else {
      for (auto& b : blocks_) {
        if (b->dedicated || b->turns || b->type_index != type || b->want_map != map) continue;
        if (carve(b->free_ranges, size, req.alignment, offset)) {
          block = b.get();
          break;
        }
      }
      if (!block) {
        block = new_block(block_bytes_, type, false, map, "'" + name + "'");
        carve(block->free_ranges, size, req.alignment, offset);
      }
    }
    check(vkBindBufferMemory(device_, vb, block->memory, offset), ("vkBindBufferMemory for '" + name + "'").c_str());
    Buffer buf;
    buf.owner_ = this;
    buf.buffer_ = vb;
    buf.size_ = bytes;
    buf.usage_ = usage;
    buf.mapped_ = block->mapped ? static_cast<char*>(block->mapped) + offset : nullptr;
    buf.block_ = block;
    buf.offset_ = offset;
    buf.reserved_ = size;
    buf.turn_ = turn;
    buf.name_ = name;
    stats_.used_bytes += size;
    stats_.peak_used_bytes = std::max(stats_.peak_used_bytes, stats_.used_bytes);
    stats_.live_buffers++;
    return buf;
  } catch (...) {
    vkDestroyBuffer(device_, vb, nullptr);
    throw;
  }
}

void Allocator::release(Buffer& buf) noexcept {
  vkDestroyBuffer(device_, buf.buffer_, nullptr);
  if (!buf.backed()) return; // create_unbacked_buffer: nothing was allocated
  std::lock_guard<std::mutex> lock(mutex_);
  auto* block = static_cast<Block*>(buf.block_);
  stats_.used_bytes -= buf.reserved_;
  stats_.live_buffers--;
  // Return the range and merge it with free neighbours.
  auto& ranges = block->free_for(buf.turn_);
  uint64_t start = buf.offset_, size = buf.reserved_;
  auto next = ranges.lower_bound(start);
  if (next != ranges.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      ranges.erase(prev);
    }
  }
  next = ranges.lower_bound(start);
  if (next != ranges.end() && start + size == next->first) {
    size += next->second;
    ranges.erase(next);
  }
  ranges[start] = size;
  // An empty block goes back to the driver so the reported footprint follows real use.
  if (block->empty()) free_block(block);
}

void Allocator::free_block(Block* block) {
  bool local = props_.memoryTypes[block->type_index].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  if (block->mapped) vkUnmapMemory(device_, block->memory);
  vkFreeMemory(device_, block->memory, nullptr);
  stats_.allocated_bytes -= block->size;
  if (local) stats_.device_local_allocated_bytes -= block->size;
  stats_.blocks--;
  blocks_.erase(std::find_if(blocks_.begin(), blocks_.end(), [&](auto& b) { return b.get() == block; }));
}

MemoryStats Allocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void Allocator::reset_peaks() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
  stats_.peak_used_bytes = stats_.used_bytes;
  stats_.peak_device_local_allocated_bytes = stats_.device_local_allocated_bytes;
}

} // namespace z123::vk
