// Matches a weights file against the expected tensor list of its module: what is missing, what
// is extra, what has the wrong shape, plus the totals the inspect tool prints. The resolved
// stored names are what a loader uses to fetch each canonical tensor from the file.
#pragma once

#include "z123/io/safetensors.hpp"
#include "z123/model/expected_tensors.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace z123 {

struct ShapeMismatch {
  std::string name; // canonical name
  std::vector<std::int64_t> expected;
  std::vector<std::int64_t> found;
};

struct TensorCheckReport {
  std::vector<std::string> missing;      // canonical names absent from the file (expected order)
  std::vector<std::string> unexpected;   // stored names nothing expects (file order)
  std::vector<ShapeMismatch> mis_shaped; // present, wrong shape
  std::vector<std::string> ignored;      // stored buffers skipped on purpose (position_ids)
  // canonical name -> name in the file, for every expected tensor that was found (including
  // mis-shaped ones). Differs from the key for prefix-less text encoders and legacy VAE names.
  std::map<std::string, std::string> stored_names;
  std::map<StoredDType, std::size_t> dtype_counts; // over all non-ignored file tensors

  std::size_t expected_tensors = 0;
  std::size_t file_tensors = 0; // non-ignored tensors in the file
  std::uint64_t expected_parameters = 0;
  std::uint64_t file_parameters = 0;   // sum of numel over non-ignored file tensors
  std::uint64_t file_tensor_bytes = 0; // sum of their byte sizes

  bool ok() const { return missing.empty() && unexpected.empty() && mis_shaped.empty(); }
};

TensorCheckReport check_tensors(ModelModule module, std::span<const ExpectedTensor> expected,
                                const SafetensorsFile& file);

} // namespace z123
