// Float64 CPU references for the normalization, pointwise and data-movement kernels
// (norm.hpp, elementwise.hpp). Inputs are the float values the device holds (callers round them
// to fp16 first for F16 tests); all arithmetic is double, except where the reference deliberately
// follows PyTorch's fp32 recipe (the timestep embedding's frequencies and arguments).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "z123/tensor.hpp"
#include "z123/vk/device.hpp"
#include "z123/vk/recording.hpp"

namespace z123::test::pointwise {

// A device tensor holding values (which the caller has already rounded with as_stored).
Tensor upload_tensor(vk::Device& device, DType dtype, const std::vector<int64_t>& shape,
                     const std::vector<float>& values, const std::string& name);

// x [B, HW, C]; statistics per (batch, group) over HW x C/groups, biased variance.
std::vector<double> group_norm(const std::vector<float>& x, const std::vector<float>& gamma,
                               const std::vector<float>& beta, int64_t B, int64_t HW, int64_t C, int64_t groups,
                               double eps, bool silu);

// x [M, C], statistics per row.
std::vector<double> layer_norm(const std::vector<float>& x, const std::vector<float>& gamma,
                               const std::vector<float>& beta, int64_t M, int64_t C, double eps);

double gelu(double v); // exact: 0.5 v (1 + erf(v / sqrt 2))
double silu(double v); // v / (1 + e^-v)

// x [M, 2F] -> [M, F]: x[:, :F] * gelu(x[:, F:]).
std::vector<double> geglu(const std::vector<float>& x, int64_t M, int64_t F);

// [B, dim] rows of diffusers' get_timestep_embedding, frequencies and arguments rounded to fp32
// exactly as PyTorch computes them, sin / cos in double.
std::vector<double> timestep_embedding(float t, int64_t B, int64_t dim, bool flip_sin_to_cos, float freq_shift,
                                       float max_period);

// Layout references (exact): [B, C, H, W] <-> [B, H, W, C], nearest x2 on [B, H, W, C].
std::vector<double> nchw_to_nhwc(const std::vector<float>& x, int64_t B, int64_t C, int64_t H, int64_t W);
std::vector<double> nhwc_to_nchw(const std::vector<float>& x, int64_t B, int64_t H, int64_t W, int64_t C);
std::vector<double> upsample_nearest2x(const std::vector<float>& x, int64_t B, int64_t H, int64_t W, int64_t C);

std::vector<double> to_double(const std::vector<float>& v);

// ---- benchmarks (the DISABLED_*Bench tests) ----
// Z123_BENCH_FULL=1: the model's real sizes (GPU); otherwise scaled down for lavapipe.
bool bench_full_size();
// Milliseconds per call of record(): one warm-up submission, then reps calls in one recording
// timed by GPU timestamps (wall clock where the device has none).
double bench_ms(vk::Device& device, const std::function<void(vk::Recording&)>& record, int reps);

} // namespace z123::test::pointwise
