// Pipeline reports (diagnostics, vk::DeviceOptions::pipeline_report_dir): what the driver made of
// a compute pipeline, through VK_KHR_pipeline_executable_properties.
#pragma once

#include <vulkan/vulkan.h>

#include <string>

namespace z123::vk {

// Writes <dir>/<name, made file-safe>.txt with every executable of `pipeline`: its statistics
// (registers, spills, shared memory: whatever the driver reports) and its internal
// representations (on some drivers the machine code). The pipeline must have been created with
// the CAPTURE_STATISTICS and CAPTURE_INTERNAL_REPRESENTATIONS flags on a device with the
// extension enabled. Failures are reported in the file, never thrown: it is a diagnostic.
void write_pipeline_report(VkDevice device, VkPipeline pipeline, const std::string& dir, const std::string& name);

} // namespace z123::vk
