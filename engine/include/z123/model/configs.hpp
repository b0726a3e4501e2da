// Typed configs of a diffusers-layout Zero123++ folder (sudo-ai/zero123plus-v1.2, spec §2).
// Every parser applies the diffusers / transformers default for a missing key, rejects wrong JSON
// types and missing required keys with a format_error naming the file and the key (expected vs
// found), and rejects options whose value the engine does not implement with an `unsupported`
// error, so a model that would run wrongly never gets past loading.
//
// Each config has parse_*(json_text, source) (source names the text in messages; used by tests
// and the fuzzer) and load_*(path).
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace z123 {

// ---- model_index.json ------------------------------------------------------------------------
struct PipelineComponent {
  std::string name;       // key in model_index.json, e.g. "unet"
  std::string library;    // "diffusers" / "transformers"; empty when the entry is [null, null]
  std::string class_name; // e.g. "UNet2DConditionModel"; empty when null
  bool is_null() const { return class_name.empty(); }
};

inline constexpr std::size_t kRampingCoefficientCount = 77; // one per text token

struct PipelineIndex {
  std::string class_name;                    // "_class_name", e.g. "Zero123PlusPipeline"
  std::string diffusers_version;             // "_diffusers_version", empty if absent
  std::vector<PipelineComponent> components; // every [library, class] entry, in key order
  // Zero123++ per-token weights of the image embedding (spec §2.1, §7). Empty when the key is
  // absent; when present it must hold exactly 77 numbers.
  std::vector<double> ramping_coefficients;

  const PipelineComponent* find(std::string_view name) const;
};

// ---- scheduler/scheduler_config.json (EulerAncestralDiscreteScheduler) ------------------------
struct SchedulerConfig {
  std::string class_name; // "_class_name" (empty if absent)
  int num_train_timesteps = 1000;
  double beta_start = 0.0001;
  double beta_end = 0.02;
  std::string beta_schedule = "linear";      // "linear" | "scaled_linear"
  std::string prediction_type = "epsilon";   // "epsilon" | "v_prediction"
  std::string timestep_spacing = "linspace"; // "linspace" | "leading" | "trailing"
  int steps_offset = 0;
  bool rescale_betas_zero_snr = false;
};

// ---- unet/config.json (UNet2DConditionModel) -------------------------------------------------
// Per-level lists are expanded from "int or list" options to one entry per down block (level i =
// down_blocks.i; up_blocks.i uses level n-1-i). The structure they describe is declared in
// model/unet_layout.hpp.

// down_block_types / up_block_types entries, parsed once: "CrossAttnDownBlock2D" /
// "CrossAttnUpBlock2D" (resnets each followed by a transformer) or "DownBlock2D" / "UpBlock2D"
// (resnets only). The mid block is always "UNetMidBlock2DCrossAttn" (others are refused).
enum class UNetBlockKind { Plain, CrossAttention };

struct UNetConfig {
  int in_channels = 4;
  int out_channels = 4;
  std::vector<int> block_out_channels;    // default [320, 640, 1280, 1280]
  std::vector<UNetBlockKind> down_blocks; // down_block_types
  std::vector<UNetBlockKind> up_blocks;   // up_block_types
  std::vector<int> layers_per_block;      // resnets per down block (up blocks have one more)
  // Attention HEAD COUNTS per level. diffusers calls the config key attention_head_dim (a naming
  // quirk: [5, 10, 20, 20] in v1.2 are head counts); num_attention_heads overrides it if non-null.
  std::vector<int> num_attention_heads;
  std::vector<int> transformer_layers_per_block; // BasicTransformerBlocks per Transformer2DModel
  std::vector<int> cross_attention_dim;          // context width per level (1024 in v1.2)
  int norm_num_groups = 32;
  double norm_eps = 1e-5;
  bool use_linear_projection = true; // only true is implemented (false -> unsupported)
  bool flip_sin_to_cos = true;
  int freq_shift = 0;
  int downsample_padding = 1;
  int conv_in_kernel = 3;
  int conv_out_kernel = 3;
  int time_embedding_dim = 0; // resolved: the config value, or 4 * block_out_channels[0]
  bool upcast_attention = false;
  std::optional<int> sample_size;

  std::size_t levels() const { return block_out_channels.size(); }
  // Channels / heads of level i (head size of the UNet attention: 64 for v1.2).
  int head_dim(std::size_t level) const { return block_out_channels[level] / num_attention_heads[level]; }
};

// ---- vae/config.json (AutoencoderKL) ---------------------------------------------------------
struct VaeConfig {
  int in_channels = 3;
  int out_channels = 3;
  int latent_channels = 4;
  std::vector<int> block_out_channels;       // default [64]
  std::vector<std::string> down_block_types; // all "DownEncoderBlock2D"
  std::vector<std::string> up_block_types;   // all "UpDecoderBlock2D"
  int layers_per_block = 1;                  // encoder resnets per block (decoder: +1)
  int norm_num_groups = 32;
  int sample_size = 32;
  double scaling_factor = 0.18215;
  std::optional<double> shift_factor;
  bool force_upcast = true;
  bool use_quant_conv = true;
  bool use_post_quant_conv = true;
  bool mid_block_add_attention = true;
};

// ---- CLIP configs (transformers) ---------------------------------------------------------------
enum class ClipActivation { Gelu, QuickGelu }; // "gelu" = exact erf GELU (v1.2), "quick_gelu"

struct ClipTextConfig {
  int hidden_size = 512;
  int intermediate_size = 2048;
  int num_attention_heads = 8;
  int num_hidden_layers = 12;
  int max_position_embeddings = 77;
  int vocab_size = 49408;
  double layer_norm_eps = 1e-5;
  ClipActivation hidden_act = ClipActivation::QuickGelu;
  int projection_dim = 512; // unused by CLIPTextModel (no projection); recorded for reference
  std::string torch_dtype;  // informational ("float16"), empty if absent
  int head_dim() const { return hidden_size / num_attention_heads; }
};

struct ClipVisionConfig {
  int hidden_size = 768;
  int intermediate_size = 3072;
  int num_attention_heads = 12;
  int num_hidden_layers = 12;
  int image_size = 224;
  int patch_size = 32;
  int projection_dim = 512;
  int num_channels = 3;
  double layer_norm_eps = 1e-5;
  ClipActivation hidden_act = ClipActivation::QuickGelu;
  std::string torch_dtype;
  int head_dim() const { return hidden_size / num_attention_heads; }
  int num_patches() const { return (image_size / patch_size) * (image_size / patch_size); }
  int num_positions() const { return num_patches() + 1; } // + class token
};

const char* clip_activation_name(ClipActivation act); // "gelu" / "quick_gelu"

// ---- feature_extractor_{vae,clip}/preprocessor_config.json (CLIPImageProcessor) ---------------
struct PreprocessorConfig {
  std::string processor_type; // "image_processor_type" (or legacy "feature_extractor_type")
  bool do_convert_rgb = true;
  bool do_resize = true;
  int shortest_edge = 224; // size.shortest_edge (a plain integer "size" means the same)
  int resample = 3;        // PIL filter code: 2 = bilinear, 3 = bicubic (others unsupported)
  bool do_center_crop = true;
  int crop_height = 224;
  int crop_width = 224;
  bool do_rescale = true;
  double rescale_factor = 1.0 / 255.0;
  bool do_normalize = true;
  std::array<double, 3> image_mean{0.48145466, 0.4578275, 0.40821073}; // OpenAI CLIP defaults
  std::array<double, 3> image_std{0.26862954, 0.26130258, 0.27577711};
};

const char* resample_name(int pil_code); // "bilinear", "bicubic", ...

PipelineIndex parse_pipeline_index(std::string_view json_text, const std::string& source);
SchedulerConfig parse_scheduler_config(std::string_view json_text, const std::string& source);
UNetConfig parse_unet_config(std::string_view json_text, const std::string& source);
VaeConfig parse_vae_config(std::string_view json_text, const std::string& source);
ClipTextConfig parse_clip_text_config(std::string_view json_text, const std::string& source);
ClipVisionConfig parse_clip_vision_config(std::string_view json_text, const std::string& source);
PreprocessorConfig parse_preprocessor_config(std::string_view json_text, const std::string& source);

PipelineIndex load_pipeline_index(const std::filesystem::path& path);
SchedulerConfig load_scheduler_config(const std::filesystem::path& path);
UNetConfig load_unet_config(const std::filesystem::path& path);
VaeConfig load_vae_config(const std::filesystem::path& path);
ClipTextConfig load_clip_text_config(const std::filesystem::path& path);
ClipVisionConfig load_clip_vision_config(const std::filesystem::path& path);
PreprocessorConfig load_preprocessor_config(const std::filesystem::path& path);

} // namespace z123
