// The UNet's structure, declared once from its config (diffusers UNet2DConditionModel.__init__ with
// get_down_block / get_up_block): which blocks, resnets and transformers exist, their checkpoint
// prefixes, their widths and how many BasicTransformerBlocks each transformer holds. Everything
// that depends on the topology walks this one declaration:
//  - expected_unet_tensors (the weight contract that loading and zero123pp-inspect check);
//  - nets::UNet::record (the forward pass, and the point where the reference write pass stops:
//    self_attention_layers()).
// Block kinds come from the config as enums (UNetConfig::down_blocks / up_blocks), so no other
// code compares block-type strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "z123/model/configs.hpp"

namespace z123 {

// ResnetBlock2D: norm1, conv1, time_emb_proj, norm2, conv2, and conv_shortcut where the widths
// differ.
struct ResnetDecl {
  std::string prefix; // "down_blocks.0.resnets.1"
  std::int64_t in_channels = 0, out_channels = 0;
  bool has_shortcut() const { return in_channels != out_channels; }
};

// Transformer2DModel with linear projections: norm, proj_in, `blocks` BasicTransformerBlocks
// (attn1 self-attention, attn2 cross-attention, GEGLU feed-forward), proj_out.
struct TransformerDecl {
  std::string prefix; // "down_blocks.0.attentions.1"
  std::int64_t channels = 0, heads = 0, blocks = 0, cross_dim = 0;
  std::string block_prefix(std::int64_t block) const; // "<prefix>.transformer_blocks.<block>"
};

// One resnet and, in cross-attention blocks, the transformer that follows it.
struct UNetLayerDecl {
  ResnetDecl resnet;
  std::optional<TransformerDecl> transformer;
};

// A down or up block at one level: its layers, then its resampling conv (none at the last block).
struct UNetBlockDecl {
  std::string prefix; // "down_blocks.2", "up_blocks.1"
  std::size_t level = 0;
  std::int64_t channels = 0;
  std::vector<UNetLayerDecl> layers;
  std::optional<std::string> resampler; // "<prefix>.downsamplers.0.conv" / "<prefix>.upsamplers.0.conv"
};

struct UNetLayout {
  std::int64_t in_channels = 0, out_channels = 0, base_channels = 0, time_embedding_dim = 0;
  int conv_in_kernel = 3, conv_out_kernel = 3;
  std::vector<UNetBlockDecl> down, up; // up[i] mirrors level n-1-i
  ResnetDecl mid_first, mid_second;    // UNetMidBlock2DCrossAttn: resnet, transformer, resnet
  TransformerDecl mid_transformer;

  // attn1 layers in forward order's count: every BasicTransformerBlock of every transformer.
  std::int64_t self_attention_layers() const;
  // Their checkpoint prefixes ("down_blocks.0.attentions.0.transformer_blocks.0.attn1"), in no
  // particular order.
  std::vector<std::string> self_attention_prefixes() const;
  // Every resnet, in forward order (down blocks, mid, up blocks).
  std::vector<const ResnetDecl*> resnets() const;
};

UNetLayout unet_layout(const UNetConfig& config);

} // namespace z123
