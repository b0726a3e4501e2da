// Fused multi-head attention (flash style): out = softmax(Q Kᵀ · scale [+ causal mask]) V for every
// (batch, head), with an online (running max / running sum) softmax in fp32, so the
// [Nq, Nk] score matrix never exists in memory. One kernel family: shaders/attention.comp.
//
// Layout: token-major, heads interleaved in the channel dimension. Q is [B, Nq, H*D], K and V are
// [B, Nk, H*D]; head h uses columns h*D .. h*D+D-1 of each row. Any operand may instead be a
// column window of a wider row (a fused QKV projection [B, N, 3C] read with offsets 0, C, 2C), and
// the keys/values may come from two sources that are attended as one sequence [K; K2], [V; V2]
// (the UNet's reference attention, spec §10: main tokens first, then the reference tokens),
// which saves a concatenation copy.
#pragma once

#include <cstdint>

#include "z123/kernels/kernels.hpp"
#include "z123/tensor.hpp"
#include "z123/vk/recording.hpp"

namespace z123::kernels {

// One attention input: rows of tensor t ([B, N, W], any W), each row read at elements
// col_offset .. col_offset + H*D - 1. row_stride is the distance between consecutive token rows in
// elements; 0 means t's last dimension W (= H*D for a plain [B, N, H*D] tensor).
// Example: a fused [B, N, 3C] QKV tensor gives q = {&qkv, 0, 0}, k = {&qkv, 0, C}, v = {&qkv, 0, 2C}.
// first_batch: the attention's batch b reads batch row first_batch + b of t, which may have more
// rows than the attention's batch B, at least first_batch + B (the UNet's main pass reads its
// step's rows of the keys and values that one reference pass stored for two steps).
struct AttnOperand {
  const Tensor* t = nullptr; // nullptr: operand absent (only allowed for k2 / v2)
  int64_t row_stride = 0;    // elements between token rows; 0: t->dim(-1)
  int64_t col_offset = 0;    // first element of head 0 within a row
  int64_t first_batch = 0;   // t's batch row that the attention's batch 0 reads
};

struct AttentionParams {
  int64_t heads = 0;    // H
  int64_t head_dim = 0; // D; see attention_supports_head_dim()
  float scale = 0;      // multiplies Q·Kᵀ before the softmax; 0: 1/sqrt(head_dim)
  bool causal = false;  // mask key j > query i (j indexes the joined sequence [K; K2])
};

// out[b, i, h*D + d] = Σ_j softmax_j(scale · q_i·k_j [+ mask]) v_j[d] over the keys j of
// [K; K2] (batch b, head h).
//
// q: [B, Nq, *]; k, v: [B, Nk, *] (Nk ≥ 1); k2, v2: both absent or both [B, Nk2, *] (Nk2 ≥ 0);
// each of them may have more batch rows (AttnOperand::first_batch); out: [B, Nq, H*D], contiguous, must not alias any
// input. All tensors share one dtype (F32 or F16); scores, softmax statistics and the output accumulator are fp32, the
// output is rounded once to the storage type. Throws InvalidArgument on a shape / dtype / window mismatch and
// Unsupported for a head size without a kernel variant. Records into rec; nothing runs until the
// recording is submitted.
//
// Path: choose_attention_kernel() below decides, in this order: NV cooperative matrix 2 (head
// size 64, not causal, on that path); the cooperative-matrix kernel (NV, or KHR on the GEMMs'
// fragment shape; fp16, head size 64, 16-byte aligned operands; fp32 softmax); else the portable
// kernels: the register-tiled one (two small GEMMs per key tile in shared memory, sized by the
// device's shared memory) where it has the head size, the one-query-per-invocation flash kernel
// otherwise (fp32 math, any Vulkan 1.2 device). docs/devices.md lists what each device takes.
void attention(Kernels& kernels, vk::Recording& rec, AttnOperand q, AttnOperand k, AttnOperand v, const Tensor& out,
               const AttentionParams& p, AttnOperand k2 = {}, AttnOperand v2 = {});

namespace detail {
// attention() on the bench-only ablation `ablation` (1-kAttentionAblations) of the kernel it
// would run, which must be the tiled portable fp16 kernel with packed P·V (Unsupported otherwise;
// a build without Z123_BENCH_VARIANTS fails at the pipeline, naming the option). The output is
// wrong by design: common/attention_tiled.glsl (ATTN_ABLATE) lists what each one leaves out.
// For zero123pp-bench-attn-ceiling only.
constexpr int kAttentionAblations = 5;
// The bench-only variant of ablation `ablation` of the tiled kernel `variant` ("…_pv16_f16").
std::string ablated_attention_variant(const std::string& variant, int ablation);
void attention_ablated(Kernels& kernels, vk::Recording& rec, AttnOperand q, AttnOperand k, AttnOperand v,
                       const Tensor& out, const AttentionParams& p, AttnOperand k2, AttnOperand v2, int ablation);
} // namespace detail

// The kernel attention() runs for a problem of this storage type, head size and masking on this
// context: its variant name (shaders/variants/attention.cmake), the queries one workgroup takes,
// and the subgroup size its pipeline requires (0: any). `aligned`: every row stride and column
// offset is a multiple of 8 elements (the cooperative-matrix kernels' 16-byte loads).
struct AttentionKernel {
  std::string shader;
  int64_t queries_per_group;
  uint32_t subgroup;
  bool takes_vec4 = false; // spec constants 0 and 1: 4- and 8-element loads where strides and offsets allow
  // KHR cooperative-matrix kernels: spec constant 0, the accumulator's quad layout
  // (Kernels::khr_accumulator_quad_upmask; 0: learned at run time).
  uint32_t quad_upmask = 0;
};
// The register-tiled portable kernel's larger size (256 invocations) needs up to 48 KiB of shared
// memory; devices that have less (lavapipe: 32 KiB) take the 128-invocation one (up to 32 KiB).
constexpr uint32_t kTiledAttention256SharedBytes = 48 * 1024;
// queries, row_count: the problem's queries per (head, batch) row and the count of such rows (heads x
// batch), where known; 0 takes the variant for large problems (zero123pp-devices, tests).
AttentionKernel choose_attention_kernel(const Kernels& kernels, DType dtype, int64_t head_dim, bool causal,
                                        bool aligned, int64_t queries = 0, int64_t row_count = 0);
// Where choose_attention_kernel would take the 16-subgroup KHR attention (256 queries per
// workgroup), whether its 8-subgroup twin (128) finishes sooner for `nq` queries in each of `rows` (heads x
// batch) on `sms` SMs: one workgroup of either runs per SM, so the time is whole waves of
// workgroups, each as long as its queries take (8 subgroups: kEightSubgroupQueryCost per query).
bool khr_attention_eight_subgroups_win(int64_t nq, int64_t rows, uint32_t sms);
// The NV cooperative matrix 2 attention's variant with `rows` query rows per workgroup (64, or
// 128: Tuning::attn_cm2_rows).
std::string nvcm2_attention_variant(uint32_t rows);
// The tiled portable attention's bench-only trials that Tuning::attn_tiled_trial
// (Z123_ATTN_TILED_TRIAL) may name (shaders/variants/attention.cmake Z123_ATTN_TILED_TRIALS, which
// common/attention_tiled.glsl's "Trials" explain): the fp16 head-size-64 kernel with packed P·V
// becomes "attention_d64_t<N>_pv16_<trial>_f16"; other problems keep their kernel.
const std::vector<std::string>& tiled_attention_trials();
// The KHR attention variants Tuning::attn_variant (Z123_ATTN_VARIANT) may name: "khrcm",
// "khrcm_cv", and the bench-only "khrcm_cv_*" alternatives (shaders/variants/attention.cmake).
const std::vector<std::string>& khr_attention_knob_values();
// Bench-only ablations of the 16-subgroup KHR kernel ("khrcm_cv_nw16_<part>": no exponentials, no
// P·V, no S, no global loads after the first tile, K's fragments loaded row-major). Wrong results
// by design, so never knob values: only the benchmark sets Tuning::attn_variant to them.
const std::vector<std::string>& khr_attention_ablations();
// The variant a knob value names at the default fragment shape ("attention_d64_<value>_f16").
std::string khr_attention_knob_variant(const std::string& value);

// Head sizes the portable kernel has variants for (16, 32, 64, 80, 512; others throw Unsupported):
// 64 UNet / CLIP text, 80 CLIP vision, 512 VAE, 16 / 32 the tiny test configurations.
bool attention_supports_head_dim(int64_t head_dim);
// Head sizes the NV cooperative-matrix kernel has variants for (64).
bool attention_coopmat_supports(int64_t head_dim);

// y[r, :] = softmax(scale · x[r, :]) over the last dim, x F32 (raw scores, e.g. from
// matmul_f32), y of x's shape in F32 or F16; fp32 arithmetic; scale > 0. One workgroup per row.
// The softmax step of attention computed as two GEMMs (nets::vae_attention).
void softmax_rows(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y, float scale);

} // namespace z123::kernels
