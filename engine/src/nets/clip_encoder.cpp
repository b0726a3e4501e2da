// The pre-LN transformer layer shared by both CLIP towers (spec §5.2, §6):
//   h = h + out_proj(Attn(LN1(h)));  h = h + fc2(gelu(fc1(LN2(h))))
#include "z123/error.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/kernels/matmul.hpp"
#include "z123/kernels/norm.hpp"
#include "z123/nets/clip.hpp"

namespace z123::nets {

using namespace z123::kernels;

void require_exact_gelu(const std::string& config_file, ClipActivation act) {
  if (act != ClipActivation::Gelu)
    throw unsupported(config_file + ": hidden_act \"" + clip_activation_name(act) +
                      "\" is not implemented; Zero123++ uses \"gelu\"");
}

void record_clip_encoder(Kernels& k, vk::Recording& rec, Workspace& ws, const Weights& w, const std::string& prefix,
                         const ClipEncoderShape& s, Tensor& h) {
  const DType dt = h.dtype;
  const int64_t B = h.dim(0), N = h.dim(1), C = s.hidden;
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string p = prefix + ".layers." + std::to_string(l) + ".";
    Tensor n = ws.acquire(dt, {B, N, C}, "ln");
    layer_norm(k, rec, h, w.at(p + "layer_norm1.weight"), w.at(p + "layer_norm1.bias"), n, s.eps);
    Tensor q = ws.acquire(dt, {B, N, C}, "q"), kk = ws.acquire(dt, {B, N, C}, "k"), v = ws.acquire(dt, {B, N, C}, "v");
    linear(k, rec, n, w.at(p + "self_attn.q_proj.weight"), &w.at(p + "self_attn.q_proj.bias"), q);
    linear(k, rec, n, w.at(p + "self_attn.k_proj.weight"), &w.at(p + "self_attn.k_proj.bias"), kk);
    linear(k, rec, n, w.at(p + "self_attn.v_proj.weight"), &w.at(p + "self_attn.v_proj.bias"), v);
    Tensor a = ws.acquire(dt, {B, N, C}, "attn");
    attention(k, rec, {&q}, {&kk}, {&v}, a, {s.heads, C / s.heads, 0.0f, s.causal});
    ws.release(q);
    ws.release(kk);
    ws.release(v);
    Tensor h2 = ws.acquire(dt, {B, N, C}, "h");
    linear(k, rec, a, w.at(p + "self_attn.out_proj.weight"), &w.at(p + "self_attn.out_proj.bias"), h2, Epilogue::None,
           &h);
    ws.release(a);
    ws.release(h);
    layer_norm(k, rec, h2, w.at(p + "layer_norm2.weight"), w.at(p + "layer_norm2.bias"), n, s.eps);
    Tensor f = ws.acquire(dt, {B, N, s.intermediate}, "mlp");
    linear(k, rec, n, w.at(p + "mlp.fc1.weight"), &w.at(p + "mlp.fc1.bias"), f, Epilogue::Gelu);
    ws.release(n);
    h = ws.acquire(dt, {B, N, C}, "h");
    linear(k, rec, f, w.at(p + "mlp.fc2.weight"), &w.at(p + "mlp.fc2.bias"), h, Epilogue::None, &h2);
    ws.release(f);
    ws.release(h2);
  }
}

} // namespace z123::nets
