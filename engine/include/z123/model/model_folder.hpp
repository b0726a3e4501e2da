// A diffusers-layout Zero123++ folder (spec §1): model_index.json, one subfolder per component
// with its config, and the four safetensors weight files (memory-mapped). Opening validates the
// structure and every config; check_model_folder() then compares each weights file with the
// tensor list its config implies.
#pragma once

#include "z123/io/safetensors.hpp"
#include "z123/model/configs.hpp"
#include "z123/model/expected_tensors.hpp"
#include "z123/model/tensor_check.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace z123 {

struct ModelConfigs {
  PipelineIndex index;
  SchedulerConfig scheduler;
  UNetConfig unet;
  VaeConfig vae;
  ClipTextConfig text_encoder;
  ClipVisionConfig vision_encoder;
  PreprocessorConfig feature_extractor_vae;
  PreprocessorConfig feature_extractor_clip;
};

// Paths relative to the model folder.
std::filesystem::path module_config_path(ModelModule module);  // e.g. "unet/config.json"
std::filesystem::path module_weights_path(ModelModule module); // e.g. "text_encoder/model.safetensors"

// Reads and validates model_index.json and every config of `dir` (no weights). Checks that each
// required component is listed with a supported class, and that every non-null component listed
// has its subfolder. Errors name the file / key / component and expected vs found.
ModelConfigs load_model_configs(const std::filesystem::path& dir);

// Expected tensor list of one module, from its config.
std::vector<ExpectedTensor> expected_tensors(ModelModule module, const ModelConfigs& configs);

class ModelFolder {
public:
  // load_model_configs() plus opening (mapping + header validation) of the four weight files.
  // A missing weights file is an io_error naming it (and any .bin / sharded / variant file found
  // instead, which the engine does not read).
  static ModelFolder open(const std::filesystem::path& dir);

  const std::filesystem::path& path() const noexcept { return dir_; }
  const ModelConfigs& configs() const noexcept { return configs_; }
  const SafetensorsFile& weights(ModelModule module) const;

private:
  ModelFolder(std::filesystem::path dir, ModelConfigs configs, std::vector<SafetensorsFile> weights);

  std::filesystem::path dir_;
  ModelConfigs configs_;
  std::vector<SafetensorsFile> weights_; // indexed by ModelModule
};

struct ModuleCheck {
  ModelModule module = ModelModule::Unet;
  std::string class_name;             // from model_index.json
  std::filesystem::path weights_file; // absolute path
  TensorCheckReport tensors;
};

struct FolderCheck {
  std::vector<ModuleCheck> modules; // kModelModules order
  // Cross-module mismatches, e.g. UNet cross_attention_dim vs text hidden_size.
  std::vector<std::string> consistency_problems;
  bool ok() const;
};

FolderCheck check_model_folder(const ModelFolder& folder);

} // namespace z123
