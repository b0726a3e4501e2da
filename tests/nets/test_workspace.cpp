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
