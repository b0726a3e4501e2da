// Numeric comparison helpers for kernel and network tests: random data with a printed seed,
// fp16 rounding of reference inputs, and an error report (max abs, relative L2, first bad index)
// checked against a stated tolerance.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "z123/half.hpp"
#include "z123/tensor.hpp"

namespace z123::test {

// Uniform values in [lo, hi).
std::vector<float> random_uniform(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f);
// Standard normal values.
std::vector<float> random_normal(size_t n, uint64_t seed, float stddev = 1.0f);
// What the device actually holds for a tensor of this dtype (fp16 rounding when F16).
std::vector<float> as_stored(const std::vector<float>& v, DType dtype);

struct ErrorReport {
  double max_abs = 0, max_rel = 0, rel_l2 = 0;
  size_t worst = 0; // index of the largest absolute error
  size_t nonfinite = 0;
  std::string summary() const;
};
ErrorReport compare(const std::vector<float>& got, const std::vector<double>& ref);

// Passes when every element satisfies |got - ref| <= atol + rtol * |ref| and nothing is NaN/inf.
::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<double>& ref, double atol,
                                     double rtol);
// The same with a bound of its own added for each element (extra: empty, or one per element).
::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<double>& ref, double atol,
                                     double rtol, const std::vector<double>& extra);

// The bound of fp16 recursive summation of m terms, gamma_m = m u / (1 - m u) with u = 2^-11, for
// m = 17: the kernels' packed fp16 sums (the tiled GEMM's F16_ARITH, the tiled attention's packed
// P·V) add at most 16 fused products before fp32 takes over, one more for lavapipe's fp32 fma
// rounded to fp16. Their error is at most this times the sum of the products' magnitudes.
constexpr double kFp16SumGamma = 17.0 / 2048 / (1 - 17.0 / 2048);

// A value written into output buffers before a kernel runs; any survivor means a missed element.
constexpr float kPoisonValue = -12345.0f;
// Fills a device tensor with the poison value.
void poison(vk::Device& device, const Tensor& t);

// Sets an environment variable for one scope (and unsets it after). Only for tests of how the
// environment is read (tests/tuning): kernel tests pin knobs with a Tuning (Kernels(device, tuning)),
// since a device reads the environment once, when it is created.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  const char* name_;
};

} // namespace z123::test
