// The build embeds every shader variant the engine would pick on some device: a glslc too old
// for the KHR cooperative-matrix extension (Debian 12's) used to drop those variants silently,
// and GPUs that have the extension then ran the slower NV path (85 vs 70 ms per UNet step on an
// H100). No device is needed: this checks the build, not the machine.
#include <gtest/gtest.h>

#include <string>

#include "vk/shader_table.hpp"
#include "z123/kernels/kernels.hpp"

namespace {

using namespace z123;

TEST(ShaderVariants, EveryPreferredVariantIsEmbedded) {
  std::string list;
  for (const std::string& m : kernels::missing_preferred_variants()) list += "\n  " + m;
  EXPECT_TRUE(list.empty()) << "this build lacks shader variants the engine prefers (build with the glslc that "
                               "scripts/install-deps.sh provides; docs/newer-glslc.md):"
                            << list;
}

TEST(ShaderVariants, ThePreferredPathsHaveVariants) {
  // The check above is only as good as the declared list: each preferred path must declare some.
  for (kernels::Path p : kernels::preferred_paths()) {
    int declared = 0;
    for (const vk::DeclaredShader* d = vk::kDeclaredShaders; d->name; ++d)
      declared += std::string(d->feature) == kernels::glsl_feature(p);
    EXPECT_GT(declared, 0) << kernels::path_name(p) << " declares no shader variant";
  }
}

TEST(ShaderVariants, EmbeddedVariantsAreDeclared) {
  for (const vk::EmbeddedShader* s = vk::kEmbeddedShaders; s->name; ++s) {
    bool found = false;
    for (const vk::DeclaredShader* d = vk::kDeclaredShaders; d->name && !found; ++d)
      found = std::string(d->name) == s->name;
    EXPECT_TRUE(found) << s->name;
  }
}

// Bench-only variants (z123_shader BENCH) are embedded exactly when Z123_BENCH_VARIANTS is on
// (and their GLSL feature was available); the engine never picks them by itself.
TEST(ShaderVariants, BenchOnlyVariantsFollowTheOption) {
  int bench = 0;
  for (const vk::DeclaredShader* d = vk::kDeclaredShaders; d->name; ++d) {
    if (!d->bench_only) continue;
    ++bench;
    if (vk::kBenchVariantsBuilt) continue;
    EXPECT_EQ(vk::find_shader(d->name), nullptr) << d->name;
    // Why it is missing: the option, or (first) the GLSL feature the shader compiler lacked.
    const std::string why = vk::missing_shader_reason(d->name);
    EXPECT_TRUE(why.find("-DZ123_BENCH_VARIANTS=ON") != std::string::npos || why.find(d->feature) != std::string::npos)
        << why;
  }
  EXPECT_GT(bench, 0) << "no variant is declared BENCH";
  EXPECT_NE(vk::missing_shader_reason("gemm_khr_t99_f16").find("not declared"), std::string::npos);
}

} // namespace
