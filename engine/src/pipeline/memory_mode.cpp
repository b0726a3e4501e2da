#include "pipeline/memory_mode.hpp"

#include "z123/error.hpp"

namespace z123::pipeline {

bool use_low_memory(const std::string& mode, const vk::DeviceInfo& device) {
  if (mode == "low") return true;
  if (mode == "normal") return false;
  if (mode != "auto" && !mode.empty())
    throw invalid_argument("memory mode must be auto, normal or low, not '" + mode + "'");
  const bool shares_host_memory =
      device.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU || device.type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  return !shares_host_memory && device.device_local_bytes < kLowMemoryBelowHeapBytes;
}

} // namespace z123::pipeline
