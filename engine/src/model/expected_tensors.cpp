#include "z123/model/expected_tensors.hpp"

#include "z123/model/unet_layout.hpp"
#include "z123/model/vae_layout.hpp"

#include <utility>

namespace z123 {

namespace {

using Shape = std::vector<std::int64_t>;

// Appends tensors in module forward order; every helper mirrors one PyTorch module type.
class Builder {
public:
  void add(const std::string& name, Shape shape) { out_.push_back({name, std::move(shape)}); }
  void linear(const std::string& p, std::int64_t out, std::int64_t in, bool bias = true) {
    add(p + ".weight", {out, in});
    if (bias) add(p + ".bias", {out});
  }
  void conv(const std::string& p, std::int64_t out, std::int64_t in, std::int64_t k) {
    add(p + ".weight", {out, in, k, k});
    add(p + ".bias", {out});
  }
  void norm(const std::string& p, std::int64_t c) {
    add(p + ".weight", {c});
    add(p + ".bias", {c});
  }

  // diffusers ResnetBlock2D; temb = 0 for the VAE variant (no time_emb_proj).
  void resnet(const std::string& p, std::int64_t cin, std::int64_t cout, std::int64_t temb) {
    norm(p + ".norm1", cin);
    conv(p + ".conv1", cout, cin, 3);
    if (temb > 0) linear(p + ".time_emb_proj", cout, temb);
    norm(p + ".norm2", cout);
    conv(p + ".conv2", cout, cout, 3);
    if (cin != cout) conv(p + ".conv_shortcut", cout, cin, 1);
  }

  // diffusers Attention as used by BasicTransformerBlock: no q/k/v bias, to_out.0 with bias.
  void attention(const std::string& p, std::int64_t inner, std::int64_t kv_dim) {
    linear(p + ".to_q", inner, inner, false);
    linear(p + ".to_k", inner, kv_dim, false);
    linear(p + ".to_v", inner, kv_dim, false);
    linear(p + ".to_out.0", inner, inner);
  }

  // Transformer2DModel with use_linear_projection=True and norm_type "layer_norm".
  void transformer(const std::string& p, std::int64_t channels, std::int64_t heads, int layers,
                   std::int64_t cross_dim) {
    const std::int64_t inner = heads * (channels / heads);
    norm(p + ".norm", channels);
    linear(p + ".proj_in", inner, channels);
    for (int t = 0; t < layers; ++t) {
      const std::string b = p + ".transformer_blocks." + std::to_string(t);
      norm(b + ".norm1", inner);
      attention(b + ".attn1", inner, inner);
      norm(b + ".norm2", inner);
      attention(b + ".attn2", inner, cross_dim);
      norm(b + ".norm3", inner);
      linear(b + ".ff.net.0.proj", 8 * inner, inner); // GEGLU: value and gate, 4x each
      linear(b + ".ff.net.2", inner, 4 * inner);
    }
    linear(p + ".proj_out", channels, inner);
  }

  // VAE mid-block attention: single head, biases everywhere, GroupNorm named group_norm.
  void vae_attention(const std::string& p, std::int64_t c) {
    norm(p + ".group_norm", c);
    linear(p + ".to_q", c, c);
    linear(p + ".to_k", c, c);
    linear(p + ".to_v", c, c);
    linear(p + ".to_out.0", c, c);
  }

  // CLIPEncoderLayer (module registration order: k, v, q, out).
  void clip_layer(const std::string& p, std::int64_t hidden, std::int64_t mlp) {
    linear(p + ".self_attn.k_proj", hidden, hidden);
    linear(p + ".self_attn.v_proj", hidden, hidden);
    linear(p + ".self_attn.q_proj", hidden, hidden);
    linear(p + ".self_attn.out_proj", hidden, hidden);
    norm(p + ".layer_norm1", hidden);
    linear(p + ".mlp.fc1", mlp, hidden);
    linear(p + ".mlp.fc2", hidden, mlp);
    norm(p + ".layer_norm2", hidden);
  }

  std::vector<ExpectedTensor> take() { return std::move(out_); }

private:
  std::vector<ExpectedTensor> out_;
};

} // namespace

const char* module_name(ModelModule module) {
  switch (module) {
  case ModelModule::Unet: return "unet";
  case ModelModule::Vae: return "vae";
  case ModelModule::TextEncoder: return "text_encoder";
  case ModelModule::VisionEncoder: return "vision_encoder";
  }
  return "?";
}

std::uint64_t ExpectedTensor::numel() const {
  std::uint64_t n = 1;
  for (std::int64_t d : shape) n *= static_cast<std::uint64_t>(d);
  return n;
}

std::uint64_t total_numel(const std::vector<ExpectedTensor>& tensors) {
  std::uint64_t n = 0;
  for (const auto& t : tensors) n += t.numel();
  return n;
}

// The UNet's tensors in module forward order, from its one declaration (model/unet_layout.hpp).
std::vector<ExpectedTensor> expected_unet_tensors(const UNetConfig& c) {
  Builder b;
  const UNetLayout u = unet_layout(c);
  const std::int64_t temb = u.time_embedding_dim;
  const auto resnet = [&](const ResnetDecl& r) { b.resnet(r.prefix, r.in_channels, r.out_channels, temb); };
  const auto transformer = [&](const TransformerDecl& t) {
    b.transformer(t.prefix, t.channels, t.heads, static_cast<int>(t.blocks), t.cross_dim);
  };
  const auto block = [&](const UNetBlockDecl& blk) {
    for (const UNetLayerDecl& l : blk.layers) {
      resnet(l.resnet);
      if (l.transformer) transformer(*l.transformer);
    }
    if (blk.resampler) b.conv(*blk.resampler, blk.channels, blk.channels, 3);
  };

  b.conv("conv_in", u.base_channels, u.in_channels, u.conv_in_kernel);
  b.linear("time_embedding.linear_1", temb, u.base_channels); // positional embedding width = ch[0]
  b.linear("time_embedding.linear_2", temb, temb);
  for (const UNetBlockDecl& blk : u.down) block(blk);
  resnet(u.mid_first);
  transformer(u.mid_transformer);
  resnet(u.mid_second);
  for (const UNetBlockDecl& blk : u.up) block(blk);
  b.norm("conv_norm_out", u.base_channels);
  b.conv("conv_out", u.out_channels, u.base_channels, u.conv_out_kernel);
  return b.take();
}

// The VAE's tensors in module forward order, from its one declaration (model/vae_layout.hpp).
std::vector<ExpectedTensor> expected_vae_tensors(const VaeConfig& c) {
  Builder b;
  const VaeLayout v = vae_layout(c);
  const std::int64_t latent2 = 2 * v.latent_channels; // double_z: mean and logvar
  const auto block = [&](const VaeBlockDecl& blk) {
    for (const ResnetDecl& r : blk.resnets) b.resnet(r.prefix, r.in_channels, r.out_channels, 0);
    if (blk.resampler) b.conv(*blk.resampler, blk.channels, blk.channels, 3);
  };
  const auto mid = [&](const VaeMidDecl& m) {
    b.resnet(m.first.prefix, m.first.in_channels, m.first.out_channels, 0);
    if (m.attention) b.vae_attention(*m.attention, m.channels);
    b.resnet(m.second.prefix, m.second.in_channels, m.second.out_channels, 0);
  };

  b.conv("encoder.conv_in", v.first_channels, v.image_channels, 3);
  for (const VaeBlockDecl& blk : v.encoder) block(blk);
  mid(v.encoder_mid);
  b.norm("encoder.conv_norm_out", v.last_channels);
  b.conv("encoder.conv_out", latent2, v.last_channels, 3);
  if (v.quant_conv) b.conv("quant_conv", latent2, latent2, 1);
  if (v.post_quant_conv) b.conv("post_quant_conv", v.latent_channels, v.latent_channels, 1);

  b.conv("decoder.conv_in", v.last_channels, v.latent_channels, 3);
  mid(v.decoder_mid);
  for (const VaeBlockDecl& blk : v.decoder) block(blk);
  b.norm("decoder.conv_norm_out", v.first_channels);
  b.conv("decoder.conv_out", v.out_channels, v.first_channels, 3);
  return b.take();
}

std::vector<ExpectedTensor> expected_clip_text_tensors(const ClipTextConfig& c) {
  Builder b;
  const std::int64_t h = c.hidden_size;
  b.add("text_model.embeddings.token_embedding.weight", {c.vocab_size, h});
  b.add("text_model.embeddings.position_embedding.weight", {c.max_position_embeddings, h});
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    b.clip_layer("text_model.encoder.layers." + std::to_string(l), h, c.intermediate_size);
  }
  b.norm("text_model.final_layer_norm", h);
  return b.take();
}

std::vector<ExpectedTensor> expected_clip_vision_tensors(const ClipVisionConfig& c) {
  Builder b;
  const std::int64_t h = c.hidden_size;
  b.add("vision_model.embeddings.class_embedding", {h});
  b.add("vision_model.embeddings.patch_embedding.weight", {h, c.num_channels, c.patch_size, c.patch_size}); // no bias
  b.add("vision_model.embeddings.position_embedding.weight", {c.num_positions(), h});
  b.norm("vision_model.pre_layrnorm", h); // sic: transformers' spelling
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    b.clip_layer("vision_model.encoder.layers." + std::to_string(l), h, c.intermediate_size);
  }
  b.norm("vision_model.post_layernorm", h);
  b.linear("visual_projection", c.projection_dim, h, false);
  return b.take();
}

std::optional<std::string> canonical_tensor_name(ModelModule module, std::string_view stored) {
  const bool clip = module == ModelModule::TextEncoder || module == ModelModule::VisionEncoder;
  // position_ids is a constant arange buffer that older transformers versions saved.
  if (clip && stored.ends_with("embeddings.position_ids")) return std::nullopt;
  if (module == ModelModule::TextEncoder && !stored.starts_with("text_model.")) {
    return "text_model." + std::string(stored);
  }
  return std::string(stored);
}

std::optional<std::string> legacy_vae_attention_name(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kRenames[] = {
      {".query.", ".to_q."}, {".key.", ".to_k."}, {".value.", ".to_v."}, {".proj_attn.", ".to_out.0."}};
  if (name.find(".attentions.") == std::string_view::npos) return std::nullopt;
  for (const auto& [old_part, new_part] : kRenames) {
    const std::size_t pos = name.rfind(old_part);
    if (pos == std::string_view::npos) continue;
    const std::string_view tail = name.substr(pos + old_part.size());
    if (tail != "weight" && tail != "bias") continue;
    return std::string(name.substr(0, pos)) + std::string(new_part) + std::string(tail);
  }
  return std::nullopt;
}

} // namespace z123
