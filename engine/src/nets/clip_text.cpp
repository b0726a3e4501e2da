#include "z123/error.hpp"
#include "z123/kernels/elementwise.hpp"
#include "z123/kernels/norm.hpp"
#include "z123/nets/clip.hpp"

namespace z123::nets {

using namespace z123::kernels;

ClipTextEncoder::ClipTextEncoder(Kernels& kernels, const ModelFolder& folder, DType storage, WeightUploads* deferred)
    : k_(kernels), config_(folder.configs().text_encoder),
      // It runs once per model (the embedding of ""): its 650 MiB stay in host memory that a
      // discrete GPU reads over the bus (~30 ms), rather than adding to the peak device memory.
      weights_(kernels.device(), folder, ModelModule::TextEncoder, storage,
               WeightPlacement{vk::MemoryUsage::HostStreamed}, deferred) {
  require_exact_gelu("text_encoder/config.json", config_.hidden_act);
}

std::vector<int32_t> ClipTextEncoder::empty_prompt_ids() const {
  std::vector<int32_t> ids(static_cast<size_t>(config_.max_position_embeddings), 0);
  ids[0] = 49406;                     // <|startoftext|>
  if (ids.size() > 1) ids[1] = 49407; // <|endoftext|>; padding is id 0 ("!"), spec §5.1
  return ids;
}

Tensor ClipTextEncoder::encode(const std::vector<int32_t>& ids) {
  Workspace ws(k_.device(), "clip-text");
  vk::Recording rec(k_.device());
  Tensor out = record_encode(rec, ws, ids);
  k_.device().run(rec);
  return out;
}

Tensor ClipTextEncoder::record_encode(vk::Recording& rec, Workspace& ws, const std::vector<int32_t>& ids) {
  const int64_t N = config_.max_position_embeddings, C = config_.hidden_size;
  if (static_cast<int64_t>(ids.size()) != N)
    throw invalid_argument("text encoder input has " + std::to_string(ids.size()) + " ids, expected " +
                           std::to_string(N));
  vk::Device& dev = k_.device();
  const DType dt = weights_.storage();
  const Tensor& table = weights_.at("text_model.embeddings.token_embedding.weight");
  const Tensor& pos = weights_.at("text_model.embeddings.position_embedding.weight");
  // Token lookup as buffer copies: 77 rows, run once per model, no gather kernel needed.
  Tensor tok = ws.acquire(dt, {1, N, C}, "tokens");
  const uint64_t row = static_cast<uint64_t>(C) * dtype_size(dt);
  for (int64_t i = 0; i < N; ++i) {
    int32_t id = ids[static_cast<size_t>(i)];
    if (id < 0 || id >= config_.vocab_size)
      throw invalid_argument("token id " + std::to_string(id) + " outside the vocabulary of " +
                             std::to_string(config_.vocab_size));
    rec.copy(table.buf(), tok.buf(), row, static_cast<uint64_t>(id) * row, static_cast<uint64_t>(i) * row);
  }
  Tensor pos_view = pos;
  pos_view.shape = {1, N, C};
  Tensor h = ws.acquire(dt, {1, N, C}, "h");
  add(k_, rec, tok, pos_view, h);
  ws.release(tok);
  NetContext c{k_, rec, ws, weights_};
  record_clip_encoder(c, "text_model.encoder",
                      {config_.num_hidden_layers, C, config_.num_attention_heads, config_.intermediate_size,
                       static_cast<float>(config_.layer_norm_eps), true},
                      h);
  Tensor out = make_tensor(dev, dt, {1, N, C}, "text embedding");
  layer_norm(k_, rec, h, weights_.at("text_model.final_layer_norm.weight"),
             weights_.at("text_model.final_layer_norm.bias"), out, static_cast<float>(config_.layer_norm_eps));
  return out;
}

} // namespace z123::nets
