// Building blocks shared by the VAE and the UNet, named after their diffusers classes. Each
// records into a Recording, takes its weights by checkpoint prefix, and returns a new NHWC
// tensor from the workspace; the input is left alone (the UNet keeps some as skips), so callers
// release it when they no longer need it.
#pragma once

#include <string>

#include "z123/kernels/attention.hpp"
#include "z123/kernels/kernels.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/kernels/winograd.hpp"
#include "z123/nets/weights.hpp"
#include "z123/workspace.hpp"

namespace z123::nets {

struct NetContext {
  kernels::Kernels& k;
  vk::Recording& rec;
  Workspace& ws;
  const Weights& w;
};

// ResnetBlock2D (spec §8.1, §9.3): h = conv1(silu(norm1(x))) [+ time_emb_proj(silu_emb)],
// h = conv2(silu(norm2(h))), out = (conv_shortcut(x) or x) + h. Each norm is applied inside its
// conv's input transform where the conv runs by Winograd (normalize_for_conv).
// conv1_bias: [cout], the bias conv1 adds instead of the checkpoint's conv1.bias, or nullptr. The
// UNet passes conv1.bias + time_emb_proj(silu_emb) (UNet::record_time): the time injection is a
// per-channel constant when every batch row shares the timestep, so it rides in conv1's epilogue
// instead of a projection and an add per resnet and pass.
// time_rows: [B, cout], added to conv1's output (after its bias) row by row, or nullptr: the time
// injection where the batch rows have different timesteps (UNet::record_time_rows).
Tensor resnet_block(NetContext& c, const std::string& prefix, const Tensor& x, int64_t cout, int groups, float eps,
                    const Tensor* conv1_bias = nullptr, const Tensor* time_rows = nullptr);

// Single-head attention out = softmax(q·kᵀ / sqrt(C))·v for q, k, v, out [B, N, C], computed as
// two GEMMs per chunk of queries (raw fp32 scores through kernels::matmul_f32, a row softmax into
// the storage type, then P·V through linear() against vᵀ), all from c.ws. For the VAE's one
// 512-wide head, which the flash kernels serve poorly (the portable one took 27 ms at 9,600
// tokens on an H100: a 16x16 tensor-core tile per query row block cannot hold a 512-wide O): the
// GEMMs run on the fast matrix kernels of every path. The fp32 score block of a chunk of queries
// stays under score_chunk_bytes and the device's largest storage buffer (tests make it small to
// cover several chunks). On an H100, 16 MiB ran the VAE head in 3.6 ms and 32 MiB in 3.3 ms
// (bench/NOTES.md sessions 3 and 7); 32 MiB then raised the peak by a 256 MiB block. With the
// scratch pool laid out by planning (Workspace::end_planning) the larger score blocks take
// memory the decoder needs later anyway: 971 MiB of pool at 640x960 with 16, 32, 64 or 96 MiB.
void single_head_attention_by_gemm(kernels::Kernels& k, vk::Recording& rec, Workspace& ws, const Tensor& q,
                                   const Tensor& k_in, const Tensor& v, const Tensor& out,
                                   uint64_t score_chunk_bytes = 64ull << 20);

// The checkpoint prefixes of an attention's four linear layers (each "<prefix>.weight", and
// "<prefix>.bias" where the checkpoint has one: CLIP and the VAE do, the UNet's q/k/v do not).
struct AttentionLayers {
  std::string q, k, v, out;
};

// Where an attention block's keys and values come from (the default: projected from the block's
// own input into scratch tensors).
struct AttentionKeyValues {
  const Tensor* source = nullptr;                      // project from this [B, L, C'] (cross-attention)
  const Tensor *given_k = nullptr, *given_v = nullptr; // already projected: no projection here
};

// How attention_block projects its queries where its defaults do not hold: the query weight
// has a LayerNorm folded in (nets::LayerNormFold; the UNet's cross-attention).
struct QueryInput {
  const Tensor* bias = nullptr;                   // in place of the layer's own bias (the fold's b')
  const kernels::NormalizedInput* norm = nullptr; // the GEMM normalizes `normed`'s rows itself
  bool owned = true; // `normed` is taken over (else it is the caller's: the rows before the norm)
};

// The attention sub-layer of every network (diffusers Attention in the UNet's cross-attention
// and the VAE, CLIP's self-attention; the UNet's self-attention fuses its projections:
// nets::UNet): keys and values (see AttentionKeyValues), queries of `normed`, attention over
// `heads` heads, then the out projection with `residual` added in its epilogue. Takes `normed`
// [B, N, C] over (it is released once the queries exist; see QueryInput::owned) and returns
// residual + out(...) as a new [B, N, C] tensor. by_gemm: the single 512-wide head of the VAE,
// through single_head_attention_by_gemm instead of the flash kernels. With query.norm the keys
// and values must come from elsewhere (kv), never from the unnormalized rows. out_stats: the out
// projection also writes its rows' statistics (kernels::RowStats) for the LayerNorm after.
Tensor attention_block(NetContext& c, const AttentionLayers& layers, Tensor normed, const Tensor& residual,
                       int64_t heads, bool causal, const AttentionKeyValues& kv = {}, bool by_gemm = false,
                       const QueryInput& query = {}, const kernels::RowStats* out_stats = nullptr);

// The VAE's mid-block Attention (spec §8.1): single head over all H·W tokens, GroupNorm input,
// q/k/v/out with biases, residual.
Tensor vae_attention(NetContext& c, const std::string& prefix, const Tensor& x, int groups, float eps);

// Conv2d by checkpoint prefix ("<prefix>.weight", optional "<prefix>.bias") into a new tensor;
// bias, where given, replaces the checkpoint's. norm: a group norm applied as the input transform
// reads x, only for a weight in Winograd form (conv_normed passes it).
Tensor conv(NetContext& c, const std::string& prefix, const Tensor& x, int64_t cout, int stride, int pad_tl, int pad_br,
            int upsample = 1, const Tensor* residual = nullptr, const Tensor* bias = nullptr,
            const kernels::WinogradNorm* norm = nullptr);

// The input of a 3x3 conv (stride 1, padding 1) after silu(GroupNorm(x)), the norm by checkpoint
// prefix: where the conv's weight is in Winograd form, x itself and only the norm's statistics
// (kernels::group_norm_table), which its input transform applies as it reads x, so the norm's
// output never goes through memory; elsewhere the norm's output, written. Holds x only where the
// conv reads it, so a caller that drops its own handle frees x's slot on the other route.
struct NormedInput {
  std::string conv_prefix;
  Tensor x, table; // table empty: x is the norm's output
};
NormedInput normalize_for_conv(NetContext& c, const std::string& norm_prefix, const std::string& conv_prefix,
                               const Tensor& x, int groups, float eps);
// The conv of normalize_for_conv's input.
Tensor conv_normed(NetContext& c, NormedInput in, int64_t cout, const Tensor* bias = nullptr,
                   const Tensor* residual = nullptr);

} // namespace z123::nets
