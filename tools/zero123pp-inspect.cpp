// zero123pp-inspect MODEL_DIR: checks a downloaded Zero123++ folder without a GPU. Prints every
// module (class, dtypes, tensor / parameter / byte counts), the key config values, and a check
// of each weights file against the tensor list its config implies.
// Exit status: 0 = folder is usable, 1 = problems (each one listed), 2 = usage error.
#include "z123/error.hpp"
#include "z123/model/model_folder.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace z123;

constexpr std::size_t kMaxListed = 20; // per category, so a wrong file does not flood the terminal

void usage(std::ostream& out) {
  out << R"(NAME
    zero123pp-inspect - check a Zero123++ v1.2 model folder

SYNOPSIS
    zero123pp-inspect MODEL_DIR

DESCRIPTION
    Checks a diffusers-layout Zero123++ v1.2 folder (e.g. a snapshot of
    sudo-ai/zero123plus-v1.2): model_index.json, every component config, and the four
    safetensors weight files (unet, vae, text_encoder, vision_encoder), whose tensor names and
    shapes are compared with what the configs imply. Prints each module (class, dtype, tensor
    and parameter counts, bytes), then every problem found.

OPTIONS
    -h, --help         this text

EXIT STATUS
    0 everything matches; 1 the folder has problems (listed); 2 usage error
)";
}

std::string with_commas(std::uint64_t v) {
  std::string digits = std::to_string(v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string lpad(const std::string& s, std::size_t width) {
  return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
}

template <class T>
std::string list(const std::vector<T>& v) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << ']';
  return os.str();
}

template <class T, std::size_t N>
std::string list(const std::array<T, N>& a) {
  return list(std::vector<T>(a.begin(), a.end()));
}

std::string dtypes(const TensorCheckReport& r) {
  if (r.dtype_counts.empty()) return "-";
  if (r.dtype_counts.size() == 1) return stored_dtype_name(r.dtype_counts.begin()->first);
  std::string s; // mixed: say how many of each
  for (const auto& [dtype, count] : r.dtype_counts) {
    s += (s.empty() ? "" : "+") + std::string(stored_dtype_name(dtype)) + "(" + std::to_string(count) + ")";
  }
  return s;
}

void print_modules(const FolderCheck& check) {
  std::cout << "modules:\n";
  for (const ModuleCheck& m : check.modules) {
    const TensorCheckReport& r = m.tensors;
    std::cout << "  " << pad(module_name(m.module), 16) << pad(m.class_name, 32) << pad(dtypes(r), 10)
              << lpad(std::to_string(r.file_tensors), 6) << " tensors " << lpad(with_commas(r.file_parameters), 13)
              << " params " << lpad(with_commas(r.file_tensor_bytes), 15) << " bytes\n";
  }
}

void print_configs(const ModelConfigs& c) {
  std::ostringstream os;
  const UNetConfig& u = c.unet;
  std::vector<int> head_dims;
  for (std::size_t i = 0; i < u.levels(); ++i) head_dims.push_back(u.head_dim(i));
  os << "config:\n"
     << "  unet            in " << u.in_channels << " -> out " << u.out_channels << ", block_out_channels "
     << list(u.block_out_channels) << ", layers_per_block " << list(u.layers_per_block) << ", heads "
     << list(u.num_attention_heads) << " (head dim " << list(head_dims) << "), cross_attention_dim "
     << list(u.cross_attention_dim) << ", transformer layers " << list(u.transformer_layers_per_block) << ", norm "
     << u.norm_num_groups << " groups eps " << u.norm_eps << ", time embedding " << u.time_embedding_dim << "\n";
  const VaeConfig& v = c.vae;
  os << "  vae             block_out_channels " << list(v.block_out_channels) << ", layers_per_block "
     << v.layers_per_block << ", latent_channels " << v.latent_channels << ", scaling_factor " << v.scaling_factor
     << "\n";
  const ClipTextConfig& t = c.text_encoder;
  os << "  text_encoder    hidden " << t.hidden_size << ", layers " << t.num_hidden_layers << ", heads "
     << t.num_attention_heads << ", mlp " << t.intermediate_size << ", positions " << t.max_position_embeddings
     << ", vocab " << t.vocab_size << ", act " << clip_activation_name(t.hidden_act) << ", eps " << t.layer_norm_eps
     << "\n";
  const ClipVisionConfig& vi = c.vision_encoder;
  os << "  vision_encoder  hidden " << vi.hidden_size << ", layers " << vi.num_hidden_layers << ", heads "
     << vi.num_attention_heads << ", mlp " << vi.intermediate_size << ", image " << vi.image_size << " patch "
     << vi.patch_size << " (" << vi.num_positions() << " positions), projection " << vi.projection_dim << ", act "
     << clip_activation_name(vi.hidden_act) << "\n";
  const SchedulerConfig& s = c.scheduler;
  os << "  scheduler       " << (s.class_name.empty() ? "(no class)" : s.class_name) << ": " << s.beta_schedule
     << " betas " << s.beta_start << ".." << s.beta_end << " over " << s.num_train_timesteps << ", "
     << s.prediction_type << ", timestep_spacing " << s.timestep_spacing << ", steps_offset " << s.steps_offset << "\n";
  for (const auto& [name, p] :
       {std::pair<const char*, const PreprocessorConfig*>{"feature_extractor_vae", &c.feature_extractor_vae},
        {"feature_extractor_clip", &c.feature_extractor_clip}}) {
    os << "  " << pad(name, 24) << "shortest_edge " << p->shortest_edge << ", crop " << p->crop_height << "x"
       << p->crop_width << ", " << resample_name(p->resample) << ", mean " << list(p->image_mean) << ", std "
       << list(p->image_std) << "\n";
  }
  std::cout << os.str();
}

// Prints at most kMaxListed lines, then how many were left out.
template <class T, class Fn>
void print_limited(const std::vector<T>& items, const char* category, Fn line) {
  for (std::size_t i = 0; i < items.size() && i < kMaxListed; ++i) std::cout << "    " << line(items[i]) << "\n";
  if (items.size() > kMaxListed) {
    std::cout << "    ... and " << items.size() - kMaxListed << " more " << category << " tensors\n";
  }
}

// Returns the number of problems printed for the module.
std::size_t print_module_check(const ModelFolder& folder, const ModuleCheck& m) {
  const TensorCheckReport& r = m.tensors;
  const std::size_t problems = r.missing.size() + r.unexpected.size() + r.mis_shaped.size();
  std::cout << "  " << pad(module_name(m.module), 16);
  if (problems == 0) {
    std::cout << "OK (" << r.expected_tensors << " of " << r.expected_tensors << " expected tensors)\n";
  } else {
    std::cout << "PROBLEMS in " << m.weights_file.string() << ": " << r.missing.size() << " missing, "
              << r.unexpected.size() << " unexpected, " << r.mis_shaped.size() << " mis-shaped (expected "
              << r.expected_tensors << " tensors)\n";
  }
  const std::vector<ExpectedTensor> expected = expected_tensors(m.module, folder.configs());
  auto expected_shape = [&](const std::string& name) {
    for (const auto& e : expected) {
      if (e.name == name) return format_shape(e.shape);
    }
    return std::string("?");
  };
  const SafetensorsFile& file = folder.weights(m.module);
  print_limited(r.missing, "missing", [&](const std::string& n) {
    return "missing tensor '" + n + "' (expected shape " + expected_shape(n) + ")";
  });
  print_limited(r.unexpected, "unexpected", [&](const std::string& n) {
    const TensorView* t = file.find(n);
    return "unexpected tensor '" + n + "'" +
           (t ? " (shape " + format_shape(t->shape) + ", " + stored_dtype_name(t->dtype) + ")" : std::string());
  });
  print_limited(r.mis_shaped, "mis-shaped", [](const ShapeMismatch& s) {
    return "mis-shaped tensor '" + s.name + "': expected " + format_shape(s.expected) + ", found " +
           format_shape(s.found);
  });
  for (const std::string& n : r.ignored) std::cout << "    ignored buffer '" << n << "'\n";
  return problems;
}

int inspect(const std::string& dir) {
  const ModelFolder folder = ModelFolder::open(dir);
  const ModelConfigs& c = folder.configs();
  std::cout << "model folder: " << folder.path().string() << "\n"
            << "pipeline: " << c.index.class_name;
  if (!c.index.diffusers_version.empty()) std::cout << " (diffusers " << c.index.diffusers_version << ")";
  std::cout << ", " << c.index.ramping_coefficients.size() << " ramping coefficients\n\n";

  const FolderCheck check = check_model_folder(folder);
  print_modules(check);
  std::cout << "\n";
  print_configs(c);
  std::cout << "\ncheck:\n";
  std::size_t problems = 0;
  for (const ModuleCheck& m : check.modules) problems += print_module_check(folder, m);
  for (const std::string& p : check.consistency_problems) std::cout << "  inconsistent: " << p << "\n";
  problems += check.consistency_problems.size();
  if (problems == 0) {
    std::cout << "\nresult: OK\n";
    return 0;
  }
  std::cout << "\nresult: " << problems << " problem" << (problems == 1 ? "" : "s") << "\n";
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      usage(std::cout);
      return 0;
    }
  }
  if (args.size() != 1 || args[0].starts_with("-")) {
    if (args.size() == 1)
      std::cerr << "zero123pp-inspect: unknown option '" << args[0] << "'\n";
    else
      std::cerr << "zero123pp-inspect: usage: zero123pp-inspect MODEL_DIR (one folder)\n";
    std::cerr << "Try 'zero123pp-inspect --help'.\n";
    return 2;
  }
  try {
    return inspect(args[0]);
  } catch (const z123::Error& e) {
    std::cout.flush();
    std::cerr << "zero123pp-inspect: " << z123::error_kind_name(e.kind()) << " error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "zero123pp-inspect: internal error: " << e.what() << "\n";
    return 1;
  }
}
