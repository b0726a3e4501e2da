// vk::Device's side queue (Tuning::reference_queue): recordings made for it come from its
// family's command pool and signal a timeline of their own, and a submission's waits order it
// after the other queue's work both ways. Run with the side queue shared with the main one (every
// device, lavapipe included) and, where the device has a second compute family (NVIDIA, AMD),
// with a queue of that family, whose buffers are then shared by both families. Results are
// checked word by word, under the validation layer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/vk_env.hpp"
#include "z123/error.hpp"
#include "z123/tuning.hpp"
#include "z123/vk/recording.hpp"

using namespace z123;

namespace {

constexpr uint32_t kGroup = 64;

struct FillPush {
  uint32_t count, base, step;
};

std::unique_ptr<vk::Device> device_with(Tuning::ReferenceQueue mode) {
  Tuning t;
  t.reference_queue = mode;
  vk::DeviceOptions o;
  o.tuning = t;
  return std::make_unique<vk::Device>(test::vk_instance(), test::vk_device().info(), o);
}

// Step k (0, 1, 2, ...): the side queue fills `a` with base k * 1000 after the main queue's copy
// of step k - 1 (which read `a`); the main queue copies `a` into row k of `rows` after that fill.
// Without the waits the fills race the copies; with them every row holds its own step's values.
void ping_pong(vk::Device& d) {
  const uint32_t n = 5000, steps = 4;
  auto& alloc = d.allocator();
  vk::Buffer a = alloc.create_buffer(n * 4, vk::MemoryUsage::DeviceLocal, "a");
  vk::Buffer rows = alloc.create_buffer(steps * n * 4, vk::MemoryUsage::DeviceLocal, "rows");
  const vk::Pipeline& fill = d.pipelines().get({"fill_u32", 1, sizeof(FillPush), {kGroup}});
  std::vector<std::unique_ptr<vk::Recording>> side, main;
  for (uint32_t k = 0; k < steps; ++k) {
    side.push_back(std::make_unique<vk::Recording>(d, vk::QueueRole::Side));
    FillPush p{n, k * 1000, 1};
    side.back()->dispatch(fill, {vk::out(a)}, &p, sizeof p, (n + kGroup - 1) / kGroup);
    main.push_back(std::make_unique<vk::Recording>(d));
    main.back()->copy(a, rows, n * 4, 0, VkDeviceSize(k) * n * 4);
  }
  uint64_t side_done = 0, main_done = 0;
  for (uint32_t k = 0; k < steps; ++k) {
    side_done = main_done ? d.submit(*side[k], {{vk::QueueRole::Main, main_done}}) : d.submit(*side[k]);
    main_done = d.submit(*main[k], {{vk::QueueRole::Side, side_done}});
  }
  d.wait(main_done);
  d.wait(vk::QueueRole::Side, side_done);
  std::vector<uint32_t> got(steps * n);
  d.download(rows, got.data(), got.size() * 4);
  for (uint32_t k = 0; k < steps; ++k)
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(got[k * n + i], k * 1000 + i) << "step " << k << ", word " << i;
}

} // namespace

class SideQueue : public test::VkTest {};

TEST_F(SideQueue, SharedWithTheMainQueueWaitsBothWays) {
  auto d = device_with(Tuning::ReferenceQueue::Shared);
  ASSERT_TRUE(d->has_side_queue());
  EXPECT_TRUE(d->side_queue_is_main());
  ping_pong(*d);
}

TEST_F(SideQueue, OfAnotherFamilyWaitsBothWays) {
  if (!test::vk_device().info().has_side_compute_queue)
    GTEST_SKIP() << "device '" << test::vk_device().info().name << "' has one compute queue family";
  auto d = device_with(Tuning::ReferenceQueue::Auto);
  ASSERT_TRUE(d->has_side_queue());
  EXPECT_FALSE(d->side_queue_is_main());
  ping_pong(*d);
}

TEST_F(SideQueue, OffMeansNoneAndSideRecordingsAreRefused) {
  auto d = device_with(Tuning::ReferenceQueue::Off);
  EXPECT_FALSE(d->has_side_queue());
  EXPECT_THROW(vk::Recording(*d, vk::QueueRole::Side), Error);
}
