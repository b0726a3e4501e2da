// The engine's testing hooks, for the parity tests and benches that compare it with the official
// pipeline (tests/pipeline, zero123pp-bench-e2e --golden): GenerateOptions::inject supplies the
// noise and preprocessed inputs PyTorch drew, GenerateOptions::capture receives the intermediate
// tensors. Front ends do not use them.
#pragma once

#include <vector>

#include "z123/engine.hpp"

namespace z123 {

// Noise and preprocessed inputs supplied from outside instead of generated (the official pipeline
// draws from torch's RNG). Tensors are NCHW as PyTorch has them; an empty field means "compute it
// as usual" (the preprocessed images from the input image).
struct InjectedInputs {
  std::vector<float> vae_input;              // [1,3,S,S] normalized VAE-branch image (S = 512)
  std::vector<float> clip_input;             // [1,3,224,224] normalized CLIP-branch image
  std::vector<float> posterior_cond;         // [1,4,S/8,S/8] noise of the condition posterior sample
  std::vector<float> posterior_zero;         // [1,4,S/8,S/8] noise of the zero-image posterior sample
  std::vector<float> initial;                // [1,4,H/8,W/8] initial latent noise (before init sigma)
  std::vector<std::vector<float>> reference; // per step [halves,4,S/8,S/8]
  std::vector<std::vector<float>> ancestral; // per step [1,4,H/8,W/8]
};

// What generate() hands back besides the image when GenerateOptions::capture is set (each costs a
// download per step or stage).
struct GenerateCapture {
  std::vector<std::vector<float>> latents; // x after each step, NCHW [1,4,h,w]
  std::vector<float> decoded;              // decoder output in [0,1], NCHW
  std::vector<float> cond_lat;             // reference latents, NCHW [halves,4,S/8,S/8]
  std::vector<float> context;              // UNet context [halves, 77, D]
  std::vector<float> image_embeds;         // CLIP image embedding [1, D]
};

} // namespace z123
