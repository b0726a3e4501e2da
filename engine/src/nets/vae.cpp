#include "z123/nets/vae.hpp"

#include "z123/error.hpp"
#include "z123/kernels/conv2d.hpp"
#include "z123/kernels/norm.hpp"
#include "z123/nets/blocks.hpp"

namespace z123::nets {

using namespace z123::kernels;

namespace {

constexpr float kEps = 1e-6f; // every VAE norm (spec §17.16)

} // namespace

Vae::Vae(Kernels& kernels, const ModelFolder& folder, DType storage, WeightUploads* deferred)
    : k_(kernels), config_(folder.configs().vae),
      weights_(kernels.device(), folder, ModelModule::Vae, storage, WeightPlacement{}, deferred) {}

void Vae::record_encode(vk::Recording& rec, Workspace& ws, const Tensor& image, const Tensor& moments) {
  NetContext c{k_, rec, ws, weights_};
  const auto& ch = config_.block_out_channels;
  const int g = config_.norm_num_groups;
  const int64_t f = downscale();
  expect_shape("vae encode", "moments", moments,
               {image.dim(0), image.dim(1) / f, image.dim(2) / f, 2 * int64_t(config_.latent_channels)});
  if (image.dim(1) % f || image.dim(2) % f)
    throw invalid_argument("vae encode: image " + image.describe() + " is not a multiple of " + std::to_string(f));
  Tensor x = conv(c, "encoder.conv_in", image, ch[0], 1, 1, 1);
  for (size_t i = 0; i < ch.size(); ++i) {
    const std::string b = "encoder.down_blocks." + std::to_string(i);
    for (int j = 0; j < config_.layers_per_block; ++j)
      x = resnet_block(c, b + ".resnets." + std::to_string(j), x, ch[i], g, kEps);
    if (i + 1 < ch.size()) {
      // Downsample2D with padding=0: pad right/bottom by one, then 3×3 stride 2 (spec §8.1).
      x = conv(c, b + ".downsamplers.0.conv", x, ch[i], 2, 0, 1);
    }
  }
  x = resnet_block(c, "encoder.mid_block.resnets.0", x, ch.back(), g, kEps);
  if (config_.mid_block_add_attention) x = vae_attention(c, "encoder.mid_block.attentions.0", x, g, kEps);
  x = resnet_block(c, "encoder.mid_block.resnets.1", x, ch.back(), g, kEps);
  Tensor n = ws.acquire(x.dtype, x.shape, "encoder.conv_norm_out");
  group_norm(k_, rec, x, weights_.at("encoder.conv_norm_out.weight"), weights_.at("encoder.conv_norm_out.bias"), n, g,
             kEps, true);
  ws.release(x);
  const int64_t m = 2 * int64_t(config_.latent_channels);
  if (config_.use_quant_conv) {
    Tensor e = conv(c, "encoder.conv_out", n, m, 1, 1, 1);
    conv2d(k_, rec, e, weights_.at("quant_conv.weight"), &weights_.at("quant_conv.bias"), moments, conv_pad(0));
  } else {
    conv2d(k_, rec, n, weights_.at("encoder.conv_out.weight"), &weights_.at("encoder.conv_out.bias"), moments,
           conv_pad(1));
  }
}

void Vae::record_decode(vk::Recording& rec, Workspace& ws, const Tensor& latent, const Tensor& image) {
  NetContext c{k_, rec, ws, weights_};
  std::vector<int> ch(config_.block_out_channels.rbegin(), config_.block_out_channels.rend());
  const int g = config_.norm_num_groups;
  const int64_t f = downscale();
  expect_shape("vae decode", "image", image,
               {latent.dim(0), latent.dim(1) * f, latent.dim(2) * f, int64_t(config_.out_channels)});
  Tensor z = latent;
  if (config_.use_post_quant_conv) z = conv(c, "post_quant_conv", latent, config_.latent_channels, 1, 0, 0);
  Tensor x = conv(c, "decoder.conv_in", z, ch[0], 1, 1, 1);
  ws.release_if_owned(z);
  x = resnet_block(c, "decoder.mid_block.resnets.0", x, ch[0], g, kEps);
  if (config_.mid_block_add_attention) x = vae_attention(c, "decoder.mid_block.attentions.0", x, g, kEps);
  x = resnet_block(c, "decoder.mid_block.resnets.1", x, ch[0], g, kEps);
  for (size_t i = 0; i < ch.size(); ++i) {
    const std::string b = "decoder.up_blocks." + std::to_string(i);
    for (int j = 0; j <= config_.layers_per_block; ++j)
      x = resnet_block(c, b + ".resnets." + std::to_string(j), x, ch[i], g, kEps);
    if (i + 1 < ch.size()) {
      // Upsample2D: nearest ×2 fused into the 3×3 conv's input indexing.
      x = conv(c, b + ".upsamplers.0.conv", x, ch[i], 1, 1, 1, 2);
    }
  }
  Tensor n = ws.acquire(x.dtype, x.shape, "decoder.conv_norm_out");
  group_norm(k_, rec, x, weights_.at("decoder.conv_norm_out.weight"), weights_.at("decoder.conv_norm_out.bias"), n, g,
             kEps, true);
  conv2d(k_, rec, n, weights_.at("decoder.conv_out.weight"), &weights_.at("decoder.conv_out.bias"), image, conv_pad(1));
}

} // namespace z123::nets
