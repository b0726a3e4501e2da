// kernels::attention(): argument checks, path choice and the dispatch of shaders/attention.comp.
#include "z123/kernels/attention.hpp"

#include "kernels/composed_names.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernels/shader_names.hpp"
#include "z123/error.hpp"

namespace z123::kernels {

namespace {

constexpr const char* kOp = "attention";
constexpr double kLog2e = 1.4426950408889634;

// Mirrors the push-constant block of shaders/attention.comp.
struct Push {
  uint32_t nq, nk, nk2, heads;
  uint32_t q_stride, q_off, k_stride, k_off;
  uint32_t v_stride, v_off, k2_stride, k2_off;
  uint32_t v2_stride, v2_off;
  uint32_t causal;
  float scale_log2;
};
static_assert(sizeof(Push) == 64);

// Queries per workgroup of each variant (must match shaders/variants/attention.cmake and the
// coopmat tiling in shaders/common/attention_coopmat.glsl).
int64_t portable_queries_per_group(int64_t head_dim) { return head_dim == 512 ? 16 : 64; }
// The register-tiled portable kernel (common/attention_tiled.glsl): invocations / (D / 4) row
// groups of 4 rows (ATTN_RO).
int64_t tiled_queries_per_group(int64_t head_dim, int64_t invocations) { return invocations / (head_dim / 4) * 4; }
bool tiled_supports(int64_t head_dim) { return head_dim == 16 || head_dim == 32 || head_dim == 64; }
// 8 subgroups (ATTN_NW) of one fragment's rows each (ATTN_R = 1).
int64_t coopmat_queries_per_group(uint32_t fragment_rows, int64_t subgroups = 8) {
  return subgroups * int64_t(fragment_rows);
}

struct Operand {
  const Tensor* t;
  int64_t n, stride, offset;
};

// "attention: q" — the start of every error message about one operand.
std::string prefix(const char* what) { return std::string(kOp) + ": " + what; }

// Validates one operand against batch and window width, resolving row_stride 0.
Operand resolve(const char* what, const AttnOperand& a, int64_t batch, int64_t width, DType dtype) {
  if (!a.t) throw invalid_argument(prefix(what) + " is missing");
  const Tensor& t = *a.t;
  if (a.first_batch < 0)
    throw invalid_argument(prefix(what) + ": first batch row " + std::to_string(a.first_batch) + " is negative");
  if (t.shape.size() != 3 || t.dim(0) < a.first_batch + batch)
    throw invalid_argument(
        prefix(what) + " must be [" + std::to_string(batch) + ", N, *]" +
        (a.first_batch ? " from batch row " + std::to_string(a.first_batch) + " on" : std::string()) + ", found " +
        t.describe());
  if (t.dtype != dtype)
    throw invalid_argument(prefix(what) + " has dtype " + dtype_name(t.dtype) + ", expected " + dtype_name(dtype) +
                           " like q (" + t.describe() + ")");
  Operand o{&t, t.dim(1), a.row_stride ? a.row_stride : t.dim(2), a.col_offset};
  if (o.stride < 0 || o.offset < 0 || o.offset + width > o.stride)
    throw invalid_argument(prefix(what) + ": window of " + std::to_string(width) + " elements at offset " +
                           std::to_string(o.offset) + " does not fit rows of stride " + std::to_string(o.stride) +
                           " (" + t.describe() + ")");
  o.offset += a.first_batch * o.n * o.stride; // the kernels add the offset to every row's index
  const int64_t last = ((a.first_batch + batch) * o.n - 1) * o.stride + a.col_offset + width; // one past the last read
  if (last > t.numel())
    throw invalid_argument(prefix(what) + ": rows of stride " + std::to_string(o.stride) + " read " +
                           std::to_string(last) + " elements, " + t.describe() + " holds " + std::to_string(t.numel()));
  if (last > std::numeric_limits<uint32_t>::max())
    throw unsupported(prefix(what) + ": " + t.describe() + " needs element indices beyond 32 bits");
  return o;
}

bool coopmat_aligned(const Operand& o) { return o.stride % 8 == 0 && o.offset % 8 == 0; }

} // namespace

bool attention_supports_head_dim(int64_t head_dim) {
  return head_dim == 16 || head_dim == 32 || head_dim == 64 || head_dim == 80 || head_dim == 512;
}
// The UNet's heads (64) and CLIP vision's (80): shaders/variants/attention.cmake builds the
// cooperative-matrix variants for these two.
bool attention_coopmat_supports(int64_t head_dim) { return head_dim == 64 || head_dim == 80; }

namespace {

// attention() and detail::attention_ablated(): ablate 0 runs the chosen kernel, 1-5 its bench-only
// ablation (shaders/variants/attention.cmake), which only the tiled portable fp16 kernel has.
void record_attention(Kernels& kernels, vk::Recording& rec, AttnOperand q_in, AttnOperand k_in, AttnOperand v_in,
                      const Tensor& out, const AttentionParams& p, AttnOperand k2_in, AttnOperand v2_in, int ablate) {
  if (p.heads <= 0 || p.head_dim <= 0)
    throw invalid_argument(std::string(kOp) + ": heads (" + std::to_string(p.heads) + ") and head_dim (" +
                           std::to_string(p.head_dim) + ") must be positive");
  if (!attention_supports_head_dim(p.head_dim))
    throw unsupported(std::string(kOp) + ": no kernel variant for head size " + std::to_string(p.head_dim) +
                      " (supported: 16, 32, 64, 80, 512)");
  if (!q_in.t) throw invalid_argument(std::string(kOp) + ": q is missing");
  if ((k2_in.t == nullptr) != (v2_in.t == nullptr))
    throw invalid_argument(std::string(kOp) + ": the second key/value source needs both k2 and v2");
  if (!(p.scale >= 0) || !std::isfinite(p.scale))
    throw invalid_argument(std::string(kOp) + ": scale must be finite and >= 0 (0: 1/sqrt(head_dim))");

  if (q_in.t->shape.size() != 3)
    throw invalid_argument(std::string(kOp) + ": q must be [B, Nq, *], found " + q_in.t->describe());
  const DType dtype = q_in.t->dtype;
  const int64_t batch = q_in.t->dim(0);
  const int64_t width = p.heads * p.head_dim;
  const Operand q = resolve("q", q_in, batch, width, dtype);
  const Operand k = resolve("k", k_in, batch, width, dtype);
  const Operand v = resolve("v", v_in, batch, width, dtype);
  if (v.n != k.n)
    throw invalid_argument(std::string(kOp) + ": k and v token counts differ (" + k.t->describe() + " vs " +
                           v.t->describe() + ")");
  const bool second = k2_in.t != nullptr;
  const Operand k2 = second ? resolve("k2", k2_in, batch, width, dtype) : Operand{k.t, 0, 0, 0};
  const Operand v2 = second ? resolve("v2", v2_in, batch, width, dtype) : Operand{v.t, 0, 0, 0};
  if (v2.n != k2.n)
    throw invalid_argument(std::string(kOp) + ": k2 and v2 token counts differ (" + k2.t->describe() + " vs " +
                           v2.t->describe() + ")");
  expect_shape(kOp, "out", out, {batch, q.n, width});
  expect_same_dtype(kOp, *q.t, out);
  for (const Operand* o : {&q, &k, &v, &k2, &v2})
    if (o->t->buffer == out.buffer)
      throw invalid_argument(std::string(kOp) + ": out " + out.describe() + " aliases input " + o->t->describe());
  if (out.numel() > std::numeric_limits<uint32_t>::max())
    throw unsupported(std::string(kOp) + ": out " + out.describe() + " needs element indices beyond 32 bits");

  const bool aligned = coopmat_aligned(q) && coopmat_aligned(k) && coopmat_aligned(v) &&
                       (!second || (coopmat_aligned(k2) && coopmat_aligned(v2)));
  const AttentionKernel kernel =
      choose_attention_kernel(kernels, dtype, p.head_dim, p.causal, aligned, q.n, p.heads * batch);

  const double scale = p.scale > 0 ? p.scale : 1.0 / std::sqrt(static_cast<double>(p.head_dim));
  auto u32 = [](int64_t x) { return static_cast<uint32_t>(x); };
  Push push{u32(q.n),       u32(k.n),       u32(second ? k2.n : 0), u32(p.heads),
            u32(q.stride),  u32(q.offset),  u32(k.stride),          u32(k.offset),
            u32(v.stride),  u32(v.offset),  u32(k2.stride),         u32(k2.offset),
            u32(v2.stride), u32(v2.offset), p.causal ? 1u : 0u,     static_cast<float>(scale * kLog2e)};

  const std::string shape = std::to_string(batch) + "x" + std::to_string(p.heads) + "x" + std::to_string(q.n) + "x" +
                            std::to_string(k.n + (second ? k2.n : 0)) + "x" + std::to_string(p.head_dim);
  auto by4 = [](const Operand& o) { return o.stride % 4 == 0 && o.offset % 4 == 0; };
  const bool vec4 = by4(q) && by4(k) && by4(v) && (!second || (by4(k2) && by4(v2)));
  // 8-element loads: the tiled kernel's fp16 K and V tiles (common/attention_tiled.glsl).
  const bool vec8 =
      coopmat_aligned(k) && coopmat_aligned(v) && (!second || (coopmat_aligned(k2) && coopmat_aligned(v2)));
  std::string shader = kernel.shader;
  if (ablate != 0) {
    const std::string tail = "_pv16_f16"; // the tiled portable kernel with packed P·V
    if (shader.size() < tail.size() || shader.compare(shader.size() - tail.size(), tail.size(), tail) != 0)
      throw unsupported(std::string(kOp) + ": ablation " + std::to_string(ablate) + " exists for the tiled portable " +
                        "kernel with packed P·V only; this problem takes " + kernel.shader);
    shader = detail::ablated_attention_variant(shader, ablate);
  }
  std::vector<uint32_t> spec;
  if (kernel.takes_vec4) spec = {vec4 ? 1u : 0u, vec8 ? 1u : 0u};
  if (kernel.quad_upmask != 0) spec = {kernel.quad_upmask};
  const vk::Pipeline& pipe = kernels.pipeline(shader, 6, sizeof(Push), spec, kernel.subgroup);
  rec.dispatch(pipe,
               {vk::in(q.t->buf()), vk::in(k.t->buf()), vk::in(v.t->buf()), vk::in(k2.t->buf()), vk::in(v2.t->buf()),
                vk::out(out.buf())},
               &push, sizeof push, div_up(q.n, kernel.queries_per_group), u32(p.heads), u32(batch), shape);
}

} // namespace

void attention(Kernels& kernels, vk::Recording& rec, AttnOperand q, AttnOperand k, AttnOperand v, const Tensor& out,
               const AttentionParams& p, AttnOperand k2, AttnOperand v2) {
  record_attention(kernels, rec, q, k, v, out, p, k2, v2, 0);
}

namespace detail {
std::string ablated_attention_variant(const std::string& variant, int ablation) {
  return variant.substr(0, variant.size() - 4) + "_ablate" + std::to_string(ablation) +
         variant.substr(variant.size() - 4);
}

void attention_ablated(Kernels& kernels, vk::Recording& rec, AttnOperand q, AttnOperand k, AttnOperand v,
                       const Tensor& out, const AttentionParams& p, AttnOperand k2, AttnOperand v2, int ablation) {
  if (ablation < 1 || ablation > kAttentionAblations)
    throw invalid_argument(std::string(kOp) + ": ablation " + std::to_string(ablation) + " is not 1-" +
                           std::to_string(kAttentionAblations));
  record_attention(kernels, rec, q, k, v, out, p, k2, v2, ablation);
}
} // namespace detail

std::string portable_attention_variant(int64_t head_dim, int64_t invocations, bool packed_pv, DType dtype) {
  const std::string base = "attention_d" + std::to_string(head_dim);
  if (!tiled_supports(head_dim)) return composed_variant(base, dtype);
  const bool pv16 = packed_pv && dtype == DType::F16;
  return composed_variant(base + "_t" + std::to_string(invocations) + (pv16 ? "_pv16" : ""), dtype);
}

bool portable_attention_packed_pv(const Kernels& kernels, int64_t head_dim, DType dtype) {
  return tiled_supports(head_dim) && dtype == DType::F16 && kernels.portable_packed_products();
}

std::vector<int64_t> portable_attention_invocations() { return {128, 256}; }

const std::vector<std::string>& tiled_attention_trials() {
  // Each is a define of common/attention_tiled.glsl ("Trials"); session 24 measured ten ideas in
  // sixteen trials (bench/NOTES.md). New ones go here and in Z123_ATTN_TILED_TRIALS.
  static const std::vector<std::string> trials{"pv32"};
  return trials;
}

const std::vector<std::string>& khr_attention_knob_values() {
  // Session 11 measured bench-only khrcm_cv_* alternatives here (lazy rescaling, 32-row
  // subgroups): all slower, removed (bench/NOTES.md); session 25 the 32-row ones again with the
  // quad route alone (r2: spills; r2k32: level 0 -1.7%, levels 1 and the reference pass slower,
  // the step unchanged), removed. khrcm_cv_nw16 (session 16) is the default where the
  // accumulators are laid out in quads. Session 27 measured five bench-only trials of it (exp2 on
  // fp16 pairs, half the exponentials by a polynomial on the FMA pipe, and the subgroups of every
  // second sub-partition a P·V behind, each alone and combined) and S software-pipelined across
  // tiles (K a tile ahead of V, the next S issued before this P·V): all slower, removed
  // (bench/NOTES.md). Session 32 measured 12 subgroups (khrcm_cv_nw12, 192 queries a workgroup,
  // 167 registers): 1.11-1.28x the 16-subgroup kernel's time per query, so ahead only where it fills
  // the waves better (level 1 alone: 0.198 against 0.225-0.237 ms), and slower in the step, where
  // the reference pass fills level 1's idle SMs (30.09-30.17 against 29.94-30.05 ms), removed.
  // New ones go in this list.
  static const std::vector<std::string> values{"khrcm", "khrcm_cv", "khrcm_cv_nw16"};
  return values;
}

const std::vector<std::string>& khr_attention_ablations() {
  // Wrong results by design (ATTN_ABLATE in common/attention_coopmat.glsl), so not knob values:
  // zero123pp-bench-attn-ceiling --khr sets Tuning::attn_variant to them directly.
  static const std::vector<std::string> values{"khrcm_cv_nw16_noexp", "khrcm_cv_nw16_nopv", "khrcm_cv_nw16_nos",
                                               "khrcm_cv_nw16_noload", "khrcm_cv_nw16_krow"};
  return values;
}

std::string khr_attention_knob_variant(const std::string& value) {
  return composed_variant("attention_d64_" + value, DType::F16);
}

// The 8-subgroup attention's time per query against the 16-subgroup one's: level 0 on an H100,
// 1.717 against 1.490 ms for the same queries (bench/NOTES.md session 16, run 5).
constexpr double kEightSubgroupQueryCost = 1.152;

bool khr_attention_eight_subgroups_win(int64_t nq, int64_t rows, uint32_t sms) {
  if (sms == 0 || nq <= 0 || rows <= 0) return false;
  auto waves = [&](int64_t per_group) {
    return static_cast<double>(div_up(div_up(nq, per_group) * rows, int64_t{sms}));
  };
  const int64_t sixteen = coopmat_queries_per_group(16, 16), eight = coopmat_queries_per_group(16, 8);
  return waves(eight) * eight * kEightSubgroupQueryCost < waves(sixteen) * sixteen;
}

std::string nvcm2_attention_variant(uint32_t rows) {
  return rows == 128 ? variant("attention_d64_nvcm2_br128", DType::F16) : variant("attention_d64_nvcm2", DType::F16);
}

AttentionKernel choose_attention_kernel(const Kernels& kernels, DType dtype, int64_t head_dim, bool causal,
                                        bool aligned, int64_t queries, int64_t row_count) {
  // NV cooperative matrix 2: head size 64 (every UNet head), not causal (CLIP text only); the
  // other problems of that path take the NV v1 kernel where present.
  const bool coopmat2 = kernels.attention_path() == Path::NvCoopMat2 && dtype == DType::F16 && head_dim == 64 &&
                        !causal && aligned && kernels.path_available(Path::NvCoopMat2);
  if (coopmat2) {
    // Tuning::attn_cm2_rows (Z123_ATTN_CM2_ROWS=128) takes the 128-row variant (benchmarks
    // compare the two).
    const uint32_t rows = kernels.tuning().attn_cm2_rows;
    const uint32_t subgroup = kernels.device().features().subgroup_size_control ? 32 : 0;
    return {nvcm2_attention_variant(rows), rows, subgroup};
  }
  const bool nv_fallback = kernels.attention_path() == Path::NvCoopMat2 && kernels.path_available(Path::NvCoopMat);
  const bool nv =
      (kernels.attention_path() == Path::NvCoopMat || nv_fallback) && kernels.device().info().subgroup_size == 32;
  // The same kernel on KHR cooperative matrix, on the fragment shape and subgroup width the GEMMs
  // use (required of the pipeline where that is not the device's only width).
  const bool khr = kernels.attention_path() == Path::KhrCoopMat && kernels.khr_attention_available();
  const CoopmatShape* shape = khr ? kernels.khr_gemm_shape() : nullptr;
  const bool coopmat = (nv || khr) && dtype == DType::F16 && attention_coopmat_supports(head_dim) && aligned;
  const std::string base = "attention_d" + std::to_string(head_dim);
  if (!coopmat && tiled_supports(head_dim)) {
    const bool fits256 = kernels.device().info().max_shared_memory >= kTiledAttention256SharedBytes;
    // Measuring knob: Tuning::attn_tiled_invocations (Z123_ATTN_TILED_INVOCATIONS) picks the size.
    const uint32_t want = kernels.tuning().attn_tiled_invocations;
    if (want == 256 && !fits256)
      throw unsupported("Z123_ATTN_TILED_INVOCATIONS=256: '" + kernels.device().info().name + "' has " +
                        std::to_string(kernels.device().info().max_shared_memory) + " bytes of shared memory, " +
                        std::to_string(kTiledAttention256SharedBytes) + " needed");
    const int64_t nt = want != 0 ? want : fits256 ? 256 : 128;
    const bool packed_pv = portable_attention_packed_pv(kernels, head_dim, dtype);
    std::string shader = portable_attention_variant(head_dim, nt, packed_pv, dtype);
    // Measuring knob: Tuning::attn_tiled_trial (Z123_ATTN_TILED_TRIAL) takes that bench-only
    // trial of the fp16 head-size-64 kernel with packed P·V.
    if (const std::string& trial = kernels.tuning().attn_tiled_trial; !trial.empty() && head_dim == 64 && packed_pv)
      shader = composed_variant(base + "_t" + std::to_string(nt) + "_pv16_" + trial, dtype);
    return {shader, tiled_queries_per_group(head_dim, nt), 0, true};
  }
  if (!coopmat) return {portable_attention_variant(head_dim, 0, false, dtype), portable_queries_per_group(head_dim), 0};

  // Test knob: Tuning::attn_coopmat_generic (Z123_ATTN_COOPMAT_GENERIC=1) takes the coopmat
  // variant with the generic (shared-memory) row reductions, which NVIDIA GPUs would otherwise
  // never run.
  const bool force_generic = kernels.tuning().attn_coopmat_generic;
  // The generic twin exists for the shapes that have a quad route at all (16-row fragments on
  // 32-wide subgroups); the others take the generic route anyway.
  const bool quad_shape = !shape || (shape->m == 16 && shape->subgroup == 32);
  // KHR: P becomes an A operand in registers where NV cooperative matrix 2's conversions are on
  // and P's fragments have A's shape (the _cv variant: 1.83 -> 1.66 ms at level 0 on an H100,
  // bench/NOTES.md session 6).
  const bool khr_convert = khr && kernels.path_available(Path::NvCoopMat2) && quad_shape && shape->n == shape->k;
  // Where the device's accumulators are laid out in quads (the probe, Kernels), its 16-subgroup
  // twin: 512 invocations must fit 128 registers (197 for 8 subgroups), so an SM runs 16 warps
  // instead of 8, and each K/V tile serves 256 queries. Level 0 on an H100: 1.717 -> 1.490 ms,
  // 45.1-45.3 -> 44.0-44.3 ms per step (bench/NOTES.md session 16, run 5). It holds the quad route
  // alone (its scratch would not fit 48 KiB), hence the probe. Not where few workgroups of 256
  // queries leave the last wave mostly empty (the 4,096-token reference pass and level 1: 160-200
  // workgroups on 132 SMs): 128 per workgroup fill the SMs better there (session 17, run 6),
  // unless another queue's work fills them (QueuesShareTheGpu: session 25, run 4).
  const bool sixteen = khr_convert && !force_generic && head_dim == 64 && !shape->suffix[0] &&
                       kernels.khr_accumulator_rows_in_quads() &&
                       !(queries > 0 && !kernels.queues_share_the_gpu() &&
                         khr_attention_eight_subgroups_win(queries, row_count, kernels.device().info().compute_units));
  std::string suffix = khr ? (force_generic && quad_shape ? "khrcm_generic"
                              : sixteen                   ? "khrcm_cv_nw16"
                              : khr_convert               ? "khrcm_cv"
                                                          : "khrcm")
                           : (force_generic ? "nvcm_generic" : "nvcm");
  // Measuring knob: Tuning::attn_variant (Z123_ATTN_VARIANT=khrcm|khrcm_cv|khrcm_cv_nw16) takes that
  // KHR variant instead. The khrcm_cv_* ones are built for the default fragment shape only, and
  // khrcm_cv_nw16 needs the quad layout. Head size 64 only (the UNet's attention, which the knob
  // is for): the other heads keep their default.
  if (const std::string& want = kernels.tuning().attn_variant; !want.empty() && head_dim == 64) {
    const bool needs_convert = want.rfind("khrcm_cv", 0) == 0, default_shape_only = want.rfind("khrcm_cv_", 0) == 0;
    const bool needs_quads = want.rfind("khrcm_cv_nw16", 0) == 0;
    if (!khr || (needs_convert && !khr_convert) || (default_shape_only && shape->suffix[0] != '\0') ||
        (needs_quads && !kernels.khr_accumulator_rows_in_quads()))
      throw unsupported("Z123_ATTN_VARIANT=" + want + ": not available on '" + kernels.device().info().name +
                        "' (khrcm_cv* need VK_NV_cooperative_matrix2, khrcm_cv_* the 16x16x16 fragments, " +
                        "khrcm_cv_nw16 accumulators laid out in quads)");
    suffix = want;
  }
  if (!khr) return {composed_variant(base + "_" + suffix, DType::F16), coopmat_queries_per_group(16), 0};
  const int64_t subgroups = suffix.rfind("khrcm_cv_nw16", 0) == 0 ? 16 : 8; // variants/attention.cmake ATTN_NW
  AttentionKernel kernel{composed_variant(base + "_" + suffix + shape->suffix, DType::F16),
                         coopmat_queries_per_group(shape->m, subgroups),
                         coopmat_subgroup_size(kernels.device(), shape->subgroup)};
  // Where the probe found one element order on every invocation, the kernel takes it as a constant
  // (0 off the probed 16 x 16 x 16 fragments, and where the generic route is forced).
  if (!force_generic) kernel.quad_upmask = kernels.khr_accumulator_quad_upmask();
  return kernel;
}

void softmax_rows(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y, float scale) {
  constexpr const char* kOp = "softmax_rows";
  if (x.dtype != DType::F32) throw invalid_argument(std::string(kOp) + ": x " + x.describe() + " must be F32");
  if (x.shape.empty() || x.dim(-1) == 0)
    throw invalid_argument(std::string(kOp) + ": x " + x.describe() + " needs a non-empty last dim");
  expect_shape(kOp, "y", y, x.shape);
  if (!(scale > 0.0f) || !std::isfinite(scale))
    throw invalid_argument(std::string(kOp) + ": scale must be a positive finite number");
  if (x.buffer == y.buffer) throw invalid_argument(std::string(kOp) + ": y " + y.describe() + " aliases x");
  const int64_t n = x.dim(-1), rows = x.numel() / n;
  if (x.numel() > std::numeric_limits<uint32_t>::max())
    throw unsupported(std::string(kOp) + ": " + x.describe() + " needs element indices beyond 32 bits");
  struct Push {
    uint32_t rows, n;
    float scale_log2e;
    uint32_t rows_per_y;
  };
  constexpr int64_t kMaxGroups = 65535;
  const uint32_t gx = static_cast<uint32_t>(std::min(rows, kMaxGroups));
  Push push{static_cast<uint32_t>(rows), static_cast<uint32_t>(n), static_cast<float>(scale * kLog2e), gx};
  const vk::Pipeline& pipe = kernels.pipeline(variant("softmax_rows", y.dtype), 2, sizeof push);
  rec.dispatch(pipe, {vk::in(x.buf()), vk::out(y.buf())}, &push, sizeof push, gx, div_up(rows, gx), 1,
               std::to_string(rows) + "x" + std::to_string(n));
}

} // namespace z123::kernels
