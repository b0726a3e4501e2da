#include "z123/kernels/kernels.hpp"

#include <algorithm>
#include <initializer_list>

#include "kernels/gemm_dispatch.hpp"
#include "kernels/quad_layout.hpp"
#include "kernels/shader_names.hpp"
#include "vk/shader_table.hpp"
#include "z123/error.hpp"
#include "z123/kernels/attention.hpp"

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
    if (!d->bench_only && std::find(features.begin(), features.end(), d->feature) != features.end() &&
        !vk::find_shader(d->name))
      missing.push_back(std::string(d->name) + (*d->feature ? std::string(" (needs ") + d->feature + ")" : ""));
  return missing;
}

const std::vector<CoopmatShape>& khr_gemm_shapes() {
  // 16x16x16 first: the only shape measured (bench/NOTES.md), and the one the 4-subgroup tilings
  // and the attention are built for. The others are what NVIDIA GPUs list besides it (16x8x16,
  // 16x8x8), AMD RDNA3 where 32-wide subgroups cannot be required, and Intel's 8-row shapes on
  // 16-wide subgroups (Arc 8x8x16, Xe2 8x16x16); docs/devices.md says which device lists what.
  static const std::vector<CoopmatShape> shapes{{16, 16, 16, 32, ""},         {16, 8, 16, 32, "_m16n8k16"},
                                                {16, 8, 8, 32, "_m16n8k8"},   {16, 16, 16, 64, "_sg64"},
                                                {8, 16, 16, 16, "_m8n16k16"}, {8, 8, 16, 16, "_m8n8k16"}};
  return shapes;
}

std::string shape_name(const CoopmatShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
         (s.subgroup == 32 ? "" : "@" + std::to_string(s.subgroup));
}

const CoopmatShape& khr_gemm_shape_named(const std::string& name) {
  std::string names;
  for (const CoopmatShape& s : khr_gemm_shapes()) {
    if (shape_name(s) == name) return s;
    names += " " + shape_name(s);
  }
  throw invalid_argument("Z123_COOPMAT_SHAPE=" + name + ": expected one of" + names);
}

namespace {

constexpr uint32_t kF16 = 0, kF32 = 1; // VkComponentTypeKHR

// VK_KHR_cooperative_matrix is not tied to one vendor's hardware, so what the NV path may take
// for granted on NVIDIA GPUs is checked here: the features the SPIR-V declares, and a matrix type
// the device lists at a subgroup width it can run.
bool khr_base_usable(const vk::Device& device) {
  const auto& f = device.features();
  return Z123_GLSL_KHR_COOPMAT && f.khr_coopmat && f.shader_float16 && f.storage_buffer_16bit &&
         f.vulkan_memory_model &&                         // the SPIR-V declares the Vulkan memory model
         device.info().api_version >= VK_API_VERSION_1_3; // SPIR-V 1.6 (built for vulkan1.3)
}

bool shape_usable(const vk::Device& device, const CoopmatShape& s) {
  const auto& info = device.info();
  return info.has_coopmat_shape(s.m, s.n, s.k, kF16, kF16, kF32, kF32) && info.can_require_subgroup_size(s.subgroup);
}

} // namespace

bool coopmat_emulated(const vk::DeviceInfo& info) {
  constexpr uint32_t kIntel = 0x8086;
  return info.vendor_id == kIntel && info.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU &&
         !info.has_coopmat_shape(8, 16, 16, kF16, kF16, kF32, kF32);
}

bool packed_fp16_products_by_default(const vk::DeviceInfo& info) {
  constexpr uint32_t kNvidia = 0x10DE;
  return info.vendor_id != kNvidia || info.nv_coopmat || info.khr_coopmat;
}

namespace {

// The first usable shape, or the one Tuning::coopmat_shape names (throws where the device lacks it).
const CoopmatShape* choose_khr_shape(const vk::Device& device, const std::string& forced) {
  const CoopmatShape* want = forced.empty() ? nullptr : &khr_gemm_shape_named(forced);
  if (!khr_base_usable(device)) return nullptr;
  if (want) {
    if (!shape_usable(device, *want))
      throw unsupported("Z123_COOPMAT_SHAPE=" + forced + ": '" + device.info().name +
                        "' does not list that fp16 cooperative-matrix shape at that subgroup width");
    return want;
  }
  if (coopmat_emulated(device.info())) return nullptr;
  for (const CoopmatShape& s : khr_gemm_shapes())
    if (shape_usable(device, s)) return &s;
  return nullptr;
}

// Throws Unsupported naming the knob where it picks a bench-only variant this build leaves out
// (Z123_BENCH_VARIANTS off), so a measurement fails when it starts, not at its first dispatch.
void require_built(const char* knob, const std::string& value, const std::vector<std::string>& variants) {
  if (vk::kBenchVariantsBuilt) return;
  for (const std::string& v : variants)
    if (const vk::DeclaredShader* d = vk::find_declared(v); d && d->bench_only)
      throw unsupported(std::string(knob) + "=" + value + ": " + vk::missing_shader_reason(v));
}

} // namespace

uint32_t coopmat_subgroup_size(const vk::Device& device, uint32_t width) {
  const auto& info = device.info();
  bool can_request = info.subgroup_size_control && info.compute_required_subgroup_size &&
                     info.min_subgroup_size <= width && width <= info.max_subgroup_size;
  return can_request ? width : 0;
}

bool Kernels::khr_attention_available() const {
  // The attention runs on the GEMMs' fragment shape and subgroup width, and also converts
  // accumulators to fp16: the device must list that shape with fp16 accumulators too.
  return khr_shape_ &&
         device_.info().has_coopmat_shape(khr_shape_->m, khr_shape_->n, khr_shape_->k, kF16, kF16, kF16, kF16);
}

bool Kernels::portable_packed_products() const {
  switch (tuning_.portable_arith) {
  case Tuning::PortableArith::Packed: return true;
  case Tuning::PortableArith::Fp32: return false;
  case Tuning::PortableArith::Auto: break;
  }
  return packed_fp16_products_by_default(device_.info());
}

bool Kernels::path_available(Path p) const {
  const auto& f = device_.features();
  switch (p) {
  case Path::Portable: return true;
  case Path::NvCoopMat: return Z123_GLSL_NV_COOPMAT && f.nv_coopmat && f.shader_float16 && f.storage_buffer_16bit;
  case Path::KhrCoopMat: return khr_shape_ != nullptr;
  case Path::NvCoopMat2:
    // Its SPIR-V declares CooperativeMatrixKHR types and the Vulkan memory model as well.
    return Z123_GLSL_NV_COOPMAT2 && f.nv_coopmat2 && f.khr_coopmat && f.vulkan_memory_model && f.shader_float16 &&
           f.storage_buffer_16bit;
  }
  return false;
}

namespace {

// Runs shaders/coopmat_layout_probe.comp (a 16 x 16 fp32 accumulator of its own indices, one
// 32-wide subgroup) and reads what it wrote.
QuadLayout probe_quad_layout(vk::Device& dev) {
  vk::Buffer out = dev.allocator().create_buffer(kQuadProbeLanes * kQuadProbePerLane * 4, vk::MemoryUsage::Download,
                                                 "cooperative-matrix layout probe");
  vk::Recording rec(dev);
  rec.dispatch(dev.pipelines().get({"coopmat_layout_probe", 1, 0, {}, coopmat_subgroup_size(dev, kQuadProbeLanes)}),
               {vk::out(out)}, nullptr, 0, 1, 1, 1, "layout probe");
  dev.run(rec);
  std::vector<uint32_t> rows(kQuadProbeLanes * kQuadProbePerLane);
  dev.download(out, rows.data(), rows.size() * sizeof(uint32_t));
  return read_quad_layout(rows);
}

} // namespace

Kernels::Kernels(vk::Device& device) : Kernels(device, device.tuning()) {}

Kernels::Kernels(vk::Device& device, const Tuning& tuning)
    : device_(device), tuning_(tuning), khr_shape_(choose_khr_shape(device, tuning.coopmat_shape)) {
  // The first preferred path available, for GEMMs and attention alike (the same order measured
  // fastest for both).
  Path matmul = Path::Portable;
  if (!tuning.force_portable)
    for (Path p : preferred_paths())
      if (path_available(p)) {
        matmul = p;
        break;
      }
  // Forced paths (for measuring), each where it is available.
  auto forced = [&](Path want) {
    if (!path_available(want))
      throw unsupported(std::string("Z123_KERNEL_PATH: path '") + kernel_path_word(want) + "' is not available on '" +
                        device.info().name + "' with this build");
    return want;
  };
  matmul_path_ = tuning.matmul_path ? forced(*tuning.matmul_path) : matmul;
  attention_path_ = tuning.attention_path ? forced(*tuning.attention_path) : matmul;
  if (!tuning.gemm_tile.empty())
    require_built("Z123_GEMM_TILE", tuning.gemm_tile, detail::khr_tiling_variants(tuning.gemm_tile));
  if (tuning.attn_cm2_rows != 64)
    require_built("Z123_ATTN_CM2_ROWS", std::to_string(tuning.attn_cm2_rows),
                  {nvcm2_attention_variant(tuning.attn_cm2_rows)});
  if (!tuning.attn_variant.empty())
    require_built("Z123_ATTN_VARIANT", tuning.attn_variant, {khr_attention_knob_variant(tuning.attn_variant)});
}

bool Kernels::khr_accumulator_rows_in_quads() const {
  if (!quad_layout_) {
    // Asked only where the 16-subgroup attention could run: the KHR attention on 16 x 16 x 16
    // fragments and 32-wide subgroups, with P converted in registers (NV cooperative matrix 2).
    const bool square16 =
        khr_shape_ && khr_shape_->m == 16 && khr_shape_->n == 16 && khr_shape_->k == 16 && khr_shape_->subgroup == 32;
    quad_layout_ = square16 && khr_attention_available() && path_available(Path::NvCoopMat2) &&
                           vk::find_shader("coopmat_layout_probe")
                       ? probe_quad_layout(device_)
                       : QuadLayout{};
  }
  return quad_layout_->rows_in_quads;
}

uint32_t Kernels::khr_accumulator_quad_upmask() const {
  return khr_accumulator_rows_in_quads() ? quad_layout_->upmask : 0;
}

const vk::Pipeline& Kernels::pipeline(const std::string& shader, uint32_t buffers, uint32_t push_bytes,
                                      std::vector<uint32_t> spec_constants, uint32_t subgroup_size) {
  return device_.pipelines().get({shader, buffers, push_bytes, std::move(spec_constants), subgroup_size});
}

const vk::Buffer& Kernels::splitk_scratch(uint64_t bytes) {
  if (splitk_scratch_.size() <= splitk_lane_) splitk_scratch_.resize(splitk_lane_ + 1);
  auto& lane = splitk_scratch_[splitk_lane_];
  if (lane.empty() || lane.back()->size() < bytes) {
    uint64_t size = std::max<uint64_t>(bytes, lane.empty() ? 0 : 2 * lane.back()->size());
    lane.push_back(std::make_shared<vk::Buffer>(
        device_.allocator().create_buffer(size, vk::MemoryUsage::DeviceLocal, "split-K partial sums",
                                          /*own_memory=*/true))); // tens of MiB, not a new 256 MiB block
  }
  return *lane.back();
}

Kernels::CounterSlots Kernels::take_counters(uint32_t n) {
  constexpr uint32_t kSlots = 16384; // 64 KiB: a UNet step program takes a few dozen
  if (n == 0 || n > kSlots) throw internal_error("take_counters: " + std::to_string(n) + " slots");
  if (counters_.empty() || counters_used_ + n > kSlots) {
    auto buffer = std::make_shared<vk::Buffer>(
        device_.allocator().create_buffer(kSlots * 4u, vk::MemoryUsage::DeviceLocal, "counters", /*own_memory=*/true));
    const std::vector<uint32_t> zeros(kSlots, 0u);
    device_.upload(*buffer, zeros.data(), kSlots * 4u);
    counters_.push_back(std::move(buffer));
    counters_used_ = 0;
  }
  const uint32_t first = counters_used_;
  counters_used_ += n;
  return {*counters_.back(), first};
}

std::string variant(ShaderFamily family, DType t) { return composed_variant(family.c_str(), t); }
std::string composed_variant(const std::string& family, DType t) { return family + "_" + dtype_name(t); }

void expect_shape(const char* op, const char* what, const Tensor& t, const std::vector<int64_t>& shape) {
  if (t.shape != shape)
    throw invalid_argument(std::string(op) + ": " + what + " must have shape " + shape_string(shape) + ", found " +
                           t.describe());
}

void expect_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  if (a.dtype != b.dtype)
    throw invalid_argument(std::string(op) + ": dtype mismatch between " + a.describe() + " and " + b.describe());
}

void expect_indexable(const char* op, const Tensor& t) {
  if (t.numel() >= (int64_t(1) << 31))
    throw invalid_argument(std::string(op) + ": " + t.describe() + " has more than 2^31 elements");
}

void expect_no_alias(const char* op, const Tensor& out, const Tensor& in) {
  if (out.buffer == in.buffer)
    throw invalid_argument(std::string(op) + ": output " + out.describe() + " must not share its buffer with input " +
                           in.describe());
}

} // namespace z123::kernels
