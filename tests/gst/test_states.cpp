// 100 NULL->PLAYING->NULL cycles of one element: every cycle opens an engine (READY->PAUSED) and
// releases it (PAUSED->READY), and the process keeps no file descriptors, threads or memory from
// them.
//
// Why full cycles and not a cheaper split: a cycle costs 0.1-0.25 s on lavapipe (measured on the
// 2-core machine under load from other jobs: 100 cycles in 11-24 s, the tiny model opening in
// 0.1-0.8 s), since the engine no longer runs the VAE encoder of the all-zero image in
// Engine::open (it did; that was nearly all of the ~5-8 s per open and made 100 cycles cost
// ~13 min).
// Each cycle really creates and destroys a Vulkan device and every buffer and pipeline that
// Engine::open makes, which is where a leak would live; sharing an engine across cycles would make
// the test pointless, since NULL must release it. If Engine::open becomes slow on lavapipe again,
// lower kCycles rather than letting this test take minutes (and say so here).
#include <gtest/gtest.h>

#include <dirent.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "element_util.hpp"
#include "gst_env.hpp"
#include "support/process_stats.hpp"

using namespace z123::test;

namespace {

constexpr int kCycles = 100;
// Cycles before the baseline is taken: the first ones load shared libraries (the Vulkan driver,
// LLVM), read the pipeline cache, start GLib's and GStreamer's thread pools and grow malloc's
// arenas once; a leak shows as growth over the following cycles.
constexpr int kWarmUp = 10;

} // namespace

TEST(GstStates, HundredCyclesReleaseEveryEngineAndLeakNothing) {
  use_one_malloc_arena();
  GstElement* e = make_element();
  ASSERT_NE(e, nullptr);
  int fds = 0, threads = 0;
  long kept = 0, kept_open = 0, kept_closed = 0;
  const char* kept_what = kept_memory().what;
  auto t0 = Clock::now();
  double warm_up_s = 0;
  for (int i = 0; i < kCycles; ++i) {
    ASSERT_EQ(gst_element_set_state(e, GST_STATE_PLAYING), GST_STATE_CHANGE_SUCCESS) << "cycle " << i;
    ASSERT_EQ(live_engines(), 1) << "cycle " << i;
    if (i == kWarmUp - 1) kept_open = kept_memory().kib;
    ASSERT_EQ(gst_element_set_state(e, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS) << "cycle " << i;
    ASSERT_EQ(live_engines(), 0) << "cycle " << i;
    if (i == kWarmUp - 1) {
      warm_up_s = seconds_since(t0);
      fds = count_entries("/proc/self/fd");
      threads = count_entries("/proc/self/task");
      kept = kept_closed = kept_memory().kib;
    }
  }
  const double total_s = seconds_since(t0);
  const int fds_end = count_entries("/proc/self/fd"), threads_end = count_entries("/proc/self/task");
  const long kept_end = kept_memory().kib;
  std::printf("%d cycles in %.1f s (%.2f s per cycle after warm-up); fds %d -> %d, threads %d -> %d, %s %ld -> "
              "%ld KiB (RSS now %ld KiB); one open engine adds %ld KiB\n",
              kCycles, total_s, (total_s - warm_up_s) / (kCycles - kWarmUp), fds, fds_end, threads, threads_end,
              kept_what, kept, kept_end, rss_kib(), kept_open - kept_closed);
  ASSERT_GT(fds, 0);
  ASSERT_GT(kept, 0);
  // Descriptors and threads: no more than after warm-up (fewer is fine: a helper thread may have
  // ended since). Each engine opens the device (lavapipe: no fd; a GPU driver: /dev/dri/*) and
  // the element starts a worker thread, so a leak of either grows by one per cycle, 90 in all.
  EXPECT_LE(fds_end, fds) << "file descriptors leaked";
  EXPECT_LE(threads_end, threads) << "threads leaked";
  // Memory (RSS, or ASan's live heap in a sanitizer build: see kept_memory): an open engine holds
  // ~17 MiB (weights and device buffers, in host memory on lavapipe; printed above), so leaking
  // even 1% of one per cycle (180 KiB) adds > 16 MiB over 90 cycles. Measured growth without
  // leaks: < 1 MiB; 16 MiB leaves room for malloc's free lists and GLib's caches to settle
  // differently on other machines.
  EXPECT_LT(kept_end - kept, 16 * 1024) << kept_what << " grew by " << (kept_end - kept) << " KiB over "
                                        << kCycles - kWarmUp << " cycles";
  gst_object_unref(e);
}
