#include "z123/model/configs.hpp"

#include "io/json_util.hpp"
#include "z123/error.hpp"

#include <algorithm>
#include <initializer_list>
#include <sstream>

namespace z123 {

using json_util::Fields;
using nlohmann::json;

namespace {

// ---- shared checks ---------------------------------------------------------------------------

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

bool one_of(const std::string& v, std::initializer_list<const char*> allowed) {
  return std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return v == a; });
}

std::string list_of(std::initializer_list<const char*> allowed) {
  std::string s;
  for (const char* a : allowed) s += (s.empty() ? "" : ", ") + in_quotes(a);
  return s;
}

// A string option whose value must be one the engine implements.
std::string supported_string(const Fields& f, std::string_view key, const char* fallback,
                             std::initializer_list<const char*> allowed) {
  const std::string v = f.string_or(key, fallback);
  if (!one_of(v, allowed)) {
    throw unsupported(f.where(key) + " is " + in_quotes(v) + "; the engine implements only " + list_of(allowed));
  }
  return v;
}

// An option the engine implements only in its "off" form (null / absent).
void require_null(const Fields& f, std::string_view key, std::string_view meaning) {
  if (!f.is_null(key)) {
    throw unsupported(f.where(key) + " is " + f.get(key)->dump() + "; the engine implements only null (" +
                      std::string(meaning) + ")");
  }
}

void require_bool(const Fields& f, std::string_view key, bool expected) {
  if (f.bool_or(key, expected) != expected) {
    throw unsupported(f.where(key) + " is " + (expected ? "false" : "true") + "; the engine implements only " +
                      (expected ? "true" : "false"));
  }
}

void require_number_value(const Fields& f, std::string_view key, double expected) {
  const double v = f.number_or(key, expected);
  if (v != expected) {
    std::ostringstream os;
    os << f.where(key) << " is " << v << "; the engine implements only " << expected;
    throw unsupported(os.str());
  }
}

void require_positive(const Fields& f, std::string_view key, int v) {
  if (v <= 0) throw model_error(f.where(key) + " is " + std::to_string(v) + ", expected a positive integer");
}

void require_positive_list(const Fields& f, std::string_view key, const std::vector<int>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] <= 0) {
      throw model_error(f.where(key) + ": entry " + std::to_string(i) + " is " + std::to_string(v[i]) +
                        ", expected a positive integer");
    }
  }
}

// diffusers configs carry "_class_name"; a different class means a different network.
void check_class_name(const Fields& f, const char* expected) {
  const std::optional<std::string> cls = f.optional_string("_class_name");
  if (cls && *cls != expected) {
    throw unsupported(f.where("_class_name") + " is " + in_quotes(*cls) + ", expected " + in_quotes(expected));
  }
}

// transformers configs carry "architectures" (list) and "model_type".
void check_architecture(const Fields& f, const char* architecture, const char* model_type) {
  if (!f.is_null("architectures")) {
    const std::vector<std::string> archs = f.require_string_list("architectures");
    if (std::find(archs.begin(), archs.end(), architecture) == archs.end()) {
      std::string found;
      for (const auto& a : archs) found += (found.empty() ? "" : ", ") + in_quotes(a);
      throw unsupported(f.where("architectures") + " is [" + found + "], expected it to contain " +
                        in_quotes(architecture));
    }
  }
  const std::optional<std::string> mt = f.optional_string("model_type");
  if (mt && *mt != model_type) {
    throw unsupported(f.where("model_type") + " is " + in_quotes(*mt) + ", expected " + in_quotes(model_type));
  }
}

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

// sample_size is informational; diffusers writes an int or an [h, w] list.
std::optional<int> sample_size_of(const Fields& f) {
  const json* v = f.get("sample_size");
  if (v == nullptr || v->is_null() || v->is_array()) return std::nullopt;
  return f.require_int("sample_size");
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
        if (!value[i].is_number()) f.type_error(key + "[" + std::to_string(i) + "]", "number", value[i]);
        idx.ramping_coefficients.push_back(value[i].get<double>());
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
  s.num_train_timesteps = f.int_or("num_train_timesteps", s.num_train_timesteps);
  require_positive(f, "num_train_timesteps", s.num_train_timesteps);
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
  s.steps_offset = f.int_or("steps_offset", 0);
  if (s.steps_offset < 0) {
    throw model_error(f.where("steps_offset") + " is " + std::to_string(s.steps_offset) + ", expected >= 0");
  }
  require_bool(f, "rescale_betas_zero_snr", false);
  return s;
}

// ---- UNet --------------------------------------------------------------------------------------

UNetConfig parse_unet_config(std::string_view json_text, const std::string& source) {
  const json j = json_util::parse(json_text, source);
  const Fields f(j, source);
  check_class_name(f, "UNet2DConditionModel");
  UNetConfig u;
  u.in_channels = f.int_or("in_channels", 4);
  u.out_channels = f.int_or("out_channels", 4);
  require_positive(f, "in_channels", u.in_channels);
  require_positive(f, "out_channels", u.out_channels);

  u.block_out_channels = int_list_or(f, "block_out_channels", {320, 640, 1280, 1280});
  if (u.block_out_channels.empty()) {
    throw model_error(f.where("block_out_channels") + ": expected at least one entry, found none");
  }
  require_positive_list(f, "block_out_channels", u.block_out_channels);
  const std::size_t n = u.block_out_channels.size();

  u.down_block_types = string_list_or(
      f, "down_block_types", {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"});
  u.up_block_types = string_list_or(f, "up_block_types",
                                    {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"});
  require_length(f, "down_block_types", u.down_block_types.size(), n, "one per block_out_channels entry");
  require_length(f, "up_block_types", u.up_block_types.size(), n, "one per block_out_channels entry");
  for (std::size_t i = 0; i < n; ++i) {
    if (!one_of(u.down_block_types[i], {"CrossAttnDownBlock2D", "DownBlock2D"})) {
      throw unsupported(f.where("down_block_types") + ": entry " + std::to_string(i) + " is " +
                        in_quotes(u.down_block_types[i]) +
                        "; the engine implements only \"CrossAttnDownBlock2D\", \"DownBlock2D\"");
    }
    if (!one_of(u.up_block_types[i], {"CrossAttnUpBlock2D", "UpBlock2D"})) {
      throw unsupported(f.where("up_block_types") + ": entry " + std::to_string(i) + " is " +
                        in_quotes(u.up_block_types[i]) +
                        "; the engine implements only \"CrossAttnUpBlock2D\", \"UpBlock2D\"");
    }
  }
  if (f.has("mid_block_type") && f.get("mid_block_type")->is_null()) {
    throw unsupported(f.where("mid_block_type") +
                      " is null (no mid block); the engine implements only \"UNetMidBlock2DCrossAttn\"");
  }
  u.mid_block_type = supported_string(f, "mid_block_type", "UNetMidBlock2DCrossAttn", {"UNetMidBlock2DCrossAttn"});

  u.layers_per_block = f.int_or_list("layers_per_block", 2, n);
  require_positive_list(f, "layers_per_block", u.layers_per_block);
  // diffusers quirk (spec §2.3): attention_head_dim holds head counts unless num_attention_heads is set.
  const char* heads_key = f.is_null("num_attention_heads") ? "attention_head_dim" : "num_attention_heads";
  u.num_attention_heads = f.int_or_list(heads_key, 8, n);
  require_positive_list(f, heads_key, u.num_attention_heads);
  u.transformer_layers_per_block = f.int_or_list("transformer_layers_per_block", 1, n);
  require_positive_list(f, "transformer_layers_per_block", u.transformer_layers_per_block);
  u.cross_attention_dim = f.int_or_list("cross_attention_dim", 1280, n);
  require_positive_list(f, "cross_attention_dim", u.cross_attention_dim);

  if (f.has("norm_num_groups") && f.get("norm_num_groups")->is_null()) {
    throw unsupported(f.where("norm_num_groups") + " is null; the engine implements only GroupNorm");
  }
  u.norm_num_groups = f.int_or("norm_num_groups", 32);
  require_positive(f, "norm_num_groups", u.norm_num_groups);
  require_divisible(f, "block_out_channels", u.block_out_channels, u.norm_num_groups, "norm_num_groups");
  for (std::size_t i = 0; i < n; ++i) {
    // Heads matter where a Transformer2DModel runs at this level: a cross-attention down block,
    // the mirrored up block, or the mid block (last level).
    const bool has_attention = u.down_block_types[i] == "CrossAttnDownBlock2D" ||
                               u.up_block_types[n - 1 - i] == "CrossAttnUpBlock2D" || i == n - 1;
    if (has_attention && u.block_out_channels[i] % u.num_attention_heads[i] != 0) {
      throw model_error(f.where(heads_key) + ": entry " + std::to_string(i) + " = " +
                        std::to_string(u.num_attention_heads[i]) + " heads do not divide " +
                        std::to_string(u.block_out_channels[i]) + " channels");
    }
  }
  u.norm_eps = f.number_or("norm_eps", 1e-5);
  u.use_linear_projection = f.bool_or("use_linear_projection", false);
  if (!u.use_linear_projection) {
    throw unsupported(f.where("use_linear_projection") +
                      " is false (1x1-conv proj_in/proj_out); the engine implements only true");
  }
  u.flip_sin_to_cos = f.bool_or("flip_sin_to_cos", true);
  u.freq_shift = f.int_or("freq_shift", 0);
  u.downsample_padding = f.int_or("downsample_padding", 1);
  u.conv_in_kernel = f.int_or("conv_in_kernel", 3);
  u.conv_out_kernel = f.int_or("conv_out_kernel", 3);
  for (const auto& [key, k] : {std::pair{"conv_in_kernel", u.conv_in_kernel}, {"conv_out_kernel", u.conv_out_kernel}}) {
    // diffusers pads by (k - 1) / 2, which only preserves the size for odd kernels.
    if (k <= 0 || k % 2 == 0) {
      throw unsupported(f.where(key) + " is " + std::to_string(k) + "; the engine implements only odd kernel sizes");
    }
  }
  u.time_embedding_dim = f.optional_int("time_embedding_dim").value_or(4 * u.block_out_channels[0]);
  require_positive(f, "time_embedding_dim", u.time_embedding_dim);
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
  v.in_channels = f.int_or("in_channels", 3);
  v.out_channels = f.int_or("out_channels", 3);
  v.latent_channels = f.int_or("latent_channels", 4);
  require_positive(f, "in_channels", v.in_channels);
  require_positive(f, "out_channels", v.out_channels);
  require_positive(f, "latent_channels", v.latent_channels);
  v.block_out_channels = int_list_or(f, "block_out_channels", {64});
  if (v.block_out_channels.empty()) {
    throw model_error(f.where("block_out_channels") + ": expected at least one entry, found none");
  }
  require_positive_list(f, "block_out_channels", v.block_out_channels);
  const std::size_t n = v.block_out_channels.size();
  v.down_block_types = string_list_or(f, "down_block_types", {"DownEncoderBlock2D"});
  v.up_block_types = string_list_or(f, "up_block_types", {"UpDecoderBlock2D"});
  require_length(f, "down_block_types", v.down_block_types.size(), n, "one per block_out_channels entry");
  require_length(f, "up_block_types", v.up_block_types.size(), n, "one per block_out_channels entry");
  for (std::size_t i = 0; i < n; ++i) {
    if (v.down_block_types[i] != "DownEncoderBlock2D") {
      throw unsupported(f.where("down_block_types") + ": entry " + std::to_string(i) + " is " +
                        in_quotes(v.down_block_types[i]) + "; the engine implements only \"DownEncoderBlock2D\"");
    }
    if (v.up_block_types[i] != "UpDecoderBlock2D") {
      throw unsupported(f.where("up_block_types") + ": entry " + std::to_string(i) + " is " +
                        in_quotes(v.up_block_types[i]) + "; the engine implements only \"UpDecoderBlock2D\"");
    }
  }
  v.layers_per_block = f.int_or("layers_per_block", 1);
  require_positive(f, "layers_per_block", v.layers_per_block);
  v.norm_num_groups = f.int_or("norm_num_groups", 32);
  require_positive(f, "norm_num_groups", v.norm_num_groups);
  require_divisible(f, "block_out_channels", v.block_out_channels, v.norm_num_groups, "norm_num_groups");
  supported_string(f, "act_fn", "silu", {"silu"});
  v.sample_size = sample_size_of(f).value_or(32);
  v.scaling_factor = f.number_or("scaling_factor", 0.18215);
  v.shift_factor = f.optional_number("shift_factor");
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
  c.hidden_size = f.int_or("hidden_size", c.hidden_size);
  c.intermediate_size = f.int_or("intermediate_size", c.intermediate_size);
  c.num_attention_heads = f.int_or("num_attention_heads", c.num_attention_heads);
  c.num_hidden_layers = f.int_or("num_hidden_layers", c.num_hidden_layers);
  c.max_position_embeddings = f.int_or("max_position_embeddings", c.max_position_embeddings);
  c.vocab_size = f.int_or("vocab_size", c.vocab_size);
  c.projection_dim = f.int_or("projection_dim", c.projection_dim);
  for (const auto& [key, value] : {std::pair{"hidden_size", c.hidden_size},
                                   {"intermediate_size", c.intermediate_size},
                                   {"num_attention_heads", c.num_attention_heads},
                                   {"num_hidden_layers", c.num_hidden_layers},
                                   {"max_position_embeddings", c.max_position_embeddings},
                                   {"vocab_size", c.vocab_size}}) {
    require_positive(f, key, value);
  }
  if (c.hidden_size % c.num_attention_heads != 0) {
    throw model_error(f.where("num_attention_heads") + " = " + std::to_string(c.num_attention_heads) +
                      " does not divide hidden_size = " + std::to_string(c.hidden_size));
  }
  c.layer_norm_eps = f.number_or("layer_norm_eps", 1e-5);
  c.hidden_act = parse_activation(f);
  c.torch_dtype = f.optional_string("torch_dtype").value_or("");
  return c;
}

ClipVisionConfig parse_clip_vision_config(std::string_view json_text, const std::string& source) {
  const json j = json_util::parse(json_text, source);
  const Fields f(j, source);
  check_architecture(f, "CLIPVisionModelWithProjection", "clip_vision_model");
  ClipVisionConfig c;
  c.hidden_size = f.int_or("hidden_size", c.hidden_size);
  c.intermediate_size = f.int_or("intermediate_size", c.intermediate_size);
  c.num_attention_heads = f.int_or("num_attention_heads", c.num_attention_heads);
  c.num_hidden_layers = f.int_or("num_hidden_layers", c.num_hidden_layers);
  c.image_size = f.int_or("image_size", c.image_size);
  c.patch_size = f.int_or("patch_size", c.patch_size);
  c.projection_dim = f.int_or("projection_dim", c.projection_dim);
  c.num_channels = f.int_or("num_channels", c.num_channels);
  for (const auto& [key, value] : {std::pair{"hidden_size", c.hidden_size},
                                   {"intermediate_size", c.intermediate_size},
                                   {"num_attention_heads", c.num_attention_heads},
                                   {"num_hidden_layers", c.num_hidden_layers},
                                   {"image_size", c.image_size},
                                   {"patch_size", c.patch_size},
                                   {"projection_dim", c.projection_dim},
                                   {"num_channels", c.num_channels}}) {
    require_positive(f, key, value);
  }
  if (c.hidden_size % c.num_attention_heads != 0) {
    throw model_error(f.where("num_attention_heads") + " = " + std::to_string(c.num_attention_heads) +
                      " does not divide hidden_size = " + std::to_string(c.hidden_size));
  }
  if (c.image_size % c.patch_size != 0) {
    throw model_error(f.where("patch_size") + " = " + std::to_string(c.patch_size) +
                      " does not divide image_size = " + std::to_string(c.image_size));
  }
  c.layer_norm_eps = f.number_or("layer_norm_eps", 1e-5);
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
    throw unsupported(source + ": processor type " + in_quotes(p.processor_type) +
                      "; the engine implements only \"CLIPImageProcessor\"");
  }
  p.do_convert_rgb = f.bool_or("do_convert_rgb", true);
  p.do_resize = f.bool_or("do_resize", true);
  p.do_center_crop = f.bool_or("do_center_crop", true);
  p.do_rescale = f.bool_or("do_rescale", true);
  p.do_normalize = f.bool_or("do_normalize", true);

  // "size": {"shortest_edge": N}, or a bare N in older files (same meaning for CLIP).
  if (const json* size = f.get("size"); size != nullptr && !size->is_null()) {
    if (size->is_number_integer()) {
      p.shortest_edge = f.require_int("size");
    } else if (size->is_object()) {
      const Fields s = *f.optional_object("size");
      if (!s.has("shortest_edge")) {
        throw unsupported(s.where("shortest_edge") +
                          " is missing; the engine implements only shortest-edge resizing "
                          "(found " +
                          size->dump() + ")");
      }
      p.shortest_edge = s.require_int("shortest_edge");
    } else {
      f.type_error("size", "object {\"shortest_edge\": N} or integer", *size);
    }
  }
  require_positive(f, "size", p.shortest_edge);
  if (const json* crop = f.get("crop_size"); crop != nullptr && !crop->is_null()) {
    if (crop->is_number_integer()) {
      p.crop_height = p.crop_width = f.require_int("crop_size");
    } else if (crop->is_object()) {
      const Fields c = *f.optional_object("crop_size");
      p.crop_height = c.require_int("height");
      p.crop_width = c.require_int("width");
    } else {
      f.type_error("crop_size", "object {\"height\", \"width\"} or integer", *crop);
    }
  }
  require_positive(f, "crop_size", p.crop_height);
  require_positive(f, "crop_size", p.crop_width);

  p.resample = f.int_or("resample", 3);
  if (p.resample != 2 && p.resample != 3) {
    throw unsupported(f.where("resample") + " is " + std::to_string(p.resample) + " (" + resample_name(p.resample) +
                      "); the engine implements only 2 (bilinear), 3 (bicubic)");
  }
  p.rescale_factor = f.number_or("rescale_factor", 1.0 / 255.0);
  const std::vector<double> mean = f.number_or_list("image_mean", {p.image_mean.begin(), p.image_mean.end()}, 3);
  const std::vector<double> stdev = f.number_or_list("image_std", {p.image_std.begin(), p.image_std.end()}, 3);
  for (std::size_t c = 0; c < 3; ++c) {
    p.image_mean[c] = mean[c];
    p.image_std[c] = stdev[c];
    if (!(stdev[c] != 0.0)) {
      throw model_error(f.where("image_std") + ": channel " + std::to_string(c) + " is 0, expected a non-zero divisor");
    }
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
