// Access to the reference goldens in tests/data/golden (made by tests/reference/make_goldens.py
// from the official transformers/diffusers modules): tensors as float vectors, layout helpers,
// and the bundled tiny model folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "z123/host_layout.hpp"
#include "z123/io/safetensors.hpp"

namespace z123::test {

std::filesystem::path golden_dir();     // tests/data/golden
std::filesystem::path tiny_model_dir(); // tests/data/golden/tiny-model
// The synthetic model of synthetic_model.hpp (64 px VAE branch, 1 layer per VAE block), written
// once per process into a temporary folder: a generation on lavapipe takes seconds instead of
// the tiny model's minute (its 512 px VAE branch puts 4,096 reference tokens in every
// attention). For tests of plumbing (faults, threads, soaks), not of numerics.
std::filesystem::path fast_model_dir();
// tests/data/golden-tlpb2: the tiny UNet with transformer_layers_per_block = 2 (make_goldens.py
// --transformer-layers 2): its unet/ folder and its unet / unet_ref goldens.
std::filesystem::path tlpb2_golden_dir();
// The tiny model with that unet/ in place of its own, written once per process into a temporary
// folder (the other modules are the tiny model's: only the UNet is compared).
std::filesystem::path tlpb2_model_dir();

struct GoldenTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

class GoldenFile {
public:
  explicit GoldenFile(const std::string& file_name); // e.g. "text.safetensors"
  GoldenFile(const std::filesystem::path& dir, const std::string& file_name);
  GoldenTensor at(const std::string& name) const;

private:
  SafetensorsFile file_;
};

// [B, C, H, W] <-> [B, H, W, C] on the host: the engine's functions.
using z123::nchw_to_nhwc;
using z123::nhwc_to_nchw;
std::vector<double> to_double(const std::vector<float>& v);

} // namespace z123::test
