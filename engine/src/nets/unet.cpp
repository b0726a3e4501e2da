#include "z123/nets/unet.hpp"

#include <cmath>
#include <set>

#include "z123/error.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/kernels/conv2d.hpp"
#include "z123/kernels/elementwise.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/kernels/norm.hpp"
#include "z123/kernels/winograd.hpp"
#include "z123/nets/blocks.hpp"

namespace z123::nets {

using namespace z123::kernels;

// ---------------------------------------------------------------------------------------------
const Tensor& TensorSlots::slot(const std::string& key, DType dtype, const std::vector<int64_t>& shape) {
  auto it = tensors_.find(key);
  if (it == tensors_.end() || it->second.shape != shape || it->second.dtype != dtype)
    it = tensors_
             .insert_or_assign(key,
                               make_tensor(device_, dtype, shape, label_ + key, vk::MemoryUsage::DeviceLocal, turn_))
             .first;
  return it->second;
}

const Tensor* TensorSlots::find(const std::string& key) const {
  auto it = tensors_.find(key);
  return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<std::string> TensorSlots::keys_ending(const std::string& suffix) const {
  std::vector<std::string> out;
  for (const auto& [key, t] : tensors_)
    if (key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(key.substr(0, key.size() - suffix.size()));
  return out;
}

uint64_t TensorSlots::bytes() const {
  uint64_t b = 0;
  for (const auto& [k, t] : tensors_) b += t.buf().size();
  return b;
}

namespace {

// An attn1 layer's slot in the reference cache: its keys and values ([B, N, 2C]).
constexpr char kRefSlot = 'r';

// Every attn1 layer's key, value and query projections as one [3C, C] weight, in that order: one
// GEMM instead of three, and its first 2C rows alone give keys and values. The query projection
// is kept alone as well (C² more, 25 MB in fp16 for v1.2): the write pass stores only keys and
// values, and takes its queries apart, into its scratch. Stored with the queries, the reference
// cache was half as large again, 127 against 85 MiB per step at 640x960 in fp16, and one
// reference pass for two steps holds twice as much (bench/NOTES.md session 26).
std::vector<FusedWeight> fused_self_attention(const UNetLayout& layout) {
  std::vector<FusedWeight> out;
  for (const std::string& attn1 : layout.self_attention_prefixes()) {
    out.push_back({attn1 + ".to_kvq.weight", {attn1 + ".to_k.weight", attn1 + ".to_v.weight", attn1 + ".to_q.weight"}});
    out.push_back({attn1 + ".to_q.weight", {attn1 + ".to_q.weight"}});
  }
  return out;
}

// The transformer blocks' LayerNorms folded into the projections that read them (LayerNormFold):
// norm1 into the self-attention's to_kvq and to_q, norm2 into the cross-attention's to_q, norm3
// into the feed-forward's GEGLU projection. With Z123_GEMM_LN=1 the GEMM that writes the rows
// (proj_in, the attentions' out projections) also writes their statistics, and the projections
// after the norm normalize in their epilogues (kernels::RowStats, NormalizedInput), so the
// normalized rows are never written: 48 passes fewer per step at 640x960 (bench/NOTES.md
// sessions 34-35). Otherwise a normalize-only pass feeds them (UNet::Pass::norm_rows).
std::vector<LayerNormFold> transformer_norm_folds(const UNetLayout& layout) {
  std::vector<LayerNormFold> out;
  const std::string attn1 = ".attn1";
  for (const std::string& self : layout.self_attention_prefixes()) {
    const std::string p = self.substr(0, self.size() - attn1.size()) + "."; // the block's prefix
    out.push_back({p + "norm1.weight", p + "norm1.bias", {self + ".to_kvq.weight", self + ".to_q.weight"}, {"", ""}});
    out.push_back({p + "norm2.weight", p + "norm2.bias", {p + "attn2.to_q.weight"}, {""}});
    out.push_back({p + "norm3.weight", p + "norm3.bias", {p + "ff.net.0.proj.weight"}, {p + "ff.net.0.proj.bias"}});
  }
  return out;
}

// The cross-attention keys and values of layer `attn2` (its checkpoint prefix): ctx projected.
void project_context(Kernels& k, vk::Recording& rec, const Weights& w, const Tensor& ctx, const std::string& attn2,
                     const Tensor& keys, const Tensor& values) {
  linear(k, rec, ctx, w.at(attn2 + ".to_k.weight"), nullptr, keys);
  linear(k, rec, ctx, w.at(attn2 + ".to_v.weight"), nullptr, values);
}

// The 3x3 conv weights stored in Winograd form (nets::conv then takes kernels::conv2d_winograd):
// the resnets' two convs and the upsamplers' outside the innermost level, where the route is
// chosen (kernels::winograd_chosen; under Tuning's auto, not in the low-memory layout, whose
// weights take turns with the activations: Winograd's are 16/9 the size). The innermost level
// (its down and up blocks and the mid block) stays direct: with it, the forced portable step on an
// H100 took 171.0-171.9 ms against 174.7 without, but the end-to-end image moved by 3 levels
// where the project keeps fp16 within 2 (its K of 11,520-23,040 makes the largest fp16 sums), and
// its 1280-channel weights are 390 MiB more in this form (bench/NOTES.md session 22, run 3).
std::set<std::string> winograd_convs(const Kernels& k, const UNetLayout& layout, size_t levels, DType storage,
                                     const WeightPlacement& placement) {
  std::set<std::string> out;
  if (placement.take_turns && k.tuning().conv_winograd == Tuning::ConvWinograd::Auto) return out;
  const auto take = [&](const std::string& weight, int64_t cin, int64_t cout) {
    if (winograd_chosen(k, storage, cin, cout)) out.insert(weight);
  };
  const auto take_resnet = [&](const ResnetDecl& r) {
    take(r.prefix + ".conv1.weight", r.in_channels, r.out_channels);
    take(r.prefix + ".conv2.weight", r.out_channels, r.out_channels);
  };
  for (size_t i = 0; i < layout.down.size() && i + 1 < levels; ++i)
    for (const UNetLayerDecl& layer : layout.down[i].layers) take_resnet(layer.resnet);
  for (size_t j = 0; j < layout.up.size(); ++j) {
    const UNetBlockDecl& block = layout.up[j];
    if (j > 0) // up[j] runs at level levels - 1 - j
      for (const UNetLayerDecl& layer : block.layers) take_resnet(layer.resnet);
    if (block.resampler) take(*block.resampler + ".weight", block.channels, block.channels); // output: level - 1
  }
  return out;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// One recorded forward pass: the context every block needs, and the reference bookkeeping.
struct UNet::Pass {
  NetContext c;
  const UNetConfig& cfg;
  const Tensor& ctx;
  RefMode mode;
  ReferenceCache* cache;
  ReferenceCache* context_kv; // cross-attention keys/values computed once per image, or nullptr
  const TimeBiases& time;
  int64_t ref_batch0 = 0; // the read pass's first batch row of the reference cache
  int attn1_left = 0;     // attn1 layers still to come; the write pass stops when it reaches 0

  bool done() const { return mode == RefMode::Write && attn1_left == 0; }

  // The row statistics that the projection writing a folded LayerNorm's input (proj_in, an out
  // projection) leaves for the projections after the norm (kernels::RowStats), in scratch; none
  // (cols 0) where its GEMM cannot write them or one of `readers` (the weights after the norm)
  // cannot merge them, and the norm then runs as its own pass (norm_rows).
  struct StatsOut {
    Tensor parts;
    uint32_t cols = 0;
    RowStats view() const { return {cols ? &parts : nullptr, cols}; } // points into this
  };
  StatsOut row_stats_for(const Tensor& out, std::initializer_list<const Tensor*> readers, const std::string& label) {
    const int64_t width = out.dim(-1);
    const uint32_t cols = linear_row_stats_cols(c.k, out.dtype, width);
    if (cols == 0) return {};
    for (const Tensor* w : readers)
      if (!linear_normalizes(c.k, out.dtype, w->dim(0), w->dim(1))) return {};
    return {c.ws.acquire(DType::F32, row_stats_shape(out.numel() / width, width, cols), label + ".stats"), cols};
  }
  void release(StatsOut& s) {
    if (s.cols) c.ws.release(s.parts);
    s.cols = 0;
  }

  // The rows the projections after a folded LayerNorm (transformer_norm_folds) read: h itself
  // where h's producer left its statistics (StatsOut, taken over here) and each of them applies
  // the norm in its GEMM, else h normalized once, without gamma and beta (folded into the
  // weights), into scratch.
  struct NormRows {
    Tensor rows;
    bool normalized = false; // rows is that scratch (released with release())
    StatsOut stats;          // else h's statistics
  };
  static constexpr float kLayerNormEps = 1e-5f;
  NormRows norm_rows(const Tensor& h, StatsOut stats, const std::string& norm) {
    if (stats.cols) return {h, false, stats};
    NormRows r{c.ws.acquire(h.dtype, h.shape, norm), true, {}};
    layer_norm_unscaled(c.k, c.rec, h, r.rows, kLayerNormEps);
    return r;
  }
  void release(NormRows& r) {
    if (r.normalized) c.ws.release(r.rows);
    release(r.stats);
  }
  // What a folded projection `weight` passes to linear(): its column sums and the rows'
  // statistics where the GEMM normalizes, nothing where the rows came normalized.
  struct FoldedInput {
    NormalizedInput norm;
    const NormalizedInput* ptr() const { return norm.colsum ? &norm : nullptr; }
  };
  FoldedInput folded_input(const NormRows& r, const std::string& weight) const {
    if (r.normalized) return {};
    return {{&c.w.at(ln_colsum_name(weight)), kLayerNormEps, r.stats.view()}};
  }

  // An attn1 layer on the rows of its LayerNorm 1 (norm_rows: released here), with `residual` added.
  // The read pass (and a plain one) takes keys, values and queries from one GEMM (the fused
  // to_kvq weight, [B, N, 3C] out, keys at column 0, values at C, queries at 2C) and attends over
  // [own tokens; the reference slot's tokens] (the slot's batch rows from ref_batch0). The write
  // pass projects keys and values (to_kvq's first 2C rows) into the layer's reference slot and
  // its queries (to_q alone) into scratch, and attends over the slot; its last layer projects only
  // keys and values and returns an empty tensor, since the rest of the pass is dead work.
  // out_stats: the out projection's row statistics (for norm2).
  Tensor self_attention(const std::string& layer, NormRows& n, const Tensor& residual, int64_t heads,
                        const StatsOut& out_stats) {
    const Tensor& x = n.rows;
    const DType dt = x.dtype;
    const int64_t B = x.dim(0), N = x.dim(1), C = x.dim(2);
    const std::string kvq_name = layer + ".to_kvq.weight", q_name = layer + ".to_q.weight";
    const Tensor& w_kvq = c.w.at(kvq_name);
    const AttentionParams params{heads, C / heads, 0.0f, false};
    Tensor a;
    if (mode == RefMode::Write) {
      // Prefixes of the same buffers: rows 0 .. 2C.
      Tensor w_kv = w_kvq, b_kv = c.w.at(ln_bias_name(kvq_name));
      w_kv.shape = {2 * C, C};
      b_kv.shape = {2 * C};
      FoldedInput in_kv = folded_input(n, kvq_name);
      Tensor colsum_kv;
      if (in_kv.norm.colsum) {
        colsum_kv = *in_kv.norm.colsum;
        colsum_kv.shape = {2 * C};
        in_kv.norm.colsum = &colsum_kv;
      }
      const Tensor& kv = cache->slot(layer, kRefSlot, dt, {B, N, 2 * C});
      linear(c.k, c.rec, x, w_kv, &b_kv, kv, Epilogue::None, nullptr, in_kv.ptr());
      if (--attn1_left == 0) {
        release(n);
        return {};
      }
      Tensor q = c.ws.acquire(dt, {B, N, C}, layer + ".q");
      const FoldedInput in_q = folded_input(n, q_name);
      linear(c.k, c.rec, x, c.w.at(q_name), &c.w.at(ln_bias_name(q_name)), q, Epilogue::None, nullptr, in_q.ptr());
      release(n);
      a = c.ws.acquire(dt, {B, N, C}, layer + ".to_out.0.in");
      attention(c.k, c.rec, {&q}, {&kv, 0, 0}, {&kv, 0, C}, a, params);
      c.ws.release(q);
    } else {
      Tensor kvq = c.ws.acquire(dt, {B, N, 3 * C}, layer + ".kvq");
      const FoldedInput in_kvq = folded_input(n, kvq_name);
      linear(c.k, c.rec, x, w_kvq, &c.w.at(ln_bias_name(kvq_name)), kvq, Epilogue::None, nullptr, in_kvq.ptr());
      release(n);
      AttnOperand ref_k, ref_v;
      if (mode == RefMode::Read) {
        const Tensor* ref = cache ? cache->find(layer, kRefSlot) : nullptr;
        if (!ref) throw internal_error("UNet read pass: no stored reference for " + layer);
        ref_k = {ref, 0, 0, ref_batch0};
        ref_v = {ref, 0, C, ref_batch0};
      }
      a = c.ws.acquire(dt, {B, N, C}, layer + ".to_out.0.in");
      attention(c.k, c.rec, {&kvq, 0, 2 * C}, {&kvq, 0, 0}, {&kvq, 0, C}, a, params, ref_k, ref_v);
      c.ws.release(kvq);
    }
    Tensor out = c.ws.acquire(dt, {B, N, C}, layer + ".to_out.0");
    const RowStats stats = out_stats.view();
    linear(c.k, c.rec, a, c.w.at(layer + ".to_out.0.weight"), c.w.find(layer + ".to_out.0.bias"), out, Epilogue::None,
           &residual, nullptr, out_stats.cols ? &stats : nullptr);
    c.ws.release(a);
    return out;
  }

  // h_stats: h's row statistics where its producer wrote them (row_stats_for), taken over;
  // next_stats: where the block's output projection writes its own (for the next block's norm1).
  void transformer_block(const std::string& p, Tensor& h, StatsOut h_stats, int64_t heads, const StatsOut& next_stats) {
    const DType dt = h.dtype;
    const int64_t B = h.dim(0), N = h.dim(1), C = h.dim(2);
    const auto layers = [&](const std::string& attn) {
      return AttentionLayers{attn + ".to_q", attn + ".to_k", attn + ".to_v", attn + ".to_out.0"};
    };
    // attn1: self-attention.
    const std::string self = p + "attn1";
    NormRows n = norm_rows(h, h_stats, p + "norm1");
    const std::string q2 = p + "attn2.to_q.weight";
    StatsOut h1_stats = row_stats_for(h, {&c.w.at(q2)}, p + "attn1.to_out.0");
    Tensor h1 = self_attention(self, n, h, heads, h1_stats);
    c.ws.release(h);
    if (h1.shape.empty()) { // the write pass stored its last layer (the last block's: no next_stats)
      release(h1_stats);
      return;
    }
    // attn2: cross-attention to the text/image context.
    NormRows n2 = norm_rows(h1, h1_stats, p + "norm2");
    AttentionKeyValues cross_kv;
    cross_kv.source = &ctx;
    if (context_kv) { // filled by record_context(), once per image
      cross_kv.given_k = &context_kv->slot(p + "attn2", 'k', dt, {B, ctx.dim(1), C});
      cross_kv.given_v = &context_kv->slot(p + "attn2", 'v', dt, {B, ctx.dim(1), C});
    }
    const FoldedInput in_q2 = folded_input(n2, q2);
    const std::string w_in_name = p + "ff.net.0.proj.weight";
    const Tensor& w_in = c.w.at(w_in_name);
    StatsOut h2_stats = row_stats_for(h1, {&w_in}, p + "attn2.to_out.0");
    const RowStats h2_view = h2_stats.view();
    Tensor h2 =
        attention_block(c, layers(p + "attn2"), n2.rows, h1, heads, false, cross_kv, false,
                        {&c.w.at(ln_bias_name(q2)), in_q2.ptr(), n2.normalized}, h2_stats.cols ? &h2_view : nullptr);
    release(n2.stats); // the queries are recorded: attention_block released n2.rows where it owned them
    c.ws.release(h1);
    // Feed-forward: GEGLU (first half value, second half gate), then back to C.
    const Tensor& b_in = c.w.at(ln_bias_name(w_in_name));
    NormRows n3 = norm_rows(h2, h2_stats, p + "norm3");
    const FoldedInput in3 = folded_input(n3, w_in_name);
    Tensor g = c.ws.acquire(dt, {B, N, w_in.dim(0) / 2}, p + "ff.geglu");
    if (linear_geglu_fuses(c.k, dt, w_in.dim(0))) { // the gate in the projection's epilogue
      linear_geglu(c.k, c.rec, n3.rows, w_in, &b_in, g, in3.ptr());
    } else {
      Tensor proj = c.ws.acquire(dt, {B, N, w_in.dim(0)}, p + "ff.proj");
      linear(c.k, c.rec, n3.rows, w_in, &b_in, proj, Epilogue::None, nullptr, in3.ptr());
      geglu(c.k, c.rec, proj, g);
      c.ws.release(proj);
    }
    release(n3);
    h = c.ws.acquire(dt, {B, N, C}, p + "h3");
    const RowStats next_view = next_stats.view();
    linear(c.k, c.rec, g, c.w.at(p + "ff.net.2.weight"), &c.w.at(p + "ff.net.2.bias"), h, Epilogue::None, &h2, nullptr,
           next_stats.cols ? &next_view : nullptr);
    c.ws.release(g);
    c.ws.release(h2);
  }
  // The statistics of the rows that the block with prefix `p` (ending in ".") reads, for its norm1.
  StatsOut norm1_stats_for(const Tensor& h, const std::string& p) {
    const std::string attn1 = p + "attn1";
    return row_stats_for(h, {&c.w.at(attn1 + ".to_kvq.weight"), &c.w.at(attn1 + ".to_q.weight")}, p + "norm1");
  }

  // Transformer2DModel with linear projections (spec §9.5) on x [B, H, W, C]; returns the output
  // (x + proj_out(...)), or an empty tensor when the write pass has stored its last layer.
  Tensor transformer(const TransformerDecl& decl, const Tensor& x) {
    const std::string p = decl.prefix + ".";
    const DType dt = x.dtype;
    const int64_t B = x.dim(0), C = x.dim(-1), N = x.numel() / (B * C);
    Tensor tokens = x;
    tokens.shape = {B, N, C};
    Tensor n = c.ws.acquire(dt, {B, N, C}, p + "norm");
    group_norm(c.k, c.rec, tokens, c.w.at(p + "norm.weight"), c.w.at(p + "norm.bias"), n, cfg.norm_num_groups, 1e-6f,
               false);
    Tensor h = c.ws.acquire(dt, {B, N, C}, p + "proj_in");
    // h's row statistics come from the GEMM that writes it: proj_in for the first block, the
    // previous block's feed-forward output projection for the others.
    StatsOut h_stats = norm1_stats_for(h, decl.block_prefix(0) + ".");
    const RowStats proj_in_stats = h_stats.view();
    linear(c.k, c.rec, n, c.w.at(p + "proj_in.weight"), &c.w.at(p + "proj_in.bias"), h, Epilogue::None, nullptr,
           nullptr, h_stats.cols ? &proj_in_stats : nullptr);
    c.ws.release(n);
    for (int64_t t = 0; t < decl.blocks; ++t) {
      StatsOut next = t + 1 < decl.blocks ? norm1_stats_for(h, decl.block_prefix(t + 1) + ".") : StatsOut{};
      transformer_block(decl.block_prefix(t) + ".", h, h_stats, decl.heads, next);
      h_stats = next;
      if (done()) {
        release(h_stats);
        return {};
      }
    }
    Tensor out = c.ws.acquire(dt, x.shape, p + "proj_out");
    Tensor out_tokens = out;
    out_tokens.shape = {B, N, C};
    linear(c.k, c.rec, h, c.w.at(p + "proj_out.weight"), &c.w.at(p + "proj_out.bias"), out_tokens, Epilogue::None,
           &tokens);
    return out;
  }

  Tensor resnet(const ResnetDecl& decl, const Tensor& x) {
    const Tensor* bias = time.find(decl.prefix);
    if (!bias) throw internal_error("UNet pass: no time bias for " + decl.prefix + " (record_time first)");
    const float eps = static_cast<float>(cfg.norm_eps);
    if (!time.per_row()) return resnet_block(c, decl.prefix, x, decl.out_channels, cfg.norm_num_groups, eps, bias);
    if (bias->dim(0) != x.dim(0))
      throw internal_error("UNet pass: " + std::to_string(bias->dim(0)) + " rows of time injection for a batch of " +
                           std::to_string(x.dim(0)));
    return resnet_block(c, decl.prefix, x, decl.out_channels, cfg.norm_num_groups, eps, nullptr, bias);
  }
};

// ---------------------------------------------------------------------------------------------
UNet::UNet(Kernels& kernels, const ModelFolder& folder, DType storage, WeightUploads* deferred,
           WeightPlacement placement)
    : k_(kernels), config_(folder.configs().unet), layout_(unet_layout(config_)),
      weights_(kernels.device(), folder, ModelModule::Unet, storage, placement, deferred, fused_self_attention(layout_),
               winograd_convs(kernels, layout_, config_.levels(), storage, placement),
               transformer_norm_folds(layout_)) {}

std::vector<float> UNet::timestep_frequencies(float t) const {
  const int dim = config_.block_out_channels[0];
  const int half = dim / 2;
  std::vector<float> e(static_cast<size_t>(dim));
  for (int i = 0; i < half; ++i) {
    // fp32 like diffusers' get_timestep_embedding: exponent / (half - shift), exp, times t.
    float exponent = -std::log(10000.0f) * static_cast<float>(i) / static_cast<float>(half - config_.freq_shift);
    float arg = t * std::exp(exponent);
    float s = std::sin(arg), co = std::cos(arg);
    e[static_cast<size_t>(i)] = config_.flip_sin_to_cos ? co : s;
    e[static_cast<size_t>(half + i)] = config_.flip_sin_to_cos ? s : co;
  }
  return e;
}

void UNet::record_context(vk::Recording& rec, const Tensor& ctx, ReferenceCache& context_kv) {
  for (const std::string& layer : context_kv.layers('k')) {
    const Tensor* k = context_kv.find(layer, 'k');
    const Tensor* v = context_kv.find(layer, 'v');
    if (!v) throw internal_error("UNet context cache: no value slot for " + layer);
    if (k->dim(0) != ctx.dim(0) || k->dim(1) != ctx.dim(1))
      throw internal_error("UNet context cache: " + layer + " was recorded for another context shape");
    project_context(k_, rec, weights_, ctx, layer, *k, *v);
  }
}

Tensor UNet::record_silu_embedding(vk::Recording& rec, Workspace& ws, const Tensor& t_freq) {
  const DType dt = weights_.storage();
  const int64_t rows = t_freq.shape.size() == 2 ? t_freq.dim(0) : 0;
  if (rows < 1 || t_freq.dim(-1) != config_.block_out_channels[0])
    throw invalid_argument("UNet time input " + t_freq.describe() + " must be [rows, " +
                           std::to_string(config_.block_out_channels[0]) + "]");
  // Time embedding: linear_1 → SiLU → linear_2; every resnet then projects silu(emb).
  const Tensor& l1 = weights_.at("time_embedding.linear_1.weight");
  Tensor e1 = ws.acquire(dt, {rows, l1.dim(0)}, "time_embedding.linear_1");
  linear(k_, rec, t_freq, l1, &weights_.at("time_embedding.linear_1.bias"), e1, Epilogue::Silu);
  Tensor silu_emb = ws.acquire(dt, {rows, l1.dim(0)}, "silu(emb)");
  linear(k_, rec, e1, weights_.at("time_embedding.linear_2.weight"), &weights_.at("time_embedding.linear_2.bias"),
         silu_emb, Epilogue::Silu);
  ws.release(e1);
  return silu_emb;
}

void UNet::record_time_rows(vk::Recording& rec, Workspace& ws, const Tensor& t_freq, TimeBiases& out) {
  const DType dt = weights_.storage();
  Tensor silu_emb = record_silu_embedding(rec, ws, t_freq);
  kernels::WholeK whole_k(k_); // as in record_time
  for (const ResnetDecl* r : layout_.resnets()) {
    const std::string p = r->prefix + ".";
    linear(k_, rec, silu_emb, weights_.at(p + "time_emb_proj.weight"), &weights_.at(p + "time_emb_proj.bias"),
           out.row_slot(r->prefix, dt, t_freq.dim(0), r->out_channels));
  }
  ws.release(silu_emb);
}

void UNet::record_time(vk::Recording& rec, Workspace& ws, const Tensor& t_freq, TimeBiases& out) {
  const DType dt = weights_.storage();
  if (t_freq.shape.size() != 2 || t_freq.dim(0) != 1)
    throw invalid_argument("UNet time input " + t_freq.describe() + " must be one row [1, " +
                           std::to_string(config_.block_out_channels[0]) + "]: every batch row shares the timestep");
  Tensor silu_emb = record_silu_embedding(rec, ws, t_freq);
  // conv1.bias + time_emb_proj(silu(emb)): the checkpoint's conv1 bias rides in as the residual.
  // Unsplit, the resnets' products are independent and run side by side (kernels::WholeK); split,
  // they queued behind one another: 42.55-42.59 against 42.66-42.72 ms per step on an H100
  // (bench/NOTES.md session 18, run 4).
  kernels::WholeK whole_k(k_);
  for (const ResnetDecl* r : layout_.resnets()) {
    const std::string p = r->prefix + ".";
    Tensor bias = out.slot(r->prefix, dt, r->out_channels);
    bias.shape = {1, r->out_channels};
    Tensor conv1_bias = weights_.at(p + "conv1.bias");
    conv1_bias.shape = {1, r->out_channels};
    linear(k_, rec, silu_emb, weights_.at(p + "time_emb_proj.weight"), &weights_.at(p + "time_emb_proj.bias"), bias,
           Epilogue::None, &conv1_bias);
  }
  ws.release(silu_emb);
}

void UNet::record(vk::Recording& rec, Workspace& ws, const Tensor& sample, const TimeBiases& time, const Tensor& ctx,
                  const Tensor* out, RefMode mode, ReferenceCache* cache, ReferenceCache* context_kv,
                  int64_t ref_batch0) {
  const size_t levels = config_.levels();
  const DType dt = weights_.storage();
  const int64_t B = sample.dim(0);
  if (mode != RefMode::None && !cache) throw internal_error("UNet reference mode without a cache");
  if (mode != RefMode::Write && !out) throw internal_error("UNet pass without an output");
  if (sample.dim(1) % (1 << (levels - 1)) || sample.dim(2) % (1 << (levels - 1)))
    throw unsupported("UNet sample " + sample.describe() + ": height and width must be multiples of " +
                      std::to_string(1 << (levels - 1)));
  Pass P{{k_, rec, ws, weights_}, config_, ctx, mode, cache, context_kv, time, ref_batch0, 0};
  // The write pass knows where its useful work ends: after the last attn1 layer.
  if (mode == RefMode::Write) P.attn1_left = layout_.self_attention_layers();

  NetContext& c = P.c;
  Tensor x = conv(c, "conv_in", sample, layout_.base_channels, 1, 1, 1);
  // s0, s1, ...: popped last-in-first-out by the up blocks. A write pass that ends early returns
  // with them: their slots are free again when the vector goes.
  std::vector<Tensor> skips{x};
  for (const UNetBlockDecl& block : layout_.down) {
    for (const UNetLayerDecl& layer : block.layers) {
      Tensor r = P.resnet(layer.resnet, x); // x is a skip: kept
      if (layer.transformer) {
        r = P.transformer(*layer.transformer, r);
        if (P.done()) return;
      }
      x = r;
      skips.push_back(x);
    }
    if (block.resampler) {
      const int pad = config_.downsample_padding;
      x = conv(c, *block.resampler, x, block.channels, 2, pad, pad);
      skips.push_back(x);
    }
  }
  // Mid block: resnet, transformer, resnet.
  {
    Tensor m = P.resnet(layout_.mid_first, x);
    m = P.transformer(layout_.mid_transformer, m);
    if (P.done()) return;
    x = P.resnet(layout_.mid_second, m);
  }
  // Up blocks: each resnet takes cat([h, skip]) (current first, skip second, spec §17.19).
  for (const UNetBlockDecl& block : layout_.up) {
    for (const UNetLayerDecl& layer : block.layers) {
      Tensor skip = skips.back();
      skips.pop_back();
      if (skip.dim(1) != x.dim(1) || skip.dim(2) != x.dim(2))
        throw internal_error(block.prefix + ": skip " + skip.describe() + " does not match " + x.describe());
      Tensor cat = ws.acquire(dt, {B, x.dim(1), x.dim(2), x.dim(3) + skip.dim(3)}, block.prefix + ".cat");
      concat_channels(k_, rec, x, skip, cat);
      ws.release(x);
      ws.release(skip);
      x = P.resnet(layer.resnet, cat);
      ws.release(cat);
      if (layer.transformer) {
        x = P.transformer(*layer.transformer, x);
        if (P.done()) return;
      }
    }
    if (block.resampler) x = conv(c, *block.resampler, x, block.channels, 1, 1, 1, 2);
  }
  Tensor n = ws.acquire(dt, x.shape, "conv_norm_out");
  group_norm(k_, rec, x, weights_.at("conv_norm_out.weight"), weights_.at("conv_norm_out.bias"), n,
             config_.norm_num_groups, static_cast<float>(config_.norm_eps), true);
  conv2d(k_, rec, n, weights_.at("conv_out.weight"), &weights_.at("conv_out.bias"), *out, conv_pad(1));
}

} // namespace z123::nets
