#include "vk/pipeline_report.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <vector>

namespace z123::vk {

namespace {

std::string file_safe(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '.';
  return out;
}

std::string statistic_value(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: return s.value.b32 ? "true" : "false";
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: return std::to_string(s.value.i64);
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: return std::to_string(s.value.u64);
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: return std::to_string(s.value.f64);
  default: return "?";
  }
}

} // namespace

void write_pipeline_report(VkDevice device, VkPipeline pipeline, const std::string& dir, const std::string& name) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream out(std::filesystem::path(dir) / (file_safe(name) + ".txt"));
  out << "pipeline " << name << "\n";
  auto properties = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(device, "vkGetPipelineExecutablePropertiesKHR"));
  auto statistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(device, "vkGetPipelineExecutableStatisticsKHR"));
  auto representations = reinterpret_cast<PFN_vkGetPipelineExecutableInternalRepresentationsKHR>(
      vkGetDeviceProcAddr(device, "vkGetPipelineExecutableInternalRepresentationsKHR"));
  if (!properties || !statistics || !representations) {
    out << "(VK_KHR_pipeline_executable_properties entry points missing)\n";
    return;
  }
  VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pi.pipeline = pipeline;
  uint32_t count = 0;
  properties(device, &pi, &count, nullptr);
  std::vector<VkPipelineExecutablePropertiesKHR> execs(count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  properties(device, &pi, &count, execs.data());
  for (uint32_t e = 0; e < count; ++e) {
    out << "executable " << e << ": " << execs[e].name << " (" << execs[e].description << "), subgroup size "
        << execs[e].subgroupSize << "\n";
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = pipeline;
    ei.executableIndex = e;
    uint32_t n = 0;
    statistics(device, &ei, &n, nullptr);
    std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    statistics(device, &ei, &n, stats.data());
    for (const auto& s : stats)
      out << "  stat " << s.name << " = " << statistic_value(s) << "  (" << s.description << ")\n";
    // Two calls: the sizes, then the text (or binary) of each representation.
    n = 0;
    representations(device, &ei, &n, nullptr);
    std::vector<VkPipelineExecutableInternalRepresentationKHR> reps(
        n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR});
    representations(device, &ei, &n, reps.data());
    std::vector<std::vector<char>> data(n);
    for (uint32_t r = 0; r < n; ++r) {
      data[r].resize(reps[r].dataSize + 1, 0);
      reps[r].pData = data[r].data();
    }
    representations(device, &ei, &n, reps.data());
    for (uint32_t r = 0; r < n; ++r) {
      out << "  representation " << reps[r].name << " (" << reps[r].description << "), " << reps[r].dataSize << " bytes"
          << (reps[r].isText ? "" : ", binary (not shown)") << "\n";
      if (reps[r].isText) out << data[r].data() << "\n";
    }
  }
}

} // namespace z123::vk
