// Compute pipelines built from embedded SPIR-V variants, with their descriptor layout (N storage
// buffers at bindings 0..N-1) and push constants. Pipelines are created once per (variant,
// specialization constants) and kept; the driver's VkPipelineCache is persisted on disk under
// $XDG_CACHE_HOME/zero123pp-vk/ keyed by device, driver and the hash of all embedded shaders, so
// a second process start skips shader compilation.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace z123::vk {

struct DeviceInfo;

struct KernelDesc {
  std::string shader;                   // embedded variant name, e.g. "matmul_f16"
  uint32_t num_buffers = 0;             // storage buffers at bindings 0..num_buffers-1
  uint32_t push_constant_bytes = 0;     // one push-constant block at offset 0
  std::vector<uint32_t> spec_constants; // constant_id 0..n-1 (workgroup sizes, tiles)
  uint32_t required_subgroup_size = 0;  // 0 = driver's choice (needs subgroup size control)
};

// The layouts exist as soon as PipelineCache::get() returns; the VkPipeline itself is compiled on
// the cache's worker threads, and handle() waits for it (recordings ask only when they finish).
struct Pipeline {
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  uint32_t num_buffers = 0;
  uint32_t push_constant_bytes = 0;
  std::string name;

  VkPipeline handle() const; // waits for compilation; throws VulkanError if it failed

private:
  friend class PipelineCache;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  mutable std::mutex mutex_;
  mutable std::condition_variable done_cv_;
  bool done_ = false;
  VkResult result_ = VK_SUCCESS;
};

class PipelineCache {
public:
  // report_dir: see DeviceOptions::pipeline_report_dir (empty: no reports).
  PipelineCache(VkDevice device, const DeviceInfo& info, bool persist_on_disk, std::string report_dir = {});
  ~PipelineCache();
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  // Thread-safe; the returned reference stays valid for the cache's lifetime. Compilation runs
  // in the background on worker threads (one per core), so recording many kernels compiles them
  // side by side.
  const Pipeline& get(const KernelDesc& desc);
  bool has_shader(const std::string& name) const;
  void save() const; // writes the driver cache to disk (also on destruction)
  const std::string& file_path() const { return path_; }
  size_t pipelines_created() const;
  double creation_ms() const; // time spent compiling pipelines, summed over the worker threads
  // Pipelines the driver reported as found in the pipeline cache (creation feedback; 0 where the
  // device cannot tell).
  size_t cache_hits() const { return cache_hits_.load(); }
  void wait_all() const; // until every requested pipeline is compiled (or failed)
  // The `count` longest compilations: (variant with its specialization constants, ms).
  std::vector<std::pair<std::string, double>> slowest(size_t count) const;

private:
  VkDevice device_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string path_;
  bool subgroup_size_control_;
  bool creation_feedback_;
  std::string report_dir_;
  std::atomic<size_t> cache_hits_{0};
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  std::map<std::string, VkShaderModule> modules_;

  // Background compilation: a queue of pending pipelines and the threads that work it off.
  void enqueue(Pipeline* p, KernelDesc desc, VkShaderModule module);
  void worker();
  struct Pending {
    Pipeline* pipeline;
    KernelDesc desc;
    VkShaderModule module;
  };
  double compile(Pending& job); // creates the VkPipeline, marks it done; returns milliseconds
  std::vector<std::pair<std::string, double>> compile_ms_; // per pipeline, under mutex_
  std::deque<Pending> queue_;
  std::vector<std::thread> workers_;
  mutable std::condition_variable queue_cv_, idle_cv_;
  size_t in_flight_ = 0; // queued or compiling
  bool stopping_ = false;
};

} // namespace z123::vk
