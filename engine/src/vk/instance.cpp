#include "z123/vk/instance.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include "vk/coopmat_compat.hpp"
#include "z123/tuning.hpp"
#include "z123/vk/vulkan_error.hpp"

namespace z123::vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* instance = static_cast<Instance*>(user);
  bool is_error = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  // Debian 12's validation layer (1.3.239) predates VK_KHR_cooperative_matrix and
  // VK_NV_cooperative_matrix2, so it flags their feature structs in VkDeviceCreateInfo's pNext
  // chain as unknown. That is the layer's ignorance, not misuse: keep it as a warning.
  if (is_error && data && data->pMessageIdName &&
      std::strcmp(data->pMessageIdName, "VUID-VkDeviceCreateInfo-pNext-pNext") == 0)
    is_error = false;
  instance->record_validation_message(is_error, data && data->pMessage ? data->pMessage : "");
  return VK_FALSE;
}

bool has_layer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  return std::any_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties& l) { return std::strcmp(l.layerName, name) == 0; });
}

bool has_instance_extension(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data());
  return std::any_of(exts.begin(), exts.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
  default: return 0;
  }
}

} // namespace

const char* DeviceInfo::type_name() const {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
  default: return "other";
  }
}

std::string DeviceInfo::api_version_string() const {
  return std::to_string(VK_API_VERSION_MAJOR(api_version)) + "." + std::to_string(VK_API_VERSION_MINOR(api_version)) +
         "." + std::to_string(VK_API_VERSION_PATCH(api_version));
}

Instance::Instance(const InstanceOptions& options) : print_validation_(options.print_validation) {
  bool want_validation = options.validation || validation_from_environment();
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS) loader_version = VK_API_VERSION_1_0;
  if (loader_version < VK_API_VERSION_1_2)
    throw Error(ErrorKind::NoDevice,
                "the Vulkan loader supports only API " + std::to_string(VK_API_VERSION_MAJOR(loader_version)) + "." +
                    std::to_string(VK_API_VERSION_MINOR(loader_version)) + "; Vulkan 1.2 or newer is required");

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  if (want_validation) {
    if (!has_layer(kValidationLayer))
      throw unsupported(std::string("validation was requested but ") + kValidationLayer +
                        " is not installed (Debian: apt-get install vulkan-validationlayers)");
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkInstanceCreateFlags flags = 0;
  if (has_instance_extension("VK_KHR_portability_enumeration")) {
    extensions.push_back("VK_KHR_portability_enumeration");
    flags |= 0x00000001; // VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "zero123pp-vk";
  app.pEngineName = "zero123pp-vk";
  app.apiVersion = std::min<uint32_t>(loader_version, VK_API_VERSION_1_3);

  VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = debug_callback;
  messenger_info.pUserData = this;

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.flags = flags;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  if (want_validation) info.pNext = &messenger_info; // also catches instance creation issues

  VkResult r = vkCreateInstance(&info, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw Error(ErrorKind::NoDevice, "no Vulkan driver is installed (vkCreateInstance: "
                                     "VK_ERROR_INCOMPATIBLE_DRIVER); on Debian install "
                                     "mesa-vulkan-drivers for a CPU device");
  check(r, "vkCreateInstance");

  if (want_validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (!create || create(instance_, &messenger_info, nullptr, &messenger_) != VK_SUCCESS) {
      vkDestroyInstance(instance_, nullptr);
      throw unsupported("could not create the validation debug messenger");
    }
  }
  try {
    enumerate_devices();
  } catch (...) {
    destroy();
    throw;
  }
}

Instance::~Instance() { destroy(); }

void Instance::destroy() noexcept {
  if (messenger_) {
    auto destroy_messenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy_messenger) destroy_messenger(instance_, messenger_, nullptr);
    messenger_ = VK_NULL_HANDLE;
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
  instance_ = VK_NULL_HANDLE;
}

void Instance::record_validation_message(bool is_error, const char* message) {
  if (print_validation_) std::fprintf(stderr, "[vulkan %s] %s\n", is_error ? "ERROR" : "warning", message);
  std::lock_guard<std::mutex> lock(messages_mutex_);
  messages_.emplace_back(std::string(is_error ? "error: " : "warning: ") + message);
  if (is_error) validation_errors_.fetch_add(1);
}

std::vector<std::string> Instance::validation_messages() const {
  std::lock_guard<std::mutex> lock(messages_mutex_);
  return messages_;
}

void Instance::enumerate_devices() {
  uint32_t count = 0;
  check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> handles(count);
  check(vkEnumeratePhysicalDevices(instance_, &count, handles.data()), "vkEnumeratePhysicalDevices");

  for (VkPhysicalDevice pd : handles) {
    DeviceInfo d;
    d.handle = pd;

    VkPhysicalDeviceProperties base{};
    vkGetPhysicalDeviceProperties(pd, &base);
    if (base.apiVersion < VK_API_VERSION_1_2) continue; // the engine needs 1.2 features

    uint32_t n_ext = 0;
    vkEnumerateDeviceExtensionProperties(pd, nullptr, &n_ext, nullptr);
    std::vector<VkExtensionProperties> exts(n_ext);
    vkEnumerateDeviceExtensionProperties(pd, nullptr, &n_ext, exts.data());
    auto has_ext = [&](const char* name) {
      return std::any_of(exts.begin(), exts.end(),
                         [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
    };

    VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceVulkan11Properties p11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
    VkPhysicalDeviceSubgroupSizeControlProperties sscp{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
    const bool ssc_ext = has_ext(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME) || base.apiVersion >= VK_API_VERSION_1_3;
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    const bool sm_ext = has_ext(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
    p11.pNext = &driver;
    void** props_tail = &driver.pNext;
    if (ssc_ext) *std::exchange(props_tail, &sscp.pNext) = &sscp;
    if (sm_ext) *std::exchange(props_tail, &sm.pNext) = &sm;
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props.pNext = &p11;
    vkGetPhysicalDeviceProperties2(pd, &props);

    d.name = base.deviceName;
    d.type = base.deviceType;
    d.vendor_id = base.vendorID;
    d.device_id = base.deviceID;
    d.api_version = base.apiVersion;
    d.driver_version = base.driverVersion;
    d.driver_name = driver.driverName;
    d.driver_info = driver.driverInfo;
    std::memcpy(d.pipeline_cache_uuid, base.pipelineCacheUUID, VK_UUID_SIZE);
    d.max_storage_buffer_range = base.limits.maxStorageBufferRange;
    d.max_memory_allocation_size = p11.maxMemoryAllocationSize;
    d.max_shared_memory = base.limits.maxComputeSharedMemorySize;
    d.max_workgroup_invocations = base.limits.maxComputeWorkGroupInvocations;
    for (int i = 0; i < 3; ++i) d.max_workgroup_count[i] = base.limits.maxComputeWorkGroupCount[i];
    d.max_push_constants = base.limits.maxPushConstantsSize;
    d.subgroup_size = p11.subgroupSize;
    d.compute_subgroup_operations =
        (p11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ? p11.subgroupSupportedOperations : 0;
    d.min_subgroup_size = ssc_ext ? sscp.minSubgroupSize : p11.subgroupSize;
    d.max_subgroup_size = ssc_ext ? sscp.maxSubgroupSize : p11.subgroupSize;
    d.compute_required_subgroup_size = ssc_ext && (sscp.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
    d.compute_units = sm_ext ? sm.shaderSMCount : 0;
    d.timestamp_period_ns = base.limits.timestampPeriod;

    VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceMaintenance4Features m4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES};
    VkPhysicalDeviceSubgroupSizeControlFeatures ssc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
    VkPhysicalDeviceCooperativeMatrixFeaturesNV nvcm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR khrcm{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR, nullptr, 0, 0};
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV nvcm2{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV, nullptr, 0, 0, 0, 0, 0, 0, 0};
    f11.pNext = &f12;
    void** tail = &f12.pNext;
    bool m4_ext = has_ext(VK_KHR_MAINTENANCE_4_EXTENSION_NAME) || base.apiVersion >= VK_API_VERSION_1_3;
    if (m4_ext) {
      *tail = &m4;
      tail = &m4.pNext;
    }
    if (ssc_ext) {
      *tail = &ssc;
      tail = &ssc.pNext;
    }
    if (has_ext(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME)) {
      *tail = &nvcm;
      tail = &nvcm.pNext;
    }
    if (has_ext(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME)) {
      *tail = &khrcm;
      tail = &khrcm.pNext;
    }
    if (has_ext(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME)) {
      *tail = &nvcm2;
      tail = &nvcm2.pNext;
    }
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pep{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    if (has_ext(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
      *tail = &pep;
      tail = &pep.pNext;
    }
    VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    feats.pNext = &f11;
    vkGetPhysicalDeviceFeatures2(pd, &feats);
    d.storage_buffer_16bit = f11.storageBuffer16BitAccess;
    d.shader_float16 = f12.shaderFloat16;
    d.maintenance4 = m4_ext && m4.maintenance4;
    d.subgroup_size_control = ssc_ext && ssc.subgroupSizeControl && ssc.computeFullSubgroups;
    d.nv_coopmat = nvcm.cooperativeMatrix;
    d.khr_coopmat = khrcm.cooperativeMatrix;
    d.pipeline_executable_info = pep.pipelineExecutableInfo;
    d.nv_coopmat2 = nvcm2.cooperativeMatrixWorkgroupScope && nvcm2.cooperativeMatrixFlexibleDimensions &&
                    nvcm2.cooperativeMatrixTensorAddressing;

    if (d.khr_coopmat) {
      auto get = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
          vkGetInstanceProcAddr(instance_, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
      uint32_t n = 0;
      if (get && get(pd, &n, nullptr) == VK_SUCCESS && n > 0) {
        std::vector<VkCooperativeMatrixPropertiesKHR> shapes(n);
        for (auto& s : shapes) {
          s = {};
          s.sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
        }
        if (get(pd, &n, shapes.data()) == VK_SUCCESS) {
          for (uint32_t i = 0; i < n; ++i) {
            const auto& s = shapes[i];
            d.coopmat_shapes.push_back({s.MSize, s.NSize, s.KSize, static_cast<uint32_t>(s.AType),
                                        static_cast<uint32_t>(s.BType), static_cast<uint32_t>(s.CType),
                                        static_cast<uint32_t>(s.ResultType),
                                        static_cast<uint32_t>(s.scope) == 3u /* subgroup */});
          }
        }
      }
    }

    uint32_t n_fam = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n_fam, nullptr);
    std::vector<VkQueueFamilyProperties> fams(n_fam);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n_fam, fams.data());
    // Prefer a compute family that has timestamps; a dedicated compute family is not needed.
    for (uint32_t i = 0; i < n_fam; ++i) {
      if (!(fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
      if (!d.has_compute_queue || (fams[i].timestampValidBits && !d.timestamps)) {
        d.has_compute_queue = true;
        d.compute_queue_family = i;
        d.timestamps = fams[i].timestampValidBits != 0 && base.limits.timestampPeriod > 0;
      }
    }
    if (!d.has_compute_queue) continue;
    // The side family: any other one with compute, one without graphics (a dedicated compute
    // family, which the GPU runs beside the graphics-and-compute one) before others.
    for (uint32_t i = 0; i < n_fam; ++i) {
      if (i == d.compute_queue_family || !(fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
      const bool dedicated = !(fams[i].queueFlags & VK_QUEUE_GRAPHICS_BIT);
      if (!d.has_side_compute_queue ||
          (dedicated && (fams[d.side_compute_queue_family].queueFlags & VK_QUEUE_GRAPHICS_BIT))) {
        d.has_side_compute_queue = true;
        d.side_compute_queue_family = i;
      }
    }

    VkPhysicalDeviceMemoryProperties mem{};
    vkGetPhysicalDeviceMemoryProperties(pd, &mem);
    for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
      if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
        d.device_local_bytes = std::max<uint64_t>(d.device_local_bytes, mem.memoryHeaps[i].size);

    d.index = static_cast<uint32_t>(devices_.size());
    devices_.push_back(std::move(d));
  }
}

bool DeviceInfo::has_coopmat_shape(uint32_t m, uint32_t n, uint32_t k, uint32_t a, uint32_t b, uint32_t c,
                                   uint32_t result) const {
  return std::any_of(coopmat_shapes.begin(), coopmat_shapes.end(), [&](const CoopMatShape& s) {
    return s.subgroup_scope && s.m == m && s.n == n && s.k == k && s.a_type == a && s.b_type == b && s.c_type == c &&
           s.result_type == result;
  });
}

bool DeviceInfo::can_require_subgroup_size(uint32_t size) const {
  if (min_subgroup_size == size && max_subgroup_size == size) return true;
  return subgroup_size_control && compute_required_subgroup_size && min_subgroup_size <= size &&
         size <= max_subgroup_size;
}

const DeviceInfo& choose_device(const std::vector<DeviceInfo>& devs, const std::string& selector) {
  if (devs.empty())
    throw Error(ErrorKind::NoDevice, "no Vulkan 1.2 device with a compute queue was found (on Debian, "
                                     "mesa-vulkan-drivers provides the CPU device 'llvmpipe')");
  auto list = [&]() {
    std::string s;
    for (const auto& d : devs) s += "\n  " + std::to_string(d.index) + ": " + d.name + " (" + d.type_name() + ")";
    return s;
  };
  if (selector.empty() || selector == "auto") {
    // A device the kernels can run on (unusable_reason) before one they cannot; then
    // discrete, integrated, virtual, CPU; then the larger device-local memory.
    const DeviceInfo* best = &devs[0];
    bool best_usable = unusable_reason(*best).empty();
    for (const auto& d : devs) {
      const bool usable = unusable_reason(d).empty();
      const int a = type_rank(d.type), b = type_rank(best->type);
      const bool better_kind = a > b || (a == b && d.device_local_bytes > best->device_local_bytes);
      if ((usable && !best_usable) || (usable == best_usable && better_kind)) {
        best = &d;
        best_usable = usable;
      }
    }
    return *best;
  }
  if (std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); })) {
    // Length first: a long digit string would overflow std::stoul (std::out_of_range).
    if (selector.size() > 9 || std::stoul(selector) >= devs.size())
      throw Error(ErrorKind::NoDevice, "device index " + selector + " is out of range; devices:" + list());
    return devs[std::stoul(selector)];
  }
  std::string want = lower(selector);
  for (const auto& d : devs)
    if (lower(d.name).find(want) != std::string::npos) return d;
  // NoDevice, not InvalidArgument: for the user it is "no such device" (the plug-ins say so; the
  // command line's exit status is 1 either way).
  throw Error(ErrorKind::NoDevice, "no Vulkan device name contains '" + selector + "'; devices:" + list());
}

std::string missing_subgroup_operations(const DeviceInfo& info) {
  static const std::pair<VkSubgroupFeatureFlagBits, const char*> needed[] = {
      {VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"},
      {VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arithmetic"},
      {VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"}};
  std::string missing;
  for (const auto& [bit, name] : needed)
    if (!(info.compute_subgroup_operations & bit)) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return missing;
}

std::string unusable_reason(const DeviceInfo& info) {
  const std::string missing = missing_subgroup_operations(info);
  return missing.empty() ? "" : "lacks subgroup operations the kernels use in compute shaders: " + missing;
}

std::string describe_device(const DeviceInfo& d) {
  std::ostringstream o;
  auto mib = [](uint64_t b) { return std::to_string(b >> 20) + " MiB"; };
  o << d.index << ": " << d.name << " (" << d.type_name() << ")\n"
    << "   Vulkan " << d.api_version_string() << ", driver " << d.driver_name << " " << d.driver_info
    << "\n   device-local memory " << mib(d.device_local_bytes) << ", max storage buffer range "
    << mib(d.max_storage_buffer_range) << ", max allocation " << mib(d.max_memory_allocation_size) << "\n   subgroup "
    << d.subgroup_size << " (" << d.min_subgroup_size << "-" << d.max_subgroup_size << "), shared memory "
    << (d.max_shared_memory >> 10) << " KiB, timestamps " << (d.timestamps ? "yes" : "no");
  if (d.compute_units) o << ", " << d.compute_units << " SMs";
  if (const std::string why = unusable_reason(d); !why.empty()) o << "\n   unusable: " << why;
  o << "\n   fp16 arithmetic " << (d.shader_float16 ? "yes" : "no") << ", 16-bit storage "
    << (d.storage_buffer_16bit ? "yes" : "no") << ", maintenance4 " << (d.maintenance4 ? "yes" : "no")
    << "\n   cooperative matrix: NV " << (d.nv_coopmat ? "yes" : "no") << ", KHR " << (d.khr_coopmat ? "yes" : "no")
    << ", NV2 " << (d.nv_coopmat2 ? "yes" : "no");
  if (!d.coopmat_shapes.empty()) {
    o << "\n   KHR coopmat shapes (MxNxK A/B/C/R; 0=f16 1=f32):";
    for (const auto& s : d.coopmat_shapes)
      o << " " << s.m << "x" << s.n << "x" << s.k << "(" << s.a_type << "/" << s.b_type << "/" << s.c_type << "/"
        << s.result_type << (s.subgroup_scope ? "" : ",wg") << ")";
  }
  o << "\n";
  return o.str();
}

} // namespace z123::vk
