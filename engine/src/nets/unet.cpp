#include "z123/nets/unet.hpp"

#include <cmath>

#include "z123/error.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/kernels/conv2d.hpp"
#include "z123/kernels/elementwise.hpp"
#include "z123/kernels/matmul.hpp"
#include "z123/kernels/norm.hpp"
#include "z123/nets/blocks.hpp"

namespace z123::nets {

using namespace z123::kernels;

// ---------------------------------------------------------------------------------------------
const Tensor& ReferenceCache::slot(const std::string& layer, char kv, DType dtype, const std::vector<int64_t>& shape) {
  std::string key = layer + "." + kv;
  auto it = tensors_.find(key);
  if (it == tensors_.end() || it->second.shape != shape || it->second.dtype != dtype)
    it = tensors_.insert_or_assign(key, make_tensor(device_, dtype, shape, "ref." + key)).first;
  return it->second;
}

const Tensor* ReferenceCache::find(const std::string& layer, char kv) const {
  auto it = tensors_.find(layer + "." + kv);
  return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<std::string> ReferenceCache::layers(char kv) const {
  std::vector<std::string> out;
  const std::string suffix = std::string(".") + kv;
  for (const auto& [key, t] : tensors_)
    if (key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(key.substr(0, key.size() - suffix.size()));
  return out;
}

uint64_t ReferenceCache::bytes() const {
  uint64_t b = 0;
  for (const auto& [k, t] : tensors_) b += t.buf().size();
  return b;
}

namespace {

// The cross-attention keys and values of layer `attn2` (its checkpoint prefix): ctx projected.
void project_context(Kernels& k, vk::Recording& rec, const Weights& w, const Tensor& ctx, const std::string& attn2,
                     const Tensor& keys, const Tensor& values) {
  linear(k, rec, ctx, w.at(attn2 + ".to_k.weight"), nullptr, keys);
  linear(k, rec, ctx, w.at(attn2 + ".to_v.weight"), nullptr, values);
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
  Tensor silu_emb;
  int attn1_left = 0; // attn1 layers still to come; the write pass stops when it reaches 0

  bool done() const { return mode == RefMode::Write && attn1_left == 0; }

  void transformer_block(const std::string& p, Tensor& h, int64_t heads) {
    const DType dt = h.dtype;
    const int64_t B = h.dim(0), N = h.dim(1), C = h.dim(2);
    const float ln_eps = 1e-5f;
    const AttentionParams ap{heads, C / heads, 0.0f, false};
    // attn1: self-attention (+ reference tokens in read mode).
    Tensor n = c.ws.acquire(dt, {B, N, C}, p + "norm1");
    layer_norm(c.k, c.rec, h, c.w.at(p + "norm1.weight"), c.w.at(p + "norm1.bias"), n, ln_eps);
    const std::string layer = p + "attn1";
    Tensor kk, vv;
    if (mode == RefMode::Write) {
      kk = cache->slot(layer, 'k', dt, {B, N, C});
      vv = cache->slot(layer, 'v', dt, {B, N, C});
    } else {
      kk = c.ws.acquire(dt, {B, N, C}, p + "attn1.k");
      vv = c.ws.acquire(dt, {B, N, C}, p + "attn1.v");
    }
    linear(c.k, c.rec, n, c.w.at(p + "attn1.to_k.weight"), nullptr, kk);
    linear(c.k, c.rec, n, c.w.at(p + "attn1.to_v.weight"), nullptr, vv);
    if (mode == RefMode::Write && --attn1_left == 0) {
      c.ws.release(n); // the last stored layer: everything after it is dead work
      c.ws.release(h);
      return;
    }
    Tensor q = c.ws.acquire(dt, {B, N, C}, p + "attn1.q");
    linear(c.k, c.rec, n, c.w.at(p + "attn1.to_q.weight"), nullptr, q);
    c.ws.release(n);
    Tensor a = c.ws.acquire(dt, {B, N, C}, p + "attn1.out");
    AttnOperand k2, v2;
    if (mode == RefMode::Read) {
      const Tensor* rk = cache ? cache->find(layer, 'k') : nullptr;
      const Tensor* rv = cache ? cache->find(layer, 'v') : nullptr;
      if (!rk || !rv) throw internal_error("UNet read pass: no stored reference for " + layer);
      k2 = {rk};
      v2 = {rv};
    }
    attention(c.k, c.rec, {&q}, {&kk}, {&vv}, a, ap, k2, v2);
    c.ws.release(q);
    if (mode != RefMode::Write) {
      c.ws.release(kk);
      c.ws.release(vv);
    }
    Tensor h1 = c.ws.acquire(dt, {B, N, C}, p + "h1");
    linear(c.k, c.rec, a, c.w.at(p + "attn1.to_out.0.weight"), &c.w.at(p + "attn1.to_out.0.bias"), h1, Epilogue::None,
           &h);
    c.ws.release(a);
    c.ws.release(h);
    // attn2: cross-attention to the text/image context.
    const int64_t L = ctx.dim(1);
    Tensor n2 = c.ws.acquire(dt, {B, N, C}, p + "norm2");
    layer_norm(c.k, c.rec, h1, c.w.at(p + "norm2.weight"), c.w.at(p + "norm2.bias"), n2, ln_eps);
    Tensor q2 = c.ws.acquire(dt, {B, N, C}, p + "attn2.q");
    linear(c.k, c.rec, n2, c.w.at(p + "attn2.to_q.weight"), nullptr, q2);
    c.ws.release(n2);
    Tensor k2t, v2t;
    if (context_kv) { // filled by record_context(), once per image
      k2t = context_kv->slot(p + "attn2", 'k', dt, {B, L, C});
      v2t = context_kv->slot(p + "attn2", 'v', dt, {B, L, C});
    } else {
      k2t = c.ws.acquire(dt, {B, L, C}, p + "attn2.k");
      v2t = c.ws.acquire(dt, {B, L, C}, p + "attn2.v");
      project_context(c.k, c.rec, c.w, ctx, p + "attn2", k2t, v2t);
    }
    Tensor a2 = c.ws.acquire(dt, {B, N, C}, p + "attn2.out");
    attention(c.k, c.rec, {&q2}, {&k2t}, {&v2t}, a2, ap);
    c.ws.release(q2);
    if (!context_kv) {
      c.ws.release(k2t);
      c.ws.release(v2t);
    }
    Tensor h2 = c.ws.acquire(dt, {B, N, C}, p + "h2");
    linear(c.k, c.rec, a2, c.w.at(p + "attn2.to_out.0.weight"), &c.w.at(p + "attn2.to_out.0.bias"), h2, Epilogue::None,
           &h1);
    c.ws.release(a2);
    c.ws.release(h1);
    // Feed-forward: GEGLU (first half value, second half gate), then back to C.
    Tensor n3 = c.ws.acquire(dt, {B, N, C}, p + "norm3");
    layer_norm(c.k, c.rec, h2, c.w.at(p + "norm3.weight"), c.w.at(p + "norm3.bias"), n3, ln_eps);
    const Tensor& w_in = c.w.at(p + "ff.net.0.proj.weight");
    Tensor proj = c.ws.acquire(dt, {B, N, w_in.dim(0)}, p + "ff.proj");
    linear(c.k, c.rec, n3, w_in, &c.w.at(p + "ff.net.0.proj.bias"), proj);
    c.ws.release(n3);
    Tensor g = c.ws.acquire(dt, {B, N, w_in.dim(0) / 2}, p + "ff.geglu");
    geglu(c.k, c.rec, proj, g);
    c.ws.release(proj);
    h = c.ws.acquire(dt, {B, N, C}, p + "h3");
    linear(c.k, c.rec, g, c.w.at(p + "ff.net.2.weight"), &c.w.at(p + "ff.net.2.bias"), h, Epilogue::None, &h2);
    c.ws.release(g);
    c.ws.release(h2);
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
    linear(c.k, c.rec, n, c.w.at(p + "proj_in.weight"), &c.w.at(p + "proj_in.bias"), h);
    c.ws.release(n);
    for (int64_t t = 0; t < decl.blocks; ++t) {
      transformer_block(decl.block_prefix(t) + ".", h, decl.heads);
      if (done()) return {};
    }
    Tensor out = c.ws.acquire(dt, x.shape, p + "proj_out");
    Tensor out_tokens = out;
    out_tokens.shape = {B, N, C};
    linear(c.k, c.rec, h, c.w.at(p + "proj_out.weight"), &c.w.at(p + "proj_out.bias"), out_tokens, Epilogue::None,
           &tokens);
    c.ws.release(h);
    return out;
  }

  Tensor resnet(const ResnetDecl& decl, const Tensor& x) {
    return resnet_block(c, decl.prefix, x, decl.out_channels, cfg.norm_num_groups, static_cast<float>(cfg.norm_eps),
                        &silu_emb);
  }
};

// ---------------------------------------------------------------------------------------------
UNet::UNet(Kernels& kernels, const ModelFolder& folder, DType storage, WeightUploads* deferred,
           WeightPlacement placement)
    : k_(kernels), config_(folder.configs().unet), layout_(unet_layout(config_)),
      weights_(kernels.device(), folder, ModelModule::Unet, storage, placement, deferred) {}

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

void UNet::record(vk::Recording& rec, Workspace& ws, const Tensor& sample, const Tensor& t_freq, const Tensor& ctx,
                  const Tensor* out, RefMode mode, ReferenceCache* cache, ReferenceCache* context_kv) {
  const size_t levels = config_.levels();
  const DType dt = weights_.storage();
  const int64_t B = sample.dim(0);
  if (mode != RefMode::None && !cache) throw internal_error("UNet reference mode without a cache");
  if (mode != RefMode::Write && !out) throw internal_error("UNet pass without an output");
  if (sample.dim(1) % (1 << (levels - 1)) || sample.dim(2) % (1 << (levels - 1)))
    throw unsupported("UNet sample " + sample.describe() + ": height and width must be multiples of " +
                      std::to_string(1 << (levels - 1)));
  Pass P{{k_, rec, ws, weights_}, config_, ctx, mode, cache, context_kv, {}, 0};
  // The write pass knows where its useful work ends: after the last attn1 layer.
  if (mode == RefMode::Write) P.attn1_left = layout_.self_attention_layers();

  // Time embedding: linear_1 → SiLU → linear_2; every resnet then takes silu(emb).
  const Tensor& l1 = weights_.at("time_embedding.linear_1.weight");
  Tensor e1 = ws.acquire(dt, {B, l1.dim(0)}, "time_embedding.linear_1");
  linear(k_, rec, t_freq, l1, &weights_.at("time_embedding.linear_1.bias"), e1, Epilogue::Silu);
  P.silu_emb = ws.acquire(dt, {B, l1.dim(0)}, "silu(emb)");
  linear(k_, rec, e1, weights_.at("time_embedding.linear_2.weight"), &weights_.at("time_embedding.linear_2.bias"),
         P.silu_emb, Epilogue::Silu);
  ws.release(e1);

  NetContext& c = P.c;
  Tensor x = conv(c, "conv_in", sample, layout_.base_channels, 1, 1, 1);
  std::vector<Tensor> skips{x}; // s0, s1, ...: popped last-in-first-out by the up blocks
  // The write pass ends at the last attn1: give every held buffer back to the workspace.
  auto end_write_pass = [&]() {
    for (Tensor& s : skips) ws.release(s);
    ws.release(P.silu_emb);
  };
  for (const UNetBlockDecl& block : layout_.down) {
    for (const UNetLayerDecl& layer : block.layers) {
      Tensor r = P.resnet(layer.resnet, x); // x is a skip: kept
      if (layer.transformer) {
        Tensor t = P.transformer(*layer.transformer, r);
        ws.release(r);
        if (P.done()) return end_write_pass();
        r = t;
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
  Tensor m = P.resnet(layout_.mid_first, x);
  {
    Tensor t = P.transformer(layout_.mid_transformer, m);
    ws.release(m);
    if (P.done()) return end_write_pass();
    m = t;
  }
  x = P.resnet(layout_.mid_second, m);
  ws.release(m);
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
        Tensor t = P.transformer(*layer.transformer, x);
        ws.release(x);
        if (P.done()) return end_write_pass();
        x = t;
      }
    }
    if (block.resampler) {
      Tensor u = conv(c, *block.resampler, x, block.channels, 1, 1, 1, 2);
      ws.release(x);
      x = u;
    }
  }
  Tensor n = ws.acquire(dt, x.shape, "conv_norm_out");
  group_norm(k_, rec, x, weights_.at("conv_norm_out.weight"), weights_.at("conv_norm_out.bias"), n,
             config_.norm_num_groups, static_cast<float>(config_.norm_eps), true);
  ws.release(x);
  conv2d(k_, rec, n, weights_.at("conv_out.weight"), &weights_.at("conv_out.bias"), *out, conv_pad(1));
  ws.release(n);
  ws.release(P.silu_emb);
}

} // namespace z123::nets
