#include "z123/kernels/kernels.hpp"

#include <cstdlib>
#include <cstring>

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

bool Kernels::path_available(Path p) const {
  const auto& f = device_.features();
  switch (p) {
  case Path::Portable: return true;
  case Path::NvCoopMat: return Z123_GLSL_NV_COOPMAT && f.nv_coopmat && f.shader_float16 && f.storage_buffer_16bit;
  case Path::KhrCoopMat: return Z123_GLSL_KHR_COOPMAT && f.khr_coopmat && f.shader_float16 && f.storage_buffer_16bit;
  case Path::NvCoopMat2: return Z123_GLSL_NV_COOPMAT2 && f.nv_coopmat2 && f.shader_float16 && f.storage_buffer_16bit;
  }
  return false;
}

Kernels::Kernels(vk::Device& device) : device_(device) {
  const char* forced = std::getenv("Z123_KERNEL_PATH");
  const char* portable = std::getenv("Z123_FORCE_PORTABLE");
  bool force_portable = portable && *portable && std::strcmp(portable, "0") != 0;
  Path best = Path::Portable;
  if (!force_portable) {
    for (Path p : {Path::NvCoopMat, Path::KhrCoopMat, Path::NvCoopMat2})
      if (path_available(p)) best = p; // later entries are faster where present
  }
  if (forced && *forced) {
    std::string f = forced;
    Path want = f == "nv"    ? Path::NvCoopMat
                : f == "khr" ? Path::KhrCoopMat
                : f == "nv2" ? Path::NvCoopMat2
                             : Path::Portable;
    if (!path_available(want))
      throw unsupported(std::string("Z123_KERNEL_PATH=") + forced + ": that path is not available on '" +
                        device.info().name + "' with this build");
    best = want;
  }
  matmul_path_ = best;
  attention_path_ = best;
}

const vk::Pipeline& Kernels::pipeline(const std::string& shader, uint32_t buffers, uint32_t push_bytes,
                                      std::vector<uint32_t> spec_constants, uint32_t subgroup_size) {
  return device_.pipelines().get({shader, buffers, push_bytes, std::move(spec_constants), subgroup_size});
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
