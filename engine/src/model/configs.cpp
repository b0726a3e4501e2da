#include "z123/model/configs.hpp"

#include "io/json_util.hpp"
#include "model/config_checks.hpp"
#include "z123/error.hpp"
#include "z123/model/config_limits.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>

namespace z123 {

using json_util::Fields;
using nlohmann::json;

namespace {

using namespace config_checks;
namespace limits = config_limits;

std::vector<int> int_list_or(const Fields& f, std::string_view key, std::vector<int> fallback) {
  return f.has(key) ? f.require_int_list(key) : fallback;
}

std::vector<std::string> string_list_or(const Fields& f, std::string_view key, std::vector<std::string> fallback) {
  return f.has(key) ? f.require_string_list(key) : fallback;
}

void require_length(const Fields& f, std::string_view key, std::size_t found, std::size_t expected,
                    std::string_view expected_what) {
  if (found != expected) {
    throw model_error(f.where(key) + ": expected " + std::to_string(expected) + " entries (" +
                      std::string(expected_what) + "), found " + std::to_string(found));
  }
}

// GroupNorm needs channels divisible by the group count.
void require_divisible(const Fields& f, std::string_view key, const std::vector<int>& channels, int groups,
                       std::string_view groups_key) {
  for (std::size_t i = 0; i < channels.size(); ++i) {
    if (channels[i] % groups != 0) {
      throw model_error(f.where(key) + ": entry " + std::to_string(i) + " = " + std::to_string(channels[i]) +
                        " is not divisible by " + std::string(groups_key) + " = " + std::to_string(groups));
    }
  }
}

// sample_size is informational; diffusers writes an int or an [h, w] list (checked, not kept).
std::optional<int> sample_size_of(const Fields& f) {
  const json* v = f.get("sample_size");
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (v->is_array()) {
    check_int_list(f, "sample_size", f.require_int_list("sample_size"), 1, limits::kMaxSampleSize);
    return std::nullopt;
  }
  const int size = f.require_int("sample_size");
  check_int(f, "sample_size", size, 1, limits::kMaxSampleSize);
  return size;
}

// A per-level channel list (block_out_channels): 1..kMaxLevels entries of 1..kMaxChannels.
std::vector<int> level_channels(const Fields& f, std::vector<int> fallback) {
  std::vector<int> ch = int_list_or(f, "block_out_channels", std::move(fallback));
  check_list_length(f, "block_out_channels", ch.size(), limits::kMaxLevels);
  check_int_list(f, "block_out_channels", ch, 1, limits::kMaxChannels);
  return ch;
}

// GroupNorm options: the group count, which must divide every level's channels.
int norm_groups(const Fields& f, const std::vector<int>& channels) {
  if (f.has("norm_num_groups") && f.get("norm_num_groups")->is_null()) {
    throw unsupported(f.where("norm_num_groups") + " is null; the engine implements only GroupNorm");
  }
  const int groups = int_in(f, "norm_num_groups", 32, 1, limits::kMaxNormGroups);
  require_divisible(f, "block_out_channels", channels, groups, "norm_num_groups");
  return groups;
}

// layer_norm_eps / norm_eps: positive (it keeps a division finite) and small.
double norm_eps(const Fields& f, std::string_view key) {
  return number_in(f, key, 1e-5, 0.0, limits::kMaxNormEps, true);
}

// hidden_size / num_attention_heads of a CLIP encoder: the heads must split the width evenly.
void check_clip_width(const Fields& f, int hidden, int heads) {
  if (hidden % heads != 0) {
    throw model_error(f.where("num_attention_heads") + " = " + std::to_string(heads) +
                      " does not divide hidden_size = " + std::to_string(hidden));
  }
}

ClipActivation parse_activation(const Fields& f) {
  const std::string act = supported_string(f, "hidden_act", "quick_gelu", {"gelu", "quick_gelu"});
  return act == "gelu" ? ClipActivation::Gelu : ClipActivation::QuickGelu;
}

template <class Parse>
auto load_with(const std::filesystem::path& path, Parse parse) {
  const std::string source = path.string();
  return parse(json_util::read_text_file(source), source);
}

} // namespace

const char* clip_activation_name(ClipActivation act) { return act == ClipActivation::Gelu ? "gelu" : "quick_gelu"; }

const char* resample_name(int pil_code) {
  switch (pil_code) {
  case 0: return "nearest";
  case 1: return "lanczos";
  case 2: return "bilinear";
  case 3: return "bicubic";
  case 4: return "box";
  case 5: return "hamming";
  default: return "unknown";
  }
}

// ---- model_index.json ------------------------------------------------------------------------

const PipelineComponent* PipelineIndex::find(std::string_view name) const {
  for (const auto& c : components) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

PipelineIndex parse_pipeline_index(std::string_view json_text, const std::string& source) {
  const json j = json_util::parse(json_text, source);
  const Fields f(j, source);
  PipelineIndex idx;
  idx.class_name = f.require_string("_class_name");
  idx.diffusers_version = f.optional_string("_diffusers_version").value_or("");
  for (const auto& [key, value] : j.items()) {
    if (key.starts_with('_')) continue;
    if (key == "ramping_coefficients") {
      if (!value.is_array()) f.type_error(key, "list of numbers", value);
      for (std::size_t i = 0; i < value.size(); ++i) {
        const std::string entry = key + "[" + std::to_string(i) + "]";
        if (!value[i].is_number()) f.type_error(entry, "number", value[i]);
        const double c = value[i].get<double>();
        check_number(f, entry, c, -limits::kMaxRampingCoefficient, limits::kMaxRampingCoefficient);
        idx.ramping_coefficients.push_back(c);
      }
      if (idx.ramping_coefficients.size() != kRampingCoefficientCount) {
        throw model_error(f.where(key) + ": expected " + std::to_string(kRampingCoefficientCount) +
                          " values (one per text token), found " + std::to_string(idx.ramping_coefficients.size()));
      }
      continue;
    }
    // Components are ["library", "Class"] pairs ([null, null] for absent ones); other keys are
    // pipeline constructor arguments we do not need.
    const bool is_pair = value.is_array() && value.size() == 2 && (value[0].is_string() || value[0].is_null()) &&
                         (value[1].is_string() || value[1].is_null());
    if (!is_pair) continue;
    PipelineComponent c;
    c.name = key;
    if (value[0].is_string()) c.library = value[0].get<std::string>();
    if (value[1].is_string()) c.class_name = value[1].get<std::string>();
    idx.components.push_back(std::move(c));
  }
  return idx;
}

// ---- scheduler ---------------------------------------------------------------------------------

SchedulerConfig parse_scheduler_config(std::string_view json_text, const std::string& source) {
  const json j = json_util::parse(json_text, source);
  const Fields f(j, source);
  SchedulerConfig s;
  s.class_name = f.optional_string("_class_name").value_or("");
  s.num_train_timesteps =
      int_in(f, "num_train_timesteps", s.num_train_timesteps, limits::kMinTrainTimesteps, limits::kMaxTrainTimesteps);
  s.beta_start = f.number_or("beta_start", s.beta_start);
  s.beta_end = f.number_or("beta_end", s.beta_end);
  if (!(s.beta_start > 0.0 && s.beta_start <= s.beta_end && s.beta_end < 1.0)) {
    std::ostringstream os;
    os << source << ": keys 'beta_start' = " << s.beta_start << " and 'beta_end' = " << s.beta_end
       << ": expected 0 < beta_start <= beta_end < 1";
    throw model_error(os.str());
  }
  s.beta_schedule = supported_string(f, "beta_schedule", "linear", {"linear", "scaled_linear"});
  require_null(f, "trained_betas", "betas come from beta_schedule");
  s.prediction_type = supported_string(f, "prediction_type", "epsilon", {"epsilon", "v_prediction"});
  s.timestep_spacing = supported_string(f, "timestep_spacing", "linspace", {"linspace", "leading", "trailing"});
  // Added to training timesteps, so it must leave them inside the schedule.
  s.steps_offset = f.int_or("steps_offset", 0);
  check_int(f, "steps_offset", s.steps_offset, 0, s.num_train_timesteps - 1,
            "below num_train_timesteps = " + std::to_string(s.num_train_timesteps));
  require_bool(f, "rescale_betas_zero_snr", false);
  return s;
}

// ---- UNet --------------------------------------------------------------------------------------

UNetConfig parse_unet_config(std::string_view json_text, const std::string& source) {
  const json j = json_util::parse(json_text, source);
  const Fields f(j, source);
  check_class_name(f, "UNet2DConditionModel");
  UNetConfig u;
  u.in_channels = int_in(f, "in_channels", 4, 1, limits::kMaxIoChannels);
  u.out_channels = int_in(f, "out_channels", 4, 1, limits::kMaxIoChannels);
  u.block_out_channels = level_channels(f, {320, 640, 1280, 1280});
  const std::size_t n = u.block_out_channels.size();

  // Block kinds: the names diffusers gives them, each parsed once into UNetBlockKind.
  const auto block_kinds = [&](const char* key, std::vector<std::string> fallback, const char* cross_name,
                               const char* plain_name) {
    const std::vector<std::string> names = string_list_or(f, key, std::move(fallback));
    require_length(f, key, names.size(), n, "one per block_out_channels entry");
    std::vector<UNetBlockKind> kinds;
    for (std::size_t i = 0; i < n; ++i) {
      if (!one_of(names[i], {cross_name, plain_name}))
        throw unsupported(f.where(key) + ": entry " + std::to_string(i) + " is " +
                          json_util::clipped_dump(json(names[i])) + "; the engine implements only \"" + cross_name +
                          "\", \"" + plain_name + "\"");
      kinds.push_back(names[i] == cross_name ? UNetBlockKind::CrossAttention : UNetBlockKind::Plain);
    }
    return kinds;
  };
  u.down_blocks = block_kinds("down_block_types",
                              {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"},
                              "CrossAttnDownBlock2D", "DownBlock2D");
  u.up_blocks =
      block_kinds("up_block_types", {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"},
                  "CrossAttnUpBlock2D", "UpBlock2D");
  if (f.has("mid_block_type") && f.get("mid_block_type")->is_null()) {
    throw unsupported(f.where("mid_block_type") +
                      " is null (no mid block); the engine implements only \"UNetMidBlock2DCrossAttn\"");
  }
  supported_string(f, "mid_block_type", "UNetMidBlock2DCrossAttn", {"UNetMidBlock2DCrossAttn"});

  u.layers_per_block = int_list_in(f, "layers_per_block", 2, n, 1, limits::kMaxLayersPerBlock);
  // diffusers quirk (spec §2.3): attention_head_dim holds head counts unless num_attention_heads is set.
  const char* heads_key = f.is_null("num_attention_heads") ? "attention_head_dim" : "num_attention_heads";
  u.num_attention_heads = int_list_in(f, heads_key, 8, n, 1, limits::kMaxAttentionHeads);
  u.transformer_layers_per_block =
      int_list_in(f, "transformer_layers_per_block", 1, n, 1, limits::kMaxTransformerLayers);
  u.cross_attention_dim = int_list_in(f, "cross_attention_dim", 1280, n, 1, limits::kMaxChannels);
  u.norm_num_groups = norm_groups(f, u.block_out_channels);
  for (std::size_t i = 0; i < n; ++i) {
    // Heads matter where a Transformer2DModel runs at this level: a cross-attention down block,
    // the mirrored up block, or the mid block (last level).
    const bool has_attention = u.down_blocks[i] == UNetBlockKind::CrossAttention ||
                               u.up_blocks[n - 1 - i] == UNetBlockKind::CrossAttention || i == n - 1;
    if (has_attention && u.block_out_channels[i] % u.num_attention_heads[i] != 0) {
      throw model_error(f.where(heads_key) + ": entry " + std::to_string(i) + " = " +
                        std::to_string(u.num_attention_heads[i]) + " heads do not divide " +
                        std::to_string(u.block_out_channels[i]) + " channels");
    }
  }
  u.norm_eps = norm_eps(f, "norm_eps");
  u.use_linear_projection = f.bool_or("use_linear_projection", false);
  if (!u.use_linear_projection) {
    throw unsupported(f.where("use_linear_projection") +
                      " is false (1x1-conv proj_in/proj_out); the engine implements only true");
  }
  u.flip_sin_to_cos = f.bool_or("flip_sin_to_cos", true);
  // The sinusoid divides by (block_out_channels[0] / 2 - freq_shift), which must stay positive.
  u.freq_shift = f.int_or("freq_shift", 0);
  const int half_width = u.block_out_channels[0] / 2;
  check_int(f, "freq_shift", u.freq_shift, 0, std::min(limits::kMaxFreqShift, half_width - 1),
            "below block_out_channels[0] / 2 = " + std::to_string(half_width));
  // Padding 0 means diffusers' asymmetric (0, 1, 0, 1) pad, and more than 1 changes the level
  // sizes so the skips no longer match; the engine pads symmetrically by 1.
  u.downsample_padding = f.int_or("downsample_padding", 1);
  if (u.downsample_padding != 1) {
    throw unsupported(f.where("downsample_padding") + " is " + std::to_string(u.downsample_padding) +
                      "; the engine implements only 1");
  }
  u.conv_in_kernel = int_in(f, "conv_in_kernel", 3, 1, limits::kMaxConvKernel);
  u.conv_out_kernel = int_in(f, "conv_out_kernel", 3, 1, limits::kMaxConvKernel);
  for (const auto& [key, k] : {std::pair{"conv_in_kernel", u.conv_in_kernel}, {"conv_out_kernel", u.conv_out_kernel}}) {
    // diffusers pads by (k - 1) / 2, which only preserves the size for odd kernels.
    if (k % 2 == 0) {
      throw unsupported(f.where(key) + " is " + std::to_string(k) + "; the engine implements only odd kernel sizes");
    }
  }
  // null means 4 x block_out_channels[0], which kMaxWideChannels covers by construction.
  static_assert(4 * static_cast<std::int64_t>(limits::kMaxChannels) <= limits::kMaxWideChannels);
  if (const std::optional<int> dim = f.optional_int("time_embedding_dim")) {
    check_int(f, "time_embedding_dim", *dim, 1, limits::kMaxWideChannels);
    u.time_embedding_dim = *dim;
  } else {
    u.time_embedding_dim = 4 * u.block_out_channels[0];
  }
  u.upcast_attention = f.bool_or("upcast_attention", false);
  u.sample_size = sample_size_of(f);

  // Options that add modules or change the math in ways the engine does not implement.
  require_bool(f, "center_input_sample", false);
  require_null(f, "class_embed_type", "no class embedding");
  require_null(f, "num_class_embeds", "no class embedding");
  require_null(f, "addition_embed_type", "no addition embedding");
  require_null(f, "encoder_hid_dim", "no encoder_hid_proj");
  require_null(f, "encoder_hid_dim_type", "no encoder_hid_proj");
  require_null(f, "time_cond_proj_dim", "no timestep condition projection");
  require_null(f, "timestep_post_act", "no activation after time_embedding.linear_2");
  require_null(f, "time_embedding_act_fn", "no activation after the time embedding");
  require_null(f, "cross_attention_norm", "no norm on the cross-attention context");
  require_null(f, "reverse_transformer_layers_per_block", "up blocks mirror the down blocks");
  supported_string(f, "act_fn", "silu", {"silu"});
  supported_string(f, "time_embedding_type", "positional", {"positional"});
  supported_string(f, "resnet_time_scale_shift", "default", {"default"});
  supported_string(f, "attention_type", "default", {"default"});
  require_bool(f, "dual_cross_attention", false);
  require_bool(f, "resnet_skip_time_act", false);
  require_number_value(f, "resnet_out_scale_factor", 1.0);
  require_number_value(f, "mid_block_scale_factor", 1.0);
  if (const json* oca = f.get("only_cross_attention"); oca != nullptr) {
    bool any_true = false;
    if (oca->is_boolean()) {
      any_true = oca->get<bool>();
    } else if (oca->is_array()) {
      any_true = std::any_of(oca->begin(), oca->end(), [](const json& e) { return e == true; });
    } else {
      f.type_error("only_cross_attention", "boolean or list of booleans", *oca);
    }
    if (any_true) {
      throw unsupported(f.where("only_cross_attention") + " is " + oca->dump() + "; the engine implements only false");
    }
  }
  return u;
}

// ---- VAE ---------------------------------------------------------------------------------------

VaeConfig parse_vae_config(std::string_view json_text, const std::string& source) {
  const json j = json_util::parse(json_text, source);
  const Fields f(j, source);
  check_class_name(f, "AutoencoderKL");
  VaeConfig v;
  v.in_channels = int_in(f, "in_channels", 3, 1, limits::kMaxIoChannels);
  v.out_channels = int_in(f, "out_channels", 3, 1, limits::kMaxIoChannels);
  v.latent_channels = int_in(f, "latent_channels", 4, 1, limits::kMaxIoChannels);
  v.block_out_channels = level_channels(f, {64});
  const std::size_t n = v.block_out_channels.size();
  v.down_block_types = string_list_or(f, "down_block_types", {"DownEncoderBlock2D"});
  v.up_block_types = string_list_or(f, "up_block_types", {"UpDecoderBlock2D"});
  require_length(f, "down_block_types", v.down_block_types.size(), n, "one per block_out_channels entry");
  require_length(f, "up_block_types", v.up_block_types.size(), n, "one per block_out_channels entry");
  for (std::size_t i = 0; i < n; ++i) {
    if (v.down_block_types[i] != "DownEncoderBlock2D") {
      throw unsupported(f.where("down_block_types") + ": entry " + std::to_string(i) + " is " +
                        json_util::clipped_dump(json(v.down_block_types[i])) +
                        "; the engine implements only \"DownEncoderBlock2D\"");
    }
    if (v.up_block_types[i] != "UpDecoderBlock2D") {
      throw unsupported(f.where("up_block_types") + ": entry " + std::to_string(i) + " is " +
                        json_util::clipped_dump(json(v.up_block_types[i])) +
                        "; the engine implements only \"UpDecoderBlock2D\"");
    }
  }
  v.layers_per_block = int_in(f, "layers_per_block", 1, 1, limits::kMaxLayersPerBlock);
  v.norm_num_groups = norm_groups(f, v.block_out_channels);
  supported_string(f, "act_fn", "silu", {"silu"});
  v.sample_size = sample_size_of(f).value_or(32);
  v.scaling_factor = number_in(f, "scaling_factor", 0.18215, 0.0, limits::kMaxVaeFactor, true);
  v.shift_factor = f.optional_number("shift_factor");
  if (v.shift_factor) check_number(f, "shift_factor", *v.shift_factor, -limits::kMaxVaeFactor, limits::kMaxVaeFactor);
  v.force_upcast = f.bool_or("force_upcast", true);
  v.use_quant_conv = f.bool_or("use_quant_conv", true);
  v.use_post_quant_conv = f.bool_or("use_post_quant_conv", true);
  v.mid_block_add_attention = f.bool_or("mid_block_add_attention", true);
  return v;
}

// ---- CLIP --------------------------------------------------------------------------------------

ClipTextConfig parse_clip_text_config(std::string_view json_text, const std::string& source) {
  const json j = json_util::parse(json_text, source);
  const Fields f(j, source);
  check_architecture(f, "CLIPTextModel", "clip_text_model");
  ClipTextConfig c;
  c.hidden_size = int_in(f, "hidden_size", c.hidden_size, 1, limits::kMaxChannels);
  c.intermediate_size = int_in(f, "intermediate_size", c.intermediate_size, 1, limits::kMaxWideChannels);
  c.num_attention_heads = int_in(f, "num_attention_heads", c.num_attention_heads, 1, limits::kMaxAttentionHeads);
  c.num_hidden_layers = int_in(f, "num_hidden_layers", c.num_hidden_layers, 1, limits::kMaxEncoderLayers);
  c.max_position_embeddings =
      int_in(f, "max_position_embeddings", c.max_position_embeddings, 1, limits::kMaxTextPositions);
  c.vocab_size = int_in(f, "vocab_size", c.vocab_size, 1, limits::kMaxVocabSize);
  c.projection_dim = int_in(f, "projection_dim", c.projection_dim, 1, limits::kMaxChannels);
  check_clip_width(f, c.hidden_size, c.num_attention_heads);
  c.layer_norm_eps = norm_eps(f, "layer_norm_eps");
  c.hidden_act = parse_activation(f);
  c.torch_dtype = f.optional_string("torch_dtype").value_or("");
  return c;
}

ClipVisionConfig parse_clip_vision_config(std::string_view json_text, const std::string& source) {
  const json j = json_util::parse(json_text, source);
  const Fields f(j, source);
  check_architecture(f, "CLIPVisionModelWithProjection", "clip_vision_model");
  ClipVisionConfig c;
  c.hidden_size = int_in(f, "hidden_size", c.hidden_size, 1, limits::kMaxChannels);
  c.intermediate_size = int_in(f, "intermediate_size", c.intermediate_size, 1, limits::kMaxWideChannels);
  c.num_attention_heads = int_in(f, "num_attention_heads", c.num_attention_heads, 1, limits::kMaxAttentionHeads);
  c.num_hidden_layers = int_in(f, "num_hidden_layers", c.num_hidden_layers, 1, limits::kMaxEncoderLayers);
  c.image_size = int_in(f, "image_size", c.image_size, 1, limits::kMaxVisionImageSize);
  c.patch_size = int_in(f, "patch_size", c.patch_size, 1, limits::kMaxVisionImageSize);
  c.projection_dim = int_in(f, "projection_dim", c.projection_dim, 1, limits::kMaxChannels);
  c.num_channels = int_in(f, "num_channels", c.num_channels, 1, limits::kMaxIoChannels);
  check_clip_width(f, c.hidden_size, c.num_attention_heads);
  if (c.image_size % c.patch_size != 0) {
    throw model_error(f.where("patch_size") + " = " + std::to_string(c.patch_size) +
                      " does not divide image_size = " + std::to_string(c.image_size));
  }
  // One position per patch plus the class token; the position embedding and every attention
  // in the encoder are sized by it.
  const std::int64_t grid = c.image_size / c.patch_size;
  const std::int64_t positions = grid * grid + 1;
  if (positions > limits::kMaxVisionPositions) {
    throw model_error(f.where("patch_size") + " = " + std::to_string(c.patch_size) +
                      " with image_size = " + std::to_string(c.image_size) + " gives " + std::to_string(positions) +
                      " positions ((image_size / patch_size)^2 + 1), expected at most " +
                      std::to_string(limits::kMaxVisionPositions));
  }
  c.layer_norm_eps = norm_eps(f, "layer_norm_eps");
  c.hidden_act = parse_activation(f);
  c.torch_dtype = f.optional_string("torch_dtype").value_or("");
  return c;
}

// ---- preprocessor --------------------------------------------------------------------------------

PreprocessorConfig parse_preprocessor_config(std::string_view json_text, const std::string& source) {
  const json j = json_util::parse(json_text, source);
  const Fields f(j, source);
  PreprocessorConfig p;
  p.processor_type =
      f.optional_string("image_processor_type").value_or(f.optional_string("feature_extractor_type").value_or(""));
  if (!p.processor_type.empty() && !one_of(p.processor_type, {"CLIPImageProcessor", "CLIPFeatureExtractor"})) {
    throw unsupported(source + ": processor type " + json_util::clipped_dump(json(p.processor_type)) +
                      "; the engine implements only \"CLIPImageProcessor\"");
  }
  p.do_convert_rgb = f.bool_or("do_convert_rgb", true);
  p.do_resize = f.bool_or("do_resize", true);
  p.do_center_crop = f.bool_or("do_center_crop", true);
  p.do_rescale = f.bool_or("do_rescale", true);
  p.do_normalize = f.bool_or("do_normalize", true);

  // Image sides; each is checked under the key the file spells it with.
  auto side = [](const Fields& fields, std::string_view key) {
    const int v = fields.require_int(key);
    check_int(fields, key, v, 1, limits::kMaxPreprocessSide);
    return v;
  };
  // "size": {"shortest_edge": N}, or a bare N in older files (same meaning for CLIP).
  if (const json* size = f.get("size"); size != nullptr && !size->is_null()) {
    if (size->is_number_integer()) {
      p.shortest_edge = side(f, "size");
    } else if (size->is_object()) {
      const Fields s = *f.optional_object("size");
      if (!s.has("shortest_edge")) {
        throw unsupported(s.where("shortest_edge") +
                          " is missing; the engine implements only shortest-edge resizing (found " +
                          json_util::clipped_dump(*size) + ")");
      }
      p.shortest_edge = side(s, "shortest_edge");
    } else {
      f.type_error("size", "object {\"shortest_edge\": N} or integer", *size);
    }
  }
  if (const json* crop = f.get("crop_size"); crop != nullptr && !crop->is_null()) {
    if (crop->is_number_integer()) {
      p.crop_height = p.crop_width = side(f, "crop_size");
    } else if (crop->is_object()) {
      const Fields c = *f.optional_object("crop_size");
      p.crop_height = side(c, "height");
      p.crop_width = side(c, "width");
    } else {
      f.type_error("crop_size", "object {\"height\", \"width\"} or integer", *crop);
    }
  }

  p.resample = f.int_or("resample", 3);
  if (p.resample != 2 && p.resample != 3) {
    throw unsupported(f.where("resample") + " is " + std::to_string(p.resample) + " (" + resample_name(p.resample) +
                      "); the engine implements only 2 (bilinear), 3 (bicubic)");
  }
  p.rescale_factor = number_in(f, "rescale_factor", 1.0 / 255.0, 0.0, limits::kMaxRescaleFactor, true);
  const std::vector<double> mean = f.number_or_list("image_mean", {p.image_mean.begin(), p.image_mean.end()}, 3);
  const std::vector<double> stdev = f.number_or_list("image_std", {p.image_std.begin(), p.image_std.end()}, 3);
  // A list entry is named "image_std[1]"; a single number stands for all three channels.
  auto entry = [&](const char* key, std::size_t c) {
    const json* v = f.get(key);
    return v != nullptr && v->is_array() ? std::string(key) + "[" + std::to_string(c) + "]" : std::string(key);
  };
  for (std::size_t c = 0; c < 3; ++c) {
    check_number(f, entry("image_mean", c), mean[c], -limits::kMaxPixelStatistic, limits::kMaxPixelStatistic);
    // image_std divides each channel: a positive floor keeps the result finite.
    check_number(f, entry("image_std", c), stdev[c], limits::kMinImageStd, limits::kMaxPixelStatistic);
    p.image_mean[c] = mean[c];
    p.image_std[c] = stdev[c];
  }
  return p;
}

// ---- file loaders ------------------------------------------------------------------------------

PipelineIndex load_pipeline_index(const std::filesystem::path& p) { return load_with(p, parse_pipeline_index); }
SchedulerConfig load_scheduler_config(const std::filesystem::path& p) { return load_with(p, parse_scheduler_config); }
UNetConfig load_unet_config(const std::filesystem::path& p) { return load_with(p, parse_unet_config); }
VaeConfig load_vae_config(const std::filesystem::path& p) { return load_with(p, parse_vae_config); }
ClipTextConfig load_clip_text_config(const std::filesystem::path& p) { return load_with(p, parse_clip_text_config); }
ClipVisionConfig load_clip_vision_config(const std::filesystem::path& p) {
  return load_with(p, parse_clip_vision_config);
}
PreprocessorConfig load_preprocessor_config(const std::filesystem::path& p) {
  return load_with(p, parse_preprocessor_config);
}

} // namespace z123
