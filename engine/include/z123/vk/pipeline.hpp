// Compute pipelines built from embedded SPIR-V variants, with their descriptor layout (N storage
// buffers at bindings 0..N-1) and push constants. Pipelines are created once per (variant,
// specialization constants) and kept; the driver's VkPipelineCache is persisted on disk under
// $XDG_CACHE_HOME/zero123pp-vk/ keyed by device, driver and the hash of all embedded shaders, so
// a second process start skips shader compilation.
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

struct KernelDesc {
  std::string shader;                   // embedded variant name, e.g. "matmul_f16"
  uint32_t num_buffers = 0;             // storage buffers at bindings 0..num_buffers-1
  uint32_t push_constant_bytes = 0;     // one push-constant block at offset 0
  std::vector<uint32_t> spec_constants; // constant_id 0..n-1 (workgroup sizes, tiles)
  uint32_t required_subgroup_size = 0;  // 0 = driver's choice (needs subgroup size control)
};

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  uint32_t num_buffers = 0;
  uint32_t push_constant_bytes = 0;
  std::string name;
};

class PipelineCache {
public:
  PipelineCache(VkDevice device, const DeviceInfo& info, bool persist_on_disk);
  ~PipelineCache();
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  // Thread-safe; the returned reference stays valid for the cache's lifetime.
  const Pipeline& get(const KernelDesc& desc);
  bool has_shader(const std::string& name) const;
  void save() const; // writes the driver cache to disk (also on destruction)
  const std::string& file_path() const { return path_; }
  size_t pipelines_created() const;
  double creation_ms() const; // total time spent creating pipelines

private:
  VkDevice device_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string path_;
  bool subgroup_size_control_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  std::map<std::string, VkShaderModule> modules_;
  double creation_ms_ = 0;
};

} // namespace z123::vk
