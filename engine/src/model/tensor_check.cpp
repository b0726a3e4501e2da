#include "z123/model/tensor_check.hpp"

#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace z123 {

TensorCheckReport check_tensors(ModelModule module, std::span<const ExpectedTensor> expected,
                                const SafetensorsFile& file) {
  TensorCheckReport r;
  r.expected_tensors = expected.size();
  std::unordered_map<std::string, std::size_t> index; // canonical name -> position in `expected`
  for (std::size_t i = 0; i < expected.size(); ++i) {
    index.emplace(expected[i].name, i);
    r.expected_parameters += expected[i].numel();
  }
  std::vector<const TensorView*> matched(expected.size(), nullptr);

  auto match = [&](std::size_t i, const TensorView& t) {
    matched[i] = &t;
    r.stored_names.emplace(expected[i].name, t.name);
    if (t.shape != expected[i].shape) r.mis_shaped.push_back({expected[i].name, expected[i].shape, t.shape});
  };

  // Pass 1: exact (normalized) names. Legacy VAE names wait for pass 2 so a file holding both
  // spellings keeps the modern tensor and reports the legacy one as unexpected.
  std::vector<std::pair<const TensorView*, std::size_t>> legacy; // (tensor, expected index)
  std::vector<const TensorView*> unmatched;
  for (const TensorView& t : file.tensors()) {
    const std::optional<std::string> canonical = canonical_tensor_name(module, t.name);
    if (!canonical) {
      r.ignored.push_back(t.name);
      continue;
    }
    ++r.file_tensors;
    r.file_parameters += t.numel;
    r.file_tensor_bytes += t.bytes.size();
    ++r.dtype_counts[t.dtype];
    auto it = index.find(*canonical);
    if (it != index.end() && matched[it->second] == nullptr) {
      match(it->second, t);
      continue;
    }
    if (it == index.end() && module == ModelModule::Vae) {
      if (const auto modern = legacy_vae_attention_name(*canonical)) {
        auto lit = index.find(*modern);
        // "Only if simple": a pure rename with the modern (Linear) shape, nothing else.
        if (lit != index.end() && expected[lit->second].shape == t.shape) {
          legacy.emplace_back(&t, lit->second);
          continue;
        }
      }
    }
    unmatched.push_back(&t); // no counterpart, or a second spelling of a matched tensor
  }
  for (const auto& [t, i] : legacy) {
    if (matched[i] == nullptr) {
      match(i, *t);
    } else {
      unmatched.push_back(t);
    }
  }
  for (const SkippedTensor& t : file.skipped()) r.ignored.push_back(t.name);
  // Keep unexpected names in file order.
  const std::unordered_set<const TensorView*> unmatched_set(unmatched.begin(), unmatched.end());
  for (const TensorView& t : file.tensors()) {
    if (unmatched_set.count(&t) != 0) r.unexpected.push_back(t.name);
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (matched[i] == nullptr) r.missing.push_back(expected[i].name);
  }
  return r;
}

} // namespace z123
