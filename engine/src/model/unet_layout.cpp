#include "z123/model/unet_layout.hpp"

namespace z123 {

std::string TransformerDecl::block_prefix(std::int64_t block) const {
  return prefix + ".transformer_blocks." + std::to_string(block);
}

std::vector<std::string> UNetLayout::self_attention_prefixes() const {
  std::vector<const TransformerDecl*> transformers;
  for (const auto* blocks : {&down, &up})
    for (const UNetBlockDecl& b : *blocks)
      for (const UNetLayerDecl& l : b.layers)
        if (l.transformer) transformers.push_back(&*l.transformer);
  transformers.push_back(&mid_transformer);
  std::vector<std::string> out;
  for (const TransformerDecl* t : transformers)
    for (std::int64_t i = 0; i < t->blocks; ++i) out.push_back(t->block_prefix(i) + ".attn1");
  return out;
}

std::int64_t UNetLayout::self_attention_layers() const {
  return static_cast<std::int64_t>(self_attention_prefixes().size());
}

std::vector<const ResnetDecl*> UNetLayout::resnets() const {
  std::vector<const ResnetDecl*> out;
  for (const UNetBlockDecl& b : down)
    for (const UNetLayerDecl& l : b.layers) out.push_back(&l.resnet);
  out.push_back(&mid_first);
  out.push_back(&mid_second);
  for (const UNetBlockDecl& b : up)
    for (const UNetLayerDecl& l : b.layers) out.push_back(&l.resnet);
  return out;
}

namespace {

TransformerDecl transformer_at(const UNetConfig& c, const std::string& prefix, std::size_t level) {
  return {prefix, c.block_out_channels[level], c.num_attention_heads[level], c.transformer_layers_per_block[level],
          c.cross_attention_dim[level]};
}

} // namespace

// Channel bookkeeping follows diffusers UNet2DConditionModel.__init__ and get_down/up_block.
UNetLayout unet_layout(const UNetConfig& c) {
  UNetLayout u;
  const std::size_t n = c.levels();
  const auto& ch = c.block_out_channels;
  u.in_channels = c.in_channels;
  u.out_channels = c.out_channels;
  u.base_channels = ch[0];
  u.time_embedding_dim = c.time_embedding_dim;
  u.conv_in_kernel = c.conv_in_kernel;
  u.conv_out_kernel = c.conv_out_kernel;

  std::int64_t out_ch = ch[0];
  for (std::size_t i = 0; i < n; ++i) {
    UNetBlockDecl b{"down_blocks." + std::to_string(i), i, ch[i], {}, std::nullopt};
    const std::int64_t in_ch = out_ch;
    out_ch = ch[i];
    const bool cross = c.down_blocks[i] == UNetBlockKind::CrossAttention;
    for (int j = 0; j < c.layers_per_block[i]; ++j) {
      UNetLayerDecl l{{b.prefix + ".resnets." + std::to_string(j), j == 0 ? in_ch : out_ch, out_ch}, std::nullopt};
      if (cross) l.transformer = transformer_at(c, b.prefix + ".attentions." + std::to_string(j), i);
      b.layers.push_back(std::move(l));
    }
    if (i + 1 < n) b.resampler = b.prefix + ".downsamplers.0.conv";
    u.down.push_back(std::move(b));
  }

  const std::int64_t mid = ch[n - 1];
  u.mid_first = {"mid_block.resnets.0", mid, mid};
  u.mid_transformer = transformer_at(c, "mid_block.attentions.0", n - 1);
  u.mid_second = {"mid_block.resnets.1", mid, mid};

  // Up block i mirrors level n-1-i; each resnet eats one skip (LIFO), the last one of a block
  // takes the skip from the level below (its "input_channel").
  out_ch = ch[n - 1];
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t level = n - 1 - i;
    UNetBlockDecl b{"up_blocks." + std::to_string(i), level, ch[level], {}, std::nullopt};
    const std::int64_t prev_out = out_ch;
    out_ch = ch[level];
    const std::int64_t in_ch = ch[level == 0 ? 0 : level - 1];
    const bool cross = c.up_blocks[i] == UNetBlockKind::CrossAttention;
    const int layers = c.layers_per_block[level] + 1;
    for (int j = 0; j < layers; ++j) {
      const std::int64_t skip = (j == layers - 1) ? in_ch : out_ch;
      const std::int64_t res_in = (j == 0) ? prev_out : out_ch;
      UNetLayerDecl l{{b.prefix + ".resnets." + std::to_string(j), res_in + skip, out_ch}, std::nullopt};
      if (cross) l.transformer = transformer_at(c, b.prefix + ".attentions." + std::to_string(j), level);
      b.layers.push_back(std::move(l));
    }
    if (i + 1 < n) b.resampler = b.prefix + ".upsamplers.0.conv";
    u.up.push_back(std::move(b));
  }
  return u;
}

} // namespace z123
