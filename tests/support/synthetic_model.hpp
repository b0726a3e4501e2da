// A synthetic Zero123++ model folder for tests: the real diffusers layout (model_index.json, one
// subfolder per component, four safetensors files) with TINY configs and deterministic random
// weights, so loader, network and pipeline tests can run without the 5.6 GB download.
//
// Tiny configs: UNet block_out_channels [32, 64, 64, 64], 2 layers per block, 2 heads per level,
// cross_attention_dim 32; VAE [32, 64, 64, 64], 1 layer per block; CLIP text and vision width 32,
// 2 layers, 2 heads (text keeps vocab 49408 / 77 positions so real token ids work, vision keeps
// 224 px / patch 14). Dtypes follow v1.2: UNet F32, the rest F16.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace z123::test {

// The tiny config files, as written into the folder.
std::string tiny_model_index_json();      // the real v1.2 model_index.json (77 ramping coefficients)
std::string tiny_scheduler_config_json(); // the real v1.2 scheduler config
std::string tiny_unet_config_json();
std::string tiny_vae_config_json();
std::string tiny_text_encoder_config_json();
std::string tiny_vision_encoder_config_json();
std::string tiny_feature_extractor_vae_json();  // 64 px, mean 0.5 / std 0.8, bilinear
std::string tiny_feature_extractor_clip_json(); // 224 px, OpenAI mean/std, bicubic

struct SyntheticModelOptions {
  std::uint64_t seed = 1234;
  // true: "text_model." prefix like the released file; false: the transformers 5.x spelling.
  bool text_encoder_prefix = true;
  // Add the "embeddings.position_ids" buffers older transformers versions saved.
  bool add_position_ids = false;
};

// Writes the whole folder at `dir` (created if needed; existing files are overwritten). Weights
// are uniform random with std 1/sqrt(fan_in) (norm weights around 1, biases small), generated
// from `seed` by a portable generator, so every platform writes identical files.
void write_synthetic_model(const std::filesystem::path& dir, const SyntheticModelOptions& options = {});

// Copies the configs of `config_dir` (a weightless model folder such as tests/data/v1.2-configs)
// into `dir`, creates the folder of every component listed in its model_index.json, and writes
// each weights file as a valid safetensors header followed by a SPARSE all-zero data area of the
// right size (UNet F32, others F16). Lets tests open a full-size v1.2 layout (5.6 GB of
// apparent size) without storing it.
void write_sparse_model(const std::filesystem::path& dir, const std::filesystem::path& config_dir);

// Writes `text` to `path`, creating parent folders. Throws std::runtime_error on failure.
void write_text_file(const std::filesystem::path& path, const std::string& text);

// A unique empty folder under the system temp dir, deleted (recursively) on destruction.
class TempDir {
public:
  explicit TempDir(const std::string& prefix = "z123-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

} // namespace z123::test
