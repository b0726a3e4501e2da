// Variant names the kernels compose at run time (kernels/shader_names.hpp composed_variant) must
// be declared in shaders/variants: literal names are checked when the engine compiles, these
// here, for every value of what they are composed from, without a device that would run them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/composed_names.hpp"
#include "kernels/gemm_dispatch.hpp"
#include "vk/shader_table.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/kernels/kernels.hpp"

namespace {

using namespace z123;

void expect_declared(const std::string& name) {
  EXPECT_NE(vk::find_declared(name), nullptr) << vk::missing_shader_reason(name);
}

// Every tiling Z123_GEMM_TILE names, linear and conv.
TEST(ShaderNames, KhrGemmTilings) {
  const std::vector<std::string> names = kernels::detail::khr_tiling_names();
  EXPECT_GE(names.size(), 3u);
  for (const std::string& tiling : names)
    for (const std::string& v : kernels::detail::khr_tiling_variants(tiling)) expect_declared(v);
}

// The KHR GEMMs' default and narrow tiles and the KHR attention, for every fragment shape the
// kernels may take (kernels::khr_gemm_shapes: the suffix is the shape's part of the name).
TEST(ShaderNames, KhrFragmentShapes) {
  for (const kernels::CoopmatShape& s : kernels::khr_gemm_shapes()) {
    SCOPED_TRACE(kernels::shape_name(s));
    for (const char* base : {"gemm", "gemm_conv"})
      for (const char* tile : {"", "_narrow"}) expect_declared(std::string(base) + "_khr" + tile + s.suffix + "_f16");
    expect_declared(std::string("attention_d64_khrcm") + s.suffix + "_f16");
  }
}

// Every KHR attention variant Z123_ATTN_VARIANT may name, at the default fragment shape.
TEST(ShaderNames, AttentionVariantKnob) {
  for (const std::string& v : kernels::khr_attention_knob_values())
    expect_declared(kernels::khr_attention_knob_variant(v));
}

// Every ablation the attention benchmark takes (shaders/variants/attention.cmake's list).
TEST(ShaderNames, AttentionAblations) {
  for (const std::string& v : kernels::khr_attention_ablations())
    expect_declared(kernels::khr_attention_knob_variant(v));
}

// Both row counts of the coopmat2 attention (Z123_ATTN_CM2_ROWS).
TEST(ShaderNames, Coopmat2AttentionRows) {
  for (uint32_t rows : {64u, 128u}) expect_declared(kernels::nvcm2_attention_variant(rows));
}

// The portable GEMMs: the tiled kernel at both tiles with either kind of products, the plain
// kernel with either block shape, for every dtype it serves.
TEST(ShaderNames, PortableGemms) {
  namespace d = kernels::detail;
  for (const char* base : {"gemm", "gemm_conv"}) {
    for (uint32_t tile : d::tiled_portable_tiles())
      for (bool packed : {false, true}) expect_declared(d::tiled_portable_variant(base, tile, packed));
    for (bool narrow : {false, true})
      for (DType dt : {DType::F16, DType::F32}) expect_declared(d::plain_portable_variant(base, narrow, dt));
  }
}

// The portable attention for every head size it accepts, at both workgroup sizes, with and without
// packed P·V, in both dtypes.
TEST(ShaderNames, PortableAttention) {
  for (int64_t head_dim = 1; head_dim <= 512; ++head_dim) {
    if (!kernels::attention_supports_head_dim(head_dim)) continue;
    for (int64_t invocations : kernels::portable_attention_invocations())
      for (bool packed : {false, true})
        for (DType dt : {DType::F16, DType::F32})
          expect_declared(kernels::portable_attention_variant(head_dim, invocations, packed, dt));
  }
}

// Group norm: the resident kernel at every channels-per-access, the split stages at both widths.
TEST(ShaderNames, GroupNorm) {
  for (DType dt : {DType::F16, DType::F32}) {
    for (int64_t ev : kernels::group_norm_resident_evs()) expect_declared(kernels::group_norm_resident_variant(ev, dt));
    for (bool apply : {false, true})
      for (bool vec4 : {false, true}) expect_declared(kernels::group_norm_split_variant(apply, vec4, dt));
    for (auto stage : {kernels::GroupNormTableStage::Direct, kernels::GroupNormTableStage::Partial})
      for (bool vec4 : {false, true}) expect_declared(kernels::group_norm_table_variant(stage, vec4, dt));
  }
}

} // namespace
