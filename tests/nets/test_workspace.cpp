// Workspace: first-come reuse of pooled buffers, and planning (requests noted against buffers
// with no memory, then laid out into slots by lifetime), on a request pattern like a decoder's:
// each tensor twice the size of the one before, the previous freed once the next exists.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "support/vk_env.hpp"
#include "z123/error.hpp"
#include "z123/kernels/elementwise.hpp"
#include "z123/kernels/kernels.hpp"
#include "z123/vk/recording.hpp"
#include "z123/workspace.hpp"

using namespace z123;

namespace {

constexpr int64_t kMiB = 1 << 20;

class WorkspacePlanning : public test::VkTest {
protected:
  // The chain 1, 2, 4, 8, 16 MiB (fp16 elements), each next one taken before the last is given
  // back; the 16 MiB one stays held. Checks that no two tensors held at once share a buffer.
  std::vector<Tensor> chain(Workspace& ws) {
    std::vector<Tensor> held;
    std::set<const vk::Buffer*> live;
    Tensor prev;
    for (int i = 0; i < 5; ++i) {
      Tensor t = ws.acquire(DType::F16, {(kMiB << i) / 2}, "chain" + std::to_string(i));
      EXPECT_TRUE(live.insert(t.buffer.get()).second) << "tensor " << i << " shares a buffer with a live one";
      if (i > 0) {
        live.erase(prev.buffer.get());
        ws.release(prev);
      }
      prev = t;
    }
    held.push_back(prev);
    return held;
  }
};

} // namespace

TEST_F(WorkspacePlanning, FirstComeReuseHoldsEveryStepOfAGrowingChain) {
  Workspace ws(device(), "first-come");
  auto held = chain(ws);
  EXPECT_EQ(ws.pooled_bytes(), uint64_t(31 * kMiB)); // 1 + 2 + 4 + 8 + 16: none fits the next
}

TEST_F(WorkspacePlanning, APlannedPoolHoldsTheLivePeak) {
  Workspace ws(device(), "planned");
  ws.begin_planning();
  {
    auto noted = chain(ws);
    EXPECT_EQ(ws.pooled_bytes(), 0u) << "planning takes no memory";
    EXPECT_FALSE(noted[0].buffer->backed());
  }
  ws.end_planning();
  auto held = chain(ws);
  // Slots: {16, 4, 1} and {8, 2}: 24 MiB, the most held at once (8 + 16).
  EXPECT_EQ(ws.pooled_bytes(), uint64_t(24 * kMiB));
  EXPECT_EQ(ws.buffers(), 2u);
  EXPECT_TRUE(held[0].buffer->backed());
  // Past the plan, requests are served first come, by the smallest free slot of any larger size
  // (an unplanned pool would take a new buffer for 1 MiB rather than pin an 8 MiB one).
  Tensor extra = ws.acquire(DType::F16, {kMiB / 2}, "extra"); // 1 MiB: the 8 MiB slot is free
  EXPECT_EQ(ws.pooled_bytes(), uint64_t(24 * kMiB));
  ws.release(extra);
  ws.release(held[0]);
}

// A recording made against planning buffers is skipped, and cannot be run.
TEST_F(WorkspacePlanning, RecordingsOfPlanningBuffersAreNeverRun) {
  kernels::Kernels k(device());
  Workspace ws(device(), "planned");
  ws.begin_planning();
  Tensor a = ws.acquire(DType::F32, {64}, "a");
  Tensor b = ws.acquire(DType::F32, {64}, "b");
  vk::Recording rec(device());
  kernels::scale_shift(k, rec, a, b, 2.0f, 1.0f);
  EXPECT_EQ(rec.dispatch_count(), 0u);
  EXPECT_THROW(rec.finish(), Error);
  ws.release(a);
  ws.release(b);
  ws.end_planning();
  Tensor c = ws.acquire(DType::F32, {64}, "a");
  EXPECT_TRUE(c.buffer->backed());
  ws.release(c);
}

// Ownership: a slot is handed out again only once no tensor refers to its buffer, whether the
// last reference is released, reassigned or destroyed.
TEST_F(WorkspacePlanning, ASlotIsFreeOnlyWhenItsLastCopyGoes) {
  Workspace ws(device(), "owned");
  Tensor a = ws.acquire(DType::F32, {1024}, "a");
  const vk::Buffer* slot = a.buffer.get();
  Tensor view = a; // e.g. a reshaped view kept for later
  view.shape = {32, 32};
  ws.release(a);
  EXPECT_FALSE(a.buffer);
  Tensor b = ws.acquire(DType::F32, {1024}, "b");
  EXPECT_NE(b.buffer.get(), slot) << "a slot still held by a copy was handed out again";
  view = Tensor{};
  Tensor c = ws.acquire(DType::F32, {1024}, "c");
  EXPECT_EQ(c.buffer.get(), slot) << "the slot did not come back when its last copy went";
  { Tensor scoped = ws.acquire(DType::F32, {1024}, "scoped"); }
  Tensor d = ws.acquire(DType::F32, {1024}, "d");
  EXPECT_EQ(ws.buffers(), 3u) << "a tensor destroyed at the end of its scope did not give its slot back";
  EXPECT_THROW(ws.release(a), Error) << "releasing an empty handle is a bookkeeping mistake";
  Workspace other(device(), "other");
  EXPECT_THROW(other.release(d), Error);
}

// Planning notes a request's lifetime up to the moment its last copy went.
TEST_F(WorkspacePlanning, PlanningEndsALifetimeWhenTheLastCopyGoes) {
  Workspace ws(device(), "planned");
  struct Seen { // which buffer each request got (not a reference: that would hold the slot)
    const vk::Buffer *a, *b, *c;
  };
  const auto pattern = [&] {
    Seen seen{};
    Tensor a = ws.acquire(DType::F16, {kMiB / 2}, "a"); // 1 MiB each
    seen.a = a.buffer.get();
    Tensor copy = a;
    ws.release(a);
    Tensor b = ws.acquire(DType::F16, {kMiB / 2}, "b"); // a still lives through its copy
    seen.b = b.buffer.get();
    copy = Tensor{};
    Tensor c = ws.acquire(DType::F16, {kMiB / 2}, "c"); // a is gone: c may take its slot
    seen.c = c.buffer.get();
    return seen;
  };
  ws.begin_planning();
  pattern();
  ws.end_planning();
  const Seen run = pattern();
  EXPECT_EQ(ws.pooled_bytes(), uint64_t(2 * kMiB));
  EXPECT_NE(run.b, run.a) << "b was given a's slot while a copy of a was alive";
  EXPECT_EQ(run.c, run.a);
}
