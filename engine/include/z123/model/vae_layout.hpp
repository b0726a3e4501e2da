// The VAE's structure (diffusers AutoencoderKL: Encoder and Decoder of autoencoders/vae.py),
// declared once from its config, as model/unet_layout.hpp does for the UNet: the blocks, their
// resnets' checkpoint prefixes and widths, the resampling convs and the mid blocks. Walked by
// expected_vae_tensors (the weight contract) and by nets::Vae (encode and decode).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "z123/model/configs.hpp"
#include "z123/model/unet_layout.hpp" // ResnetDecl

namespace z123 {

// DownEncoderBlock2D / UpDecoderBlock2D: resnets (no time embedding), then the resampling conv
// (none at the last block).
struct VaeBlockDecl {
  std::string prefix; // "encoder.down_blocks.1", "decoder.up_blocks.0"
  std::int64_t channels = 0;
  std::vector<ResnetDecl> resnets;
  std::optional<std::string> resampler; // "<prefix>.downsamplers.0.conv" / "<prefix>.upsamplers.0.conv"
};

// UNetMidBlock2D: resnet, the single-head attention (where mid_block_add_attention), resnet.
struct VaeMidDecl {
  std::string prefix; // "encoder.mid_block"
  std::int64_t channels = 0;
  ResnetDecl first, second;
  std::optional<std::string> attention; // "<prefix>.attentions.0"
};

struct VaeLayout {
  std::int64_t image_channels = 0, out_channels = 0, latent_channels = 0;
  std::int64_t first_channels = 0, last_channels = 0; // block_out_channels' first and last
  std::vector<VaeBlockDecl> encoder;                  // down blocks
  VaeMidDecl encoder_mid, decoder_mid;
  std::vector<VaeBlockDecl> decoder; // up blocks, widest first
  bool quant_conv = true, post_quant_conv = true;
};

VaeLayout vae_layout(const VaeConfig& config);

} // namespace z123
