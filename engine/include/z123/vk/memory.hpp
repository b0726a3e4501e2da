// Device memory: a suballocator that carves buffers out of large VkDeviceMemory blocks.
// Each Buffer is its own VkBuffer bound inside a block, so a descriptor always covers exactly one
// tensor, and no buffer can exceed maxStorageBufferRange (checked with a clear error) or
// maxMemoryAllocationSize. Peak usage is tracked for the memory reports.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace z123::vk {

struct DeviceInfo;

enum class MemoryUsage {
  DeviceLocal, // tensors and weights; mapped too when the device shares host memory (iGPU, CPU)
  Upload,      // host -> device staging (host-visible, coherent)
  Download,    // device -> host staging (host-visible, cached when possible)
  // Read by the device straight from host memory over the bus on discrete GPUs (weights of a
  // network that runs once per image: saves their VRAM for a few ms of bus reads); device-local
  // where the device shares host memory anyway.
  HostStreamed,
};

// Two groups of device-local buffers that are never used at the same time can take turns in the
// same device memory. Buffers of one turn are packed as if the other turn did not exist, so they
// overlap the other turn's buffers; whoever writes one turn's buffers makes the other turn's
// contents undefined. The engine's two layouts (Engine::Impl): in the normal one, sampling's
// pools and caches (First, rewritten by every image's steps) and the conditioning and decoding
// activations (Second); in the low-memory one, the UNet's weights (First, re-uploaded after the
// Second turn has run) and the conditioning and decoding activations (Second).
enum class MemoryTurn : uint8_t { None, First, Second };

// How well a memory type with these property flags suits `usage` (higher is better, < 0 never);
// uma: the device shares host memory (integrated GPU, CPU device).
int memory_type_score(VkMemoryPropertyFlags flags, MemoryUsage usage, bool uma);

struct MemoryStats {
  uint64_t allocated_bytes = 0; // VkDeviceMemory currently held (all usages)
  uint64_t peak_allocated_bytes = 0;
  uint64_t used_bytes = 0; // bytes handed out to live buffers
  uint64_t peak_used_bytes = 0;
  uint64_t device_local_allocated_bytes = 0;
  uint64_t peak_device_local_allocated_bytes = 0;
  uint32_t blocks = 0;
  uint32_t live_buffers = 0;
};

class Allocator;

class Buffer {
public:
  Buffer() = default;
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  explicit operator bool() const { return buffer_ != VK_NULL_HANDLE; }
  // False for an unbacked buffer (Allocator::create_unbacked_buffer): no memory behind it.
  bool backed() const { return block_ != nullptr; }
  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  MemoryUsage usage() const { return usage_; }
  // Host pointer when the memory is host-visible, else nullptr.
  void* mapped() const { return mapped_; }
  const std::string& name() const { return name_; }
  void reset();

private:
  friend class Allocator;
  Allocator* owner_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  MemoryUsage usage_ = MemoryUsage::DeviceLocal;
  void* mapped_ = nullptr;
  void* block_ = nullptr; // Allocator::Block*
  VkDeviceSize offset_ = 0, reserved_ = 0;
  MemoryTurn turn_ = MemoryTurn::None;
  std::string name_;
};

class Allocator {
public:
  // block_bytes: size of the shared blocks (clamped to maxMemoryAllocationSize); requests over
  // half a block get a dedicated allocation.
  Allocator(VkDevice device, VkPhysicalDevice physical, const DeviceInfo& info, uint64_t block_bytes = 256ull << 20,
            bool map_device_local = true);
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // Buffers created from now on are used by these queue families (two or more) concurrently,
  // with no ownership transfers (vk::Device's side queue of another family).
  void share_between(std::vector<uint32_t> queue_families) { sharing_families_ = std::move(queue_families); }

  // name is used in error messages and reports ("unet.down_blocks.0...").
  // own_memory: a VkDeviceMemory of exactly this buffer's size instead of a range of a shared
  // block (for a buffer made late, after the blocks are full, that should not add a block).
  // turn: a device-local buffer in the memory that the two turns share (see MemoryTurn).
  Buffer create_buffer(VkDeviceSize bytes, MemoryUsage usage, const std::string& name, bool own_memory = false,
                       MemoryTurn turn = MemoryTurn::None);
  // A device-local storage buffer with no memory bound to it, for recordings that are made only
  // to learn what they need and are never run (Workspace planning; vk::Recording skips their
  // dispatches). The same size limits as create_buffer apply.
  Buffer create_unbacked_buffer(VkDeviceSize bytes, const std::string& name);
  // Allocates `bytes` of device-local memory for the turns up front, in blocks as large as the
  // device allows: a turn's buffers then fit wherever the other turn's do, whatever their sizes
  // (blocks made later, when a turn outgrows this, are sized for the buffer that needs them).
  // Turn blocks that hold no buffer are given back first.
  void reserve_turn_memory(uint64_t bytes, const std::string& why);
  MemoryStats stats() const;
  void reset_peaks();
  uint64_t block_bytes() const { return block_bytes_; }
  uint64_t max_buffer_bytes() const { return max_storage_range_; }

private:
  friend class Buffer;
  std::vector<uint32_t> sharing_families_; // share_between; empty: exclusive
  struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint64_t size = 0;
    uint32_t type_index = 0;
    void* mapped = nullptr;
    bool dedicated = false;
    bool want_map = false;                    // host access requested (staging, or mapped device-local)
    bool turns = false;                       // holds MemoryTurn buffers: free_ranges per turn
    std::map<uint64_t, uint64_t> free_ranges; // offset -> size, coalesced (the First turn's, in a turns block)
    std::map<uint64_t, uint64_t> second_free_ranges;
    std::map<uint64_t, uint64_t>& free_for(MemoryTurn t) {
      return t == MemoryTurn::Second ? second_free_ranges : free_ranges;
    }
    bool empty() const;
  };
  // Gives an empty block's memory back to the driver (the caller holds mutex_).
  void free_block(Block* block);
  // Throws where a buffer of this size cannot exist on the device (storage: bound to a shader).
  void check_size(VkDeviceSize bytes, bool storage, const std::string& name) const;
  // The VkBuffer of either kind of buffer; may_fault: a Z123_FAULT `buffer` point may fail it.
  VkBuffer create_handle(VkDeviceSize bytes, bool bindable, const std::string& name, bool may_fault);
  uint32_t pick_memory_type(uint32_t type_bits, MemoryUsage usage) const;
  Block* new_block(uint64_t size, uint32_t type_index, bool dedicated, bool map, const std::string& why,
                   bool turns = false);
  // First fit of `size` bytes in `ranges` (aligned); returns false when nothing fits.
  static bool carve(std::map<uint64_t, uint64_t>& ranges, uint64_t size, uint64_t alignment, uint64_t& offset);
  void release(Buffer& buffer) noexcept;

  VkDevice device_;
  VkPhysicalDeviceMemoryProperties props_{};
  uint64_t block_bytes_;
  bool map_device_local_;
  bool uma_; // device memory is host memory (integrated GPU, CPU device)
  uint64_t max_allocation_;
  uint64_t max_storage_range_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Block>> blocks_;
  MemoryStats stats_;
};

} // namespace z123::vk
