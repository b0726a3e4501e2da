#include "z123/vk/pipeline.hpp"
#include "z123/fault.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "vk/pipeline_report.hpp"
#include "vk/shader_table.hpp"
#include "z123/parallel.hpp"
#include "z123/vk/instance.hpp"
#include "z123/vk/vulkan_error.hpp"

namespace z123::vk {
namespace fs = std::filesystem;
namespace {

std::string hex(uint64_t v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}

// $XDG_CACHE_HOME/zero123pp-vk, else $HOME/.cache/zero123pp-vk; empty when neither is set.
fs::path cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "zero123pp-vk";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "zero123pp-vk";
  return {};
}

std::string pipeline_key(const KernelDesc& d) {
  std::string k = d.shader + "|" + std::to_string(d.num_buffers) + "|" + std::to_string(d.push_constant_bytes) + "|" +
                  std::to_string(d.required_subgroup_size);
  for (uint32_t c : d.spec_constants) k += "|" + std::to_string(c);
  return k;
}

} // namespace

PipelineCache::PipelineCache(VkDevice device, const DeviceInfo& info, bool persist_on_disk, std::string report_dir)
    : device_(device), subgroup_size_control_(info.subgroup_size_control),
      creation_feedback_(info.api_version >= VK_API_VERSION_1_3), report_dir_(std::move(report_dir)) {
  if (!report_dir_.empty()) persist_on_disk = false; // reports need real compiles
  std::vector<char> initial;
  if (persist_on_disk) {
    fs::path dir = cache_dir();
    if (!dir.empty()) {
      uint64_t uuid = 0;
      for (uint32_t i = 0; i < VK_UUID_SIZE; ++i) uuid = uuid * 131 + info.pipeline_cache_uuid[i];
      path_ =
          (dir / ("pipelines-" + hex(info.vendor_id, 4) + "-" + hex(info.device_id, 4) + "-" +
                  hex(info.driver_version, 8) + "-" + hex(uuid, 16) + "-" + hex(embedded_shaders_hash(), 16) + ".bin"))
              .string();
      std::ifstream in(path_, std::ios::binary);
      if (in) initial.assign(std::istreambuf_iterator<char>(in), {});
    }
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = initial.size();
  ci.pInitialData = initial.empty() ? nullptr : initial.data();
  // A corrupt or foreign file is not fatal: the driver validates the header; retry empty.
  if (vkCreatePipelineCache(device_, &ci, nullptr, &cache_) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    check(vkCreatePipelineCache(device_, &ci, nullptr, &cache_), "vkCreatePipelineCache");
  }
}

PipelineCache::~PipelineCache() {
  {
    // Pipelines still queued are never compiled: nothing can use them once the cache goes.
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  for (auto& t : workers_) t.join();
  try {
    save();
  } catch (...) {
    // Losing the on-disk cache only costs start-up time next run.
  }
  for (auto& [k, p] : pipelines_) {
    if (p->pipeline_) vkDestroyPipeline(device_, p->pipeline_, nullptr);
    vkDestroyPipelineLayout(device_, p->layout, nullptr);
    vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
  }
  for (auto& [k, m] : modules_) vkDestroyShaderModule(device_, m, nullptr);
  vkDestroyPipelineCache(device_, cache_, nullptr);
}

void PipelineCache::save() const {
  if (path_.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  size_t size = 0;
  if (vkGetPipelineCacheData(device_, cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<char> data(size);
  if (vkGetPipelineCacheData(device_, cache_, &size, data.data()) != VK_SUCCESS) return;
  std::error_code ec;
  fs::create_directories(fs::path(path_).parent_path(), ec);
  // Write then rename, so a concurrent reader never sees half a file.
  std::string tmp = path_ + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(this));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out.write(data.data(), static_cast<std::streamsize>(size));
    if (!out) return;
  }
  fs::rename(tmp, path_, ec);
  if (ec) fs::remove(tmp, ec);
}

bool PipelineCache::has_shader(const std::string& name) const { return find_shader(name) != nullptr; }

size_t PipelineCache::pipelines_created() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pipelines_.size();
}

double PipelineCache::creation_ms() const {
  std::lock_guard<std::mutex> lock(mutex_);
  double total = 0;
  for (const auto& [key, ms] : compile_ms_) total += ms;
  return total;
}

const Pipeline& PipelineCache::get(const KernelDesc& desc) {
  std::string key = pipeline_key(desc);
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return *it->second;

  const EmbeddedShader* shader = find_shader(desc.shader);
  if (!shader) throw Error(ErrorKind::Unsupported, missing_shader_reason(desc.shader));
  VkShaderModule module = VK_NULL_HANDLE;
  if (auto it = modules_.find(desc.shader); it != modules_.end()) {
    module = it->second;
  } else {
    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize = shader->size;
    mi.pCode = reinterpret_cast<const uint32_t*>(shader->bytes);
    check(vkCreateShaderModule(device_, &mi, nullptr, &module), ("vkCreateShaderModule " + desc.shader).c_str());
    modules_[desc.shader] = module;
  }

  auto p = std::make_unique<Pipeline>();
  p->name = desc.shader;
  p->num_buffers = desc.num_buffers;
  p->push_constant_bytes = desc.push_constant_bytes;

  std::vector<VkDescriptorSetLayoutBinding> bindings(desc.num_buffers);
  for (uint32_t i = 0; i < desc.num_buffers; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dl.bindingCount = desc.num_buffers;
  dl.pBindings = bindings.data();
  check(vkCreateDescriptorSetLayout(device_, &dl, nullptr, &p->set_layout), "vkCreateDescriptorSetLayout");

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, desc.push_constant_bytes};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &p->set_layout;
  pl.pushConstantRangeCount = desc.push_constant_bytes ? 1 : 0;
  pl.pPushConstantRanges = desc.push_constant_bytes ? &range : nullptr;
  if (VkResult r = vkCreatePipelineLayout(device_, &pl, nullptr, &p->layout); r != VK_SUCCESS) {
    vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
    throw VulkanError(r, "vkCreatePipelineLayout " + desc.shader);
  }

  auto& ref = *p;
  pipelines_[key] = std::move(p);
  enqueue(&ref, desc, module);
  return ref;
}

VkPipeline Pipeline::handle() const {
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return done_; });
  if (result_ != VK_SUCCESS) throw VulkanError(result_, "vkCreateComputePipelines " + name);
  return pipeline_;
}

void PipelineCache::enqueue(Pipeline* p, KernelDesc desc, VkShaderModule module) {
  // Called with mutex_ held.
  if (workers_.size() < worker_threads() && workers_.size() <= in_flight_) {
    try {
      workers_.emplace_back([this] { worker(); });
    } catch (const std::system_error&) {
      // No thread to be had: with none at all, compile here and now.
      if (workers_.empty()) {
        Pending job{p, std::move(desc), module};
        compile_ms_.emplace_back(pipeline_key(job.desc), compile(job));
        return;
      }
    }
  }
  queue_.push_back({p, std::move(desc), module});
  in_flight_++;
  queue_cv_.notify_one();
}

std::vector<std::pair<std::string, double>> PipelineCache::slowest(size_t count) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto all = compile_ms_;
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (all.size() > count) all.resize(count);
  return all;
}

void PipelineCache::wait_all() const {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_cv_.wait(lock, [&] { return in_flight_ == 0; });
}

double PipelineCache::compile(Pending& job) {
  auto t0 = std::chrono::steady_clock::now();
  const KernelDesc& desc = job.desc;
  std::vector<VkSpecializationMapEntry> entries(desc.spec_constants.size());
  for (uint32_t i = 0; i < entries.size(); ++i) entries[i] = {i, i * 4u, 4};
  VkSpecializationInfo si{static_cast<uint32_t>(entries.size()), entries.data(), desc.spec_constants.size() * 4,
                          desc.spec_constants.data()};
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rs{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  rs.requiredSubgroupSize = desc.required_subgroup_size;
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = job.module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = entries.empty() ? nullptr : &si;
  if (desc.required_subgroup_size && subgroup_size_control_) {
    ci.stage.pNext = &rs;
    ci.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  ci.layout = job.pipeline->layout;
  // Creation feedback (core in 1.3) says whether the driver found the pipeline in the cache, so
  // the load report can show that a warm start compiles nothing.
  VkPipelineCreationFeedback feedback{};
  VkPipelineCreationFeedbackCreateInfo fi{VK_STRUCTURE_TYPE_PIPELINE_CREATION_FEEDBACK_CREATE_INFO};
  fi.pPipelineCreationFeedback = &feedback;
  if (creation_feedback_) ci.pNext = &fi;
  if (!report_dir_.empty())
    ci.flags |=
        VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR | VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR;
  VkPipeline handle = VK_NULL_HANDLE;
  VkResult r =
      fault_fires(FaultPoint::CreatePipeline)
          ? VK_ERROR_OUT_OF_DEVICE_MEMORY
          : vkCreateComputePipelines(device_, report_dir_.empty() ? cache_ : VK_NULL_HANDLE, 1, &ci, nullptr, &handle);
  if (r == VK_SUCCESS && !report_dir_.empty()) write_pipeline_report(device_, handle, report_dir_, pipeline_key(desc));
  if (r == VK_SUCCESS && (feedback.flags & VK_PIPELINE_CREATION_FEEDBACK_VALID_BIT) &&
      (feedback.flags & VK_PIPELINE_CREATION_FEEDBACK_APPLICATION_PIPELINE_CACHE_HIT_BIT))
    cache_hits_++;
  {
    std::lock_guard<std::mutex> plock(job.pipeline->mutex_);
    job.pipeline->pipeline_ = r == VK_SUCCESS ? handle : VK_NULL_HANDLE;
    job.pipeline->result_ = r;
    job.pipeline->done_ = true;
  }
  job.pipeline->done_cv_.notify_all();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void PipelineCache::worker() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Pending job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    double ms = compile(job);
    lock.lock();
    compile_ms_.emplace_back(pipeline_key(job.desc), ms);
    if (--in_flight_ == 0) idle_cv_.notify_all();
  }
}

} // namespace z123::vk
