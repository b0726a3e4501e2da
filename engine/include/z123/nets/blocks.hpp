// Building blocks shared by the VAE and the UNet, named after their diffusers classes. Each
// records into a Recording, takes its weights by checkpoint prefix, and returns a new NHWC
// tensor from the workspace; the input is left alone (the UNet keeps some as skips), so callers
// release it when they no longer need it.
#pragma once

#include <string>

#include "z123/kernels/kernels.hpp"
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
// h = conv2(silu(norm2(h))), out = (conv_shortcut(x) or x) + h.
// silu_emb: [B, T] = silu(time embedding), or nullptr (VAE: no time embedding).
Tensor resnet_block(NetContext& c, const std::string& prefix, const Tensor& x, int64_t cout, int groups, float eps,
                    const Tensor* silu_emb = nullptr);

// The VAE's mid-block Attention (spec §8.1): single head over all H·W tokens, GroupNorm input,
// q/k/v/out with biases, residual.
Tensor vae_attention(NetContext& c, const std::string& prefix, const Tensor& x, int groups, float eps);

// Conv2d by checkpoint prefix ("<prefix>.weight", optional "<prefix>.bias") into a new tensor.
Tensor conv(NetContext& c, const std::string& prefix, const Tensor& x, int64_t cout, int stride, int pad_tl, int pad_br,
            int upsample = 1, const Tensor* residual = nullptr);

} // namespace z123::nets
