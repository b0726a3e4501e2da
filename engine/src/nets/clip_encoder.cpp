// The pre-LN transformer layer shared by both CLIP towers (spec §5.2, §6):
//   h = h + out_proj(Attn(LN1(h)));  h = h + fc2(gelu(fc1(LN2(h))))
#include "z123/error.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/kernels/norm.hpp"
#include "z123/nets/blocks.hpp"
#include "z123/nets/clip.hpp"

namespace z123::nets {

using namespace z123::kernels;

void require_exact_gelu(const std::string& config_file, ClipActivation act) {
  if (act != ClipActivation::Gelu)
    throw unsupported(config_file + ": hidden_act \"" + clip_activation_name(act) +
                      "\" is not implemented; Zero123++ uses \"gelu\"");
}

void record_clip_encoder(NetContext& c, const std::string& prefix, const ClipEncoderShape& s, Tensor& h) {
  const DType dt = h.dtype;
  const int64_t B = h.dim(0), N = h.dim(1), C = s.hidden;
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string p = prefix + ".layers." + std::to_string(l) + ".";
    Tensor n = c.ws.acquire(dt, {B, N, C}, "ln");
    layer_norm(c.k, c.rec, h, c.w.at(p + "layer_norm1.weight"), c.w.at(p + "layer_norm1.bias"), n, s.eps);
    const std::string a = p + "self_attn.";
    Tensor h2 = attention_block(c, {a + "q_proj", a + "k_proj", a + "v_proj", a + "out_proj"}, std::move(n), h, s.heads,
                                s.causal);
    c.ws.release(h);
    Tensor n2 = c.ws.acquire(dt, {B, N, C}, "ln");
    layer_norm(c.k, c.rec, h2, c.w.at(p + "layer_norm2.weight"), c.w.at(p + "layer_norm2.bias"), n2, s.eps);
    Tensor f = c.ws.acquire(dt, {B, N, s.intermediate}, "mlp");
    linear(c.k, c.rec, n2, c.w.at(p + "mlp.fc1.weight"), &c.w.at(p + "mlp.fc1.bias"), f, Epilogue::Gelu);
    c.ws.release(n2);
    h = c.ws.acquire(dt, {B, N, C}, "h");
    linear(c.k, c.rec, f, c.w.at(p + "mlp.fc2.weight"), &c.w.at(p + "mlp.fc2.bias"), h, Epilogue::None, &h2);
  } // f and h2 go with the loop body
}

} // namespace z123::nets
