#include "z123/vk/vulkan_error.hpp"

namespace z123::vk {

const char* result_name(VkResult result) {
  switch (result) {
#define Z123_CASE(x)                                                                                                   \
  case x: return #x;
    Z123_CASE(VK_SUCCESS)
    Z123_CASE(VK_NOT_READY)
    Z123_CASE(VK_TIMEOUT)
    Z123_CASE(VK_EVENT_SET)
    Z123_CASE(VK_EVENT_RESET)
    Z123_CASE(VK_INCOMPLETE)
    Z123_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    Z123_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    Z123_CASE(VK_ERROR_INITIALIZATION_FAILED)
    Z123_CASE(VK_ERROR_DEVICE_LOST)
    Z123_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    Z123_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    Z123_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    Z123_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    Z123_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    Z123_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    Z123_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    Z123_CASE(VK_ERROR_FRAGMENTED_POOL)
    Z123_CASE(VK_ERROR_UNKNOWN)
    Z123_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    Z123_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    Z123_CASE(VK_ERROR_FRAGMENTATION)
    Z123_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    Z123_CASE(VK_PIPELINE_COMPILE_REQUIRED)
#undef Z123_CASE
  default: return "VkResult(unknown)";
  }
}

static ErrorKind kind_for(VkResult result) {
  if (result == VK_ERROR_OUT_OF_HOST_MEMORY || result == VK_ERROR_OUT_OF_DEVICE_MEMORY) return ErrorKind::OutOfMemory;
  return ErrorKind::Vulkan;
}

VulkanError::VulkanError(VkResult result, const std::string& what_was_done)
    : Error(kind_for(result),
            what_was_done + " failed: " + result_name(result) + " (" + std::to_string(static_cast<int>(result)) + ")"),
      result_(result) {}

void check(VkResult result, const char* what_was_done) {
  if (result != VK_SUCCESS) throw VulkanError(result, what_was_done);
}

} // namespace z123::vk
