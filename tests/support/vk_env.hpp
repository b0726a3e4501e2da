// Shared Vulkan context for tests: one instance (validation layer ON) and one device per test
// binary. The device is the default choice, or the one named by Z123_TEST_DEVICE (index or name
// substring), so the same suite runs on lavapipe in CI and on the GPU machine.
// VkTest fails any test during which the validation layer reported an error.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "z123/vk/device.hpp"
#include "z123/vk/instance.hpp"

namespace z123::test {

vk::Instance& vk_instance();
vk::Device& vk_device();

class VkTest : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;
  vk::Device& device() { return vk_device(); }

private:
  uint32_t errors_before_ = 0;
};

// Seed for random test data: Z123_TEST_SEED if set, else a fresh one; printed by the caller's
// SCOPED_TRACE so a failure can be reproduced.
uint64_t test_seed();

} // namespace z123::test
