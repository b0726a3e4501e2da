#include "z123/error.hpp"
#include "z123/kernels/conv2d.hpp"
#include "z123/kernels/elementwise.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/kernels/norm.hpp"
#include "z123/nets/clip.hpp"

namespace z123::nets {

using namespace z123::kernels;

ClipVisionEncoder::ClipVisionEncoder(Kernels& kernels, const ModelFolder& folder, DType storage,
                                     vk::MemoryUsage weights_usage, WeightUploads* deferred)
    : k_(kernels), config_(folder.configs().vision_encoder),
      weights_(kernels.device(), folder, ModelModule::VisionEncoder, storage, nets::WeightPlacement{weights_usage},
               deferred) {
  require_exact_gelu("vision_encoder/config.json", config_.hidden_act);
}

void ClipVisionEncoder::record(vk::Recording& rec, Workspace& ws, const Tensor& pixels, const Tensor& image_embeds) {
  const int64_t B = pixels.dim(0), S = config_.image_size, P = config_.patch_size, C = config_.hidden_size;
  const int64_t G = S / P, T = G * G + 1;
  const DType dt = weights_.storage();
  if (B != 1) throw unsupported("clip vision: batch " + std::to_string(B) + " (Zero123++ encodes one image)");
  expect_shape("clip vision", "pixels", pixels, {B, S, S, config_.num_channels});
  expect_shape("clip vision", "image_embeds", image_embeds, {B, config_.projection_dim});
  const std::string e = "vision_model.embeddings.";

  Tensor patches = ws.acquire(dt, {B, G, G, C}, "patches");
  Conv2dParams conv{static_cast<int>(P), 0, 0, 0, 0, 1};
  kernels::conv2d(k_, rec, pixels, weights_.at(e + "patch_embedding.weight"), nullptr, patches, conv);
  // Tokens = [class_embedding; patches] + positions, assembled by copies (row 0, rows 1..).
  Tensor tokens = ws.acquire(dt, {B, T, C}, "tokens");
  const uint64_t row = static_cast<uint64_t>(C) * dtype_size(dt);
  for (int64_t b = 0; b < B; ++b) {
    rec.copy(weights_.at(e + "class_embedding").buf(), tokens.buf(), row, 0, static_cast<uint64_t>(b * T) * row);
    rec.copy(patches.buf(), tokens.buf(), static_cast<uint64_t>(G * G) * row, static_cast<uint64_t>(b * G * G) * row,
             static_cast<uint64_t>(b * T + 1) * row);
  }
  ws.release(patches);
  Tensor pos = weights_.at(e + "position_embedding.weight"); // [T, C]
  pos.shape = {1, T, C};
  Tensor with_pos = ws.acquire(dt, {B, T, C}, "embeddings");
  add(k_, rec, tokens, pos, with_pos);
  ws.release(tokens);
  const float eps = static_cast<float>(config_.layer_norm_eps);
  Tensor h = ws.acquire(dt, {B, T, C}, "h");
  layer_norm(k_, rec, with_pos, weights_.at("vision_model.pre_layrnorm.weight"),
             weights_.at("vision_model.pre_layrnorm.bias"), h, eps);
  ws.release(with_pos);
  NetContext c{k_, rec, ws, weights_};
  record_clip_encoder(
      c, "vision_model.encoder",
      {config_.num_hidden_layers, C, config_.num_attention_heads, config_.intermediate_size, eps, false}, h);
  // post_layernorm on the class token (row 0 of the single batch), then the projection.
  Tensor cls = h;
  cls.shape = {1, C};
  Tensor pooled = ws.acquire(dt, {1, C}, "pooled");
  layer_norm(k_, rec, cls, weights_.at("vision_model.post_layernorm.weight"),
             weights_.at("vision_model.post_layernorm.bias"), pooled, eps);
  linear(k_, rec, pooled, weights_.at("visual_projection.weight"), nullptr, image_embeds);
}

} // namespace z123::nets
