#include "z123/nets/blocks.hpp"

#include <algorithm>
#include <cmath>

#include "z123/error.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/kernels/conv2d.hpp"
#include "z123/kernels/elementwise.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/kernels/norm.hpp"
#include "z123/kernels/winograd.hpp"

namespace z123::nets {

using namespace z123::kernels;

namespace {

// A conv weight stored in Winograd form [Cout, 16, Cin] (Weights; nets::UNet chose it) rather
// than [Cout, KH, KW, Cin].
bool winograd_form(const Tensor& weight) { return weight.shape.size() == 3; }

} // namespace

Tensor conv(NetContext& c, const std::string& prefix, const Tensor& x, int64_t cout, int stride, int pad_tl, int pad_br,
            int upsample, const Tensor* residual, const Tensor* bias, const WinogradNorm* norm) {
  const Tensor& w = c.w.at(prefix + ".weight");
  const Tensor* b = bias ? bias : c.w.find(prefix + ".bias");
  if (winograd_form(w)) {
    if (stride != 1 || pad_tl != 1 || pad_br != 1 || w.dim(0) != cout)
      throw internal_error(prefix + ": a Winograd-form weight on a conv other than 3x3, stride 1, padding 1");
    const WinogradTiling t = winograd_tiling(c.k, x, upsample, cout);
    Tensor y = c.ws.acquire(x.dtype, {t.B, t.Ho, t.Wo, cout}, prefix);
    Tensor v = c.ws.acquire(x.dtype, {kWinogradProducts * t.rows, x.dim(3)}, prefix + ".winograd_in");
    Tensor m = c.ws.acquire(x.dtype, {kWinogradProducts * t.rows, cout}, prefix + ".winograd_products");
    conv2d_winograd(c.k, c.rec, x, w, b, y, upsample, residual, v, m, norm);
    c.ws.release(v);
    c.ws.release(m);
    return y;
  }
  if (norm) throw internal_error(prefix + ": a norm inside the input transform of a conv not in Winograd form");
  Conv2dParams p{stride, pad_tl, pad_tl, pad_br, pad_br, upsample};
  std::vector<int64_t> shape = conv2d_output_shape(x, w, p);
  if (shape.back() != cout)
    throw internal_error(prefix + ": conv produces " + std::to_string(shape.back()) + " channels");
  Tensor y = c.ws.acquire(x.dtype, shape, prefix);
  conv2d(c.k, c.rec, x, w, b, y, p, Epilogue::None, residual);
  return y;
}

NormedInput normalize_for_conv(NetContext& c, const std::string& norm_prefix, const std::string& conv_prefix,
                               const Tensor& x, int groups, float eps) {
  const Tensor& gamma = c.w.at(norm_prefix + ".weight");
  const Tensor& beta = c.w.at(norm_prefix + ".bias");
  NormedInput in{conv_prefix, {}, {}};
  if (winograd_form(c.w.at(conv_prefix + ".weight"))) {
    in.x = x;
    in.table = c.ws.acquire(DType::F32, {group_norm_table_floats(c.k, x, groups)}, norm_prefix + " statistics");
    group_norm_table(c.k, c.rec, x, gamma, beta, in.table, groups, eps);
  } else {
    in.x = c.ws.acquire(x.dtype, x.shape, norm_prefix);
    group_norm(c.k, c.rec, x, gamma, beta, in.x, groups, eps, true);
  }
  return in;
}

Tensor conv_normed(NetContext& c, NormedInput in, int64_t cout, const Tensor* bias, const Tensor* residual) {
  const WinogradNorm norm{&in.table, true};
  return conv(c, in.conv_prefix, in.x, cout, 1, 1, 1, 1, residual, bias, in.table.buffer ? &norm : nullptr);
}

Tensor resnet_block(NetContext& c, const std::string& prefix, const Tensor& x, int64_t cout, int groups, float eps,
                    const Tensor* conv1_bias, const Tensor* time_rows) {
  const std::string p = prefix + ".";
  Tensor h = conv_normed(c, normalize_for_conv(c, p + "norm1", p + "conv1", x, groups, eps), cout, conv1_bias);
  if (time_rows) add(c.k, c.rec, h, *time_rows, h); // [B, C] broadcast over [B, H, W, C], in place
  NormedInput n2 = normalize_for_conv(c, p + "norm2", p + "conv2", h, groups, eps);
  c.ws.release(h); // where conv2 reads the norm's output (the VAE), h's slot is free for the shortcut
  Tensor shortcut = x;
  bool has_shortcut = c.w.has(p + "conv_shortcut.weight");
  if (has_shortcut) shortcut = conv(c, p + "conv_shortcut", x, cout, 1, 0, 0);
  // conv2 with the residual fused into its epilogue: out = shortcut + conv2(silu(norm2(h))).
  return conv_normed(c, std::move(n2), cout, nullptr, &shortcut);
}

namespace {

// Rows [row0, row0 + rows) of a [*, C] tensor as a tensor of its own (a copy: tensors have no
// offsets).
Tensor rows_of(vk::Recording& rec, Workspace& ws, const Tensor& t, int64_t row0, int64_t rows,
               const std::string& what) {
  const int64_t C = t.dim(-1);
  Tensor out = ws.acquire(t.dtype, {rows, C}, what);
  const uint64_t row_bytes = static_cast<uint64_t>(C) * dtype_size(t.dtype);
  rec.copy(t.buf(), out.buf(), static_cast<uint64_t>(rows) * row_bytes, static_cast<uint64_t>(row0) * row_bytes, 0);
  return out;
}

} // namespace

void single_head_attention_by_gemm(kernels::Kernels& kern, vk::Recording& rec, Workspace& ws, const Tensor& q,
                                   const Tensor& k, const Tensor& v, const Tensor& out, uint64_t score_chunk_bytes) {
  const char* op = "single_head_attention_by_gemm";
  if (q.shape.size() != 3) throw invalid_argument(std::string(op) + ": q " + q.describe() + " must be [B, N, C]");
  for (const Tensor* t : {&k, &v, &out})
    if (t->shape != q.shape || t->dtype != q.dtype)
      throw invalid_argument(std::string(op) + ": " + t->describe() + " must match q " + q.describe());
  const int64_t B = q.dim(0), N = q.dim(1), C = q.dim(2);
  struct Ctx {
    kernels::Kernels& k;
    vk::Recording& rec;
    Workspace& ws;
  } c{kern, rec, ws};
  const DType dt = q.dtype;
  const float scale = 1.0f / std::sqrt(static_cast<float>(C));
  const uint64_t chunk_bytes = std::min<uint64_t>(score_chunk_bytes, kern.device().allocator().max_buffer_bytes());
  const int64_t chunk = std::clamp<int64_t>(static_cast<int64_t>(chunk_bytes / (4 * uint64_t(N))), 1, N);
  const uint64_t row_bytes = static_cast<uint64_t>(C) * dtype_size(dt);
  for (int64_t b = 0; b < B; ++b) {
    // This batch's keys [N, C], and its values transposed to [C, N] (the weight operand of P·V).
    Tensor kb = B == 1 ? k : rows_of(rec, ws, k, b * N, N, "attn keys");
    kb.shape = {N, C};
    Tensor vb = B == 1 ? v : rows_of(rec, ws, v, b * N, N, "attn values");
    Tensor vb_nhwc = vb;
    vb_nhwc.shape = {1, N, 1, C};
    Tensor vt = c.ws.acquire(dt, {1, C, N, 1}, "attn values^T");
    nhwc_to_nchw(c.k, c.rec, vb_nhwc, vt);
    vt.shape = {C, N};
    for (int64_t r0 = 0; r0 < N; r0 += chunk) {
      const int64_t rows = std::min(chunk, N - r0);
      Tensor qc = rows_of(rec, ws, q, b * N + r0, rows, "attn query chunk");
      Tensor scores = c.ws.acquire(DType::F32, {rows, N}, "attn scores");
      matmul_f32(c.k, c.rec, qc, kb, scores);
      c.ws.release(qc);
      Tensor probs = c.ws.acquire(dt, {rows, N}, "attn probabilities");
      softmax_rows(c.k, c.rec, scores, probs, scale);
      c.ws.release(scores);
      Tensor oc = c.ws.acquire(dt, {rows, C}, "attn output chunk");
      linear(c.k, c.rec, probs, vt, nullptr, oc);
      c.ws.release(probs);
      c.rec.copy(oc.buf(), out.buf(), static_cast<uint64_t>(rows) * row_bytes, 0,
                 static_cast<uint64_t>(b * N + r0) * row_bytes);
    }
  }
}

Tensor attention_block(NetContext& c, const AttentionLayers& layers, Tensor normed, const Tensor& residual,
                       int64_t heads, bool causal, const AttentionKeyValues& kv, bool by_gemm, const QueryInput& query,
                       const kernels::RowStats* out_stats) {
  if (query.norm && !kv.source && !kv.given_k)
    throw internal_error(layers.q + ": keys and values projected from rows the query GEMM normalizes itself");
  const DType dt = normed.dtype;
  const int64_t B = normed.dim(0), N = normed.dim(1), C = normed.dim(2);
  const auto project = [&](const std::string& prefix, const Tensor& in, const Tensor& out) {
    linear(c.k, c.rec, in, c.w.at(prefix + ".weight"), c.w.find(prefix + ".bias"), out);
  };
  Tensor keys, values;
  const bool scratch_kv = !kv.given_k;
  if (kv.given_k) {
    keys = *kv.given_k;
    values = *kv.given_v;
  } else {
    const Tensor& src = kv.source ? *kv.source : normed;
    const int64_t L = src.dim(1);
    keys = c.ws.acquire(dt, {B, L, C}, layers.k);
    values = c.ws.acquire(dt, {B, L, C}, layers.v);
    project(layers.k, src, keys);
    project(layers.v, src, values);
  }
  Tensor q = c.ws.acquire(dt, {B, N, C}, layers.q);
  linear(c.k, c.rec, normed, c.w.at(layers.q + ".weight"), query.bias ? query.bias : c.w.find(layers.q + ".bias"), q,
         Epilogue::None, nullptr, query.norm);
  if (query.owned) c.ws.release(normed);
  Tensor a = c.ws.acquire(dt, {B, N, C}, layers.out + ".in");
  if (by_gemm)
    single_head_attention_by_gemm(c.k, c.rec, c.ws, q, keys, values, a);
  else
    attention(c.k, c.rec, {&q}, {&keys}, {&values}, a, {heads, C / heads, 0.0f, causal});
  c.ws.release(q);
  if (scratch_kv) {
    c.ws.release(keys);
    c.ws.release(values);
  }
  Tensor out = c.ws.acquire(dt, {B, N, C}, layers.out);
  linear(c.k, c.rec, a, c.w.at(layers.out + ".weight"), c.w.find(layers.out + ".bias"), out, Epilogue::None, &residual,
         nullptr, out_stats);
  return out;
}

Tensor vae_attention(NetContext& c, const std::string& prefix, const Tensor& x, int groups, float eps) {
  const std::string p = prefix + ".";
  const int64_t B = x.dim(0), C = x.dim(-1), N = x.numel() / (B * C);
  Tensor tokens = x;
  tokens.shape = {B, N, C};
  Tensor n = c.ws.acquire(x.dtype, {B, N, C}, p + "group_norm");
  group_norm(c.k, c.rec, tokens, c.w.at(p + "group_norm.weight"), c.w.at(p + "group_norm.bias"), n, groups, eps, false);
  Tensor out = attention_block(c, {p + "to_q", p + "to_k", p + "to_v", p + "to_out.0"}, std::move(n), tokens, 1, false,
                               {}, true);
  out.shape = x.shape;
  return out;
}

} // namespace z123::nets
