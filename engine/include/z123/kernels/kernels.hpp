// Per-device kernel context: which implementation path each operation takes (portable scalar,
// NV cooperative matrix, KHR cooperative matrix, NV cooperative matrix 2), and pipeline lookup.
// Operations (linear.hpp, conv2d.hpp, norm.hpp, attention.hpp, elementwise.hpp) are free
// functions that record dispatches into a vk::Recording; nothing runs until it is submitted.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "z123/kernels/path.hpp"
#include "z123/tensor.hpp"
#include "z123/tuning.hpp"
#include "z123/vk/device.hpp"
#include "z123/vk/recording.hpp"

namespace z123::kernels {

// The cooperative-matrix paths the engine picks by itself, best first (the first one a device
// supports wins; Portable is the fallback). NvCoopMat2 is taken only on request.
std::vector<Path> preferred_paths();
// The shader compiler feature a path's variants need (cmake/probes/<feature>.comp), "" for none.
const char* glsl_feature(Path p);
// Variants of the paths above, and of the portable path, that this build does not embed (its
// glslc lacked the feature): each one costs speed on every device that would take it. Empty in a
// complete build; test_shader_variants checks that. Bench-only variants (docs/tuning.md) do not
// count: the engine never picks them by itself.
std::vector<std::string> missing_preferred_variants();

// A fragment shape the KHR cooperative-matrix GEMM kernels are built for (shaders/variants/
// gemm.cmake): fp16 A (m x k) and B (k x n) with fp32 accumulators, on subgroups of `subgroup`
// invocations. `suffix` is its part of the variant names ("" for the default 16x16x16 on 32).
struct CoopmatShape {
  uint32_t m, n, k, subgroup;
  const char* suffix;
};
// Every shape built, the preferred first: kernels take the first one the device lists
// (fp16 x fp16 -> fp32 at subgroup scope) and can run at that subgroup width.
const std::vector<CoopmatShape>& khr_gemm_shapes();
// "16x8x16" (and "@64" when the subgroup is not 32 wide).
std::string shape_name(const CoopmatShape& s);
// The shape of khr_gemm_shapes() with that shape_name; throws InvalidArgument naming
// Z123_COOPMAT_SHAPE and the built shapes for any other name.
const CoopmatShape& khr_gemm_shape_named(const std::string& name);
// Whether the device's driver lists cooperative matrices that its hardware lacks, run as ordinary
// arithmetic (docs/devices.md): Intel's integrated GPUs before Xe2 (Xe-LP, Meteor Lake), where ANV
// lists 8x8x16 on every Gen9+ part; Xe2 lists 8x16x16 and keeps it. Such devices take the
// portable kernels unless Z123_COOPMAT_SHAPE forces a shape.
bool coopmat_emulated(const vk::DeviceInfo& info);
// Whether the portable kernels multiply packed fp16 pairs by default on this device (the tiled
// GEMM's products and the tiled attention's P·V; Kernels::portable_packed_products, which
// Z123_PORTABLE_ARITH overrides): everywhere but on NVIDIA
// GPUs that list no cooperative matrix at all (Maxwell, Pascal and, as far as is known, the
// GTX 16xx), whose fp16 arithmetic runs at 1/64 of the fp32 rate on Pascal or is emulated.
bool packed_fp16_products_by_default(const vk::DeviceInfo& info);

// What the accumulator layout probe found (shaders/coopmat_layout_probe.comp; read by
// read_quad_layout in kernels/quad_layout.hpp).
struct QuadLayout {
  // Every invocation holds 8 elements, all in rows lane / 4 and lane / 4 + 8 (NVIDIA's tensor-core
  // layout, which the 16-subgroup attention assumes).
  bool rows_in_quads = false;
  // Where rows_in_quads and every invocation holds them in the same order: bit i set where element
  // i lies in row lane / 4 + 8 (the attention's specialization constant 0). 0 otherwise.
  uint32_t upmask = 0;
};

class Kernels {
public:
  // Picks the fastest path the device and this build support, as the device's tuning knobs
  // (vk::Device::tuning, read from the environment when it was created) allow.
  explicit Kernels(vk::Device& device);
  // The same with other knobs (tests and tools pin paths, tiles and variants with these):
  // Tuning::force_portable forces the portable path everywhere; Tuning::matmul_path and
  // attention_path force one path each where it is available (Unsupported where not).
  Kernels(vk::Device& device, const Tuning& tuning);

  vk::Device& device() const { return device_; }
  const Tuning& tuning() const { return tuning_; }
  Path matmul_path() const { return matmul_path_; }
  Path attention_path() const { return attention_path_; }
  void set_matmul_path(Path p) { matmul_path_ = p; } // tests pin paths
  void set_attention_path(Path p) { attention_path_ = p; }
  bool path_available(Path p) const;
  // The KHR GEMM kernels' fragment shape on this device (null where the KHR path is not
  // available). Tuning::coopmat_shape forces one of khr_gemm_shapes() the device lists.
  const CoopmatShape* khr_gemm_shape() const { return khr_shape_; }
  // Whether the KHR attention kernel can run here: on khr_gemm_shape(), which the device must
  // also list with fp16 accumulators.
  bool khr_attention_available() const;
  // Whether this device's KHR fp32 accumulator fragments (16 x 16 on 32-wide subgroups) hold each
  // invocation's elements in rows lane / 4 and lane / 4 + 8, NVIDIA's tensor-core layout. False
  // where the attention could not take its 16-subgroup variant, which assumes that layout (the KHR
  // attention on 16 x 16 x 16 fragments with P converted in registers: choose_attention_kernel);
  // elsewhere asked of the device at the first call, by a probe kernel
  // (shaders/coopmat_layout_probe.comp: one small dispatch), and remembered.
  bool khr_accumulator_rows_in_quads() const;
  // Where the rows are in quads and every invocation holds its elements in the same order: bit i
  // set where element i lies in row lane / 4 + 8 (the same probe). The KHR attention takes it as a
  // specialization constant, so the driver compiles the quad route's selections away. 0 where the
  // order differs between invocations or the rows are not in quads (the kernel learns it at run
  // time).
  uint32_t khr_accumulator_quad_upmask() const;
  // Whether the portable fp16 kernels multiply packed fp16 pairs: the tiled GEMM's products
  // (shaders/gemm_tiled.comp F16_ARITH) and the tiled attention's P·V (ATTN_PACKED_PV), where the
  // device's fp16 arithmetic is fast (packed_fp16_products_by_default); Tuning::portable_arith
  // (Z123_PORTABLE_ARITH=packed|fp32) forces one (tests, measurements).
  bool portable_packed_products() const;

  const vk::Pipeline& pipeline(const std::string& shader, uint32_t buffers, uint32_t push_bytes,
                               std::vector<uint32_t> spec_constants = {}, uint32_t subgroup_size = 0);

  // A device buffer of at least `bytes` for split-K partial sums, shared by every GEMM recorded
  // with this context in the current lane (SplitKLane; lane 0 outside any): recordings order
  // their uses by barriers, and programs run one at a time. Outgrown buffers stay alive: earlier
  // recordings still reference them.
  const vk::Buffer& splitk_scratch(uint64_t bytes);
  // Counters for kernels whose last workgroup finishes the work (group_norm_table's split path):
  // `n` 32-bit slots, zero before the first run and left zero by the kernel, taken by one
  // recorded call each, so calls that run side by side never share one. A full buffer makes a
  // new one (the old one stays alive for its recordings).
  struct CounterSlots {
    const vk::Buffer& buffer;
    uint32_t first; // the first slot's index in `buffer`
  };
  CounterSlots take_counters(uint32_t n);
  // Whether GEMMs recorded now keep K whole (a WholeK is alive).
  bool whole_k() const { return whole_k_ > 0; }
  // The split-K scratch lane GEMMs recorded now use.
  uint32_t splitk_lane() const { return splitk_lane_; }
  // Whether kernels recorded now run beside another queue's work (a QueuesShareTheGpu is alive).
  bool queues_share_the_gpu() const { return queues_share_the_gpu_ > 0; }

private:
  friend class WholeK;
  friend class SplitKLane;
  friend class QueuesShareTheGpu;
  int whole_k_ = 0;
  int queues_share_the_gpu_ = 0;
  uint32_t splitk_lane_ = 0;
  vk::Device& device_;
  Tuning tuning_;
  Path matmul_path_ = Path::Portable;
  Path attention_path_ = Path::Portable;
  const CoopmatShape* khr_shape_ = nullptr;
  // The layout probe's reading (khr_accumulator_rows_in_quads, khr_accumulator_quad_upmask), once asked.
  mutable std::optional<QuadLayout> quad_layout_;
  // The split-K scratch buffers of each lane (SplitKLane), each lane's newest (largest) last.
  std::vector<std::vector<std::shared_ptr<vk::Buffer>>> splitk_scratch_;
  // take_counters' buffers (the newest last) and the next free slot of the newest.
  std::vector<std::shared_ptr<vk::Buffer>> counters_;
  uint32_t counters_used_ = 0;
};

// While one lives, the GEMMs recorded with `kernels` keep K whole. Split-K GEMMs of one lane
// (SplitKLane) share one scratch of partial sums (Kernels::splitk_scratch), so a recording orders
// each one after the previous one's reduce with barriers; unsplit, independent GEMMs have nothing
// in common to order, and the GPU runs them side by side. For many small independent products: the
// time bias of every resnet (22 products of one row per step, each split into ~5 K ranges
// otherwise).
class WholeK {
public:
  explicit WholeK(Kernels& kernels) : kernels_(kernels) { ++kernels_.whole_k_; }
  ~WholeK() { --kernels_.whole_k_; }
  WholeK(const WholeK&) = delete;
  WholeK& operator=(const WholeK&) = delete;

private:
  Kernels& kernels_;
};

// While one lives, the kernels recorded with `kernels` run beside another queue's work: the step's
// main pass beside the next step's reference pass on the side queue, and that pass beside it. So a
// problem's last, partly empty wave of workgroups leaves its SMs to the other queue's workgroups
// rather than idle, and the choices that trade speed per workgroup for fuller waves are left out:
// the KHR attention keeps its 16-subgroup variant where alone its 8-subgroup twin would fill the
// waves better (khr_attention_eight_subgroups_win: the reference pass and level 1). H100: 36.07-36.15
// ms per step against 36.31-36.49, the same image bytes (bench/NOTES.md session 25, run 5).
class QueuesShareTheGpu {
public:
  explicit QueuesShareTheGpu(Kernels& kernels) : kernels_(kernels) { ++kernels_.queues_share_the_gpu_; }
  ~QueuesShareTheGpu() { --kernels_.queues_share_the_gpu_; }
  QueuesShareTheGpu(const QueuesShareTheGpu&) = delete;
  QueuesShareTheGpu& operator=(const QueuesShareTheGpu&) = delete;

private:
  Kernels& kernels_;
};

// While one lives, the split-K GEMMs recorded with `kernels` take their partial sums from scratch
// lane `lane`, a buffer of its own. Two chains of GEMMs that the GPU may run side by side (the
// step's reference and main passes, vk::Recording::order_by_levels) each in a lane of their own:
// in one lane, every split GEMM of the later chain would wait for the last one of the earlier
// chain (the scratch's write-after-read), and the chains would run one after the other from
// there. Scopes nest; the previous lane returns at the end.
class SplitKLane {
public:
  SplitKLane(Kernels& kernels, uint32_t lane) : kernels_(kernels), previous_(kernels.splitk_lane_) {
    kernels_.splitk_lane_ = lane;
  }
  ~SplitKLane() { kernels_.splitk_lane_ = previous_; }
  SplitKLane(const SplitKLane&) = delete;
  SplitKLane& operator=(const SplitKLane&) = delete;

private:
  Kernels& kernels_;
  uint32_t previous_;
};

// Subgroup size to require of the pipelines of cooperative-matrix kernels written for `width`
// invocations (default 32): `width` where the device can require it, else 0 (its subgroups are
// that wide anyway wherever such a kernel is chosen).
uint32_t coopmat_subgroup_size(const vk::Device& device, uint32_t width = 32);

inline uint32_t div_up(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

// Shape checks shared by the operations: throw InvalidArgument naming the op and tensor.
void expect_shape(const char* op, const char* what, const Tensor& t, const std::vector<int64_t>& shape);
void expect_same_dtype(const char* op, const Tensor& a, const Tensor& b);
// Shaders index with 32-bit integers: t must have fewer than 2^31 elements.
void expect_indexable(const char* op, const Tensor& t);
// An output must not share its buffer with an input (rows are read and written by different
// workgroups).
void expect_no_alias(const char* op, const Tensor& out, const Tensor& in);

} // namespace z123::kernels
