#include "z123/nets/vae.hpp"

#include <utility>

#include "z123/error.hpp"
#include "z123/kernels/conv2d.hpp"
#include "z123/kernels/norm.hpp"
#include "z123/nets/blocks.hpp"

namespace z123::nets {

using namespace z123::kernels;

namespace {

constexpr float kEps = 1e-6f; // every VAE norm (spec §17.16)

// UNetMidBlock2D: resnet, [single-head attention], resnet. Takes x over, so that each activation
// is given back as soon as the next one exists.
Tensor mid_block(NetContext& c, const VaeMidDecl& m, Tensor x, int groups) {
  x = resnet_block(c, m.first.prefix, x, m.channels, groups, kEps);
  if (m.attention) x = vae_attention(c, *m.attention, x, groups, kEps);
  return resnet_block(c, m.second.prefix, x, m.channels, groups, kEps);
}

} // namespace

Vae::Vae(Kernels& kernels, const ModelFolder& folder, DType storage, WeightUploads* deferred)
    : k_(kernels), config_(folder.configs().vae), layout_(vae_layout(config_)),
      weights_(kernels.device(), folder, ModelModule::Vae, storage, WeightPlacement{}, deferred) {}

void Vae::record_encode(vk::Recording& rec, Workspace& ws, const Tensor& image, const Tensor& moments) {
  NetContext c{k_, rec, ws, weights_};
  const int g = config_.norm_num_groups;
  const int64_t f = downscale();
  expect_shape("vae encode", "moments", moments,
               {image.dim(0), image.dim(1) / f, image.dim(2) / f, 2 * int64_t(config_.latent_channels)});
  if (image.dim(1) % f || image.dim(2) % f)
    throw invalid_argument("vae encode: image " + image.describe() + " is not a multiple of " + std::to_string(f));
  Tensor x = conv(c, "encoder.conv_in", image, layout_.first_channels, 1, 1, 1);
  for (const VaeBlockDecl& block : layout_.encoder) {
    for (const ResnetDecl& r : block.resnets) x = resnet_block(c, r.prefix, x, r.out_channels, g, kEps);
    // Downsample2D with padding=0: pad right/bottom by one, then 3×3 stride 2 (spec §8.1).
    if (block.resampler) x = conv(c, *block.resampler, x, block.channels, 2, 0, 1);
  }
  x = mid_block(c, layout_.encoder_mid, std::move(x), g);
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
  const int g = config_.norm_num_groups;
  const int64_t f = downscale();
  expect_shape("vae decode", "image", image,
               {latent.dim(0), latent.dim(1) * f, latent.dim(2) * f, int64_t(config_.out_channels)});
  Tensor z = latent;
  if (config_.use_post_quant_conv) z = conv(c, "post_quant_conv", latent, config_.latent_channels, 1, 0, 0);
  Tensor x = conv(c, "decoder.conv_in", z, layout_.last_channels, 1, 1, 1);
  z = Tensor{}; // the post-quant latent's slot (if it has one) is free for the decoder
  x = mid_block(c, layout_.decoder_mid, std::move(x), g);
  for (const VaeBlockDecl& block : layout_.decoder) {
    for (const ResnetDecl& r : block.resnets) x = resnet_block(c, r.prefix, x, r.out_channels, g, kEps);
    // Upsample2D: nearest ×2 fused into the 3×3 conv's input indexing.
    if (block.resampler) x = conv(c, *block.resampler, x, block.channels, 1, 1, 1, 2);
  }
  Tensor n = ws.acquire(x.dtype, x.shape, "decoder.conv_norm_out");
  group_norm(k_, rec, x, weights_.at("decoder.conv_norm_out.weight"), weights_.at("decoder.conv_norm_out.bias"), n, g,
             kEps, true);
  conv2d(k_, rec, n, weights_.at("decoder.conv_out.weight"), &weights_.at("decoder.conv_out.bias"), image, conv_pad(1));
}

} // namespace z123::nets
