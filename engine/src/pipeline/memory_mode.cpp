#include "pipeline/memory_mode.hpp"

namespace z123::pipeline {

bool use_low_memory(MemoryLayout layout, const vk::DeviceInfo& device) {
  if (layout == MemoryLayout::Low) return true;
  if (layout == MemoryLayout::Normal) return false;
  const bool shares_host_memory =
      device.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU || device.type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  return !shares_host_memory && device.device_local_bytes < kLowMemoryBelowHeapBytes;
}

} // namespace z123::pipeline
