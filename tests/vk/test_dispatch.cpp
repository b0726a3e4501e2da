// Dispatches of real compute shaders, results checked word by word: coverage of non-multiple
// sizes with poisoned guards, automatic barriers in read-modify-write chains, replay of a
// recording, and GPU timestamps.
#include <gtest/gtest.h>

#include <string>

#include "support/check.hpp"
#include "support/vk_env.hpp"
#include "z123/error.hpp"
#include "z123/vk/profiler.hpp"
#include "z123/vk/recording.hpp"

using namespace z123;

namespace {

constexpr uint32_t kPoison = 0xDEADBEEFu;
constexpr uint32_t kGroup = 64;

struct FillPush {
  uint32_t count, base, step;
};
struct AxpyPush {
  uint32_t count;
  float a;
};

const vk::Pipeline& fill_pipeline(vk::Device& d) {
  return d.pipelines().get({"fill_u32", 1, sizeof(FillPush), {kGroup}});
}
const vk::Pipeline& axpy_pipeline(vk::Device& d) {
  return d.pipelines().get({"axpy_f32", 2, sizeof(AxpyPush), {kGroup}});
}

} // namespace

class Dispatch : public test::VkTest {};

TEST_F(Dispatch, FillCoversExactlyCountWords) {
  for (uint32_t count : {1u, 63u, 64u, 65u, 1000u, 12345u}) {
    SCOPED_TRACE("count " + std::to_string(count));
    vk::Buffer buf = device().allocator().create_buffer((count + 16) * 4, vk::MemoryUsage::DeviceLocal, "fill");
    vk::Recording rec(device());
    rec.fill(buf, kPoison);
    FillPush p{count, 7, 3};
    rec.dispatch(fill_pipeline(device()), {vk::out(buf)}, &p, sizeof p, (count + kGroup - 1) / kGroup);
    device().run(rec);
    std::vector<uint32_t> v(count + 16);
    device().download(buf, v.data(), v.size() * 4);
    for (uint32_t i = 0; i < count; ++i) ASSERT_EQ(v[i], 7 + 3 * i) << i;
    for (uint32_t i = count; i < count + 16; ++i) ASSERT_EQ(v[i], kPoison) << "guard word " << i << " was written";
  }
}

TEST_F(Dispatch, ChainedReadModifyWriteGetsBarriers) {
  // y <- 0.5 x + y, ten times in one recording. Without barriers between the dispatches the
  // updates race; with them y = y0 + 5 x exactly (small integers and halves are exact in fp32).
  const uint32_t n = 4099;
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 97);
    y[i] = static_cast<float>(i % 13) - 6.0f;
  }
  auto& a = device().allocator();
  vk::Buffer bx = a.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "x");
  vk::Buffer by = a.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "y");
  device().upload(bx, x.data(), n * 4);
  device().upload(by, y.data(), n * 4);
  vk::Recording rec(device());
  AxpyPush p{n, 0.5f};
  for (int k = 0; k < 10; ++k)
    rec.dispatch(axpy_pipeline(device()), {vk::in(bx), vk::out(by)}, &p, sizeof p, (n + kGroup - 1) / kGroup);
  device().run(rec);
  std::vector<float> got(n);
  device().download(by, got.data(), n * 4);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(got[i], y[i] + 5.0f * x[i]) << i;
}

// vk::Recording::order_by_levels: two chains recorded one after the other (y1 <- 0.5 x + y1 and
// y2 <- 2 x + y2, five times each) share levels 0-4, where the recorded order puts barriers through
// both one after the other; a copy of y1's result, a product that needs both chains, a fill of x
// after its last readers (write after read) and an explicit barrier each keep their place. The
// results are exact, and so are a second run's (replay).
TEST_F(Dispatch, LevelsKeepEveryDependenceAndRunChainsSideBySide) {
  const uint32_t n = 2053;
  std::vector<float> x(n), y1(n), y2(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 89);
    y1[i] = static_cast<float>(i % 11) - 5.0f;
    y2[i] = static_cast<float>(i % 7) - 3.0f;
  }
  auto& a = device().allocator();
  vk::Buffer bx = a.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "x");
  vk::Buffer by1 = a.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "y1");
  vk::Buffer by2 = a.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "y2");
  vk::Buffer bc = a.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "copy of y1");
  vk::Buffer bz = a.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "z");
  const uint32_t groups = (n + kGroup - 1) / kGroup;
  auto record = [&](vk::Recording& rec) {
    AxpyPush half{n, 0.5f}, twice{n, 2.0f}, once{n, 1.0f};
    for (int k = 0; k < 5; ++k)
      rec.dispatch(axpy_pipeline(device()), {vk::in(bx), vk::out(by1)}, &half, sizeof half, groups);
    for (int k = 0; k < 5; ++k)
      rec.dispatch(axpy_pipeline(device()), {vk::in(bx), vk::out(by2)}, &twice, sizeof twice, groups);
    rec.copy(by1, bc, n * 4);                                                                      // level 5
    rec.dispatch(axpy_pipeline(device()), {vk::in(bc), vk::out(by2)}, &once, sizeof once, groups); // level 6
    rec.fill(bx, 0);                                                                               // level 5
    rec.barrier();
    rec.fill(bz, 0x3f800000u); // 1.0f, independent of everything but the barrier: level 7
  };
  vk::Recording in_order(device());
  record(in_order);
  vk::Recording levels(device());
  levels.order_by_levels();
  record(levels);
  levels.finish();
  EXPECT_EQ(levels.barrier_count(), 7u); // levels 0-7
  EXPECT_GT(in_order.barrier_count(), levels.barrier_count());
  vk::Recording late(device());
  late.fill(bz, 0);
  EXPECT_THROW(late.order_by_levels(), Error);

  for (int run = 1; run <= 2; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    device().upload(bx, x.data(), n * 4);
    device().upload(by1, y1.data(), n * 4);
    device().upload(by2, y2.data(), n * 4);
    device().run(levels);
    std::vector<float> g1(n), g2(n), gc(n), gx(n), gz(n);
    device().download(by1, g1.data(), n * 4);
    device().download(by2, g2.data(), n * 4);
    device().download(bc, gc.data(), n * 4);
    device().download(bx, gx.data(), n * 4);
    device().download(bz, gz.data(), n * 4);
    for (uint32_t i = 0; i < n; ++i) {
      const float want1 = y1[i] + 2.5f * x[i];
      ASSERT_EQ(g1[i], want1) << i;
      ASSERT_EQ(gc[i], want1) << i;
      ASSERT_EQ(g2[i], y2[i] + 10.0f * x[i] + want1) << i;
      ASSERT_EQ(gx[i], 0.0f) << i;
      ASSERT_EQ(gz[i], 1.0f) << i;
    }
  }
}

// Z123_PROFILE_LEVELS: one profile line per level of a recording ordered by levels, named by its
// commands, one call per run. The knob is read once per process (as ctest runs each test).
TEST_F(Dispatch, LevelProfileHasALinePerLevel) {
  test::ScopedEnv env("Z123_PROFILE_LEVELS", "1");
  if (!vk::Profiler::levels_requested()) GTEST_SKIP() << "the knob was read earlier in this process";
  if (!device().info().timestamps) GTEST_SKIP() << "no timestamps on this device";
  const uint32_t n = 4096, groups = n / kGroup;
  auto& a = device().allocator();
  vk::Buffer bx = a.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "x");
  vk::Buffer by = a.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "y");
  vk::Buffer bz = a.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "z");
  vk::Recording rec(device());
  rec.order_by_levels();
  AxpyPush p{n, 1.0f};
  FillPush f{n, 0, 1};
  rec.dispatch(fill_pipeline(device()), {vk::out(bx)}, &f, sizeof f, groups, 1, 1, "x");        // level 0
  rec.dispatch(fill_pipeline(device()), {vk::out(by)}, &f, sizeof f, groups, 1, 1, "y");        // level 0
  rec.dispatch(axpy_pipeline(device()), {vk::in(bx), vk::out(by)}, &p, sizeof p, groups, 1, 1); // level 1
  rec.copy(by, bz, n * 4);                                                                      // level 2
  rec.finish();
  ASSERT_TRUE(rec.profiled());
  vk::Profiler profiler;
  for (int run = 0; run < 2; ++run) {
    device().run(rec);
    rec.fold_profile(profiler);
  }
  // The main queue's idle time between the two passes, consecutive submissions: one gap.
  EXPECT_EQ(profiler.pass_gaps(), 1u);
  EXPECT_GE(profiler.pass_gap_ms(), 0.0);
  // Read from the profiler itself: its printed table sums lines below 1% of the total.
  const std::string fill = "fill_u32 [" + std::to_string(groups) + "x1x1]";
  for (const std::string& line :
       {"level 0: | " + fill + " x | " + fill + " y", "level 1: | axpy_f32 [" + std::to_string(groups) + "x1x1]",
        std::string("level 2: | copy")})
    EXPECT_EQ(profiler.calls(line), 2u) << line;
  EXPECT_EQ(profiler.labels(), 3u);
  // After another recording's submission in between, the next pass adds no gap.
  const uint64_t before = rec.last_submit;
  vk::Recording other(device());
  other.fill(bz, 0);
  device().run(other);
  device().run(rec);
  EXPECT_EQ(rec.last_submit, before + 2);
  rec.fold_profile(profiler);
  EXPECT_EQ(profiler.pass_gaps(), 1u) << "a pass after another submission is not consecutive";
}

// Profiler::add_pass sums the time between passes that are consecutive submissions only.
TEST(Profiler, GapsBetweenConsecutivePassesOnly) {
  vk::Profiler p;
  p.add_pass(7, 10.0, 12.0);
  p.add_pass(8, 12.5, 14.0);   // 0.5 after the one before
  p.add_pass(10, 20.0, 21.0);  // submission 9 came between: no gap
  p.add_pass(11, 21.25, 22.0); // 0.25
  p.add_pass(12, 21.9, 23.0);  // began before the last ended (timestamps' resolution): counted as 0
  EXPECT_EQ(p.pass_gaps(), 3u);
  EXPECT_DOUBLE_EQ(p.pass_gap_ms(), 0.75);
  EXPECT_TRUE(p.empty()) << "gaps are kept apart from the table";
}

TEST_F(Dispatch, RecordingReplaysAndFillRestartsEachTime) {
  const uint32_t n = 300;
  auto& a = device().allocator();
  vk::Buffer bx = a.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "x");
  vk::Buffer by = a.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "y");
  std::vector<float> ones(n, 1.0f);
  device().upload(bx, ones.data(), n * 4);
  vk::Recording rec(device());
  AxpyPush p{n, 2.0f};
  rec.dispatch(axpy_pipeline(device()), {vk::in(bx), vk::out(by)}, &p, sizeof p, (n + kGroup - 1) / kGroup);
  std::vector<float> zero(n, 0.0f);
  device().upload(by, zero.data(), n * 4);
  for (int rep = 1; rep <= 3; ++rep) {
    device().run(rec);
    std::vector<float> got(n);
    device().download(by, got.data(), n * 4);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 2.0f * rep) << "replay " << rep << " word " << i;
  }
}

TEST_F(Dispatch, TimestampsMeasureEachInterval) {
  if (!device().info().timestamps) GTEST_SKIP() << "no timestamps on this device";
  const uint32_t n = 1 << 16;
  vk::Buffer buf = device().allocator().create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "t");
  vk::Recording rec(device(), 8);
  rec.timestamp("start");
  FillPush p{n, 0, 1};
  rec.dispatch(fill_pipeline(device()), {vk::out(buf)}, &p, sizeof p, n / kGroup);
  rec.timestamp("fill a");
  rec.dispatch(fill_pipeline(device()), {vk::out(buf)}, &p, sizeof p, n / kGroup);
  rec.timestamp("fill b");
  device().run(rec);
  auto t = rec.timings();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].first, "fill a");
  EXPECT_EQ(t[1].first, "fill b");
  for (auto& [label, ms] : t) {
    EXPECT_GE(ms, 0.0) << label;
    EXPECT_LT(ms, 10000.0) << label;
  }
}

TEST_F(Dispatch, WrongArgumentsAreCaughtBeforeTheGpuSeesThem) {
  vk::Buffer buf = device().allocator().create_buffer(64, vk::MemoryUsage::DeviceLocal, "b");
  vk::Recording rec(device());
  FillPush p{16, 0, 1};
  EXPECT_THROW(rec.dispatch(fill_pipeline(device()), {vk::out(buf), vk::out(buf)}, &p, sizeof p, 1), Error);
  EXPECT_THROW(rec.dispatch(fill_pipeline(device()), {vk::out(buf)}, &p, 4, 1), Error);
  EXPECT_THROW(device().pipelines().get({"no_such_shader", 1, 0, {}}), Error);
}

TEST_F(Dispatch, ValidationLayerReportsMisuse) {
  // Proves the debug messenger is wired: an invalid call must raise the error count.
  uint32_t before = test::vk_instance().validation_error_count();
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = 0; // invalid: size must be > 0
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer b = VK_NULL_HANDLE;
  VkResult r = vkCreateBuffer(device().handle(), &bi, nullptr, &b);
  if (r == VK_SUCCESS && b) vkDestroyBuffer(device().handle(), b, nullptr);
  uint32_t after = test::vk_instance().validation_error_count();
  EXPECT_GT(after, before);
  // Do not fail this test for the error it provoked on purpose.
  SetUp();
}
