// A logical device on one physical device: the compute queue, the memory allocator, the pipeline
// cache, and submission ordered by one timeline semaphore. Submission and waiting are
// thread-safe; recordings themselves are used by one thread at a time. Where the tuning asks for
// it (Tuning::reference_queue), a side queue with a timeline of its own: a queue of a second
// compute family (buffers then shared by both families), or the main queue itself ("shared").
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "z123/tuning.hpp"
#include "z123/vk/instance.hpp"
#include "z123/vk/memory.hpp"
#include "z123/vk/pipeline.hpp"
#include "z123/vk/profiler.hpp"
#include "z123/vk/queue_role.hpp"

namespace z123::vk {

class Recording;

struct DeviceOptions {
  // The tuning knobs of this device and of the kernel contexts made for it; unset: read from the
  // environment (Tuning::from_environment) when the device is created.
  std::optional<Tuning> tuning;
  // Use cooperative-matrix extensions when the device has them (Tuning::force_portable also turns
  // this off: every kernel then takes its portable path).
  bool allow_coopmat = true;
  // Keep compiled pipelines in a file between runs (Tuning::no_pipeline_cache also turns this off).
  bool persist_pipeline_cache = true;
  uint64_t memory_block_bytes = 256ull << 20;
  // Map device-local memory when it is host-visible (UMA), so uploads skip staging. Tests turn
  // this off to exercise the staging path on lavapipe, where all memory is host-visible.
  bool map_device_local = true;
  // Diagnostics: where set (default: Tuning::pipeline_report_dir), every pipeline is compiled with
  // the driver's statistics and internal representations captured (VK_KHR_pipeline_executable_
  // properties: register counts, spills, shared memory, and on some drivers the machine code),
  // one text file per pipeline in this folder. Slower compiles, no pipeline cache.
  std::string pipeline_report_dir;
};

// Host -> device traffic of model loading (vk::StreamingUploader and the weight loader add to
// it), for the load-time breakdown.
struct TransferStats {
  uint64_t staged_bytes = 0, direct_bytes = 0;
  double read_ms = 0;    // bringing weight files into memory
  double produce_ms = 0; // converting / copying weights into staging or mapped memory
  double wait_ms = 0;    // waiting for the GPU's copies
};

// Features actually enabled on the logical device (subset of DeviceInfo's).
struct EnabledFeatures {
  bool shader_float16 = false;
  bool storage_buffer_16bit = false;
  bool maintenance4 = false;
  bool subgroup_size_control = false;
  bool vulkan_memory_model = false;
  bool nv_coopmat = false;
  bool khr_coopmat = false;
  bool nv_coopmat2 = false;
};

class Device {
public:
  Device(Instance& instance, const DeviceInfo& info, const DeviceOptions& options = {});
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Instance& instance() const { return instance_; }
  const DeviceInfo& info() const { return info_; }
  const EnabledFeatures& features() const { return features_; }
  // The knobs the device was created with (DeviceOptions::tuning, else the environment's).
  const Tuning& tuning() const { return tuning_; }
  VkDevice handle() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return info_.compute_queue_family; }
  VkCommandPool command_pool() const { return command_pool_; }
  std::mutex& pool_mutex() const { return pool_mutex_; }
  // The side queue (QueueRole::Side): whether there is one, and whether it is the main queue
  // itself (Tuning::ReferenceQueue::Shared). Its recordings come from its family's pool.
  bool has_side_queue() const { return side_.timeline != VK_NULL_HANDLE; }
  bool side_queue_is_main() const { return side_.queue == queue_; }
  VkCommandPool command_pool(QueueRole role) const { return role == QueueRole::Side ? side_.pool : command_pool_; }
  std::mutex& pool_mutex(QueueRole role) const { return role == QueueRole::Side ? *side_.pool_mutex : pool_mutex_; }
  Allocator& allocator() { return *allocator_; }
  PipelineCache& pipelines() { return *pipelines_; }

  // Submit a finished recording to its queue (Recording::role); returns the value of that
  // queue's timeline that marks its completion. It starts once each wait's timeline has reached
  // its value. If the same recording is still running from an earlier submit, waits for that
  // first.
  uint64_t submit(Recording& recording, std::initializer_list<TimelineWait> waits = {});
  // Blocks until the main queue's timeline (or role's) reaches value; throws on device loss or
  // after timeout_ms.
  void wait(uint64_t value, uint64_t timeout_ms = 600000) { wait(QueueRole::Main, value, timeout_ms); }
  void wait(QueueRole role, uint64_t value, uint64_t timeout_ms = 600000);
  bool is_done(uint64_t value) const;
  void run(Recording& recording);
  // Both queues idle.
  void wait_idle();
  // Recording's destructor: drop it from the profile's pending submissions (Z123_PROFILE).
  void forget(const Recording* recording);

  // Host <-> device copies (synchronous). Mapped buffers are written directly; others go through
  // a staging buffer.
  void upload(const Buffer& dst, const void* data, VkDeviceSize bytes, VkDeviceSize dst_offset = 0);
  void download(const Buffer& src, void* data, VkDeviceSize bytes, VkDeviceSize src_offset = 0);

  TransferStats& transfer_stats() { return transfer_stats_; }

private:
  Instance& instance_;
  DeviceInfo info_;
  Tuning tuning_;
  EnabledFeatures features_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  uint64_t timeline_value_ = 0;
  // Set when a submission or wait reported VK_ERROR_DEVICE_LOST: every later submit() and wait()
  // fails at once with the same error (a lost device stays lost; the engine must be reopened).
  std::atomic<bool> lost_{false};
  void throw_if_lost() const;
  mutable std::mutex queue_mutex_;
  mutable std::mutex pool_mutex_;
  // The side queue; its mutexes are the main queue's where it is the main queue.
  struct SideQueue {
    VkQueue queue = VK_NULL_HANDLE;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkSemaphore timeline = VK_NULL_HANDLE;
    uint64_t timeline_value = 0;
    std::mutex* queue_mutex = nullptr;
    std::mutex* pool_mutex = nullptr;
  } side_;
  std::mutex side_queue_mutex_, side_pool_mutex_;
  bool own_side_pool_ = false; // side_.pool is not command_pool_
  void destroy_side_queue();
  // The timeline of role's queue; InternalError for the side queue of a device without one.
  VkSemaphore timeline_of(QueueRole role) const;
  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<PipelineCache> pipelines_;
  // Staging for upload()/download(), kept between calls: a fresh host-visible buffer per call
  // made the driver allocate (and free) a 256 MiB pinned block for a few kilobytes, about 50 ms
  // per download on an H100 (most of the conditioning's and the decode's non-kernel time).
  std::mutex staging_mutex_;
  Buffer upload_staging_, download_staging_;
  TransferStats transfer_stats_;
  // Z123_PROFILE: submissions of profiled recordings not yet folded into profiler_.
  Profiler profiler_;
  std::mutex profile_mutex_;
  std::vector<std::pair<uint64_t, const Recording*>> profile_pending_;
};

// A scope's last submissions to each queue (their timeline values; 0: none): whatever leaves the
// scope, both are done first, since the buffers they use may be rewritten next. wait() reports
// a failed wait; the destructor drops it (the error already leaving the scope is the one that
// matters).
struct InFlight {
  Device& device;
  uint64_t main = 0, side = 0;
  void wait();
  ~InFlight();
};

} // namespace z123::vk
