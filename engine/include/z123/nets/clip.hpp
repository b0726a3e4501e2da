// The two CLIP towers of Zero123++ (spec §5, §6), built from their configs:
//  - ClipTextEncoder: token + position embedding, pre-LN encoder with a causal mask, final
//    LayerNorm → last_hidden_state. Zero123++ only ever encodes "" (ids 49406, 49407, 0 × 75),
//    so the engine runs it once per model and caches the result.
//  - ClipVisionEncoder: 14×14 patch embedding, class token, positions, pre_layrnorm, encoder,
//    post_layernorm on the class token, visual_projection → image_embeds (no normalization).
// Both share ClipEncoder (the networks' common attention_block with biases, exact-GELU MLP).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "z123/kernels/kernels.hpp"
#include "z123/model/configs.hpp"
#include "z123/nets/blocks.hpp"
#include "z123/nets/weights.hpp"
#include "z123/workspace.hpp"

namespace z123::nets {

// Records `layers` pre-LN transformer layers named "<prefix>.layers.<i>.…" onto h [B, N, C] in
// place (h is replaced by the output; its buffer may change).
struct ClipEncoderShape {
  int64_t layers, hidden, heads, intermediate;
  float eps;
  bool causal;
};
void record_clip_encoder(NetContext& c, const std::string& prefix, const ClipEncoderShape& shape, Tensor& h);

// The engine's MLP epilogue implements exact (erf) GELU, which both v1.2 towers use; quick_gelu
// configs are rejected with a message naming the file.
void require_exact_gelu(const std::string& config_file, ClipActivation act);

class ClipTextEncoder {
public:
  // deferred: see Weights (the weights must be uploaded before the encoder runs).
  ClipTextEncoder(kernels::Kernels& kernels, const ModelFolder& folder, DType storage,
                  WeightUploads* deferred = nullptr);
  // Runs the encoder on one sequence of max_position_embeddings ids; returns [1, N, hidden].
  Tensor encode(const std::vector<int32_t>& ids);
  // The same, recorded into `rec` (scratch from `ws`) to run later.
  Tensor record_encode(vk::Recording& rec, Workspace& ws, const std::vector<int32_t>& ids);
  // The ids Zero123++ uses for the empty prompt: BOS, EOS, then pad id 0 (spec §5.1).
  std::vector<int32_t> empty_prompt_ids() const;
  const ClipTextConfig& config() const { return config_; }
  uint64_t weight_bytes() const { return weights_.device_bytes(); }

private:
  kernels::Kernels& k_;
  ClipTextConfig config_;
  Weights weights_;
};

class ClipVisionEncoder {
public:
  // weights_usage: vk::MemoryUsage::HostStreamed keeps the 1.2 GiB of v1.2 weights in host
  // memory on discrete GPUs (the encoder runs once per image).
  ClipVisionEncoder(kernels::Kernels& kernels, const ModelFolder& folder, DType storage,
                    vk::MemoryUsage weights_usage = vk::MemoryUsage::DeviceLocal, WeightUploads* deferred = nullptr);
  // pixels: NHWC [B, image_size, image_size, 3] (normalized); image_embeds: [B, projection_dim].
  void record(vk::Recording& rec, Workspace& ws, const Tensor& pixels, const Tensor& image_embeds);
  const ClipVisionConfig& config() const { return config_; }
  uint64_t weight_bytes() const { return weights_.device_bytes(); }

private:
  kernels::Kernels& k_;
  ClipVisionConfig config_;
  Weights weights_;
};

} // namespace z123::nets
