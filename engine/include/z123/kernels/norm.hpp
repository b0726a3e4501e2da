// Normalizations of token-major (NHWC) activations: GroupNorm (resnets, Transformer2D input, VAE)
// with an optional fused SiLU, and LayerNorm (transformer blocks, CLIP). Statistics are always
// computed in fp32 from (per-thread shifted) partial sums merged with Chan's formula, so a large
// common offset (values around 100 ± 1) does not cancel the variance away.
#pragma once

#include "z123/kernels/kernels.hpp"
#include "z123/tensor.hpp"
#include "z123/vk/recording.hpp"

namespace z123::kernels {

// y = (x - mean[b, g]) / sqrt(var[b, g] + eps) * gamma[c] + beta[c], then SiLU when silu is set.
//
// x: [B, HW, C] or [B, H, W, C] (token-major); gamma, beta: [C]; y: x's shape. Statistics per
// (batch, group) over HW x C/groups values (biased variance, like torch.nn.GroupNorm). groups must
// divide C. All tensors share one dtype (F32 or F16); math and statistics are fp32.
// y must not share a buffer with x, gamma or beta: the split path keeps its partial statistics
// in y's own storage (no scratch buffer) before overwriting it with the result.
// Throws InvalidArgument on any shape / dtype / aliasing error.
//
// Paths: Resident = one dispatch, one workgroup per (batch, group) that keeps the whole group in
// registers (x read once, y written once) for groups up to group_norm_resident_capacity values
// (every UNet level); Direct = one dispatch, one workgroup per (batch, group) that reads x twice
// (any group size, slow for large ones); Split = two dispatches over row tiles spread across the
// whole device (tile statistics, then merge + apply) for groups too large for Resident, such as
// the VAE at full resolution. Auto picks Resident where it fits, else Split for large groups and
// Direct for small ones. Forcing Resident or Split where it cannot run throws InvalidArgument.
enum class GroupNormPath { Auto, Direct, Split, Resident };

// The largest group (HW * C / groups values) the Resident path takes on this device for this
// dtype and channels per group (the access width, and so the registers per value, depend on it).
int64_t group_norm_resident_capacity(const vk::Device& device, DType dtype, int64_t cpg);

void group_norm(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                const Tensor& y, int groups, float eps, bool silu, GroupNormPath path = GroupNormPath::Auto);

// group_norm's statistics alone, for a kernel that applies the norm while it reads x (the Winograd
// input transform: kernels::WinogradNorm): table, fp32, starts with [B, 2, C] such that
// group_norm's y (before SiLU) = x * table[b][0][c] + table[b][1][c]. The path is chosen as
// group_norm's Auto chooses between Direct and Split (never Resident), by the table's own knobs
// (Tuning::gn_table_direct_max, gn_table_tiles); the split path keeps its partial statistics past
// the [B, 2, C], so `table` must hold group_norm_table_floats(x, groups) values.
// Throws InvalidArgument on any shape / dtype error, or a table that is too small.
int64_t group_norm_table_floats(const Kernels& kernels, const Tensor& x, int groups);
void group_norm_table(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                      const Tensor& table, int groups, float eps);

// y = (x - mean) / sqrt(var + eps) * gamma + beta over the last dimension.
//
// x: [..., C] (M = product of the leading dims rows); gamma, beta: [C]; y: x's shape. One dtype
// for all (F32 or F16); exact two-pass fp32 statistics per row. y may be x (in place).
void layer_norm(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                const Tensor& y, float eps);
// y = (x - mean) / sqrt(var + eps) alone: a LayerNorm whose gamma and beta are folded into the
// projections that read y (kernels::NormalizedInput, where those cannot apply the norm themselves).
void layer_norm_unscaled(Kernels& kernels, vk::Recording& rec, const Tensor& x, const Tensor& y, float eps);

} // namespace z123::kernels
