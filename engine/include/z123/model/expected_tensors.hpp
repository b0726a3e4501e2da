// The weight tensors each network must have, generated from its config (spec §13). The lists are
// the contract between the weight files and the network code, which loads weights by these
// names, so they are derived from the config rather than hard-coded: tiny test configs and the
// real v1.2 configs go through the same code. For the v1.2 configs the output equals
// zero123pp-v1.2-tensors.tsv exactly (names, shapes and order: forward order of the modules).
#pragma once

#include "z123/model/configs.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace z123 {

enum class ModelModule { Unet, Vae, TextEncoder, VisionEncoder };

inline constexpr std::array<ModelModule, 4> kModelModules{ModelModule::Unet, ModelModule::Vae, ModelModule::TextEncoder,
                                                          ModelModule::VisionEncoder};

// Folder / model_index.json key: "unet", "vae", "text_encoder", "vision_encoder".
const char* module_name(ModelModule module);

struct ExpectedTensor {
  std::string name;                // canonical name (the TSV spelling, e.g. "text_model.final_layer_norm.weight")
  std::vector<std::int64_t> shape; // PyTorch order: Linear [out, in], Conv [out, in, kh, kw]
  std::uint64_t numel() const;
};

std::vector<ExpectedTensor> expected_unet_tensors(const UNetConfig& config);
std::vector<ExpectedTensor> expected_vae_tensors(const VaeConfig& config);
std::vector<ExpectedTensor> expected_clip_text_tensors(const ClipTextConfig& config);
std::vector<ExpectedTensor> expected_clip_vision_tensors(const ClipVisionConfig& config);

std::uint64_t total_numel(const std::vector<ExpectedTensor>& tensors);

// Maps a name as stored in a weights file to its canonical name, or nullopt for buffers that
// are not weights and are skipped (CLIP "position_ids"). Text encoder: files written by
// transformers 5.x drop the "text_model." prefix; it is added back here.
std::optional<std::string> canonical_tensor_name(ModelModule module, std::string_view stored_name);

// Old diffusers VAE checkpoints name the mid-block attention query/key/value/proj_attn instead of
// to_q/to_k/to_v/to_out.0. Returns the modern name for such a stored name, nullopt otherwise.
// Only a pure rename is accepted (the caller also requires the modern shape).
std::optional<std::string> legacy_vae_attention_name(std::string_view name);

} // namespace z123
