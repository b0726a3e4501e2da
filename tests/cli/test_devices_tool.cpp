// zero123pp-devices: besides each device's properties, the kernel each operation takes there,
// as the engine would choose it (the same functions answer both), and a clear refusal of a
// mistyped path override.
#include <gtest/gtest.h>

#include <string>

#include "cli_util.hpp"
#include "support/vk_env.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/kernels/kernels.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/kernels/winograd.hpp"

using namespace z123;

class DevicesTool : public test::VkTest {};

TEST_F(DevicesTool, PrintsTheKernelOfEachOperation) {
  const test::CliResult r = test::run_program(Z123_DEVICES_TOOL, "");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  kernels::Kernels k(device());
  const DType h = DType::F16;
  // Every device is listed with its routes; the test device's lines are among them.
  for (const std::string& line :
       {"linear, conv             " + kernels::gemm_route(k, h),
        "UNet 3x3 convs           " + kernels::unet_conv3x3_route(k, h),
        "attention UNet (d64)     " + kernels::choose_attention_kernel(k, h, 64, false, true).shader,
        "attention CLIP text      " + kernels::choose_attention_kernel(k, h, 64, true, true).shader,
        "attention CLIP vision    " + kernels::choose_attention_kernel(k, h, 80, false, true).shader})
    EXPECT_NE(r.out.find(line), std::string::npos) << "missing: " << line << "\n" << r.out;
}

TEST_F(DevicesTool, MistypedShapeOverrideIsNamed) {
  const test::CliResult r = test::run_program("Z123_COOPMAT_SHAPE=16x16 " + std::string(Z123_DEVICES_TOOL), "");
  EXPECT_EQ(r.exit_code, 0) << r.out; // the listing goes on; each device says why it has no routes
  EXPECT_NE(r.out.find("Z123_COOPMAT_SHAPE=16x16: expected one of 16x16x16"), std::string::npos) << r.out;
}
