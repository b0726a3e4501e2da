// AutoencoderKL (spec §8), built from vae/config.json: the encoder to posterior moments and the
// decoder from latents to images. Tensors are NHWC; moments are [B, h, w, 2·latent] with the
// mean in the first half of the channels and the log-variance (unclamped) in the second.
#pragma once

#include "z123/kernels/kernels.hpp"
#include "z123/model/configs.hpp"
#include "z123/model/vae_layout.hpp"
#include "z123/nets/weights.hpp"
#include "z123/workspace.hpp"

namespace z123::nets {

class Vae {
public:
  // deferred: see Weights.
  Vae(kernels::Kernels& kernels, const ModelFolder& folder, DType storage, WeightUploads* deferred = nullptr);

  // image: [B, H, W, in_channels] → moments: [B, H/f, W/f, 2·latent_channels], f = 2^(levels-1).
  void record_encode(vk::Recording& rec, Workspace& ws, const Tensor& image, const Tensor& moments);
  // latent: [B, h, w, latent_channels] → image: [B, h·f, w·f, out_channels].
  void record_decode(vk::Recording& rec, Workspace& ws, const Tensor& latent, const Tensor& image);

  const VaeConfig& config() const { return config_; }
  int64_t downscale() const { return int64_t(1) << (config_.block_out_channels.size() - 1); }
  uint64_t weight_bytes() const { return weights_.device_bytes(); }

private:
  kernels::Kernels& k_;
  VaeConfig config_;
  VaeLayout layout_; // the structure encode and decode walk (model/vae_layout.hpp)
  Weights weights_;
};

} // namespace z123::nets
