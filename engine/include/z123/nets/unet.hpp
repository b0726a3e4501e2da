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
#include <utility>
#include <vector>

#include "z123/kernels/kernels.hpp"
#include "z123/model/configs.hpp"
#include "z123/model/unet_layout.hpp"
#include "z123/nets/weights.hpp"
#include "z123/workspace.hpp"

namespace z123::nets {

enum class RefMode { None, Write, Read };

// Device tensors kept across passes and steps, by name: each created on first use and made
// again when a later use asks for another shape or dtype. The two caches below keep theirs here.
class TensorSlots {
public:
  // label: the start of each buffer's debug name, the key follows. turn: the memory turn of every
  // buffer (vk::MemoryTurn).
  TensorSlots(vk::Device& device, std::string label, vk::MemoryTurn turn = vk::MemoryTurn::None)
      : device_(device), label_(std::move(label)), turn_(turn) {}
  const Tensor& slot(const std::string& key, DType dtype, const std::vector<int64_t>& shape);
  const Tensor* find(const std::string& key) const;
  // The keys that end in `suffix` (longer than it), without it, in key order.
  std::vector<std::string> keys_ending(const std::string& suffix) const;
  uint64_t bytes() const;

private:
  vk::Device& device_;
  std::string label_;
  vk::MemoryTurn turn_;
  std::map<std::string, Tensor> tensors_;
};

// Keys/values per attention layer (keyed by the layer's checkpoint prefix, "...attn1"). Owns its
// buffers so they outlive a pass's workspace use and are reused across steps. Two uses: the
// reference keys/values of the attn1 layers (written by the reference pass, read by the main
// pass), and the cross-attention keys/values of the attn2 layers (see UNet::record_context).
class ReferenceCache {
public:
  // turn: where the engine lets the caches take turns with the programs around sampling (every
  // slot is written in each image's sampling before it is read).
  explicit ReferenceCache(vk::Device& device, vk::MemoryTurn turn = vk::MemoryTurn::None)
      : slots_(device, "ref.", turn) {}
  // The K or V tensor of a layer, created on first use with this shape.
  const Tensor& slot(const std::string& layer, char kv, DType dtype, const std::vector<int64_t>& shape) {
    return slots_.slot(layer + "." + kv, dtype, shape);
  }
  const Tensor* find(const std::string& layer, char kv) const { return slots_.find(layer + "." + kv); }
  // The layers that have a slot for `kv`, in key order.
  std::vector<std::string> layers(char kv) const { return slots_.keys_ending(std::string(".") + kv); }
  uint64_t bytes() const { return slots_.bytes(); }

private:
  TensorSlots slots_;
};

// Every resnet's time injection (keyed by the resnet's checkpoint prefix), in one of two forms:
// - folded (UNet::record_time): for one timestep, conv1.bias + time_emb_proj(silu(emb)),
//   [out_channels], which conv1 adds as its bias;
// - per row (UNet::record_time_rows): time_emb_proj(silu(emb)) for each batch row's timestep,
//   [rows, out_channels], added after conv1 and its own bias (one reference pass for two steps,
//   whose rows have two timesteps).
// Owns its buffers, so one step's program computes them once for both of its passes.
class TimeBiases {
public:
  explicit TimeBiases(vk::Device& device) : slots_(device, "time bias ") {}
  // The folded bias of a resnet, created on first use with this width.
  const Tensor& slot(const std::string& resnet, DType dtype, int64_t channels) {
    return slots_.slot(resnet, dtype, {channels});
  }
  // The per-row injection of a resnet, created on first use with this shape.
  const Tensor& row_slot(const std::string& resnet, DType dtype, int64_t rows, int64_t channels) {
    per_row_ = true;
    return slots_.slot(resnet, dtype, {rows, channels});
  }
  const Tensor* find(const std::string& resnet) const { return slots_.find(resnet); }
  bool per_row() const { return per_row_; }

private:
  TensorSlots slots_;
  bool per_row_ = false;
};

class UNet {
public:
  // placement, deferred: see Weights.
  UNet(kernels::Kernels& kernels, const ModelFolder& folder, DType storage, WeightUploads* deferred = nullptr,
       WeightPlacement placement = {});

  // Records the time embedding of t_freq [1, block_out_channels[0]] (the sinusoidal embedding of
  // the timestep: timestep_frequencies()) and every resnet's conv1 bias with it folded in, into
  // `out`. One row: the timestep is a scalar that every batch row shares (spec §9.2), so the time
  // injection is the same per-channel constant for every row and both passes of a step.
  void record_time(vk::Recording& rec, Workspace& ws, const Tensor& t_freq, TimeBiases& out);
  // Records the time embedding of each row of t_freq [R, block_out_channels[0]] (a timestep per
  // batch row) and every resnet's time_emb_proj of it, [R, out_channels], into `out` (per row).
  // A pass given these adds each row's after conv1 and conv1's own bias, in two roundings as
  // diffusers' ResnetBlock2D does (the folded bias takes one).
  void record_time_rows(vk::Recording& rec, Workspace& ws, const Tensor& t_freq, TimeBiases& out);
  // sample: [B, h, w, in_channels]; time: the timestep's conv1 biases (record_time(), recorded
  // before this), or B rows of time injections (record_time_rows()); ctx: [B, 77,
  // cross_attention_dim]; out: [B, h, w, out_ch].
  // context_kv: where given, every cross-attention (attn2) layer reads its keys and values of
  // ctx from this cache (a slot per layer is created here) instead of projecting ctx itself;
  // record_context() then computes them. The context is the same for every step of an image,
  // so the step program leaves these projections (two per layer and pass) to a program run once
  // per image.
  // ref_batch0: the read pass reads the reference cache's batch rows from this one (a write pass
  // of more rows stored several steps' keys and values).
  void record(vk::Recording& rec, Workspace& ws, const Tensor& sample, const TimeBiases& time, const Tensor& ctx,
              const Tensor* out, RefMode mode = RefMode::None, ReferenceCache* cache = nullptr,
              ReferenceCache* context_kv = nullptr, int64_t ref_batch0 = 0);
  // Projects ctx [B, 77, cross_attention_dim] into the keys and values of every attn2 layer that
  // has a slot in context_kv (made by record() with the same ctx shape).
  void record_context(vk::Recording& rec, const Tensor& ctx, ReferenceCache& context_kv);

  // The sinusoidal timestep embedding in fp32 on the host (spec §9.2): [cos, sin] with
  // flip_sin_to_cos, frequencies exp(-ln(10000)·k/(half - freq_shift)).
  std::vector<float> timestep_frequencies(float t) const;

  const UNetConfig& config() const { return config_; }
  const UNetLayout& layout() const { return layout_; }
  uint64_t weight_bytes() const { return weights_.device_bytes(); }
  const Weights& weights() const { return weights_; }

private:
  struct Pass;
  // silu(time_embedding(t_freq)), [R, time_embed_dim], in ws (the caller releases it).
  Tensor record_silu_embedding(vk::Recording& rec, Workspace& ws, const Tensor& t_freq);
  kernels::Kernels& k_;
  UNetConfig config_;
  UNetLayout layout_; // the structure record() walks (model/unet_layout.hpp)
  Weights weights_;
};

} // namespace z123::nets
