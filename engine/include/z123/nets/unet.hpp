// UNet2DConditionModel (spec §9) with Zero123++'s reference attention (spec §10), built from
// unet/config.json. Tensors are NHWC. Modes:
//  - RefMode::None: the plain diffusers UNet.
//  - RefMode::Write: the reference pass. Every self-attention (attn1) layer stores the keys and
//    values of its LayerNorm-1 output (to_k(n1), to_v(n1): the same weights the read pass would
//    apply, so storing projections is equivalent to storing n1 and cheaper). Computation stops
//    after the last attn1 has stored its input: the rest of the reference UNet is dead work, and
//    `out` is not written (may be nullptr).
//  - RefMode::Read: the main pass. Every attn1 attends over [own tokens; stored reference
//    tokens] (keys/values only; queries from the own tokens), batch row b with reference row b.
#pragma once

#include <map>
#include <string>

#include "z123/kernels/kernels.hpp"
#include "z123/model/configs.hpp"
#include "z123/nets/weights.hpp"
#include "z123/workspace.hpp"

namespace z123::nets {

enum class RefMode { None, Write, Read };

// Reference keys/values per attn1 layer (keyed by the layer's checkpoint prefix). Owns its
// buffers so they outlive the write pass's workspace use and are reused across steps.
class ReferenceCache {
public:
  explicit ReferenceCache(vk::Device& device) : device_(device) {}
  // The K or V tensor of a layer, created on first use with this shape.
  const Tensor& slot(const std::string& layer, char kv, DType dtype, const std::vector<int64_t>& shape);
  const Tensor* find(const std::string& layer, char kv) const;
  uint64_t bytes() const;

private:
  vk::Device& device_;
  std::map<std::string, Tensor> tensors_;
};

class UNet {
public:
  // deferred: see Weights.
  UNet(kernels::Kernels& kernels, const ModelFolder& folder, DType storage, WeightUploads* deferred = nullptr);

  // sample: [B, h, w, in_channels]; t_freq: [B, block_out_channels[0]] sinusoidal embedding of the
  // timestep (timestep_frequencies()); ctx: [B, 77, cross_attention_dim]; out: [B, h, w, out_ch].
  void record(vk::Recording& rec, Workspace& ws, const Tensor& sample, const Tensor& t_freq, const Tensor& ctx,
              const Tensor* out, RefMode mode = RefMode::None, ReferenceCache* cache = nullptr);

  // The sinusoidal timestep embedding in fp32 on the host (spec §9.2): [cos, sin] with
  // flip_sin_to_cos, frequencies exp(-ln(10000)·k/(half - freq_shift)).
  std::vector<float> timestep_frequencies(float t) const;

  const UNetConfig& config() const { return config_; }
  uint64_t weight_bytes() const { return weights_.device_bytes(); }

private:
  struct Pass;
  kernels::Kernels& k_;
  UNetConfig config_;
  Weights weights_;
};

} // namespace z123::nets
