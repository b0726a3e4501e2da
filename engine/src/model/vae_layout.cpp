#include "z123/model/vae_layout.hpp"

namespace z123 {

namespace {

VaeMidDecl mid_block(const std::string& prefix, std::int64_t channels, bool attention) {
  VaeMidDecl m{prefix,
               channels,
               {prefix + ".resnets.0", channels, channels},
               {prefix + ".resnets.1", channels, channels},
               std::nullopt};
  if (attention) m.attention = prefix + ".attentions.0";
  return m;
}

} // namespace

// Channel bookkeeping follows diffusers' Encoder / Decoder (autoencoders/vae.py).
VaeLayout vae_layout(const VaeConfig& c) {
  VaeLayout v;
  const auto& ch = c.block_out_channels;
  const std::size_t n = ch.size();
  v.image_channels = c.in_channels;
  v.out_channels = c.out_channels;
  v.latent_channels = c.latent_channels;
  v.first_channels = ch[0];
  v.last_channels = ch[n - 1];
  v.quant_conv = c.use_quant_conv;
  v.post_quant_conv = c.use_post_quant_conv;

  std::int64_t out_ch = ch[0];
  for (std::size_t i = 0; i < n; ++i) {
    VaeBlockDecl b{"encoder.down_blocks." + std::to_string(i), ch[i], {}, std::nullopt};
    const std::int64_t in_ch = out_ch;
    out_ch = ch[i];
    for (int j = 0; j < c.layers_per_block; ++j)
      b.resnets.push_back({b.prefix + ".resnets." + std::to_string(j), j == 0 ? in_ch : out_ch, out_ch});
    if (i + 1 < n) b.resampler = b.prefix + ".downsamplers.0.conv";
    v.encoder.push_back(std::move(b));
  }
  v.encoder_mid = mid_block("encoder.mid_block", ch[n - 1], c.mid_block_add_attention);
  v.decoder_mid = mid_block("decoder.mid_block", ch[n - 1], c.mid_block_add_attention);

  out_ch = ch[n - 1];
  for (std::size_t i = 0; i < n; ++i) {
    VaeBlockDecl b{"decoder.up_blocks." + std::to_string(i), ch[n - 1 - i], {}, std::nullopt};
    const std::int64_t prev_out = out_ch;
    out_ch = ch[n - 1 - i];
    for (int j = 0; j < c.layers_per_block + 1; ++j)
      b.resnets.push_back({b.prefix + ".resnets." + std::to_string(j), j == 0 ? prev_out : out_ch, out_ch});
    if (i + 1 < n) b.resampler = b.prefix + ".upsamplers.0.conv";
    v.decoder.push_back(std::move(b));
  }
  return v;
}

} // namespace z123
