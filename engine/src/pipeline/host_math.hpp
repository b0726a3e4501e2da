// Small host-side computations of the pipeline (spec §3, §7, §8.4): the posterior sample, the
// conditioning context with its fp16 rounding, latent unscaling and the final uint8 conversion.
// They touch a few thousand to a few hundred thousand values once per image, so they stay on
// the CPU where they are exact and easy to test.
#pragma once

#include <cstdint>
#include <vector>

#include "z123/host_layout.hpp"
#include "z123/image/image.hpp"
#include "z123/tensor.hpp"

namespace z123::pipeline {

// sample = mean + exp(0.5 · clamp(logvar, −30, 20)) · noise; moments NHWC [h, w, 2c] (mean
// channels first), noise NHWC [h, w, c]; result NHWC [h, w, c].
std::vector<float> posterior_sample(const std::vector<float>& moments, const std::vector<float>& noise, int64_t c);

// pos[j] = E[j] + ramp[j]·img (fp16 arithmetic when fp16, like the reference, spec §7);
// returns [halves, N, D]: halves == 2 → [E; pos], halves == 1 → [pos].
std::vector<float> conditioning_context(const std::vector<float>& text_embedding,
                                        const std::vector<float>& image_embeds, const std::vector<double>& ramp,
                                        int64_t tokens, int64_t dim, int halves, bool fp16);

// z = (x / 0.75 + 0.22) / scaling_factor: sampler space → VAE latent space (spec §8.4).
std::vector<float> unscale_latents(const std::vector<float>& x, double scaling_factor);

// zero123plus's unscale_image (x / 0.5 · 0.8): the decoder's output times this is diffusers'
// [-1, 1] image, which becomes pixel = round_half_even(255 · clamp(x / 2 + 0.5, 0, 1))
// (kernels::image_to_rgba8 on the GPU).
constexpr float kImageUnscale = 1.6f;

} // namespace z123::pipeline
