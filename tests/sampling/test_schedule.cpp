// Training schedule and set_timesteps against the spec's tables (§11.4) and the numpy behaviour
// diffusers relies on (§11.2): fractional linspace timesteps, trailing rounding, the step-count
// limits and the config plumbing.
#include "z123/error.hpp"
#include "z123/sampling/scheduler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

using namespace z123::sampling;

z123::SchedulerConfig v12_config() {
  z123::SchedulerConfig c; // spec §2.2
  c.class_name = "EulerAncestralDiscreteScheduler";
  c.num_train_timesteps = 1000;
  c.beta_start = 0.00085;
  c.beta_end = 0.012;
  c.beta_schedule = "linear";
  c.prediction_type = "v_prediction";
  c.timestep_spacing = "linspace";
  c.steps_offset = 1;
  return c;
}

// One row of a §11.4 table, as printed (6 decimals).
struct TableRow {
  double t, sigma, c_in, sigma_up, sigma_down;
};

const TableRow kTrailing28[28] = {
    {999, 25.146116, 0.039736, 11.981292, 16.384938}, {963, 20.298216, 0.049206, 9.555785, 13.568372},
    {928, 16.595594, 0.060148, 7.803228, 11.119687},  {892, 13.584470, 0.073415, 6.340012, 9.229181},
    {856, 11.197032, 0.088955, 5.184573, 7.711235},   {820, 9.292090, 0.107001, 4.238645, 6.548576},
    {785, 7.800639, 0.127154, 3.551761, 5.511990},    {749, 6.557213, 0.150761, 2.958950, 4.690654},
    {713, 5.545955, 0.177450, 2.461766, 4.049343},    {678, 4.738932, 0.206471, 2.100353, 3.466226},
    {642, 4.052926, 0.239551, 1.780385, 2.994337},    {606, 3.483651, 0.275912, 1.517429, 2.597025},
    {570, 3.007845, 0.315485, 1.289579, 2.277723},    {535, 2.617449, 0.356892, 1.124034, 1.979028},
    {499, 2.275962, 0.402259, 0.972245, 1.729369},    {463, 1.983930, 0.450104, 0.837445, 1.523643},
    {428, 1.738621, 0.498581, 0.739280, 1.326656},    {392, 1.518734, 0.549936, 0.646749, 1.157304},
    {356, 1.325759, 0.602187, 0.567255, 1.005852},    {320, 1.154780, 0.654628, 0.494152, 0.876042},
    {285, 1.005801, 0.705059, 0.439471, 0.747388},    {249, 0.867020, 0.755557, 0.385551, 0.631705},
    {213, 0.740068, 0.803816, 0.334226, 0.528837},    {178, 0.625600, 0.847770, 0.292517, 0.423604},
    {142, 0.514788, 0.889106, 0.248563, 0.324238},    {106, 0.408551, 0.925722, 0.203166, 0.225537},
    {70, 0.303551, 0.956886, 0.149639, 0.126401},     {35, 0.195880, 0.981350, 0.000000, 0.000000},
};
const TableRow kLinspace28[28] = {
    {999, 25.146116, 0.039736, 12.040240, 16.194439}, {962, 20.179873, 0.049494, 9.600932, 13.192986},
    {925, 16.316641, 0.061172, 7.709515, 10.826947},  {888, 13.291328, 0.075025, 6.233616, 8.949332},
    {851, 10.906352, 0.091307, 5.074711, 7.449280},   {814, 9.013572, 0.110267, 4.159044, 6.242720},
    {777, 7.501280, 0.132142, 3.431099, 5.265521},    {740, 6.284755, 0.157138, 2.848845, 4.468507},
    {703, 5.299384, 0.185429, 2.380302, 3.813749},    {666, 4.495611, 0.217132, 2.000990, 3.271852},
    {629, 3.835228, 0.252305, 1.692075, 2.819903},    {592, 3.288612, 0.290927, 1.438984, 2.439962},
    {555, 2.832682, 0.332888, 1.230381, 2.117900},    {518, 2.449355, 0.377982, 1.057393, 1.842541},
    {481, 2.124391, 0.425897, 0.913034, 1.604992},    {444, 1.846519, 0.476210, 0.791768, 1.398140},
    {407, 1.606764, 0.528392, 0.689170, 1.216259},    {370, 1.397942, 0.581804, 0.601675, 1.054706},
    {333, 1.214256, 0.635717, 0.526371, 0.909680},    {296, 1.050992, 0.689314, 0.460839, 0.778030},
    {259, 0.904270, 0.741717, 0.403009, 0.657097},    {222, 0.770839, 0.792008, 0.351032, 0.544556},
    {185, 0.647892, 0.839251, 0.303105, 0.438264},    {148, 0.532868, 0.882524, 0.257190, 0.336006},
    {111, 0.423139, 0.920947, 0.210272, 0.234962},    {74, 0.315312, 0.953713, 0.155208, 0.129983},
    {37, 0.202448, 0.980116, 0.028863, 0.004202},     {0, 0.029168, 0.999575, 0.000000, 0.000000},
};

// A value printed with 6 decimals matches within half a unit of the last digit. The per-step
// scalars are evaluated in float64 (torch's reference evaluates them in fp32), so allow one fp32
// ulp of the value on top.
void expect_printed(double printed, float got, const char* what, int row) {
  const double ulp = std::nextafter(std::fabs(got), std::numeric_limits<float>::infinity()) - std::fabs(got);
  EXPECT_LE(std::fabs(static_cast<double>(got) - printed), 5e-7 + ulp)
      << what << " row " << row << ": printed " << printed << ", got " << got;
}

void expect_table(const TableRow (&table)[28], TimestepSpacing spacing) {
  const TrainingSchedule schedule = make_training_schedule(v12_config());
  const Timesteps ts = set_timesteps(schedule, 28, spacing);
  ASSERT_EQ(ts.steps(), 28);
  ASSERT_EQ(ts.sigmas.size(), 29u);
  EXPECT_EQ(ts.sigmas[28], 0.0f);
  EXPECT_EQ(ts.init_noise_sigma, 25.146116256713867f);
  const auto steps = plan(ts, Sampler::EulerAncestral, Prediction::VPrediction);
  ASSERT_EQ(steps.size(), 28u);
  for (int i = 0; i < 28; ++i) {
    const TableRow& r = table[i];
    const StepScalars& s = steps[static_cast<std::size_t>(i)];
    EXPECT_EQ(s.t, static_cast<float>(r.t)) << "row " << i;
    EXPECT_EQ(ts.timesteps[static_cast<std::size_t>(i)], static_cast<float>(r.t)) << "row " << i;
    EXPECT_EQ(s.sigma, ts.sigmas[static_cast<std::size_t>(i)]);
    EXPECT_EQ(s.sigma_next, ts.sigmas[static_cast<std::size_t>(i) + 1]);
    // The schedule itself is fp32 data: it must round to exactly the printed digits.
    EXPECT_LE(std::fabs(static_cast<double>(s.sigma) - r.sigma), 5e-7) << "sigma row " << i;
    expect_printed(r.c_in, s.c_in, "c_in", i);
    expect_printed(r.sigma_up, s.sigma_up, "sigma_up", i);
    expect_printed(r.sigma_down, s.sigma_down, "sigma_down", i);
  }
}

TEST(Schedule, TrainingScheduleMatchesSpec) {
  const TrainingSchedule s = make_training_schedule(v12_config());
  ASSERT_EQ(s.num_train_timesteps(), 1000);
  EXPECT_EQ(s.prediction, Prediction::VPrediction);
  EXPECT_EQ(s.betas[0], 0.00085f);
  EXPECT_EQ(s.betas[999], 0.012f);
  EXPECT_EQ(s.alphas[0], 1.0f - 0.00085f);
  EXPECT_EQ(s.alphas_cumprod[0], 0.99915f);
  EXPECT_NEAR(s.alphas_cumprod[999], 0.0015789628, 1e-9);
  EXPECT_NEAR(s.sigmas[0], 0.029167533, 1e-9);
  EXPECT_EQ(s.sigmas[999], 25.146116256713867f);
  for (std::size_t i = 1; i < 1000; ++i) {
    ASSERT_GT(s.betas[i], s.betas[i - 1]);
    ASSERT_GT(s.sigmas[i], s.sigmas[i - 1]);
  }
}

TEST(Schedule, ScaledLinearIsStableDiffusionsSchedule) {
  z123::SchedulerConfig c = v12_config();
  c.beta_schedule = "scaled_linear";
  const TrainingSchedule s = make_training_schedule(c);
  EXPECT_NEAR(s.betas[0], 0.00085, 1e-10); // sqrt, fp32, square: within an ulp or two of the ends
  EXPECT_NEAR(s.betas[999], 0.012, 1e-9);
  EXPECT_NEAR(s.sigmas[999], 14.6146, 1e-4); // SD's sigma_max (spec §17 pitfall 1)
}

TEST(Schedule, Trailing28Table) { expect_table(kTrailing28, TimestepSpacing::Trailing); }

TEST(Schedule, Linspace28Table) { expect_table(kLinspace28, TimestepSpacing::Linspace); }

TEST(Schedule, Trailing75) {
  const TrainingSchedule schedule = make_training_schedule(v12_config());
  const Timesteps ts = set_timesteps(schedule, 75, TimestepSpacing::Trailing);
  const std::vector<float> expected{999, 986, 972, 959, 946, 932, 919, 906, 892, 879, 866, 852, 839, 826, 812,
                                    799, 786, 772, 759, 746, 732, 719, 706, 692, 679, 666, 652, 639, 626, 612,
                                    599, 586, 572, 559, 546, 532, 519, 506, 492, 479, 466, 452, 439, 426, 412,
                                    399, 386, 372, 359, 346, 332, 319, 306, 292, 279, 266, 252, 239, 226, 212,
                                    199, 186, 172, 159, 146, 132, 119, 106, 92,  79,  66,  52,  39,  26,  12};
  ASSERT_EQ(ts.timesteps, expected);
  // [GGML]'s fixture values (spec §11.4), bit for bit.
  EXPECT_EQ(ts.sigmas[0], 25.146116256713867f);
  EXPECT_EQ(ts.sigmas[1], 23.255428314208984f);
  EXPECT_EQ(ts.sigmas[2], 21.400310516357422f);
  EXPECT_EQ(ts.sigmas[3], 19.82962417602539f);
  EXPECT_LE(std::fabs(ts.sigmas[74] - 0.109533), 5e-7);
  EXPECT_EQ(ts.sigmas[75], 0.0f);
}

// np.linspace(0, 999, 50): step 999/49 is inexact, so timesteps are fractional and sigma is
// interpolated between training steps.
TEST(Schedule, Linspace50IsFractional) {
  const TrainingSchedule schedule = make_training_schedule(v12_config());
  const Timesteps ts = set_timesteps(schedule, 50, TimestepSpacing::Linspace);
  ASSERT_EQ(ts.steps(), 50);
  EXPECT_EQ(ts.timesteps[0], 999.0f);
  EXPECT_EQ(ts.timesteps[1], static_cast<float>(48 * (999.0 / 49)));
  EXPECT_NEAR(ts.timesteps[1], 978.6122, 1e-4);
  EXPECT_NEAR(ts.timesteps[2], 958.2245, 1e-4);
  EXPECT_EQ(ts.timesteps[49], 0.0f);
  for (int k = 0; k < 50; ++k) {
    const double t = ts.timesteps[static_cast<std::size_t>(k)];
    EXPECT_EQ(ts.timesteps[static_cast<std::size_t>(k)], static_cast<float>((49 - k) * (999.0 / 49))) << k;
    const auto j = static_cast<std::size_t>(std::floor(t));
    const double lo = schedule.sigmas[j];
    const double hi = j + 1 < 1000 ? schedule.sigmas[j + 1] : lo;
    EXPECT_NEAR(ts.sigmas[static_cast<std::size_t>(k)], lo + (hi - lo) * (t - static_cast<double>(j)), 2e-6 * hi) << k;
  }
  EXPECT_NE(ts.timesteps[1], std::floor(ts.timesteps[1]));
}

TEST(Schedule, LeadingUsesStepsOffset) {
  const TrainingSchedule schedule = make_training_schedule(v12_config());
  const Timesteps ts = set_timesteps(schedule, 28, TimestepSpacing::Leading);
  ASSERT_EQ(ts.steps(), 28);
  for (int k = 0; k < 28; ++k) EXPECT_EQ(ts.timesteps[static_cast<std::size_t>(k)], (27 - k) * 35 + 1.0f) << k;
  const float max_sigma = ts.sigmas[0];
  EXPECT_EQ(ts.init_noise_sigma, std::sqrt(max_sigma * max_sigma + 1.0f)); // sqrt(max^2 + 1)
}

// Ties: with 16 steps, trailing hits exact .5 values (937.5 -> 938 under round-half-even).
TEST(Schedule, TrailingRoundsHalfToEven) {
  const TrainingSchedule schedule = make_training_schedule(v12_config());
  const Timesteps ts = set_timesteps(schedule, 16, TimestepSpacing::Trailing);
  ASSERT_EQ(ts.steps(), 16);
  EXPECT_EQ(ts.timesteps[0], 999.0f);
  EXPECT_EQ(ts.timesteps[1], 937.0f); // 937.5 -> 938 (even) - 1
  EXPECT_EQ(ts.timesteps[3], 811.0f); // 812.5 -> 812 (even) - 1
  EXPECT_EQ(ts.timesteps[15], 61.0f); // 62.5 -> 62 - 1
}

TEST(Schedule, StepCountLimits) {
  const TrainingSchedule schedule = make_training_schedule(v12_config());
  for (TimestepSpacing sp : {TimestepSpacing::Linspace, TimestepSpacing::Leading, TimestepSpacing::Trailing}) {
    for (int n : {1, 2, 28, 75, 200}) {
      const Timesteps ts = set_timesteps(schedule, n, sp);
      EXPECT_GE(ts.steps(), n) << name(sp) << " " << n;
      EXPECT_EQ(ts.sigmas.size(), ts.timesteps.size() + 1);
      EXPECT_EQ(ts.sigmas.back(), 0.0f);
      EXPECT_GT(ts.init_noise_sigma, 0.0f);
      for (int k = 0; k < ts.steps(); ++k) {
        EXPECT_GT(ts.sigmas[static_cast<std::size_t>(k)], 0.0f);
        if (k > 0) {
          EXPECT_LT(ts.timesteps[static_cast<std::size_t>(k)], ts.timesteps[static_cast<std::size_t>(k) - 1]);
        }
      }
    }
    for (int n : {0, -1, 201, 1000}) {
      try {
        (void)set_timesteps(schedule, n, sp);
        ADD_FAILURE() << "n = " << n << " accepted";
      } catch (const z123::Error& e) {
        EXPECT_EQ(e.kind(), z123::ErrorKind::InvalidArgument) << e.what();
      }
    }
  }
}

// n = 1: trailing takes the single step from t = 999; linspace (numpy's linspace of one point is
// [start]) from t = 0; leading from t = steps_offset.
TEST(Schedule, OneStep) {
  const TrainingSchedule schedule = make_training_schedule(v12_config());
  const Timesteps tr = set_timesteps(schedule, 1, TimestepSpacing::Trailing);
  ASSERT_EQ(tr.steps(), 1);
  EXPECT_EQ(tr.timesteps[0], 999.0f);
  EXPECT_EQ(tr.sigmas[0], schedule.sigmas[999]);
  const Timesteps li = set_timesteps(schedule, 1, TimestepSpacing::Linspace);
  ASSERT_EQ(li.steps(), 1);
  EXPECT_EQ(li.timesteps[0], 0.0f);
  EXPECT_EQ(li.sigmas[0], schedule.sigmas[0]);
  const Timesteps le = set_timesteps(schedule, 1, TimestepSpacing::Leading);
  ASSERT_EQ(le.steps(), 1);
  EXPECT_EQ(le.timesteps[0], 1.0f);
  for (const Timesteps* ts : {&tr, &li, &le}) {
    const auto steps = plan(*ts, Sampler::EulerAncestral, Prediction::VPrediction);
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0].sigma_up, 0.0f);
    EXPECT_EQ(steps[0].sigma_down, 0.0f);
  }
}

// numpy sizes np.arange(1000, 0, -1000/n) as ceil(1000 / (1000/n)); for these n that quotient
// rounds just above n, so diffusers gets one extra timestep (t = -1, sigma clamped to
// sigma_train[0]). The schedule reproduces the reference, extra step included.
TEST(Schedule, TrailingKeepsNumpysExtraStep) {
  const TrainingSchedule schedule = make_training_schedule(v12_config());
  for (int n = 1; n <= 200; ++n) {
    const Timesteps ts = set_timesteps(schedule, n, TimestepSpacing::Trailing);
    const bool extra = n == 61 || n == 103 || n == 121 || n == 122;
    ASSERT_EQ(ts.steps(), extra ? n + 1 : n) << n;
    EXPECT_EQ(ts.timesteps[0], 999.0f);
    if (extra) {
      EXPECT_EQ(ts.timesteps.back(), -1.0f) << n;
      EXPECT_EQ(ts.sigmas[static_cast<std::size_t>(n)], schedule.sigmas[0]) << n;
    } else {
      EXPECT_GE(ts.timesteps.back(), 0.0f) << n;
    }
  }
}

TEST(Schedule, ConfigFileGivesTheSamePlan) {
  const z123::SchedulerConfig file =
      z123::load_scheduler_config(Z123_SHARED_TEST_DATA "/v1.2-configs/scheduler/scheduler_config.json");
  EXPECT_EQ(parse_timestep_spacing(file.timestep_spacing), TimestepSpacing::Linspace);
  const SamplingPlan a = make_plan(file, 28, TimestepSpacing::Trailing, Sampler::EulerAncestral);
  const SamplingPlan b = make_plan(v12_config(), 28, TimestepSpacing::Trailing, Sampler::EulerAncestral);
  EXPECT_EQ(a.prediction, Prediction::VPrediction);
  EXPECT_EQ(a.init_noise_sigma, 25.146116256713867f);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t k = 0; k < a.steps.size(); ++k) {
    EXPECT_EQ(a.steps[k].t, b.steps[k].t);
    EXPECT_EQ(a.steps[k].a, b.steps[k].a);
    EXPECT_EQ(a.steps[k].b, b.steps[k].b);
    EXPECT_EQ(a.steps[k].sigma_up, b.steps[k].sigma_up);
  }
}

TEST(Schedule, RejectsWhatItCannotRun) {
  auto kind_of = [](auto&& fn) {
    try {
      fn();
    } catch (const z123::Error& e) {
      return e.kind();
    }
    return z123::ErrorKind::Internal;
  };
  z123::SchedulerConfig c = v12_config();
  c.beta_schedule = "squaredcos_cap_v2";
  EXPECT_EQ(kind_of([&] { make_training_schedule(c); }), z123::ErrorKind::InvalidArgument);
  c = v12_config();
  c.prediction_type = "sample";
  EXPECT_EQ(kind_of([&] { make_training_schedule(c); }), z123::ErrorKind::InvalidArgument);
  c = v12_config();
  c.rescale_betas_zero_snr = true;
  EXPECT_EQ(kind_of([&] { make_training_schedule(c); }), z123::ErrorKind::Unsupported);
  c = v12_config();
  c.num_train_timesteps = 1;
  EXPECT_EQ(kind_of([&] { make_training_schedule(c); }), z123::ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of([] { parse_timestep_spacing("karras"); }), z123::ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of([] { parse_sampler("heun"); }), z123::ErrorKind::InvalidArgument);
  EXPECT_EQ(parse_sampler("euler_ancestral"), Sampler::EulerAncestral);
  EXPECT_EQ(parse_sampler(name(Sampler::DpmSolverPP2M)), Sampler::DpmSolverPP2M);
  EXPECT_EQ(parse_prediction(name(Prediction::Epsilon)), Prediction::Epsilon);
}

} // namespace
