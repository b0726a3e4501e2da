// Every tuning knob of the engine in one place: what kernels, tiles and paths to take where the
// automatic choice is not wanted (tests pin them; measurements compare them). docs/tuning.md
// lists each knob's values, default and the measurement behind the default.
//
// A vk::Device reads the environment once, when it is created (Tuning::from_environment), unless
// DeviceOptions::tuning gives the knobs; kernels::Kernels takes the device's knobs or its own.
// Nothing reads the environment while recording.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "z123/kernels/path.hpp"

namespace z123 {

struct Tuning {
  // Z123_FORCE_PORTABLE=1: no cooperative-matrix extension enabled, every kernel portable.
  bool force_portable = false;
  // Z123_KERNEL_PATH=<path>[:<attention path>], path portable|nv|khr|nv2: forces the GEMMs' path
  // and the attention's (the same where only one is given); unset: the fastest available.
  std::optional<kernels::Path> matmul_path, attention_path;
  // Z123_COOPMAT_SHAPE=MxNxK[@subgroup] (kernels::shape_name): the KHR fragment shape; empty: the
  // first one of kernels::khr_gemm_shapes() the device lists.
  std::string coopmat_shape;

  // Z123_PORTABLE_GEMM=tiled|tiled64|plain: the fp16 portable GEMM kernel (tiled: 128 x 128 tiles).
  enum class PortableGemm { Auto, Tiled128, Tiled64, Plain };
  PortableGemm portable_gemm = PortableGemm::Auto;
  // Z123_PORTABLE_ARITH=packed|fp32: the tiled portable GEMM's products and the tiled portable
  // attention's P·V (Kernels::portable_packed_products).
  enum class PortableArith { Auto, Packed, Fp32 };
  PortableArith portable_arith = PortableArith::Auto;
  // Z123_GEMM_TILE=default|<tiling>: one KHR GEMM tiling for every GEMM that may take one;
  // empty: chosen per shape.
  std::string gemm_tile;
  // Z123_GEMM_SPLITK=0: no split K on the cooperative-matrix GEMMs.
  bool gemm_split_k = true;
  // Z123_GEMM_LN=1: the transformer blocks' LayerNorms inside the projections that read them
  // (kernels::linear_normalizes), from row statistics that the GEMMs writing their input leave
  // (kernels::RowStats), instead of a pass of their own. Off by default: on an H100 it made the
  // step 30.18-30.29 ms against 29.90-30.07 (bench/NOTES.md session 36), and 30.45-30.50 against
  // 29.75-29.86 in session 34's form, which gathered the statistics in the consuming GEMMs' loops.
  bool gemm_layer_norm = false;
  // Z123_GEMM_CM2_TILE_N=128|256: the NV coopmat2 GEMM's tile width; 0: chosen per shape.
  uint32_t gemm_cm2_tile_n = 0;
  // Z123_GEMM_FIXED_GEOMETRY=all|taps|k|none: what the tiled GEMM kernels' pipelines fix as
  // specialization constants: K, the split-K range and every conv input field the loads read
  // (all); those but the input's height and width (taps, the default: as fast, fewer
  // pipelines); K and the split-K range only (k); nothing, all read from the push block (none).
  enum class GemmFixedGeometry { All, Taps, K, None };
  GemmFixedGeometry gemm_fixed_geometry = GemmFixedGeometry::Taps;

  // Z123_ATTN_VARIANT=khrcm|khrcm_cv: that KHR attention variant; empty: chosen per device.
  std::string attn_variant;
  // Z123_ATTN_CM2_ROWS=64|128: query rows per workgroup of the NV coopmat2 attention.
  uint32_t attn_cm2_rows = 64;
  // Z123_ATTN_COOPMAT_GENERIC=1: the coopmat attention's shared-memory row reductions.
  bool attn_coopmat_generic = false;
  // Z123_ATTN_TILED_INVOCATIONS=128|256: the register-tiled portable attention's workgroup size;
  // 0: 256 where the device has the shared memory for it, else 128.
  uint32_t attn_tiled_invocations = 0;
  // Z123_ATTN_TILED_TRIAL=<trial> (kernels::tiled_attention_trials): that bench-only trial of the
  // tiled portable attention; empty: the default kernel.
  std::string attn_tiled_trial;

  // Z123_GN_DIRECT_MAX: the largest group (values) the GroupNorm's one-dispatch path takes.
  int64_t gn_direct_max = 49152;
  // Z123_GN_TILES: the GroupNorm split path's tiles over the whole tensor (at most).
  int64_t gn_tiles = 64;
  // Z123_GN_TABLE_DIRECT_MAX, Z123_GN_TABLE_TILES: the same two choices for the statistics alone
  // (kernels::group_norm_table, read by the Winograd input transform), whose split path writes its
  // partials once rather than into every tile.
  int64_t gn_table_direct_max = 49152;
  int64_t gn_table_tiles = 64;
  // Z123_GN_THREADS: the GroupNorm split path's workgroup size; 0: chosen per device.
  uint32_t gn_threads = 0;
  // Z123_GN_DIRECT_THREADS: the GroupNorm direct path's workgroup size (rounded down to a power of
  // two, at most the device's largest); 0: 1024.
  uint32_t gn_direct_threads = 0;
  // Z123_GN_RESIDENT=0|small|1: where GroupNormPath::Auto takes the register-resident path (where
  // the group fits): never (0), only for the groups the one-dispatch direct path would take (at
  // most gn_direct_max values), or wherever it fits (1).
  enum class GnResident { Never, Small, Everywhere };
  GnResident gn_resident = GnResident::Never;

  // Z123_REFERENCE_QUEUE=auto|off|shared: where the step's reference pass runs. auto: one step
  // ahead on a queue of a second compute family where the device has one (beside the main pass
  // of the step before), else in the main pass's program (side by side by levels); off: always
  // the latter; shared: one step ahead, submitted to the main queue (the same schedule with no
  // second family: tests run it on lavapipe). Only the normal memory layout runs it ahead.
  enum class ReferenceQueue { Auto, Off, Shared };
  ReferenceQueue reference_queue = ReferenceQueue::Auto;
  // Z123_MAIN_PRESUBMIT=0: with the reference pass ahead, submit each main pass only once the one
  // before is done (as before session 21) instead of while it runs, waiting for it on the GPU, so
  // that the main queue does not idle while the host wakes up and submits (pipeline/step_program).
  bool main_presubmit = true;
  // Z123_REFERENCE_STEPS=1|2: with the reference pass ahead, the steps each reference pass serves.
  // 2: one pass of twice the batch for two steps, one step pair ahead (its GEMMs fill the GPU's
  // waves as the main pass's do), at one more reference cache's memory; 1: a pass per step.
  int reference_steps = 2;

  // Z123_CONV_WINOGRAD=auto|on|off: the UNet's 3x3 stride-1 convs outside its innermost level by
  // Winograd's F(2x2, 3x3) (kernels/winograd.hpp: 2.25 times fewer multiplies, two memory-bound
  // transforms, weights 16/9 the size). auto: where the GEMMs take the tiled portable kernel (GPUs
  // without usable matrix units), and level 0 on the KHR cooperative-matrix kernels (within the
  // 3.5 GiB peak), in the normal memory layout; on: wherever the GEMM route has grouped weights
  // (all but NV coopmat2's); off: never. bench/NOTES.md sessions 22 and 29.
  enum class ConvWinograd { Auto, On, Off };
  ConvWinograd conv_winograd = ConvWinograd::Auto;
  // Z123_CONV_WINOGRAD_MAX_COUT=N: only convs of at most N output channels take Winograd (320: the
  // UNet's level 0, 640: levels 0-1); unset (0), any. So that what the route gains per level and
  // what its weights cost in memory (16/9 the size) can be measured apart.
  int64_t conv_winograd_max_cout = 0;
  // Z123_WINOGRAD_INPUT_VEC=4|2, Z123_WINOGRAD_OUTPUT_VEC=4|2: channels each invocation of the
  // Winograd input (output) transform moves. Two halve its registers for twice the invocations
  // (on an H200 the input transform slower, the output one 3% faster, the step unchanged:
  // bench/NOTES.md session 32).
  int winograd_input_vec = 4;
  int winograd_output_vec = 4;

  // Z123_NO_PIPELINE_CACHE=1: no pipeline cache file is read or written.
  bool no_pipeline_cache = false;
  // Z123_PIPELINE_REPORT_DIR=DIR: default of vk::DeviceOptions::pipeline_report_dir.
  std::string pipeline_report_dir;

  // The knobs set in the environment, the defaults above for the others. Throws InvalidArgument
  // naming the variable and the values it takes when one is set to anything else.
  static Tuning from_environment();
};

// The word of Z123_KERNEL_PATH for a path: portable, nv, khr or nv2.
const char* kernel_path_word(kernels::Path p);

// Knobs of the whole process, read once by what they affect (before any device exists, or with
// none): Z123_VALIDATION=1 (vk::Instance), Z123_PROFILE=1 (vk::Profiler), Z123_THREADS=N
// (worker_threads; 0 when unset). Same errors as Tuning::from_environment.
bool validation_from_environment();
bool profiling_from_environment();
// Z123_PROFILE_LEVELS=1 (vk::Profiler::levels_requested).
bool level_profiling_from_environment();
unsigned threads_from_environment();

} // namespace z123
