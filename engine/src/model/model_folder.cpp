#include "z123/model/model_folder.hpp"

#include "z123/error.hpp"

#include <algorithm>
#include <initializer_list>
#include <system_error>

namespace z123 {

namespace fs = std::filesystem;

namespace {

struct Requirement {
  const char* component;
  const char* library;
  std::initializer_list<const char*> classes; // first one is the expected spelling
};

// Components the Zero123++ pipeline cannot run without (spec §1, §2.1).
const Requirement kRequired[] = {
    {"unet", "diffusers", {"UNet2DConditionModel"}},
    {"vae", "diffusers", {"AutoencoderKL"}},
    {"text_encoder", "transformers", {"CLIPTextModel"}},
    {"vision_encoder", "transformers", {"CLIPVisionModelWithProjection"}},
    {"scheduler", "diffusers", {}}, // any class: the sampler is chosen by the pipeline
    {"feature_extractor_vae", "transformers", {"CLIPImageProcessor", "CLIPFeatureExtractor"}},
    {"feature_extractor_clip", "transformers", {"CLIPImageProcessor", "CLIPFeatureExtractor"}},
};

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

void check_components(const PipelineIndex& index, const fs::path& dir) {
  const std::string index_path = (dir / "model_index.json").string();
  for (const Requirement& req : kRequired) {
    const std::string expected =
        std::string("[") + in_quotes(req.library) + ", " +
        (req.classes.size() == 0 ? std::string("<scheduler class>") : in_quotes(*req.classes.begin())) + "]";
    const PipelineComponent* c = index.find(req.component);
    if (c == nullptr) {
      throw model_error(index_path + ": component '" + req.component + "' is missing; expected " + expected);
    }
    if (c->is_null()) {
      throw model_error(index_path + ": component '" + req.component + "' is null; expected " + expected);
    }
    if (req.classes.size() != 0 &&
        std::none_of(req.classes.begin(), req.classes.end(), [&](const char* cls) { return c->class_name == cls; })) {
      throw unsupported(index_path + ": component '" + req.component + "' has class " + in_quotes(c->class_name) +
                        "; expected " + in_quotes(*req.classes.begin()));
    }
  }
  // Every listed component must be present on disk, including ones we do not read (tokenizer).
  for (const PipelineComponent& c : index.components) {
    if (c.is_null()) continue;
    std::error_code ec;
    if (!fs::is_directory(dir / c.name, ec)) {
      throw io_error((dir / c.name).string() + ": missing folder of component '" + c.name + "' (listed in " +
                     index_path + ")");
    }
  }
}

fs::path require_file(const fs::path& dir, const fs::path& rel, const std::string& what) {
  const fs::path p = dir / rel;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) throw io_error(p.string() + ": missing " + what);
  return p;
}

// Names weight-like files that sit where the expected one is missing, so the user learns why
// (a .bin checkpoint, a sharded or fp16-variant download) instead of just "missing".
std::string weights_alternatives(const fs::path& folder) {
  std::string found;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.ends_with(".safetensors") || name.ends_with(".bin") || name.ends_with(".index.json") ||
        name.ends_with(".ckpt") || name.ends_with(".pt")) {
      found += (found.empty() ? "" : ", ") + name;
    }
  }
  if (found.empty()) return {};
  return " (found instead: " + found + "; the engine reads only single-file, non-variant .safetensors weights)";
}

} // namespace

fs::path module_config_path(ModelModule module) { return fs::path(module_name(module)) / "config.json"; }

fs::path module_weights_path(ModelModule module) {
  switch (module) {
  case ModelModule::Unet: return "unet/diffusion_pytorch_model.safetensors";
  case ModelModule::Vae: return "vae/diffusion_pytorch_model.safetensors";
  case ModelModule::TextEncoder: return "text_encoder/model.safetensors";
  case ModelModule::VisionEncoder: return "vision_encoder/model.safetensors";
  }
  return {};
}

ModelConfigs load_model_configs(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw io_error(dir.string() + ": not a directory (expected a model folder)");
  ModelConfigs c;
  c.index =
      load_pipeline_index(require_file(dir, "model_index.json", "pipeline index (not a diffusers model folder?)"));
  check_components(c.index, dir);
  c.scheduler =
      load_scheduler_config(require_file(dir, "scheduler/scheduler_config.json", "config of component 'scheduler'"));
  c.unet = load_unet_config(require_file(dir, module_config_path(ModelModule::Unet), "config of component 'unet'"));
  c.vae = load_vae_config(require_file(dir, module_config_path(ModelModule::Vae), "config of component 'vae'"));
  c.text_encoder = load_clip_text_config(
      require_file(dir, module_config_path(ModelModule::TextEncoder), "config of component 'text_encoder'"));
  c.vision_encoder = load_clip_vision_config(
      require_file(dir, module_config_path(ModelModule::VisionEncoder), "config of component 'vision_encoder'"));
  c.feature_extractor_vae = load_preprocessor_config(require_file(dir, "feature_extractor_vae/preprocessor_config.json",
                                                                  "config of component 'feature_extractor_vae'"));
  c.feature_extractor_clip = load_preprocessor_config(require_file(
      dir, "feature_extractor_clip/preprocessor_config.json", "config of component 'feature_extractor_clip'"));
  return c;
}

std::vector<ExpectedTensor> expected_tensors(ModelModule module, const ModelConfigs& c) {
  switch (module) {
  case ModelModule::Unet: return expected_unet_tensors(c.unet);
  case ModelModule::Vae: return expected_vae_tensors(c.vae);
  case ModelModule::TextEncoder: return expected_clip_text_tensors(c.text_encoder);
  case ModelModule::VisionEncoder: return expected_clip_vision_tensors(c.vision_encoder);
  }
  return {};
}

ModelFolder::ModelFolder(fs::path dir, ModelConfigs configs, std::vector<SafetensorsFile> weights)
    : dir_(std::move(dir)), configs_(std::move(configs)), weights_(std::move(weights)) {}

ModelFolder ModelFolder::open(const fs::path& dir) {
  ModelConfigs configs = load_model_configs(dir);
  std::vector<SafetensorsFile> weights;
  for (ModelModule m : kModelModules) {
    const fs::path p = dir / module_weights_path(m);
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      throw io_error(p.string() + ": missing weights file of component '" + module_name(m) + "'" +
                     weights_alternatives(p.parent_path()));
    }
    SafetensorsOptions options;
    if (m == ModelModule::TextEncoder || m == ModelModule::VisionEncoder) {
      options.skip_non_float_suffixes = {"embeddings.position_ids"}; // int64 buffer, not a weight
    }
    weights.push_back(SafetensorsFile::open(p, options));
  }
  return ModelFolder(dir, std::move(configs), std::move(weights));
}

const SafetensorsFile& ModelFolder::weights(ModelModule module) const {
  return weights_.at(static_cast<std::size_t>(module));
}

bool FolderCheck::ok() const {
  return consistency_problems.empty() &&
         std::all_of(modules.begin(), modules.end(), [](const ModuleCheck& m) { return m.tensors.ok(); });
}

namespace {

// The networks feed each other; widths that disagree would fail only deep inside a kernel.
std::vector<std::string> consistency_problems(const ModelConfigs& c) {
  std::vector<std::string> out;
  const int text_width = c.text_encoder.hidden_size;
  for (std::size_t i = 0; i < c.unet.cross_attention_dim.size(); ++i) {
    if (c.unet.cross_attention_dim[i] != text_width) {
      out.push_back("unet/config.json cross_attention_dim (level " + std::to_string(i) + ") is " +
                    std::to_string(c.unet.cross_attention_dim[i]) + ", expected text_encoder/config.json hidden_size " +
                    std::to_string(text_width));
      break;
    }
  }
  if (c.vision_encoder.projection_dim != text_width) {
    out.push_back("vision_encoder/config.json projection_dim is " + std::to_string(c.vision_encoder.projection_dim) +
                  ", expected text_encoder/config.json hidden_size " + std::to_string(text_width) +
                  " (the image embedding is added to the text embedding)");
  }
  if (c.unet.in_channels != c.vae.latent_channels || c.unet.out_channels != c.vae.latent_channels) {
    out.push_back("unet/config.json in_channels/out_channels are " + std::to_string(c.unet.in_channels) + "/" +
                  std::to_string(c.unet.out_channels) + ", expected vae/config.json latent_channels " +
                  std::to_string(c.vae.latent_channels));
  }
  if (c.index.ramping_coefficients.empty()) {
    // Generation needs one per text token (the image embedding's weight on each); refusing here
    // makes zero123pp-inspect and Engine::open say so, not the first image.
    out.push_back("model_index.json has no ramping_coefficients (Zero123++ v1.2 lists " +
                  std::to_string(c.text_encoder.max_position_embeddings) + ", one per text token)");
  } else if (c.index.ramping_coefficients.size() != static_cast<std::size_t>(c.text_encoder.max_position_embeddings)) {
    out.push_back("model_index.json ramping_coefficients has " + std::to_string(c.index.ramping_coefficients.size()) +
                  " values, expected text_encoder/config.json max_position_embeddings " +
                  std::to_string(c.text_encoder.max_position_embeddings));
  }
  const PreprocessorConfig& clip = c.feature_extractor_clip;
  if (clip.crop_height != c.vision_encoder.image_size || clip.crop_width != c.vision_encoder.image_size) {
    out.push_back("feature_extractor_clip/preprocessor_config.json crop_size is " + std::to_string(clip.crop_height) +
                  "x" + std::to_string(clip.crop_width) + ", expected vision_encoder/config.json image_size " +
                  std::to_string(c.vision_encoder.image_size));
  }
  return out;
}

} // namespace

FolderCheck check_model_folder(const ModelFolder& folder) {
  FolderCheck check;
  for (ModelModule m : kModelModules) {
    ModuleCheck mc;
    mc.module = m;
    if (const PipelineComponent* c = folder.configs().index.find(module_name(m))) mc.class_name = c->class_name;
    mc.weights_file = folder.path() / module_weights_path(m);
    const std::vector<ExpectedTensor> expected = expected_tensors(m, folder.configs());
    mc.tensors = check_tensors(m, expected, folder.weights(m));
    check.modules.push_back(std::move(mc));
  }
  check.consistency_problems = consistency_problems(folder.configs());
  return check;
}

} // namespace z123
