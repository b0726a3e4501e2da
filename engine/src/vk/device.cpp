#include "z123/vk/device.hpp"
#include "z123/fault.hpp"

#include <cstring>
#include <utility>
#include <vector>

#include "vk/coopmat_compat.hpp"
#include "z123/vk/recording.hpp"
#include "z123/vk/vulkan_error.hpp"

namespace z123::vk {
namespace {

// upload()/download() keep their staging buffer up to this size (a decoded 640x960 frame is
// 3.5 MiB in fp16); larger one-off transfers free theirs afterwards.
constexpr VkDeviceSize kKeptStagingBytes = 16ull << 20;

// `kept` if it is large enough, else a new buffer of at least `bytes` (rounded up to a power of
// two from 1 MiB, so a few growing transfers do not each allocate) stored in `kept`.
Buffer& reusable_staging(Allocator& allocator, Buffer& kept, VkDeviceSize bytes, MemoryUsage usage) {
  if (kept && kept.size() >= bytes) return kept;
  VkDeviceSize size = 1ull << 20;
  while (size < bytes) size *= 2;
  kept.reset();
  kept = allocator.create_buffer(size, usage, usage == MemoryUsage::Upload ? "upload staging" : "download staging");
  return kept;
}

} // namespace

Device::Device(Instance& instance, const DeviceInfo& info, const DeviceOptions& options)
    : instance_(instance), info_(info), tuning_(options.tuning ? *options.tuning : Tuning::from_environment()) {
  bool coopmat = options.allow_coopmat && !tuning_.force_portable;
  bool core13 = info.api_version >= VK_API_VERSION_1_3;

  std::vector<const char*> exts;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceMaintenance4Features m4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures ssc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV nvcm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR khrcm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
                                                     nullptr, 0, 0};
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV nvcm2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV, nullptr, 0, 0, 0, 0, 0, 0, 0};

  // Query what the device has for the optional 1.2 features we want.
  VkPhysicalDeviceVulkan12Features have12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  have.pNext = &have12;
  vkGetPhysicalDeviceFeatures2(info.handle, &have);
  if (!have12.timelineSemaphore)
    throw Error(ErrorKind::Unsupported, "device '" + info.name + "' lacks timeline semaphores (Vulkan 1.2 core)");
  if (const std::string why = unusable_reason(info); !why.empty())
    throw Error(ErrorKind::Unsupported, "device '" + info.name + "' " + why);

  f11.storageBuffer16BitAccess = info.storage_buffer_16bit;
  f12.shaderFloat16 = info.shader_float16;
  f12.timelineSemaphore = VK_TRUE;
  f12.vulkanMemoryModel = have12.vulkanMemoryModel;
  f12.vulkanMemoryModelDeviceScope = have12.vulkanMemoryModelDeviceScope;
  f12.shaderSubgroupExtendedTypes = have12.shaderSubgroupExtendedTypes;
  f12.storageBuffer8BitAccess = have12.storageBuffer8BitAccess;
  f11.pNext = &f12;
  void** tail = &f12.pNext;
  if (info.maintenance4) {
    m4.maintenance4 = VK_TRUE;
    *tail = &m4;
    tail = &m4.pNext;
    if (!core13) exts.push_back(VK_KHR_MAINTENANCE_4_EXTENSION_NAME);
  }
  if (info.subgroup_size_control) {
    ssc.subgroupSizeControl = VK_TRUE;
    ssc.computeFullSubgroups = VK_TRUE;
    *tail = &ssc;
    tail = &ssc.pNext;
    if (!core13) exts.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  }
  if (coopmat && info.nv_coopmat) {
    nvcm.cooperativeMatrix = VK_TRUE;
    *tail = &nvcm;
    tail = &nvcm.pNext;
    exts.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  if (coopmat && info.khr_coopmat) {
    khrcm.cooperativeMatrix = VK_TRUE;
    *tail = &khrcm;
    tail = &khrcm.pNext;
    exts.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  const std::string report_dir =
      options.pipeline_report_dir.empty() ? tuning_.pipeline_report_dir : options.pipeline_report_dir;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pep{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  if (!report_dir.empty() && !info.pipeline_executable_info)
    throw Error(ErrorKind::Unsupported, "pipeline reports were asked for, but device '" + info.name +
                                            "' lacks VK_KHR_pipeline_executable_properties");
  if (!report_dir.empty()) {
    pep.pipelineExecutableInfo = VK_TRUE;
    *tail = &pep;
    tail = &pep.pNext;
    exts.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  }
  if (coopmat && info.nv_coopmat2) {
    nvcm2.cooperativeMatrixWorkgroupScope = VK_TRUE;
    nvcm2.cooperativeMatrixFlexibleDimensions = VK_TRUE;
    nvcm2.cooperativeMatrixReductions = VK_TRUE;
    nvcm2.cooperativeMatrixConversions = VK_TRUE;
    nvcm2.cooperativeMatrixPerElementOperations = VK_TRUE;
    nvcm2.cooperativeMatrixTensorAddressing = VK_TRUE;
    nvcm2.cooperativeMatrixBlockLoads = VK_TRUE;
    *tail = &nvcm2;
    tail = &nvcm2.pNext;
    exts.push_back(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
  }

  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  feats.pNext = &f11;
  feats.features.shaderInt64 = have.features.shaderInt64;
  feats.features.shaderInt16 = have.features.shaderInt16;

  // The side queue (Tuning::reference_queue): a queue of the second compute family where asked
  // for and present, or the main queue itself.
  using RQ = Tuning::ReferenceQueue;
  const bool side_family = tuning_.reference_queue == RQ::Auto && info.has_side_compute_queue;
  const bool side_shared = tuning_.reference_queue == RQ::Shared;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qi[2]{{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO},
                                {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO}};
  qi[0].queueFamilyIndex = info.compute_queue_family;
  qi[1].queueFamilyIndex = info.side_compute_queue_family;
  for (VkDeviceQueueCreateInfo& q : qi) {
    q.queueCount = 1;
    q.pQueuePriorities = &priority;
  }

  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.pNext = &feats;
  di.queueCreateInfoCount = side_family ? 2 : 1;
  di.pQueueCreateInfos = qi;
  di.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  di.ppEnabledExtensionNames = exts.data();
  check(vkCreateDevice(info.handle, &di, nullptr, &device_), ("vkCreateDevice on '" + info.name + "'").c_str());

  features_.shader_float16 = f12.shaderFloat16;
  features_.storage_buffer_16bit = f11.storageBuffer16BitAccess;
  features_.maintenance4 = m4.maintenance4;
  features_.subgroup_size_control = ssc.subgroupSizeControl;
  features_.vulkan_memory_model = f12.vulkanMemoryModel;
  features_.nv_coopmat = nvcm.cooperativeMatrix;
  features_.khr_coopmat = khrcm.cooperativeMatrix;
  features_.nv_coopmat2 = nvcm2.cooperativeMatrixWorkgroupScope;
  info_.subgroup_size_control = features_.subgroup_size_control;

  try {
    vkGetDeviceQueue(device_, info.compute_queue_family, 0, &queue_);
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = info.compute_queue_family;
    check(vkCreateCommandPool(device_, &pi, nullptr, &command_pool_), "vkCreateCommandPool");
    VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    ti.initialValue = 0;
    VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    si.pNext = &ti;
    check(vkCreateSemaphore(device_, &si, nullptr, &timeline_), "vkCreateSemaphore (timeline)");
    if (side_family || side_shared) {
      side_.queue_mutex = side_family ? &side_queue_mutex_ : &queue_mutex_;
      side_.pool_mutex = side_family ? &side_pool_mutex_ : &pool_mutex_;
      if (side_family) {
        vkGetDeviceQueue(device_, info.side_compute_queue_family, 0, &side_.queue);
        pi.queueFamilyIndex = info.side_compute_queue_family;
        check(vkCreateCommandPool(device_, &pi, nullptr, &side_.pool), "vkCreateCommandPool (side queue)");
        own_side_pool_ = true;
      } else {
        side_.queue = queue_;
        side_.pool = command_pool_;
      }
      check(vkCreateSemaphore(device_, &si, nullptr, &side_.timeline), "vkCreateSemaphore (side timeline)");
    }
    allocator_ =
        std::make_unique<Allocator>(device_, info.handle, info_, options.memory_block_bytes, options.map_device_local);
    // Both families use every buffer (weights, step inputs, the reference keys and values) with
    // no ownership transfers: concurrent sharing (on NVIDIA and AMD no slower for buffers).
    if (side_family) allocator_->share_between({info.compute_queue_family, info.side_compute_queue_family});
    pipelines_ = std::make_unique<PipelineCache>(
        device_, info_, options.persist_pipeline_cache && !tuning_.no_pipeline_cache, report_dir);
  } catch (...) {
    pipelines_.reset();
    allocator_.reset();
    destroy_side_queue();
    if (timeline_) vkDestroySemaphore(device_, timeline_, nullptr);
    if (command_pool_) vkDestroyCommandPool(device_, command_pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
    throw;
  }
}

Device::~Device() {
  vkDeviceWaitIdle(device_);
  if (!profiler_.empty()) profiler_.print(stderr, info_.name);
  pipelines_.reset();
  upload_staging_.reset();
  download_staging_.reset();
  allocator_.reset();
  destroy_side_queue();
  vkDestroySemaphore(device_, timeline_, nullptr);
  vkDestroyCommandPool(device_, command_pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

void Device::destroy_side_queue() {
  if (side_.timeline) vkDestroySemaphore(device_, side_.timeline, nullptr);
  if (own_side_pool_) vkDestroyCommandPool(device_, side_.pool, nullptr);
  side_ = {};
  own_side_pool_ = false;
}

VkSemaphore Device::timeline_of(QueueRole role) const {
  if (role == QueueRole::Main) return timeline_;
  if (!has_side_queue())
    throw internal_error("the side queue was used on a device without one (Tuning::reference_queue)");
  return side_.timeline;
}

void Device::throw_if_lost() const {
  if (lost_.load())
    throw VulkanError(VK_ERROR_DEVICE_LOST,
                      "using device '" + info_.name + "', which was lost earlier (the engine must be opened again)");
}

uint64_t Device::submit(Recording& recording, std::initializer_list<TimelineWait> waits) {
  throw_if_lost();
  const bool side = recording.role() == QueueRole::Side;
  VkSemaphore timeline = timeline_of(recording.role());
  if (!recording.finished()) recording.finish();
  if (recording.last_submit) wait(recording.role(), recording.last_submit);
  std::vector<VkSemaphore> wait_semaphores;
  std::vector<uint64_t> wait_values;
  std::vector<VkPipelineStageFlags> wait_stages;
  for (const TimelineWait& w : waits) {
    wait_semaphores.push_back(timeline_of(w.role));
    wait_values.push_back(w.value);
    wait_stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  }
  std::lock_guard<std::mutex> lock(side ? *side_.queue_mutex : queue_mutex_);
  uint64_t& counter = side ? side_.timeline_value : timeline_value_;
  uint64_t value = ++counter;
  VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  ts.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  ts.pWaitSemaphoreValues = wait_values.data();
  ts.signalSemaphoreValueCount = 1;
  ts.pSignalSemaphoreValues = &value;
  VkCommandBuffer cmd = recording.command_buffer();
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = &ts;
  si.waitSemaphoreCount = static_cast<uint32_t>(wait_semaphores.size());
  si.pWaitSemaphores = wait_semaphores.data();
  si.pWaitDstStageMask = wait_stages.data();
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &timeline;
  VkResult r = fault_fires(FaultPoint::Submit) ? VK_ERROR_DEVICE_LOST
                                               : vkQueueSubmit(side ? side_.queue : queue_, 1, &si, VK_NULL_HANDLE);
  if (r != VK_SUCCESS) {
    --counter;
    if (r == VK_ERROR_DEVICE_LOST) lost_.store(true);
    throw VulkanError(r, "vkQueueSubmit");
  }
  recording.last_submit = value;
  if (recording.profiled()) { // main-queue recordings only (Recording: a side one is never profiled)
    std::lock_guard<std::mutex> plock(profile_mutex_);
    profile_pending_.emplace_back(value, &recording);
  }
  return value;
}

void Device::run(Recording& recording) {
  const uint64_t value = submit(recording);
  wait(recording.role(), value);
}

void Device::wait(QueueRole role, uint64_t value, uint64_t timeout_ms) {
  throw_if_lost();
  VkSemaphore timeline = timeline_of(role);
  VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wi.semaphoreCount = 1;
  wi.pSemaphores = &timeline;
  wi.pValues = &value;
  VkResult r = VK_ERROR_DEVICE_LOST;
  if (fault_fires(FaultPoint::Wait)) {
    // A simulated loss: let the submitted work finish first, since on a really lost device
    // nothing executes any more and callers may then free what it used.
    wait_idle();
  } else {
    r = vkWaitSemaphores(device_, &wi, timeout_ms * 1000000ull);
  }
  if (r == VK_TIMEOUT)
    throw Error(ErrorKind::Vulkan, "GPU work did not finish within " + std::to_string(timeout_ms) + " ms");
  if (r == VK_ERROR_DEVICE_LOST) lost_.store(true);
  check(r, "vkWaitSemaphores");
  if (role == QueueRole::Side) return; // the profile's submissions are the main queue's
  std::lock_guard<std::mutex> lock(profile_mutex_);
  for (auto it = profile_pending_.begin(); it != profile_pending_.end();) {
    if (it->first > value) {
      ++it;
      continue;
    }
    it->second->fold_profile(profiler_);
    it = profile_pending_.erase(it);
  }
}

void Device::forget(const Recording* recording) {
  std::lock_guard<std::mutex> lock(profile_mutex_);
  std::erase_if(profile_pending_, [&](const auto& p) { return p.second == recording; });
}

bool Device::is_done(uint64_t value) const {
  uint64_t current = 0;
  check(vkGetSemaphoreCounterValue(device_, timeline_, &current), "vkGetSemaphoreCounterValue");
  return current >= value;
}

void Device::wait_idle() {
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    check(vkQueueWaitIdle(queue_), "vkQueueWaitIdle");
  }
  if (has_side_queue() && !side_queue_is_main()) {
    std::lock_guard<std::mutex> lock(*side_.queue_mutex);
    check(vkQueueWaitIdle(side_.queue), "vkQueueWaitIdle (side queue)");
  }
}

void Device::upload(const Buffer& dst, const void* data, VkDeviceSize bytes, VkDeviceSize dst_offset) {
  if (dst_offset + bytes > dst.size())
    throw invalid_argument("upload of " + std::to_string(bytes) + " bytes at offset " + std::to_string(dst_offset) +
                           " overruns buffer '" + dst.name() + "' of " + std::to_string(dst.size()) + " bytes");
  if (bytes == 0) return;
  if (dst.mapped()) {
    std::memcpy(static_cast<char*>(dst.mapped()) + dst_offset, data, bytes);
    return;
  }
  std::lock_guard<std::mutex> lock(staging_mutex_);
  Buffer& staging = reusable_staging(*allocator_, upload_staging_, bytes, MemoryUsage::Upload);
  std::memcpy(staging.mapped(), data, bytes);
  Recording rec(*this);
  rec.copy(staging, dst, bytes, 0, dst_offset);
  run(rec);
  if (bytes > kKeptStagingBytes) staging.reset();
}

void Device::download(const Buffer& src, void* data, VkDeviceSize bytes, VkDeviceSize src_offset) {
  if (src_offset + bytes > src.size())
    throw invalid_argument("download of " + std::to_string(bytes) + " bytes at offset " + std::to_string(src_offset) +
                           " overruns buffer '" + src.name() + "' of " + std::to_string(src.size()) + " bytes");
  if (bytes == 0) return;
  if (src.mapped()) {
    std::memcpy(data, static_cast<const char*>(src.mapped()) + src_offset, bytes);
    return;
  }
  std::lock_guard<std::mutex> lock(staging_mutex_);
  Buffer& staging = reusable_staging(*allocator_, download_staging_, bytes, MemoryUsage::Download);
  Recording rec(*this);
  rec.copy(src, staging, bytes, src_offset, 0);
  run(rec);
  std::memcpy(data, staging.mapped(), bytes);
  if (bytes > kKeptStagingBytes) staging.reset();
}

void InFlight::wait() {
  if (main) device.wait(std::exchange(main, 0));
  if (side) device.wait(QueueRole::Side, std::exchange(side, 0));
}

InFlight::~InFlight() {
  try {
    wait();
  } catch (const Error&) {
  }
}

} // namespace z123::vk
