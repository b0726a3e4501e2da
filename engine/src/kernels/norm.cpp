// GroupNorm and LayerNorm entry points: shape checks, path choice and dispatch geometry for
// shaders/group_norm.comp and shaders/layer_norm.comp.
#include "z123/kernels/norm.hpp"

#include "kernels/composed_names.hpp"

#include <algorithm>
#include <string>

#include "kernels/grid.hpp"
#include "kernels/shader_names.hpp"
#include "z123/error.hpp"

namespace z123::kernels {
namespace {

// Must match the push block of shaders/group_norm.comp.
struct GroupNormPush {
  uint32_t HW, C, G, cpg;
  uint32_t tile_rows, ntiles;
  uint32_t row_lanes;
  float eps;
  uint32_t silu;
  uint32_t counter; // group_norm_table's split path: its first counter slot (Kernels::take_counters)
};

struct LayerNormPush {
  uint32_t M, CV, rows_per_wg;
  float eps;
};

// The direct path's workgroup size, a power of two (tree reduction), 1,024 where the device allows
// (session 27, runs 9-10); Tuning::gn_direct_threads (Z123_GN_DIRECT_THREADS) overrides it for
// benchmarks.
uint32_t direct_threads(const Kernels& kernels) {
  const uint32_t want = kernels.tuning().gn_direct_threads ? kernels.tuning().gn_direct_threads : 1024;
  uint32_t w = 1;
  while (w * 2 <= std::min(want, kernels.device().info().max_workgroup_invocations)) w *= 2;
  return w;
}
// The split path's workgroups: large, so that even a small tensor (few tiles, see plan_split)
// keeps the device busy and each invocation needs few dependent memory round trips.
// Tuning::gn_threads (Z123_GN_THREADS) overrides it for benchmarks.
uint32_t split_threads(const Kernels& kernels) {
  if (kernels.tuning().gn_threads) return kernels.tuning().gn_threads;
  return std::min<uint32_t>(1024, std::max<uint32_t>(256, kernels.device().info().max_workgroup_invocations));
}
// The partial stage's per-(row lane, channel) statistics stay below this much shared memory.
constexpr uint64_t kPartialSharedBytes = 24 << 10;
// A group at most Tuning::gn_direct_max large (HW * C / G values, default 49152) takes the
// one-dispatch direct path: below it the split path's second dispatch costs more than the lost
// parallelism. 49152 takes the UNet's levels 1 and 2 (48,000-value groups) and the reference
// pass's level 0 too: with the direct path's 1,024 invocations and four channels per access,
// 36.05-36.11 against 36.24-36.30 ms per step with 16384 and 256 (bench/NOTES.md session 27,
// runs 9-10). The split path makes at most Tuning::gn_tiles tiles (partial and apply
// workgroups) over the whole tensor (default 64: 0.1-0.3 ms per step faster than 128 in five
// alternations on an H100 with the step's passes side by side, bench/NOTES.md sessions 18-19;
// 128 was the best of 64/128/256 on an H200 before that, session 2).

void check_param(const char* op, const char* what, const Tensor& p, const Tensor& x, int64_t C) {
  expect_shape(op, what, p, {C});
  expect_same_dtype(op, x, p);
}

// Resident path (STAGE_RESIDENT): 32-bit registers of data per invocation; must match RES_WORDS
// in shaders/group_norm.comp.
constexpr int64_t kResidentWords = 48;
// At most this many invocations: with 48 data registers of the 64 an NVIDIA SM leaves each of
// 1,024 invocations, more would spill.
constexpr int64_t kResidentMaxThreads = 1024;

struct ResidentPlan {
  uint32_t threads = 0, ev = 1, cap = 1; // cap: accesses per pixel of a group (cpg / ev)
};

// Channels per access: the largest of 4, 2, 1 that divides cpg (then every access lies inside one
// pixel's group and is aligned to its size, since C and the group offsets are multiples of cpg).
int64_t resident_ev(int64_t cpg) { return cpg % 4 == 0 ? 4 : cpg % 2 == 0 ? 2 : 1; }

int64_t resident_threads_max(const vk::Device& device) {
  return std::min<int64_t>(kResidentMaxThreads, device.info().max_workgroup_invocations);
}

int64_t resident_capacity_for(int64_t threads, int64_t ev, DType dtype) {
  const int64_t access_words = dtype == DType::F16 ? (ev == 4 ? 2 : 1) : ev; // as ACCESS_WORDS
  return threads * (kResidentWords / access_words) * ev;
}

// The smallest power-of-two workgroup (at least 64: whole subgroups everywhere) whose registers
// hold the group; false when even the largest does not, or its tables do not fit.
bool plan_resident(const vk::Device& device, int64_t HW, int64_t cpg, DType dtype, ResidentPlan& plan) {
  const int64_t ev = resident_ev(cpg), wmax = resident_threads_max(device), nacc = HW * cpg / ev;
  if (HW * cpg > resident_capacity_for(wmax, ev, dtype)) return false;
  // Shared memory: two reduction halves of W floats and the (gamma, beta) tables.
  if (static_cast<uint64_t>(8 * wmax + 8 * cpg) > device.info().max_shared_memory) return false;
  int64_t w = 64;
  while (w < wmax && w < nacc) w *= 2;
  plan.threads = static_cast<uint32_t>(std::min(w, wmax));
  plan.ev = static_cast<uint32_t>(ev);
  plan.cap = static_cast<uint32_t>(cpg / ev);
  return true;
}

struct SplitPlan {
  uint32_t threads = 256, vec = 1, tile_rows = 0, ntiles = 0, row_lanes = 1, partial_cap = 0;
};

// The split path keeps every tile's partial statistics inside every tile of y (see
// group_norm.comp): with T tiles per batch, a tile must hold T * G (mean, M2) pairs, which bounds
// T by about sqrt(bytes per batch / (8 G)); the broadcast also writes B T^2 G 8 bytes, so T stays
// moderate. Returns false when no tiling fits or the shared arrays would not; the direct path
// then runs.
// table: for group_norm_table, whose partials live apart (Tuning::gn_table_tiles, no bound).
bool plan_split(const Kernels& kernels, int64_t B, int64_t HW, int64_t C, int64_t G, DType dtype, SplitPlan& plan,
                bool table = false) {
  const uint64_t shared = kernels.device().info().max_shared_memory;
  const int64_t W = split_threads(kernels);
  if (G > W) return false;
  const int64_t vec = C % 4 == 0 ? 4 : 1;
  const int64_t CV = C / vec;
  // The table's partial stage also holds the merge's W (count, mean, M2) and a flag in shared memory.
  const uint64_t merge_bytes = table ? 12 * static_cast<uint64_t>(W) + 16 : 0;
  if (merge_bytes >= shared) return false;
  const int64_t max_lanes =
      static_cast<int64_t>(std::min<uint64_t>(shared - merge_bytes, kPartialSharedBytes) / (8 * C));
  // Row lanes: fill the workgroup, within the shared budget, and at most 2 W / G of them (the
  // shader's per-(group, lane) pass covers two rows of W invocations).
  const int64_t row_lanes = std::min<int64_t>({std::max<int64_t>(1, W / CV), max_lanes, 2 * W / G});
  if (row_lanes < 1) return false;
  const int64_t partial_cap = row_lanes * C;                        // vec2 entries
  if (static_cast<uint64_t>(C) * 8 + W * 12 > shared) return false; // apply: (a, d) table + merge lanes
  const int64_t row_bytes = C * static_cast<int64_t>(dtype_size(dtype));
  // Rows per tile: enough for every row lane of the partial stage to see a few rows.
  const int64_t min_rows = std::max<int64_t>(1, 2 * row_lanes);
  const int64_t tiles = table ? kernels.tuning().gn_table_tiles : kernels.tuning().gn_tiles;
  int64_t T = std::min<int64_t>(
      {std::max<int64_t>(1, tiles / B), std::max<int64_t>(1, HW / min_rows), static_cast<int64_t>(kMaxGridDim)});
  // The smallest tile (HW / T rows) must hold T * G pairs after its first whole word.
  while (!table && T >= 1 && (HW / T) * row_bytes < 8 * G * T + 4) --T;
  if (T < 1) return false;
  plan.threads = static_cast<uint32_t>(W);
  plan.vec = static_cast<uint32_t>(vec);
  plan.tile_rows = static_cast<uint32_t>(HW / T);
  plan.ntiles = static_cast<uint32_t>(T); // the last tile takes the remainder
  plan.row_lanes = static_cast<uint32_t>(row_lanes);
  plan.partial_cap = static_cast<uint32_t>(partial_cap);
  return true;
}

} // namespace

int64_t group_norm_resident_capacity(const vk::Device& device, DType dtype, int64_t cpg) {
  return resident_capacity_for(resident_threads_max(device), resident_ev(cpg), dtype);
}

namespace {

// x's dimensions as a group norm sees them: [B, HW, C] in G groups of cpg channels.
struct GroupNormDims {
  int64_t B, HW, C, G, cpg;
};

// x's rank and the groups checked, and its dimensions.
GroupNormDims group_norm_dims(const char* op, const Tensor& x, int groups) {
  if (x.shape.size() != 3 && x.shape.size() != 4)
    throw invalid_argument(std::string(op) + ": x must be [B, HW, C] or [B, H, W, C], found " + x.describe());
  const int64_t B = x.dim(0), C = x.dim(-1), HW = x.numel() / (B * C);
  if (groups <= 0 || C % groups != 0)
    throw invalid_argument(std::string(op) + ": " + std::to_string(groups) + " groups do not divide the " +
                           std::to_string(C) + " channels of " + x.describe());
  return {B, HW, C, groups, C / groups};
}

// The checks group_norm and group_norm_table share (x, groups, gamma and beta).
GroupNormDims check_group_norm(const char* op, const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups) {
  const GroupNormDims d = group_norm_dims(op, x, groups);
  check_param(op, "gamma", gamma, x, d.C);
  check_param(op, "beta", beta, x, d.C);
  expect_indexable(op, x);
  if (d.B > static_cast<int64_t>(kMaxGridDim) || d.G > static_cast<int64_t>(kMaxGridDim))
    throw invalid_argument(std::string(op) + ": batch or group count over 65535 in " + x.describe());
  return d;
}

GroupNormPush push_for(const GroupNormDims& d, float eps, bool silu) {
  GroupNormPush p{};
  p.HW = static_cast<uint32_t>(d.HW);
  p.C = static_cast<uint32_t>(d.C);
  p.G = static_cast<uint32_t>(d.G);
  p.cpg = static_cast<uint32_t>(d.cpg);
  p.eps = eps;
  p.silu = silu ? 1u : 0u;
  return p;
}

// Whether group_norm_table takes the split path (and its plan): where its tiles fit and the group
// is larger than Tuning::gn_table_direct_max (group_norm's Auto choice, with the table's knobs).
bool table_split(const Kernels& kernels, const GroupNormDims& d, DType dtype, SplitPlan& plan) {
  return d.HW * d.cpg > kernels.tuning().gn_table_direct_max &&
         plan_split(kernels, d.B, d.HW, d.C, d.G, dtype, plan, true);
}

// The table's values, and the split path's partials past them.
int64_t table_floats(const GroupNormDims& d, bool split, const SplitPlan& plan) {
  return 2 * d.B * d.C + (split ? 2 * d.B * int64_t(plan.ntiles) * d.G : 0);
}

} // namespace

void group_norm(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                const Tensor& y, int groups, float eps, bool silu, GroupNormPath path) {
  const char* op = "group_norm";
  const GroupNormDims dims = check_group_norm(op, x, gamma, beta, groups);
  expect_shape(op, "y", y, x.shape);
  expect_same_dtype(op, x, y);
  expect_no_alias(op, y, x);
  expect_no_alias(op, y, gamma);
  expect_no_alias(op, y, beta);
  const int64_t B = dims.B, C = dims.C, HW = dims.HW, G = dims.G, cpg = dims.cpg;
  GroupNormPush p = push_for(dims, eps, silu);
  const vk::Binding ws = vk::out(y.buf()); // the split path's statistics live in y's tiles
  std::vector<vk::Binding> bindings = {vk::in(x.buf()), vk::in(gamma.buf()), vk::in(beta.buf()), vk::out(y.buf()), ws};
  const uint32_t push_bytes = sizeof p;

  // Resident: one dispatch that reads x once, where the group fits in one workgroup's registers
  // (up to ~98k fp16 values on a 1,024-invocation device). Only on request (Tuning::gn_resident, Z123_GN_RESIDENT=1, or
  // GroupNormPath::Resident): on an H200 it took 75 us at 2x320x120x80 against 19 us for the
  // split path (predicted 11-13; 64 busy SMs and, likely, spilled registers), and ~3 ms more per
  // UNet step (bench/NOTES.md).
  ResidentPlan rp;
  const bool resident_ok = plan_resident(kernels.device(), HW, cpg, x.dtype, rp);
  if (path == GroupNormPath::Resident && !resident_ok)
    throw invalid_argument(std::string(op) + ": the resident path cannot run on " + x.describe() + " with " +
                           std::to_string(G) + " groups (a group has more values than one workgroup's registers hold)");
  // Small enough for the one-dispatch direct path (where the split path can run at all).
  const bool small_group = HW * cpg <= kernels.tuning().gn_direct_max;
  const Tuning::GnResident want_resident = kernels.tuning().gn_resident;
  const bool resident_wanted =
      want_resident == Tuning::GnResident::Everywhere || (want_resident == Tuning::GnResident::Small && small_group);
  if (path == GroupNormPath::Resident || (path == GroupNormPath::Auto && resident_ok && resident_wanted)) {
    auto& pipe = kernels.pipeline(group_norm_resident_variant(rp.ev, x.dtype), 5, push_bytes, {rp.threads, rp.cap});
    rec.dispatch(pipe, bindings, &p, push_bytes, static_cast<uint32_t>(G), static_cast<uint32_t>(B));
    return;
  }

  SplitPlan plan;
  bool split = path != GroupNormPath::Direct && plan_split(kernels, B, HW, C, G, x.dtype, plan) &&
               (path == GroupNormPath::Split || !small_group);
  if (path == GroupNormPath::Split && !split)
    throw invalid_argument(std::string(op) + ": the split path cannot run on " + x.describe() +
                           " (its tiles cannot hold their statistics, or the shared-memory tables do not fit)");
  if (!split) {
    // Four channels per access where a group's channels come in fours (the model's always do).
    const bool vec4 = cpg % 4 == 0;
    auto& pipe =
        kernels.pipeline(vec4 ? variant("group_norm_direct_vec4", x.dtype) : variant("group_norm_direct", x.dtype), 5,
                         push_bytes, {direct_threads(kernels)});
    rec.dispatch(pipe, bindings, &p, push_bytes, static_cast<uint32_t>(G), static_cast<uint32_t>(B));
    return;
  }
  p.tile_rows = plan.tile_rows;
  p.ntiles = plan.ntiles;
  p.row_lanes = plan.row_lanes;
  auto& partial = kernels.pipeline(group_norm_split_variant(false, plan.vec == 4, x.dtype), 5, push_bytes,
                                   {plan.threads, plan.partial_cap});
  rec.dispatch(partial, bindings, &p, push_bytes, plan.ntiles, static_cast<uint32_t>(B));
  auto& apply = kernels.pipeline(group_norm_split_variant(true, plan.vec == 4, x.dtype), 5, push_bytes,
                                 {plan.threads, static_cast<uint32_t>(C / plan.vec)});
  rec.dispatch(apply, bindings, &p, push_bytes, plan.ntiles, static_cast<uint32_t>(B));
}

int64_t group_norm_table_floats(const Kernels& kernels, const Tensor& x, int groups) {
  const GroupNormDims d = group_norm_dims("group_norm_table", x, groups);
  SplitPlan plan;
  const bool split = table_split(kernels, d, x.dtype, plan);
  return table_floats(d, split, plan);
}

void group_norm_table(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                      const Tensor& table, int groups, float eps) {
  const char* op = "group_norm_table";
  const GroupNormDims d = check_group_norm(op, x, gamma, beta, groups);
  SplitPlan plan;
  const bool split = table_split(kernels, d, x.dtype, plan);
  const int64_t floats = table_floats(d, split, plan);
  if (table.dtype != DType::F32 || table.numel() < floats)
    throw invalid_argument(std::string(op) + ": table " + table.describe() + " must be f32 with at least " +
                           std::to_string(floats) + " values");
  expect_no_alias(op, table, x);
  GroupNormPush p = push_for(d, eps, false);
  // Binding 3 is the table, 4 the split path's partials past it: one buffer.
  const std::vector<vk::Binding> bindings = {vk::in(x.buf()), vk::in(gamma.buf()), vk::in(beta.buf()),
                                             vk::out(table.buf()), vk::out(table.buf())};
  const uint32_t push_bytes = sizeof p;
  using S = GroupNormTableStage;
  if (!split) {
    auto& pipe = kernels.pipeline(group_norm_table_variant(S::Direct, d.cpg % 4 == 0, x.dtype), 5, push_bytes,
                                  {direct_threads(kernels)});
    rec.dispatch(pipe, bindings, &p, push_bytes, static_cast<uint32_t>(d.G), static_cast<uint32_t>(d.B));
    return;
  }
  p.tile_rows = plan.tile_rows;
  p.ntiles = plan.ntiles;
  p.row_lanes = plan.row_lanes;
  // The last workgroup of each batch merges the partials into the table, counting the batch's
  // workgroups in a slot of Kernels::take_counters. The slots are this call's alone, so the binding
  // is declared read-only to the recording: nothing else touches them, and a write binding would
  // order every table of the recording after the one before (one buffer).
  const Kernels::CounterSlots slots = kernels.take_counters(static_cast<uint32_t>(d.B));
  p.counter = slots.first;
  std::vector<vk::Binding> with_counters = bindings;
  with_counters.push_back(vk::in(slots.buffer));
  auto& partial = kernels.pipeline(group_norm_table_variant(S::Partial, plan.vec == 4, x.dtype), 6, push_bytes,
                                   {plan.threads, plan.partial_cap});
  rec.dispatch(partial, with_counters, &p, push_bytes, plan.ntiles, static_cast<uint32_t>(d.B));
}

std::string group_norm_table_variant(GroupNormTableStage stage, bool vec4, DType dtype) {
  const char* s = stage == GroupNormTableStage::Direct ? "direct" : "partial";
  return composed_variant(std::string("group_norm_table_") + s + (vec4 ? "_vec4" : ""), dtype);
}

std::string group_norm_resident_variant(int64_t ev, DType dtype) {
  return composed_variant("group_norm_resident_ev" + std::to_string(ev), dtype);
}

std::string group_norm_split_variant(bool apply, bool vec4, DType dtype) {
  return composed_variant(std::string(apply ? "group_norm_apply" : "group_norm_partial") + (vec4 ? "_vec4" : ""),
                          dtype);
}

std::vector<int64_t> group_norm_resident_evs() { return {1, 2, 4}; } // resident_ev()'s values

namespace {

// layer_norm with gamma and beta, or (both null) without.
void record_layer_norm(Kernels& kernels, vk::Recording& rec, const char* op, const Tensor& x, const Tensor* gamma,
                       const Tensor* beta, const Tensor& y, float eps) {
  if (x.shape.empty()) throw invalid_argument(std::string(op) + ": x has no dimensions: " + x.describe());
  const int64_t C = x.dim(-1), M = x.numel() / C;
  if (gamma) check_param(op, "gamma", *gamma, x, C);
  if (beta) check_param(op, "beta", *beta, x, C);
  expect_shape(op, "y", y, x.shape);
  expect_same_dtype(op, x, y);
  expect_indexable(op, x);
  // One row per subgroup: as many rows per workgroup as it has subgroups (at the device's
  // reported subgroup size; the shader loops, so another actual size only costs speed).
  const uint32_t threads = 256;
  const uint32_t subgroup = std::max<uint32_t>(1, kernels.device().info().subgroup_size);
  const uint32_t rows_per_wg = std::max<uint32_t>(1, threads / subgroup);
  const uint32_t vec = C % 4 == 0 ? 4 : 1;
  LayerNormPush p{static_cast<uint32_t>(M), static_cast<uint32_t>(C / vec), rows_per_wg, eps};
  const bool affine = gamma != nullptr;
  auto& pipe = kernels.pipeline(vec == 4 ? variant("layer_norm_vec4", x.dtype) : variant("layer_norm", x.dtype), 4,
                                sizeof p, {threads, affine ? 1u : 0u});
  Grid g = wrap_grid(div_up(M, rows_per_wg));
  // Without the affine part, x stands in for the unread gamma and beta.
  rec.dispatch(pipe,
               {vk::in(x.buf()), vk::in(affine ? gamma->buf() : x.buf()), vk::in(affine ? beta->buf() : x.buf()),
                vk::out(y.buf())},
               &p, sizeof p, g.x, g.y);
}

} // namespace

void layer_norm(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                const Tensor& y, float eps) {
  record_layer_norm(kernels, rec, "layer_norm", x, &gamma, &beta, y, eps);
}

void layer_norm_unscaled(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y, float eps) {
  record_layer_norm(kernels, rec, "layer_norm_unscaled", x, nullptr, nullptr, y, eps);
}

} // namespace z123::kernels
