#include "z123/kernels/kernels.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "vk/shader_table.hpp"
#include "z123/error.hpp"

namespace z123::kernels {

const char* path_name(Path p) {
  switch (p) {
  case Path::Portable: return "portable";
  case Path::NvCoopMat: return "nv-coopmat";
  case Path::KhrCoopMat: return "khr-coopmat";
  case Path::NvCoopMat2: return "nv-coopmat2";
  }
  return "?";
}

std::vector<Path> preferred_paths() {
  // From end-to-end measurements on an H200 (bench/NOTES.md, session 2): KHR before NV v1; the
  // GEMM is the same source, yet the driver's code for the KHR form ran the UNet step faster
  // (77.5 ms with KHR GEMM + NV attention, 93 ms all NV, 74.4 ms all KHR). NV coopmat2 (first
  // version) was slower than both (GEMM 43-84 TFLOP/s, attention 26-35): only on request.
  return {Path::KhrCoopMat, Path::NvCoopMat};
}

const char* glsl_feature(Path p) {
  switch (p) {
  case Path::Portable: return "";
  case Path::NvCoopMat: return "NV_COOPMAT";
  case Path::KhrCoopMat: return "KHR_COOPMAT";
  case Path::NvCoopMat2: return "NV_COOPMAT2";
  }
  return "?";
}

std::vector<std::string> missing_preferred_variants() {
  std::vector<std::string> features{glsl_feature(Path::Portable)};
  for (Path p : preferred_paths()) features.push_back(glsl_feature(p));
  std::vector<std::string> missing;
  for (const vk::DeclaredShader* d = vk::kDeclaredShaders; d->name; ++d)
    if (std::find(features.begin(), features.end(), d->feature) != features.end() && !vk::find_shader(d->name))
      missing.push_back(std::string(d->name) + (*d->feature ? std::string(" (needs ") + d->feature + ")" : ""));
  return missing;
}

namespace {

constexpr uint32_t kCoopmatSubgroup = 32; // the coopmat kernels' subgroup width

// VK_KHR_cooperative_matrix is not tied to one vendor's hardware, so what the NV path may take
// for granted on NVIDIA GPUs is checked here: the device must list the matrix types the kernels
// declare (fp16 16x16 A/B with fp32 accumulators; attention also converts accumulators to fp16,
// a type a device lists as a 16x16x16 fp16-accumulating shape), and must run them with 32-wide
// subgroups (AMD wave64-only or Intel SIMD8/16 devices fall back to the portable path).
bool khr_coopmat_usable(const vk::Device& device) {
  const auto& f = device.features();
  const auto& info = device.info();
  constexpr uint32_t f16 = 0, f32 = 1; // VkComponentTypeKHR
  return Z123_GLSL_KHR_COOPMAT && f.khr_coopmat && f.shader_float16 && f.storage_buffer_16bit &&
         f.vulkan_memory_model &&                  // the SPIR-V declares the Vulkan memory model
         info.api_version >= VK_API_VERSION_1_3 && // SPIR-V 1.6 (built for vulkan1.3)
         info.has_coopmat_shape(16, 16, 16, f16, f16, f32, f32) &&
         info.has_coopmat_shape(16, 16, 16, f16, f16, f16, f16) && info.can_require_subgroup_size(kCoopmatSubgroup);
}

} // namespace

uint32_t coopmat_subgroup_size(const vk::Device& device) {
  const auto& info = device.info();
  bool can_request = info.subgroup_size_control && info.compute_required_subgroup_size &&
                     info.min_subgroup_size <= kCoopmatSubgroup && kCoopmatSubgroup <= info.max_subgroup_size;
  return can_request ? kCoopmatSubgroup : 0;
}

bool Kernels::path_available(Path p) const {
  const auto& f = device_.features();
  switch (p) {
  case Path::Portable: return true;
  case Path::NvCoopMat: return Z123_GLSL_NV_COOPMAT && f.nv_coopmat && f.shader_float16 && f.storage_buffer_16bit;
  case Path::KhrCoopMat: return khr_coopmat_usable(device_);
  case Path::NvCoopMat2:
    // Its SPIR-V declares CooperativeMatrixKHR types and the Vulkan memory model as well.
    return Z123_GLSL_NV_COOPMAT2 && f.nv_coopmat2 && f.khr_coopmat && f.vulkan_memory_model && f.shader_float16 &&
           f.storage_buffer_16bit;
  }
  return false;
}

Kernels::Kernels(vk::Device& device) : device_(device) {
  const char* forced = std::getenv("Z123_KERNEL_PATH");
  const char* portable = std::getenv("Z123_FORCE_PORTABLE");
  bool force_portable = portable && *portable && std::strcmp(portable, "0") != 0;
  // The first preferred path available, for GEMMs and attention alike (the same order measured
  // fastest for both).
  Path matmul = Path::Portable;
  if (!force_portable)
    for (Path p : preferred_paths())
      if (path_available(p)) {
        matmul = p;
        break;
      }
  Path attention = matmul;
  // Z123_KERNEL_PATH=<path> forces both; <matmul path>:<attention path> each (for measuring).
  if (forced && *forced) {
    auto parse = [&](const std::string& f) {
      Path want = f == "nv"    ? Path::NvCoopMat
                  : f == "khr" ? Path::KhrCoopMat
                  : f == "nv2" ? Path::NvCoopMat2
                               : Path::Portable;
      if (!path_available(want))
        throw unsupported(std::string("Z123_KERNEL_PATH=") + forced + ": path '" + f + "' is not available on '" +
                          device.info().name + "' with this build");
      return want;
    };
    const std::string f = forced;
    const size_t colon = f.find(':');
    matmul = parse(f.substr(0, colon));
    attention = colon == std::string::npos ? matmul : parse(f.substr(colon + 1));
  }
  matmul_path_ = matmul;
  attention_path_ = attention;
}

const vk::Pipeline& Kernels::pipeline(const std::string& shader, uint32_t buffers, uint32_t push_bytes,
                                      std::vector<uint32_t> spec_constants, uint32_t subgroup_size) {
  return device_.pipelines().get({shader, buffers, push_bytes, std::move(spec_constants), subgroup_size});
}

const vk::Buffer& Kernels::splitk_scratch(uint64_t bytes) {
  if (splitk_scratch_.empty() || splitk_scratch_.back()->size() < bytes) {
    uint64_t size = std::max<uint64_t>(bytes, splitk_scratch_.empty() ? 0 : 2 * splitk_scratch_.back()->size());
    splitk_scratch_.push_back(std::make_shared<vk::Buffer>(
        device_.allocator().create_buffer(size, vk::MemoryUsage::DeviceLocal, "split-K partial sums",
                                          /*own_memory=*/true))); // tens of MiB, not a new 256 MiB block
  }
  return *splitk_scratch_.back();
}

std::string variant(const std::string& base, DType t) { return base + "_" + dtype_name(t); }

void expect_shape(const char* op, const char* what, const Tensor& t, const std::vector<int64_t>& shape) {
  if (t.shape != shape)
    throw invalid_argument(std::string(op) + ": " + what + " must have shape " + shape_string(shape) + ", found " +
                           t.describe());
}

void expect_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  if (a.dtype != b.dtype)
    throw invalid_argument(std::string(op) + ": dtype mismatch between " + a.describe() + " and " + b.describe());
}

} // namespace z123::kernels
