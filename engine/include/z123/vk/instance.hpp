// The Vulkan instance: loader entry, optional validation layer with a debug messenger that counts
// errors (tests fail on any), and enumeration of the physical devices with what the engine needs
// to know about each.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace z123::vk {

struct InstanceOptions {
  // Enable VK_LAYER_KHRONOS_validation and route its messages through a debug messenger.
  // Also turned on by the environment variable Z123_VALIDATION=1.
  bool validation = false;
  // Echo validation warnings/errors to stderr as they arrive.
  bool print_validation = true;
};

// One cooperative-matrix shape the device supports (VK_KHR_cooperative_matrix properties).
struct CoopMatShape {
  uint32_t m = 0, n = 0, k = 0;
  uint32_t a_type = 0, b_type = 0, c_type = 0, result_type = 0; // VkComponentTypeKHR values (0 = fp16, 1 = fp32)
  bool subgroup_scope = false;
};

// What the engine needs to know about a physical device, gathered once at enumeration.
struct DeviceInfo {
  uint32_t index = 0;
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t vendor_id = 0, device_id = 0;
  uint32_t api_version = 0, driver_version = 0;
  std::string driver_name, driver_info;
  uint8_t pipeline_cache_uuid[VK_UUID_SIZE]{};

  // limits
  uint64_t max_storage_buffer_range = 0;
  uint64_t max_memory_allocation_size = 0;
  uint32_t max_shared_memory = 0;
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_count[3]{};
  uint32_t max_push_constants = 0;
  uint32_t subgroup_size = 0;
  // The subgroup operations compute shaders may use (VkSubgroupFeatureFlags; 0 where the device
  // has no subgroup operations in the compute stage).
  uint32_t compute_subgroup_operations = 0;
  // Subgroup sizes a compute pipeline may get (Vulkan 1.3 / VK_EXT_subgroup_size_control; both
  // subgroup_size where unknown), and whether it can require one of them.
  uint32_t min_subgroup_size = 0, max_subgroup_size = 0;
  bool compute_required_subgroup_size = false;
  // Streaming multiprocessors (VK_NV_shader_sm_builtins; 0 where the device does not say): the
  // GEMM dispatch sizes its tiles to whole waves of workgroups with it.
  uint32_t compute_units = 0;
  float timestamp_period_ns = 0;
  bool timestamps = false;
  uint64_t device_local_bytes = 0;

  // features that the engine uses when present
  bool shader_float16 = false;
  bool storage_buffer_16bit = false;
  bool maintenance4 = false;
  bool subgroup_size_control = false;
  bool nv_coopmat = false;               // VK_NV_cooperative_matrix
  bool khr_coopmat = false;              // VK_KHR_cooperative_matrix
  bool nv_coopmat2 = false;              // VK_NV_cooperative_matrix2
  bool pipeline_executable_info = false; // VK_KHR_pipeline_executable_properties (diagnostics)
  std::vector<CoopMatShape> coopmat_shapes;
  // Whether coopmat_shapes has a subgroup-scope entry M x N x K with these component types
  // (VkComponentTypeKHR values: 0 = fp16, 1 = fp32).
  bool has_coopmat_shape(uint32_t m, uint32_t n, uint32_t k, uint32_t a, uint32_t b, uint32_t c, uint32_t result) const;
  // Whether a compute pipeline can be made to run with subgroups of exactly `size` invocations:
  // the device's only size, or one it can require (the caller then requests it; see
  // vk::PipelineDesc::required_subgroup_size).
  bool can_require_subgroup_size(uint32_t size) const;

  const char* type_name() const;
  std::string api_version_string() const;
  bool has_compute_queue = false;
  uint32_t compute_queue_family = 0;
  // Another queue family with compute, for work beside the main queue's (async compute: NVIDIA's
  // and AMD's compute-only families); one without graphics preferred. Absent on lavapipe.
  bool has_side_compute_queue = false;
  uint32_t side_compute_queue_family = 0;
};

class Instance {
public:
  explicit Instance(const InstanceOptions& options = {});
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validation_enabled() const { return messenger_ != VK_NULL_HANDLE; }

  // Physical devices that have a compute queue, in the loader's order (index = position).
  const std::vector<DeviceInfo>& devices() const { return devices_; }

  // Validation bookkeeping (errors only; warnings are printed but not counted).
  uint32_t validation_error_count() const { return validation_errors_.load(); }
  std::vector<std::string> validation_messages() const;
  void record_validation_message(bool is_error, const char* message);

private:
  void enumerate_devices();
  void destroy() noexcept;

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool print_validation_ = true;
  std::vector<DeviceInfo> devices_;
  std::atomic<uint32_t> validation_errors_{0};
  mutable std::mutex messages_mutex_;
  std::vector<std::string> messages_;
};

// Picks a device. selector: "" or "auto" = best by type (discrete > integrated > virtual > CPU,
// ties broken by device-local memory); a decimal number = that index; anything else = the first
// device whose name contains it (case-insensitive). Throws NoDevice / InvalidArgument naming the
// devices that exist.
const DeviceInfo& choose_device(const std::vector<DeviceInfo>& devices, const std::string& selector);
inline const DeviceInfo& choose_device(const Instance& instance, const std::string& selector) {
  return choose_device(instance.devices(), selector);
}

// Human-readable multi-line description (used by --list-devices and the inspect tool).
std::string describe_device(const DeviceInfo& info);
// The subgroup operations the kernels use (basic, arithmetic: group norm and layer norm; shuffle:
// the attention) that `info` lacks in compute shaders, comma-separated; empty when it has all.
std::string missing_subgroup_operations(const DeviceInfo& info);
// Why the kernels cannot run on `info` ("lacks subgroup operations ... : <missing>"); empty when
// they can. Device refuses such a device with it, describe_device prints it, and the default
// choice passes over it.
std::string unusable_reason(const DeviceInfo& info);

} // namespace z123::vk
