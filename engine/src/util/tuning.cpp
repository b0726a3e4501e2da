// Reads the tuning knobs of z123/tuning.hpp from the environment: the one place that parses them,
// so that every knob takes its values the same way and a bad one fails with the same message.
#include "z123/tuning.hpp"

#include <string>
#include <utility>
#include <vector>

#include "kernels/gemm_dispatch.hpp"
#include "util/env_values.hpp"
#include "z123/error.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/kernels/kernels.hpp"

namespace z123 {
namespace {

using env_values::choice;
using env_values::flag;
using env_values::positive;
using env_values::refuse;
const char* env(const char* name) { return env_values::get(name); }

kernels::Path path_word(const char* name, const std::string& full, const std::string& word) {
  using kernels::Path;
  for (Path p : {Path::Portable, Path::NvCoopMat, Path::KhrCoopMat, Path::NvCoopMat2})
    if (word == kernel_path_word(p)) return p;
  refuse(name, full, "<path> or <matmul path>:<attention path>, each portable|nv|khr|nv2");
}

} // namespace

const char* kernel_path_word(kernels::Path p) {
  switch (p) {
  case kernels::Path::Portable: return "portable";
  case kernels::Path::NvCoopMat: return "nv";
  case kernels::Path::KhrCoopMat: return "khr";
  case kernels::Path::NvCoopMat2: return "nv2";
  }
  return "?";
}

Tuning Tuning::from_environment() {
  Tuning t;
  t.force_portable = flag("Z123_FORCE_PORTABLE");
  if (const char* v = env("Z123_KERNEL_PATH")) {
    const std::string f = v;
    const size_t colon = f.find(':');
    t.matmul_path = path_word("Z123_KERNEL_PATH", f, f.substr(0, colon));
    t.attention_path =
        colon == std::string::npos ? *t.matmul_path : path_word("Z123_KERNEL_PATH", f, f.substr(colon + 1));
  }
  if (const char* v = env("Z123_COOPMAT_SHAPE")) {
    kernels::khr_gemm_shape_named(v); // throws for a shape no kernel is built for
    t.coopmat_shape = v;
  }

  using PG = PortableGemm;
  t.portable_gemm = choice<PG>("Z123_PORTABLE_GEMM",
                               {{"tiled", PG::Tiled128}, {"tiled64", PG::Tiled64}, {"plain", PG::Plain}}, PG::Auto);
  using PA = PortableArith;
  t.portable_arith = choice<PA>("Z123_PORTABLE_ARITH", {{"packed", PA::Packed}, {"fp32", PA::Fp32}}, PA::Auto);
  if (const char* v = env("Z123_GEMM_TILE")) {
    kernels::detail::check_gemm_tile(v); // throws for a tiling no kernel is built for
    t.gemm_tile = v;
  }
  t.gemm_split_k = flag("Z123_GEMM_SPLITK", true);
  t.gemm_layer_norm = flag("Z123_GEMM_LN", false);
  t.gemm_cm2_tile_n = choice<uint32_t>("Z123_GEMM_CM2_TILE_N", {{"128", 128}, {"256", 256}}, 0);
  using GF = GemmFixedGeometry;
  t.gemm_fixed_geometry = choice<GF>(
      "Z123_GEMM_FIXED_GEOMETRY", {{"all", GF::All}, {"taps", GF::Taps}, {"k", GF::K}, {"none", GF::None}}, GF::Taps);

  // The khrcm_cv_* ones are bench-only variants: choosing one in a build without them is refused
  // by Kernels, naming the build option.
  std::vector<std::pair<std::string, std::string>> attn_values;
  for (const std::string& v : kernels::khr_attention_knob_values()) attn_values.emplace_back(v, v);
  t.attn_variant = choice<std::string>("Z123_ATTN_VARIANT", attn_values, "");
  t.attn_cm2_rows = choice<uint32_t>("Z123_ATTN_CM2_ROWS", {{"64", 64}, {"128", 128}}, 64);
  t.attn_coopmat_generic = flag("Z123_ATTN_COOPMAT_GENERIC");
  t.attn_tiled_invocations = choice<uint32_t>("Z123_ATTN_TILED_INVOCATIONS", {{"128", 128}, {"256", 256}}, 0);
  std::vector<std::pair<std::string, std::string>> trial_values;
  for (const std::string& v : kernels::tiled_attention_trials()) trial_values.emplace_back(v, v);
  t.attn_tiled_trial = choice<std::string>("Z123_ATTN_TILED_TRIAL", trial_values, "");

  constexpr int64_t kMaxGroupValues = int64_t{1} << 31, kMaxTiles = 65535, kMaxThreads = 1024;
  t.gn_direct_max = positive("Z123_GN_DIRECT_MAX", t.gn_direct_max, kMaxGroupValues);
  t.gn_tiles = positive("Z123_GN_TILES", t.gn_tiles, kMaxTiles);
  t.gn_table_direct_max = positive("Z123_GN_TABLE_DIRECT_MAX", t.gn_table_direct_max, kMaxGroupValues);
  t.gn_table_tiles = positive("Z123_GN_TABLE_TILES", t.gn_table_tiles, kMaxTiles);
  t.gn_threads = static_cast<uint32_t>(positive("Z123_GN_THREADS", 0, kMaxThreads));
  t.gn_direct_threads = static_cast<uint32_t>(positive("Z123_GN_DIRECT_THREADS", 0, kMaxThreads));
  using GR = GnResident;
  t.gn_resident =
      choice<GR>("Z123_GN_RESIDENT", {{"0", GR::Never}, {"small", GR::Small}, {"1", GR::Everywhere}}, GR::Never);

  using RQ = ReferenceQueue;
  t.reference_queue =
      choice<RQ>("Z123_REFERENCE_QUEUE", {{"auto", RQ::Auto}, {"off", RQ::Off}, {"shared", RQ::Shared}}, RQ::Auto);
  t.main_presubmit = flag("Z123_MAIN_PRESUBMIT", true);
  t.reference_steps = choice<int>("Z123_REFERENCE_STEPS", {{"1", 1}, {"2", 2}}, 2);

  using CW = ConvWinograd;
  t.conv_winograd = choice<CW>("Z123_CONV_WINOGRAD", {{"auto", CW::Auto}, {"on", CW::On}, {"off", CW::Off}}, CW::Auto);
  t.conv_winograd_max_cout = positive("Z123_CONV_WINOGRAD_MAX_COUT", 0, kMaxGroupValues);
  t.winograd_input_vec = choice<int>("Z123_WINOGRAD_INPUT_VEC", {{"4", 4}, {"2", 2}}, 4);
  t.winograd_output_vec = choice<int>("Z123_WINOGRAD_OUTPUT_VEC", {{"4", 4}, {"2", 2}}, 4);

  t.no_pipeline_cache = flag("Z123_NO_PIPELINE_CACHE");
  if (const char* v = env("Z123_PIPELINE_REPORT_DIR")) t.pipeline_report_dir = v;
  return t;
}

} // namespace z123
