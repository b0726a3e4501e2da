// Vulkan failures as typed errors: the VkResult's name plus what the engine was doing.
#pragma once

#include <vulkan/vulkan.h>

#include <string>

#include "z123/error.hpp"

namespace z123::vk {

const char* result_name(VkResult result);

class VulkanError : public Error {
public:
  VulkanError(VkResult result, const std::string& what_was_done);
  VkResult result() const noexcept { return result_; }

private:
  VkResult result_;
};

// Throws VulkanError (or an OutOfMemory Error for the two OOM results) when result is not VK_SUCCESS.
void check(VkResult result, const char* what_was_done);

} // namespace z123::vk
