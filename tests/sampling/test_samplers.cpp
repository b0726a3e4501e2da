// Per-step scalars and the host step against direct float64 evaluations of each sampler's own
// formulas (spec §11.3 for Euler ancestral, DDIM eta = 0, k-diffusion's DPM-Solver++(2M)), plus
// whole trajectories with an oracle model that must land exactly on the clean latent.
#include "z123/error.hpp"
#include "z123/half.hpp"
#include "z123/sampling/scheduler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

using namespace z123::sampling;

z123::SchedulerConfig config(const char* prediction) {
  z123::SchedulerConfig c;
  c.beta_start = 0.00085;
  c.beta_end = 0.012;
  c.beta_schedule = "linear";
  c.prediction_type = prediction;
  c.steps_offset = 1;
  return c;
}

std::vector<float> random_vector(std::mt19937& rng, std::size_t n, float scale) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Bound on the error of a fp32 result built from fp32-rounded coefficients: each term carries a
// relative 2^-24 from its coefficient (doubled for slack), plus the final rounding.
double tolerance(double term_magnitudes, double result) { return 1.2e-7 * term_magnitudes + 6e-8 * std::fabs(result); }

constexpr TimestepSpacing kSpacings[] = {TimestepSpacing::Trailing, TimestepSpacing::Linspace,
                                         TimestepSpacing::Leading};

// Euler ancestral and Euler, written as in diffusers' step().
TEST(Samplers, EulerStepsMatchTheirFormulas) {
  std::mt19937 rng(1234);
  for (const char* pred : {"v_prediction", "epsilon"}) {
    for (Sampler sampler : {Sampler::EulerAncestral, Sampler::Euler}) {
      for (TimestepSpacing spacing : kSpacings) {
        for (int n : {1, 28, 50}) {
          const SamplingPlan p = make_plan(config(pred), n, spacing, sampler);
          for (const StepScalars& s : p.steps) {
            const auto x = random_vector(rng, 64, s.sigma + 1.0f);
            const auto m = random_vector(rng, 64, 1.0f);
            const auto noise = random_vector(rng, 64, 1.0f);
            std::vector<float> out(64);
            step_host(s, x, m,
                      sampler == Sampler::EulerAncestral ? std::span<const float>(noise) : std::span<const float>(), {},
                      out);
            const double sg = s.sigma, nx = s.sigma_next;
            const double up =
                sampler == Sampler::EulerAncestral ? std::sqrt(nx * nx * (sg * sg - nx * nx) / (sg * sg)) : 0.0;
            const double down = sampler == Sampler::EulerAncestral ? std::sqrt(nx * nx - up * up) : nx;
            EXPECT_NEAR(s.sigma_up, up, 1e-6 * (1 + up));
            EXPECT_NEAR(s.sigma_down, down, 1e-6 * (1 + down));
            EXPECT_NEAR(s.c_in, 1.0 / std::sqrt(sg * sg + 1.0), 1e-7);
            for (std::size_t i = 0; i < out.size(); ++i) {
              const double xi = x[i], mi = m[i];
              const double x0 =
                  pred[0] == 'v' ? mi * (-sg / std::sqrt(sg * sg + 1)) + xi / (sg * sg + 1) : xi - sg * mi;
              const double d = (xi - x0) / sg;
              const double want = xi + d * (down - sg) + noise[i] * up;
              const double mag = std::fabs(s.a * xi) + std::fabs(s.b * mi) + std::fabs(up * noise[i]);
              ASSERT_NEAR(out[i], want, tolerance(mag, want))
                  << pred << " " << name(sampler) << " " << name(spacing) << " n=" << n << " t=" << s.t;
            }
          }
        }
      }
    }
  }
}

// DDIM (eta = 0) in its own VP form: z = sqrt(ac) x0 + sqrt(1-ac) eps; z' = sqrt(ac') x0 + sqrt(1-ac')
// eps_hat. With x = z / sqrt(ac) and sigma = sqrt((1-ac)/ac), that is exactly the Euler step, which
// is why there is no separate DDIM sampler.
TEST(Samplers, DdimEqualsEulerInSigmaSpace) {
  std::mt19937 rng(99);
  const SamplingPlan p = make_plan(config("v_prediction"), 28, TimestepSpacing::Trailing, Sampler::Euler);
  for (const StepScalars& s : p.steps) {
    const auto x = random_vector(rng, 32, s.sigma + 1.0f);
    const auto v = random_vector(rng, 32, 1.0f);
    std::vector<float> out(32);
    step_host(s, x, v, {}, {}, out);
    const double sg = s.sigma, nx = s.sigma_next;
    const double sa = 1 / std::sqrt(sg * sg + 1), sb = sg / std::sqrt(sg * sg + 1); // sqrt(ac), sqrt(1-ac)
    const double sa2 = 1 / std::sqrt(nx * nx + 1), sb2 = nx / std::sqrt(nx * nx + 1);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double z = x[i] * sa;           // VP latent
      const double x0 = sa * z - sb * v[i]; // v-prediction
      const double eps = sb * z + sa * v[i];
      const double z_next = sa2 * x0 + sb2 * eps;
      const double want = z_next / sa2; // back to sigma space
      ASSERT_NEAR(out[i], want, 1e-6 * (std::fabs(x[i]) + std::fabs(v[i]) * (1 + sg))) << "t=" << s.t;
    }
  }
}

// DPM-Solver++(2M) as k-diffusion's sample_dpmpp_2m, run over a whole trajectory in float64 with a
// fixed pseudo-model, against the plan's scalars applied by step_host.
TEST(Samplers, DpmSolverPP2MMatchesKDiffusion) {
  for (const char* pred : {"v_prediction", "epsilon"}) {
    for (int n : {1, 2, 28}) {
      const SamplingPlan p = make_plan(config(pred), n, TimestepSpacing::Trailing, Sampler::DpmSolverPP2M);
      std::mt19937 rng(7);
      const std::size_t len = 16;
      auto x = random_vector(rng, len, p.init_noise_sigma);
      std::vector<double> xd(x.begin(), x.end());
      const auto w = random_vector(rng, len, 0.5f); // model output = w * x (elementwise), a smooth stand-in
      std::vector<float> x0_prev(len), x0_cur(len), m(len);
      std::vector<double> old_denoised;
      for (std::size_t k = 0; k < p.steps.size(); ++k) {
        const StepScalars& s = p.steps[k];
        for (std::size_t i = 0; i < len; ++i) m[i] = w[i] * x[i];
        predict_x0_host(s, x, m, x0_cur);
        step_host(s, x, m, {}, k > 0 ? std::span<const float>(x0_prev) : std::span<const float>(), x);
        x0_prev = x0_cur;
        // float64 k-diffusion, fed the same fp32 sigmas.
        const double sg = s.sigma, nx = s.sigma_next;
        std::vector<double> den(len);
        for (std::size_t i = 0; i < len; ++i) {
          const double mi = w[i] * xd[i];
          den[i] = pred[0] == 'v' ? xd[i] / (sg * sg + 1) - mi * sg / std::sqrt(sg * sg + 1) : xd[i] - sg * mi;
        }
        const double t = -std::log(sg), t_next = nx > 0 ? -std::log(nx) : INFINITY;
        const double h = t_next - t;
        for (std::size_t i = 0; i < len; ++i) {
          double d = den[i];
          if (!old_denoised.empty() && nx > 0) {
            const double h_last = t - (-std::log(static_cast<double>(p.steps[k - 1].sigma)));
            const double r = h_last / h;
            d = (1 + 1 / (2 * r)) * den[i] - (1 / (2 * r)) * old_denoised[i];
          }
          xd[i] = nx > 0 ? (nx / sg) * xd[i] - std::expm1(-h) * d : d;
        }
        old_denoised = den;
        for (std::size_t i = 0; i < len; ++i) {
          ASSERT_NEAR(x[i], xd[i], 2e-5 * (1 + std::fabs(xd[i]))) << pred << " n=" << n << " step " << k;
        }
      }
    }
  }
}

// x = x0 + sigma * eps with an oracle model (exact v or eps for a fixed clean latent): every
// sampler must end exactly on x0, whatever noise the ancestral steps add.
TEST(Samplers, OracleTrajectoryLandsOnX0) {
  for (const char* pred : {"v_prediction", "epsilon"}) {
    for (Sampler sampler : {Sampler::EulerAncestral, Sampler::Euler, Sampler::DpmSolverPP2M}) {
      for (TimestepSpacing spacing : kSpacings) {
        const SamplingPlan p = make_plan(config(pred), 28, spacing, sampler);
        std::mt19937 rng(5);
        const std::size_t len = 64;
        const auto clean = random_vector(rng, len, 1.0f);
        auto x = random_vector(rng, len, p.init_noise_sigma);
        for (std::size_t i = 0; i < len; ++i) x[i] += clean[i];
        std::vector<float> m(len), x0(len), x0_prev(len);
        for (std::size_t k = 0; k < p.steps.size(); ++k) {
          const StepScalars& s = p.steps[k];
          for (std::size_t i = 0; i < len; ++i) {
            const double eps = (static_cast<double>(x[i]) - clean[i]) / s.sigma;
            m[i] = static_cast<float>(pred[0] == 'v' ? (eps - s.sigma * clean[i]) / std::sqrt(s.sigma * s.sigma + 1.0)
                                                     : eps);
          }
          const auto noise = random_vector(rng, len, 1.0f);
          predict_x0_host(s, x, m, x0);
          step_host(s, x, m, s.sigma_up != 0 ? std::span<const float>(noise) : std::span<const float>(),
                    s.c_prev != 0 ? std::span<const float>(x0_prev) : std::span<const float>(), x);
          x0_prev = x0;
        }
        const StepScalars& last = p.steps.back();
        EXPECT_EQ(last.sigma_next, 0.0f);
        EXPECT_EQ(last.sigma_up, 0.0f);
        EXPECT_EQ(last.sigma_down, 0.0f);
        EXPECT_EQ(last.a, last.x0_x); // x_n = x0 exactly in the coefficients
        EXPECT_EQ(last.b, last.x0_m);
        EXPECT_EQ(last.c_prev, 0.0f);
        for (std::size_t i = 0; i < len; ++i) {
          ASSERT_NEAR(x[i], clean[i], 2e-4) << pred << " " << name(sampler) << " " << name(spacing) << " " << i;
        }
      }
    }
  }
}

// Reference-pass input (spec §10.3): (cond + noise * sigma) * c_in, sigma optionally fp16-rounded.
TEST(Samplers, ReferenceInput) {
  const SamplingPlan p = make_plan(config("v_prediction"), 28, TimestepSpacing::Trailing, Sampler::EulerAncestral);
  std::mt19937 rng(3);
  const auto cond = random_vector(rng, 50, 1.0f);
  const auto noise = random_vector(rng, 50, 1.0f);
  std::vector<float> out(50);
  for (const StepScalars& s : p.steps) {
    EXPECT_EQ(s.ref_sigma_f16, z123::round_f16(s.sigma));
    for (bool f16 : {false, true}) {
      reference_input_host(s, cond, noise, f16, out);
      const double sg = f16 ? z123::round_f16(s.sigma) : s.sigma;
      for (std::size_t i = 0; i < out.size(); ++i) {
        const double want = (cond[i] + noise[i] * sg) / std::sqrt(static_cast<double>(s.sigma) * s.sigma + 1);
        ASSERT_NEAR(out[i], want, 3e-7 * (std::fabs(want) + 1)) << s.t;
      }
    }
  }
  EXPECT_NE(p.steps[0].ref_sigma_f16, p.steps[0].sigma); // 25.146116 is not an fp16 value
}

TEST(Samplers, HostStepChecksSizes) {
  const SamplingPlan p = make_plan(config("v_prediction"), 4, TimestepSpacing::Trailing, Sampler::EulerAncestral);
  std::vector<float> a(8), b(8), c(7), out(8);
  auto kind_of = [](auto&& fn) {
    try {
      fn();
    } catch (const z123::Error& e) {
      return e.kind();
    }
    return z123::ErrorKind::Internal;
  };
  EXPECT_EQ(kind_of([&] { step_host(p.steps[0], a, c, b, {}, out); }), z123::ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of([&] { step_host(p.steps[0], a, b, {}, {}, out); }),
            z123::ErrorKind::InvalidArgument); // needs noise
  EXPECT_EQ(kind_of([&] { reference_input_host(p.steps[0], a, c, false, out); }), z123::ErrorKind::InvalidArgument);
  step_host(p.steps.back(), a, b, {}, {}, out); // last step: no noise needed
}

} // namespace
