// The suballocator and host<->device copies: poisoned round trips through both the mapped and the
// staging path, many buffers without overlap, alignment, limits and exhaustion errors, stats.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "support/vk_env.hpp"
#include "z123/error.hpp"
#include "z123/vk/recording.hpp"

using namespace z123;

namespace {

constexpr uint32_t kPoison = 0xDEADBEEFu;

// A second device on the same physical device, with device-local memory left unmapped so every
// copy goes through staging buffers (on lavapipe all memory is host-visible).
vk::Device& staging_device() {
  static vk::Device dev = [] {
    vk::DeviceOptions o;
    o.map_device_local = false;
    o.persist_pipeline_cache = false;
    return vk::Device(test::vk_instance(), test::vk_device().info(), o);
  }();
  return dev;
}

void round_trip(vk::Device& dev, size_t words, bool expect_mapped) {
  uint64_t seed = test::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> src(words);
  for (auto& w : src) w = static_cast<uint32_t>(rng());
  vk::Buffer buf = dev.allocator().create_buffer(words * 4, vk::MemoryUsage::DeviceLocal, "round-trip");
  EXPECT_EQ(buf.mapped() != nullptr, expect_mapped);
  // Poison on the device first, so a download that silently did nothing cannot pass.
  vk::Recording rec(dev);
  rec.fill(buf, kPoison);
  dev.run(rec);
  std::vector<uint32_t> back(words, 0);
  dev.download(buf, back.data(), words * 4);
  EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](uint32_t w) { return w == kPoison; }));
  dev.upload(buf, src.data(), words * 4);
  std::fill(back.begin(), back.end(), kPoison);
  dev.download(buf, back.data(), words * 4);
  EXPECT_EQ(back, src);
  // Partial copy at an offset leaves the rest alone.
  std::vector<uint32_t> patch(7, 0x12345678u);
  dev.upload(buf, patch.data(), patch.size() * 4, 40);
  dev.download(buf, back.data(), words * 4);
  for (size_t i = 0; i < words; ++i) EXPECT_EQ(back[i], (i >= 10 && i < 17) ? 0x12345678u : src[i]) << i;
}

} // namespace

class Memory : public test::VkTest {};

TEST_F(Memory, RoundTripMappedPath) {
  bool mapped = device().allocator().create_buffer(16, vk::MemoryUsage::DeviceLocal, "probe").mapped() != nullptr;
  round_trip(device(), 100003, mapped);
}

TEST_F(Memory, RoundTripStagingPath) { round_trip(staging_device(), 100003, false); }

TEST_F(Memory, ManySmallBuffersDoNotOverlap) {
  auto& alloc = device().allocator();
  std::vector<vk::Buffer> bufs;
  for (int i = 0; i < 200; ++i)
    bufs.push_back(
        alloc.create_buffer(4 * (1 + (i * 37) % 301), vk::MemoryUsage::DeviceLocal, "small" + std::to_string(i)));
  for (size_t i = 0; i < bufs.size(); ++i) {
    std::vector<uint32_t> v(bufs[i].size() / 4, static_cast<uint32_t>(i));
    device().upload(bufs[i], v.data(), bufs[i].size());
  }
  for (size_t i = 0; i < bufs.size(); ++i) {
    std::vector<uint32_t> v(bufs[i].size() / 4, kPoison);
    device().download(bufs[i], v.data(), bufs[i].size());
    for (uint32_t w : v) ASSERT_EQ(w, i) << "buffer " << i << " was overwritten by a neighbour";
  }
}

TEST_F(Memory, FreedRangesAreReusedAndEmptyBlocksReturned) {
  auto& alloc = device().allocator();
  auto before = alloc.stats();
  {
    std::vector<vk::Buffer> bufs;
    for (int i = 0; i < 64; ++i) bufs.push_back(alloc.create_buffer(1 << 20, vk::MemoryUsage::DeviceLocal, "mb"));
    auto mid = alloc.stats();
    EXPECT_GE(mid.used_bytes - before.used_bytes, 64ull << 20);
    EXPECT_EQ(mid.live_buffers, before.live_buffers + 64);
    // Free every other one, then refill: the holes must be reused (no new block needed).
    for (size_t i = 0; i < bufs.size(); i += 2) bufs[i].reset();
    uint32_t blocks = alloc.stats().blocks;
    for (size_t i = 0; i < bufs.size(); i += 2)
      bufs[i] = alloc.create_buffer(1 << 20, vk::MemoryUsage::DeviceLocal, "again");
    EXPECT_EQ(alloc.stats().blocks, blocks);
  }
  auto after = alloc.stats();
  EXPECT_EQ(after.used_bytes, before.used_bytes);
  EXPECT_EQ(after.blocks, before.blocks);
  EXPECT_GE(after.peak_used_bytes, before.used_bytes + (64ull << 20));
}

TEST_F(Memory, LargeRequestsGetDedicatedAllocations) {
  auto& alloc = device().allocator();
  uint32_t blocks = alloc.stats().blocks;
  vk::Buffer big = alloc.create_buffer(alloc.block_bytes() / 2 + 4096, vk::MemoryUsage::Upload, "big");
  EXPECT_EQ(alloc.stats().blocks, blocks + 1);
  big.reset();
  EXPECT_EQ(alloc.stats().blocks, blocks);
}

// Memory shared by turns (vk::MemoryTurn): each turn packs its buffers as if alone,
// within the reservation; the turns overlap each other (writing one clobbers the other), never
// themselves; a turn that outgrows the reservation gets a new block; all of it goes back to the
// driver when the last buffer is freed.
TEST_F(Memory, TurnsShareTheirReservedMemory) {
  auto& alloc = device().allocator();
  const auto before = alloc.stats();
  const uint64_t mib = 1 << 20;
  {
    alloc.reserve_turn_memory(8 * mib, "test turns");
    EXPECT_EQ(alloc.stats().blocks, before.blocks + 1);
    EXPECT_EQ(alloc.stats().device_local_allocated_bytes - before.device_local_allocated_bytes, 8 * mib);
    auto fill = [&](std::vector<vk::Buffer>& bufs, uint32_t base) {
      for (size_t i = 0; i < bufs.size(); ++i) {
        std::vector<uint32_t> v(bufs[i].size() / 4, base + static_cast<uint32_t>(i));
        device().upload(bufs[i], v.data(), bufs[i].size());
      }
    };
    // How many of these buffers still hold exactly what fill() wrote.
    auto intact = [&](std::vector<vk::Buffer>& bufs, uint32_t base) {
      int n = 0;
      for (size_t i = 0; i < bufs.size(); ++i) {
        std::vector<uint32_t> v(bufs[i].size() / 4, kPoison);
        device().download(bufs[i], v.data(), bufs[i].size());
        n += std::all_of(v.begin(), v.end(), [&](uint32_t w) { return w == base + i; });
      }
      return n;
    };
    std::vector<vk::Buffer> first, second;
    for (int i = 0; i < 4; ++i)
      first.push_back(
          alloc.create_buffer(2 * mib - 4096, vk::MemoryUsage::DeviceLocal, "first", false, vk::MemoryTurn::First));
    for (int i = 0; i < 2; ++i)
      second.push_back(
          alloc.create_buffer(3 * mib, vk::MemoryUsage::DeviceLocal, "second", false, vk::MemoryTurn::Second));
    EXPECT_EQ(alloc.stats().blocks, before.blocks + 1) << "the turns must fit the reservation";
    fill(first, 100);
    EXPECT_EQ(intact(first, 100), 4) << "buffers of one turn overlap";
    fill(second, 200);
    EXPECT_EQ(intact(second, 200), 2) << "buffers of one turn overlap";
    EXPECT_LT(intact(first, 100), 4) << "the Second turn did not reuse the First turn's memory";
    vk::Buffer extra =
        alloc.create_buffer(4 * mib, vk::MemoryUsage::DeviceLocal, "outgrown", false, vk::MemoryTurn::Second);
    EXPECT_EQ(alloc.stats().blocks, before.blocks + 2);
    EXPECT_THROW(alloc.create_buffer(mib, vk::MemoryUsage::Upload, "host", false, vk::MemoryTurn::First), Error);
  }
  EXPECT_EQ(alloc.stats().blocks, before.blocks);
  EXPECT_EQ(alloc.stats().device_local_allocated_bytes, before.device_local_allocated_bytes);
}

// A reservation whose buffers never came (a recording that failed half-way) stands empty; the
// next reservation gives it back first rather than holding both.
TEST_F(Memory, AReservationGivesBackEmptyTurnBlocks) {
  auto& alloc = device().allocator();
  const auto before = alloc.stats();
  const uint64_t mib = 1 << 20;
  alloc.reserve_turn_memory(8 * mib, "unused");
  EXPECT_EQ(alloc.stats().device_local_allocated_bytes - before.device_local_allocated_bytes, 8 * mib);
  {
    alloc.reserve_turn_memory(6 * mib, "used");
    EXPECT_EQ(alloc.stats().blocks, before.blocks + 1) << "the unused reservation was kept";
    EXPECT_EQ(alloc.stats().device_local_allocated_bytes - before.device_local_allocated_bytes, 6 * mib);
    vk::Buffer b = alloc.create_buffer(mib, vk::MemoryUsage::DeviceLocal, "first", false, vk::MemoryTurn::First);
    // A block in use is not given back.
    alloc.reserve_turn_memory(2 * mib, "beside");
    EXPECT_EQ(alloc.stats().blocks, before.blocks + 2);
    EXPECT_EQ(alloc.stats().device_local_allocated_bytes - before.device_local_allocated_bytes, 8 * mib);
  }
  // The last buffer gone, its block goes back; the one never used waits for the next reservation.
  EXPECT_EQ(alloc.stats().blocks, before.blocks + 1);
  alloc.reserve_turn_memory(mib, "last");
  vk::Buffer b = alloc.create_buffer(mib, vk::MemoryUsage::DeviceLocal, "only", false, vk::MemoryTurn::Second);
  b.reset();
  EXPECT_EQ(alloc.stats().blocks, before.blocks);
  EXPECT_EQ(alloc.stats().device_local_allocated_bytes, before.device_local_allocated_bytes);
}

TEST_F(Memory, BufferOverStorageRangeIsRejectedWithItsName) {
  auto& alloc = device().allocator();
  try {
    alloc.create_buffer(alloc.max_buffer_bytes() + 4, vk::MemoryUsage::DeviceLocal, "vae.decoder.huge");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("vae.decoder.huge"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("maxStorageBufferRange"), std::string::npos) << e.what();
  }
}

TEST_F(Memory, ExhaustionIsAnOutOfMemoryError) {
  auto& alloc = device().allocator();
  try {
    alloc.create_buffer(device().info().max_memory_allocation_size + 1, vk::MemoryUsage::Upload, "too-big");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find("maxMemoryAllocationSize"), std::string::npos) << e.what();
  }
  EXPECT_THROW(alloc.create_buffer(0, vk::MemoryUsage::DeviceLocal, "empty"), Error);
}

TEST_F(Memory, OutOfRangeCopiesAreRejected) {
  vk::Buffer b = device().allocator().create_buffer(64, vk::MemoryUsage::DeviceLocal, "small");
  std::vector<char> data(128);
  EXPECT_THROW(device().upload(b, data.data(), 65), Error);
  EXPECT_THROW(device().download(b, data.data(), 8, 60), Error);
}

// Memory-type choice on the layouts that lavapipe cannot show: a discrete GPU's heaps (NVIDIA's
// types: plain VRAM, the host-visible VRAM window, system memory, cached system memory) and an
// integrated GPU's shared memory. The types are scored one by one; the best score must be the
// type named in each expectation.
TEST(MemoryTypeScore, DiscreteAndSharedMemoryLayouts) {
  using vk::MemoryUsage;
  const VkMemoryPropertyFlags vram = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  const VkMemoryPropertyFlags bar =
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const VkMemoryPropertyFlags sys = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const VkMemoryPropertyFlags sys_cached = sys | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  const std::vector<VkMemoryPropertyFlags> discrete{vram, bar, sys, sys_cached};
  auto best = [](const std::vector<VkMemoryPropertyFlags>& types, MemoryUsage u, bool uma) {
    size_t best_i = 0;
    for (size_t i = 1; i < types.size(); ++i)
      if (vk::memory_type_score(types[i], u, uma) > vk::memory_type_score(types[best_i], u, uma)) best_i = i;
    return types[best_i];
  };
  EXPECT_EQ(best(discrete, MemoryUsage::DeviceLocal, false), vram); // not the BAR window
  EXPECT_EQ(best(discrete, MemoryUsage::Upload, false), sys);
  EXPECT_EQ(best(discrete, MemoryUsage::Download, false), sys_cached);
  // Streamed weights: host memory the GPU reads over the bus, never VRAM, on a discrete GPU.
  const VkMemoryPropertyFlags streamed = best(discrete, MemoryUsage::HostStreamed, false);
  EXPECT_FALSE(streamed & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  EXPECT_TRUE(streamed & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
  // Without any host-visible type streamed weights still get memory (VRAM).
  EXPECT_EQ(best({vram}, MemoryUsage::HostStreamed, false), vram);
  // Shared memory (UMA: every type device-local, one also host-visible): both usages take the
  // host-visible device-local type, so uploads are plain copies.
  const std::vector<VkMemoryPropertyFlags> shared{vram, bar};
  EXPECT_EQ(best(shared, MemoryUsage::DeviceLocal, true), bar);
  EXPECT_EQ(best(shared, MemoryUsage::HostStreamed, true), bar);
  EXPECT_LT(vk::memory_type_score(vram, MemoryUsage::Upload, false), 0); // never staging in plain VRAM
}
