// The tuning knobs (z123/tuning.hpp): how the environment's values become a Tuning, that a bad
// value is refused naming the variable and the values it takes, and that a device reads them
// once, when it is created, so that nothing read while recording changes what runs.
#include <gtest/gtest.h>

#include <string>

#include "support/check.hpp"
#include "support/expect_error.hpp"
#include "support/vk_env.hpp"
#include "vk/shader_table.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/tensor.hpp"
#include "z123/tuning.hpp"
#include "z123/vk/recording.hpp"

using namespace z123;

namespace {

void expect_refused(const char* name, const char* value, std::initializer_list<std::string> accepted) {
  SCOPED_TRACE(std::string(name) + "=" + value);
  test::ScopedEnv env(name, value);
  try {
    Tuning::from_environment();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << msg;
    EXPECT_NE(msg.find(std::string(name) + "=" + value), std::string::npos) << msg;
    for (const std::string& a : accepted) EXPECT_NE(msg.find(a), std::string::npos) << msg << "\nlacks " << a;
  }
}

} // namespace

TEST(Tuning, ReadsEveryKnob) {
  test::ScopedEnv a("Z123_FORCE_PORTABLE", "1"), b("Z123_KERNEL_PATH", "nv2:khr"), c("Z123_COOPMAT_SHAPE", "16x8x16"),
      d("Z123_PORTABLE_GEMM", "tiled64"), e("Z123_PORTABLE_ARITH", "fp32"), f("Z123_GEMM_TILE", "t64x128"),
      g("Z123_GEMM_SPLITK", "0"), h("Z123_GEMM_CM2_TILE_N", "256"), i("Z123_ATTN_VARIANT", "khrcm_cv"),
      j("Z123_ATTN_CM2_ROWS", "128"), k("Z123_ATTN_COOPMAT_GENERIC", "1"), l("Z123_GN_DIRECT_MAX", "4096"),
      m("Z123_GN_TILES", "96"), n("Z123_GN_THREADS", "512"), o("Z123_GN_RESIDENT", "1"),
      p("Z123_NO_PIPELINE_CACHE", "1"), q("Z123_PIPELINE_REPORT_DIR", "/tmp/reports"),
      r("Z123_ATTN_TILED_INVOCATIONS", "128"), s("Z123_GEMM_FIXED_GEOMETRY", "k"), u("Z123_REFERENCE_QUEUE", "shared"),
      v("Z123_MAIN_PRESUBMIT", "0"), w("Z123_CONV_WINOGRAD", "on"), x("Z123_REFERENCE_STEPS", "1"),
      y("Z123_GN_DIRECT_THREADS", "128"), z("Z123_CONV_WINOGRAD_MAX_COUT", "640"),
      a2("Z123_GN_TABLE_DIRECT_MAX", "8192"), b2("Z123_GN_TABLE_TILES", "200");
  const Tuning t = Tuning::from_environment();
  EXPECT_TRUE(t.force_portable);
  EXPECT_EQ(t.matmul_path, kernels::Path::NvCoopMat2);
  EXPECT_EQ(t.attention_path, kernels::Path::KhrCoopMat);
  EXPECT_EQ(t.coopmat_shape, "16x8x16");
  EXPECT_EQ(t.portable_gemm, Tuning::PortableGemm::Tiled64);
  EXPECT_EQ(t.portable_arith, Tuning::PortableArith::Fp32);
  EXPECT_EQ(t.gemm_tile, "t64x128");
  EXPECT_FALSE(t.gemm_split_k);
  EXPECT_EQ(t.gemm_cm2_tile_n, 256u);
  EXPECT_EQ(t.gemm_fixed_geometry, Tuning::GemmFixedGeometry::K);
  EXPECT_EQ(t.attn_variant, "khrcm_cv");
  EXPECT_EQ(t.attn_cm2_rows, 128u);
  EXPECT_TRUE(t.attn_coopmat_generic);
  EXPECT_EQ(t.attn_tiled_invocations, 128u);
  EXPECT_EQ(t.gn_direct_max, 4096);
  EXPECT_EQ(t.gn_tiles, 96);
  EXPECT_EQ(t.gn_table_direct_max, 8192);
  EXPECT_EQ(t.gn_table_tiles, 200);
  EXPECT_EQ(t.gn_threads, 512u);
  EXPECT_EQ(t.gn_direct_threads, 128u);
  EXPECT_EQ(t.gn_resident, Tuning::GnResident::Everywhere);
  EXPECT_EQ(t.reference_queue, Tuning::ReferenceQueue::Shared);
  EXPECT_FALSE(t.main_presubmit);
  EXPECT_EQ(t.reference_steps, 1);
  EXPECT_EQ(t.conv_winograd_max_cout, 640);
  EXPECT_EQ(t.conv_winograd, Tuning::ConvWinograd::On);
  EXPECT_TRUE(t.no_pipeline_cache);
  EXPECT_EQ(t.pipeline_report_dir, "/tmp/reports");
}

// One path for both; set to empty, a knob is unset (its default).
TEST(Tuning, GroupNormResidentWhereSmall) {
  {
    test::ScopedEnv e("Z123_GN_RESIDENT", "small");
    EXPECT_EQ(Tuning::from_environment().gn_resident, Tuning::GnResident::Small);
  }
  test::ScopedEnv e("Z123_GN_RESIDENT", "0");
  EXPECT_EQ(Tuning::from_environment().gn_resident, Tuning::GnResident::Never);
}

TEST(Tuning, OnePathForBothAndEmptyIsUnset) {
  test::ScopedEnv path("Z123_KERNEL_PATH", "portable"), tile("Z123_GEMM_TILE", ""), rows("Z123_ATTN_CM2_ROWS", "");
  const Tuning t = Tuning::from_environment();
  EXPECT_EQ(t.matmul_path, kernels::Path::Portable);
  EXPECT_EQ(t.attention_path, kernels::Path::Portable);
  EXPECT_EQ(t.gemm_tile, "");
  EXPECT_EQ(t.attn_cm2_rows, Tuning{}.attn_cm2_rows);
}

TEST(Tuning, RefusesBadValuesNamingTheVariableAndTheValues) {
  expect_refused("Z123_FORCE_PORTABLE", "yes", {"0|1"});
  expect_refused("Z123_KERNEL_PATH", "cuda", {"portable|nv|khr|nv2"});
  expect_refused("Z123_KERNEL_PATH", "khr:", {"portable|nv|khr|nv2"});
  expect_refused("Z123_COOPMAT_SHAPE", "16x16x17", {"16x16x16", "16x8x16"});
  expect_refused("Z123_PORTABLE_GEMM", "tiled32", {"tiled|tiled64|plain"});
  expect_refused("Z123_PORTABLE_ARITH", "fp16", {"packed|fp32"});
  expect_refused("Z123_GEMM_TILE", "t64x64", {"default", "t64x128", "t128x64"});
  expect_refused("Z123_GEMM_SPLITK", "off", {"0|1"});
  expect_refused("Z123_GEMM_CM2_TILE_N", "64", {"128|256"});
  expect_refused("Z123_GEMM_FIXED_GEOMETRY", "hw", {"all|taps|k|none"});
  expect_refused("Z123_ATTN_VARIANT", "nvcm", {"khrcm|khrcm_cv"});
  expect_refused("Z123_ATTN_CM2_ROWS", "32", {"64|128"});
  expect_refused("Z123_ATTN_TILED_INVOCATIONS", "64", {"128|256"});
  expect_refused("Z123_GN_DIRECT_MAX", "0", {"whole number from 1"});
  expect_refused("Z123_GN_TILES", "12x", {"whole number from 1"});
  expect_refused("Z123_GN_THREADS", "4096", {"whole number from 1 to 1024"});
  expect_refused("Z123_REFERENCE_QUEUE", "side", {"auto|off|shared"});
  expect_refused("Z123_REFERENCE_STEPS", "3", {"1|2"});
  expect_refused("Z123_CONV_WINOGRAD", "1", {"auto|on|off"});
  expect_refused("Z123_NO_PIPELINE_CACHE", "true", {"0|1"});
}

// The process-wide knobs refuse bad values the same way.
TEST(Tuning, ProcessKnobs) {
  {
    test::ScopedEnv v("Z123_VALIDATION", "1"), t("Z123_THREADS", "3");
    EXPECT_TRUE(validation_from_environment());
    EXPECT_EQ(threads_from_environment(), 3u);
  }
  EXPECT_EQ(threads_from_environment(), 0u);
  test::ScopedEnv bad("Z123_THREADS", "many");
  test::expect_error([] { threads_from_environment(); }, ErrorKind::InvalidArgument, {"Z123_THREADS=many"});
  test::ScopedEnv profile("Z123_PROFILE", "2");
  test::expect_error([] { profiling_from_environment(); }, ErrorKind::InvalidArgument, {"Z123_PROFILE=2", "0|1"});
}

class TuningDevice : public test::VkTest {};

// The environment is read when the device is created, not by kernel contexts or while recording:
// a bad value set afterwards changes nothing, and a device given its knobs reads none.
TEST_F(TuningDevice, ReadOnceWhenTheDeviceIsCreated) {
  test::ScopedEnv bad("Z123_PORTABLE_GEMM", "bogus");
  kernels::Kernels k(device());
  Tensor x = make_tensor(device(), DType::F16, {4, 64}, "x");
  Tensor w = make_tensor(device(), DType::F16, {64, 64}, "w");
  Tensor y = make_tensor(device(), DType::F16, {4, 64}, "y");
  vk::Recording rec(device());
  EXPECT_NO_THROW(kernels::linear(k, rec, x, w, nullptr, y));

  test::expect_error([&] { vk::Device d(test::vk_instance(), device().info()); }, ErrorKind::InvalidArgument,
                     {"Z123_PORTABLE_GEMM=bogus", "tiled|tiled64|plain"});
  vk::DeviceOptions o;
  o.persist_pipeline_cache = false;
  Tuning pinned;
  pinned.portable_gemm = Tuning::PortableGemm::Plain;
  o.tuning = pinned;
  vk::Device d(test::vk_instance(), device().info(), o);
  EXPECT_EQ(d.tuning().portable_gemm, Tuning::PortableGemm::Plain);
  EXPECT_EQ(kernels::Kernels(d).tuning().portable_gemm, Tuning::PortableGemm::Plain);
}

// Tuning::force_portable keeps every kernel context on the portable path.
TEST_F(TuningDevice, ForcePortable) {
  Tuning t = device().tuning();
  t.force_portable = true;
  t.matmul_path.reset();
  t.attention_path.reset();
  kernels::Kernels k(device(), t);
  EXPECT_EQ(k.matmul_path(), kernels::Path::Portable);
  EXPECT_EQ(k.attention_path(), kernels::Path::Portable);
}

// A knob that picks a bench-only variant fails when the kernel context is made, naming the knob
// and the CMake option, where this build leaves bench-only variants out; knobs that pick variants
// of every build do not.
TEST_F(TuningDevice, BenchOnlyVariantsNeedTheOption) {
  Tuning t = device().tuning();
  t.gemm_tile = "t64x128"; // the rule's own tiling: in every build
  EXPECT_NO_THROW(kernels::Kernels(device(), t));
  t.gemm_tile = "w4x2";
  Tuning rows = device().tuning();
  rows.attn_cm2_rows = 128;
  if (vk::kBenchVariantsBuilt) {
    EXPECT_NO_THROW(kernels::Kernels(device(), t));
    EXPECT_NO_THROW(kernels::Kernels(device(), rows));
    return;
  }
  test::expect_error([&] { kernels::Kernels k(device(), t); }, ErrorKind::Unsupported,
                     {"Z123_GEMM_TILE=w4x2", "gemm_khr_w4x2_f16", "-DZ123_BENCH_VARIANTS=ON"});
  test::expect_error([&] { kernels::Kernels k(device(), rows); }, ErrorKind::Unsupported,
                     {"Z123_ATTN_CM2_ROWS=128", "attention_d64_nvcm2_br128_f16", "-DZ123_BENCH_VARIANTS=ON"});
}
