#include "synthetic_model.hpp"

#include "z123/half.hpp"
#include "z123/io/safetensors_writer.hpp"
#include "z123/model/configs.hpp"
#include "z123/model/expected_tensors.hpp"
#include "z123/model/model_folder.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace z123::test {

namespace fs = std::filesystem;

std::string tiny_model_index_json() {
  return R"({
  "_class_name": "Zero123PlusPipeline",
  "_diffusers_version": "0.24.0",
  "_name_or_path": "synthetic-tiny",
  "feature_extractor_clip": ["transformers", "CLIPImageProcessor"],
  "feature_extractor_vae": ["transformers", "CLIPImageProcessor"],
  "ramping_coefficients": [
    0.00301829120144248, 0.2204633206129074, 0.21527841687202454, 0.23498539626598358, 0.1914631873369217,
    0.20188239216804504, 0.19352824985980988, 0.17249998450279236, 0.15826298296451569, 0.15236389636993408,
    0.13444548845291138, 0.12044154852628708, 0.12808501720428467, 0.1271015852689743, 0.13629068434238434,
    0.14516159892082214, 0.15645112097263336, 0.16885493695735931, 0.18022602796554565, 0.1958882212638855,
    0.21415705978870392, 0.23056700825691223, 0.2505834102630615, 0.2574525773525238, 0.275470107793808,
    0.2808215022087097, 0.29953837394714355, 0.2967497408390045, 0.2883710563182831, 0.3023308515548706,
    0.3054688572883606, 0.32596179842948914, 0.3225354254245758, 0.3140765428543091, 0.3288663625717163,
    0.3435625731945038, 0.3342442810535431, 0.32937031984329224, 0.35734811425209045, 0.3601177930831909,
    0.3517529368400574, 0.3810708224773407, 0.40007662773132324, 0.4264647364616394, 0.3977527916431427,
    0.4314143657684326, 0.49558719992637634, 0.4665665030479431, 0.48960328102111816, 0.5141982436180115,
    0.5230164527893066, 0.5266074538230896, 0.5456079840660095, 0.5737904906272888, 0.5882097482681274,
    0.6210350394248962, 0.6530380845069885, 0.6383244395256042, 0.6792004704475403, 0.6567418575286865,
    0.7517656683921814, 0.736494243144989, 0.7586457133293152, 0.8130561709403992, 0.9578766226768494,
    1.001284122467041, 0.9404520988464355, 1.004292368888855, 0.9145274758338928, 0.9771682620048523,
    1.0350638628005981, 1.0265849828720093, 1.0594775676727295, 0.980824887752533, 1.0715670585632324,
    1.0140161514282227, 1.1983819007873535
  ],
  "safety_checker": [null, null],
  "scheduler": ["diffusers", "EulerAncestralDiscreteScheduler"],
  "text_encoder": ["transformers", "CLIPTextModel"],
  "unet": ["diffusers", "UNet2DConditionModel"],
  "vae": ["diffusers", "AutoencoderKL"],
  "vision_encoder": ["transformers", "CLIPVisionModelWithProjection"]
}
)";
}

std::string tiny_scheduler_config_json() {
  return R"({
  "_class_name": "EulerAncestralDiscreteScheduler",
  "_diffusers_version": "0.24.0",
  "beta_end": 0.012,
  "beta_schedule": "linear",
  "beta_start": 0.00085,
  "clip_sample": false,
  "num_train_timesteps": 1000,
  "prediction_type": "v_prediction",
  "set_alpha_to_one": false,
  "skip_prk_steps": true,
  "steps_offset": 1,
  "timestep_spacing": "linspace",
  "trained_betas": null
}
)";
}

std::string tiny_unet_config_json() {
  return R"({
  "_class_name": "UNet2DConditionModel",
  "_diffusers_version": "0.24.0",
  "act_fn": "silu",
  "attention_head_dim": [2, 2, 2, 2],
  "block_out_channels": [32, 64, 64, 64],
  "center_input_sample": false,
  "class_embed_type": null,
  "cross_attention_dim": 32,
  "down_block_types": ["CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"],
  "downsample_padding": 1,
  "flip_sin_to_cos": true,
  "freq_shift": 0,
  "in_channels": 4,
  "layers_per_block": 2,
  "mid_block_type": "UNetMidBlock2DCrossAttn",
  "norm_eps": 1e-05,
  "norm_num_groups": 32,
  "num_attention_heads": null,
  "out_channels": 4,
  "sample_size": 8,
  "transformer_layers_per_block": 1,
  "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"],
  "upcast_attention": false,
  "use_linear_projection": true
}
)";
}

std::string tiny_vae_config_json() {
  return R"({
  "_class_name": "AutoencoderKL",
  "_diffusers_version": "0.24.0",
  "act_fn": "silu",
  "block_out_channels": [32, 64, 64, 64],
  "down_block_types": ["DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D"],
  "force_upcast": true,
  "in_channels": 3,
  "latent_channels": 4,
  "layers_per_block": 1,
  "norm_num_groups": 32,
  "out_channels": 3,
  "sample_size": 64,
  "scaling_factor": 0.18215,
  "up_block_types": ["UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D"]
}
)";
}

std::string tiny_text_encoder_config_json() {
  return R"({
  "architectures": ["CLIPTextModel"],
  "hidden_act": "gelu",
  "hidden_size": 32,
  "intermediate_size": 64,
  "layer_norm_eps": 1e-05,
  "max_position_embeddings": 77,
  "model_type": "clip_text_model",
  "num_attention_heads": 2,
  "num_hidden_layers": 2,
  "projection_dim": 32,
  "torch_dtype": "float16",
  "vocab_size": 49408
}
)";
}

std::string tiny_vision_encoder_config_json() {
  return R"({
  "architectures": ["CLIPVisionModelWithProjection"],
  "hidden_act": "gelu",
  "hidden_size": 32,
  "image_size": 224,
  "intermediate_size": 64,
  "layer_norm_eps": 1e-05,
  "model_type": "clip_vision_model",
  "num_attention_heads": 2,
  "num_channels": 3,
  "num_hidden_layers": 2,
  "patch_size": 14,
  "projection_dim": 32,
  "torch_dtype": "float16"
}
)";
}

std::string tiny_feature_extractor_vae_json() {
  return R"({
  "crop_size": {"height": 64, "width": 64},
  "do_center_crop": true,
  "do_convert_rgb": true,
  "do_normalize": true,
  "do_rescale": true,
  "do_resize": true,
  "image_mean": 0.5,
  "image_processor_type": "CLIPImageProcessor",
  "image_std": 0.8,
  "resample": 2,
  "rescale_factor": 0.00392156862745098,
  "size": {"shortest_edge": 64}
}
)";
}

std::string tiny_feature_extractor_clip_json() {
  return R"({
  "crop_size": {"height": 224, "width": 224},
  "do_center_crop": true,
  "do_convert_rgb": true,
  "do_normalize": true,
  "do_rescale": true,
  "do_resize": true,
  "image_mean": [0.48145466, 0.4578275, 0.40821073],
  "image_processor_type": "CLIPImageProcessor",
  "image_std": [0.26862954, 0.26130258, 0.27577711],
  "resample": 3,
  "rescale_factor": 0.00392156862745098,
  "size": {"shortest_edge": 224}
}
)";
}

void write_text_file(const fs::path& path, const std::string& text) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

namespace {

// splitmix64: tiny, portable, and good enough for test weights (std:: distributions are not
// specified bit-exactly across standard libraries).
class Rng {
public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float symmetric() { return static_cast<float>(static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0); }

private:
  std::uint64_t state_;
};

bool is_norm_weight(const ExpectedTensor& t) {
  return t.shape.size() == 1 && t.name.ends_with(".weight") &&
         (t.name.find("norm") != std::string::npos || t.name.find("layrnorm") != std::string::npos);
}

// Values that keep activations in a sane range if later tests run the tiny networks.
std::vector<float> random_values(const ExpectedTensor& t, Rng& rng) {
  std::vector<float> v(t.numel());
  if (is_norm_weight(t)) {
    for (float& x : v) x = 1.0f + 0.1f * rng.symmetric();
    return v;
  }
  double fan_in = 1.0;
  for (std::size_t i = 1; i < t.shape.size(); ++i) fan_in *= static_cast<double>(t.shape[i]);
  const bool vector = t.shape.size() == 1; // biases, class embedding
  const float scale = vector ? 0.05f : static_cast<float>(std::sqrt(3.0 / fan_in));
  for (float& x : v) x = scale * rng.symmetric();
  return v;
}

void write_module(const fs::path& path, const std::vector<ExpectedTensor>& tensors, bool f16, Rng& rng,
                  const std::string& name_prefix_to_strip,
                  const std::vector<std::pair<std::string, std::int64_t>>& position_ids) {
  SafetensorsWriter w;
  w.set_metadata("format", "pt");
  for (const ExpectedTensor& t : tensors) {
    std::string name = t.name;
    if (!name_prefix_to_strip.empty() && name.starts_with(name_prefix_to_strip)) {
      name = name.substr(name_prefix_to_strip.size());
    }
    const std::vector<float> values = random_values(t, rng);
    if (f16) {
      std::vector<std::uint16_t> bits(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) bits[i] = f32_to_f16(values[i]);
      w.add_f16(name, t.shape, bits);
    } else {
      w.add_f32(name, t.shape, values);
    }
  }
  // position_ids was an int64 arange buffer in old transformers checkpoints.
  for (const auto& [name, count] : position_ids) {
    std::vector<std::int64_t> ids(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) ids[static_cast<std::size_t>(i)] = i;
    w.add_raw(name, "I64", {1, count}, std::as_bytes(std::span<const std::int64_t>(ids)));
  }
  w.write(path);
}

} // namespace

void write_synthetic_model(const fs::path& dir, const SyntheticModelOptions& options) {
  write_text_file(dir / "model_index.json", tiny_model_index_json());
  write_text_file(dir / "scheduler/scheduler_config.json", tiny_scheduler_config_json());
  write_text_file(dir / "unet/config.json", tiny_unet_config_json());
  write_text_file(dir / "vae/config.json", tiny_vae_config_json());
  write_text_file(dir / "text_encoder/config.json", tiny_text_encoder_config_json());
  write_text_file(dir / "vision_encoder/config.json", tiny_vision_encoder_config_json());
  write_text_file(dir / "feature_extractor_vae/preprocessor_config.json", tiny_feature_extractor_vae_json());
  write_text_file(dir / "feature_extractor_clip/preprocessor_config.json", tiny_feature_extractor_clip_json());

  Rng rng(options.seed);
  const UNetConfig unet = parse_unet_config(tiny_unet_config_json(), "tiny unet config");
  const VaeConfig vae = parse_vae_config(tiny_vae_config_json(), "tiny vae config");
  const ClipTextConfig text = parse_clip_text_config(tiny_text_encoder_config_json(), "tiny text config");
  const ClipVisionConfig vision = parse_clip_vision_config(tiny_vision_encoder_config_json(), "tiny vision config");

  write_module(dir / module_weights_path(ModelModule::Unet), expected_unet_tensors(unet), false, rng, "", {});
  write_module(dir / module_weights_path(ModelModule::Vae), expected_vae_tensors(vae), true, rng, "", {});
  const std::string text_prefix = options.text_encoder_prefix ? "text_model." : "";
  std::vector<std::pair<std::string, std::int64_t>> text_ids, vision_ids;
  if (options.add_position_ids) {
    text_ids.emplace_back(text_prefix + "embeddings.position_ids", text.max_position_embeddings);
    vision_ids.emplace_back("vision_model.embeddings.position_ids", vision.num_positions());
  }
  write_module(dir / module_weights_path(ModelModule::TextEncoder), expected_clip_text_tensors(text), true, rng,
               options.text_encoder_prefix ? "" : "text_model.", text_ids);
  write_module(dir / module_weights_path(ModelModule::VisionEncoder), expected_clip_vision_tensors(vision), true, rng,
               "", vision_ids);
}

namespace {

// Header-only safetensors file: the data area is extended with truncate(), so it stays sparse.
void write_sparse_safetensors(const fs::path& path, const std::vector<ExpectedTensor>& tensors, const char* dtype,
                              std::uint64_t elem_size) {
  std::string header = "{";
  std::uint64_t offset = 0;
  for (const ExpectedTensor& t : tensors) {
    std::string shape;
    for (std::int64_t d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    const std::uint64_t end = offset + t.numel() * elem_size;
    header += (offset == 0 ? "\"" : ",\"") + t.name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const std::uint64_t n = header.size();
    char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    out.write(len, 8);
    out << header;
    if (!out) throw std::runtime_error("cannot write " + path.string());
  }
  fs::resize_file(path, 8 + header.size() + offset);
}

} // namespace

void write_sparse_model(const fs::path& dir, const fs::path& config_dir) {
  fs::create_directories(dir);
  fs::copy(config_dir, dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  // Folders first (the tokenizer has no config here), then the full validated load.
  for (const PipelineComponent& c : load_pipeline_index(dir / "model_index.json").components) {
    if (!c.is_null()) fs::create_directories(dir / c.name);
  }
  const ModelConfigs configs = load_model_configs(dir);
  for (ModelModule m : kModelModules) {
    const bool f32 = m == ModelModule::Unet;
    write_sparse_safetensors(dir / module_weights_path(m), expected_tensors(m, configs), f32 ? "F32" : "F16",
                             f32 ? 4 : 2);
  }
}

TempDir::TempDir(const std::string& prefix) {
  std::string templ = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + templ);
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec); // best effort: a leftover temp folder must not fail a test
}

} // namespace z123::test
