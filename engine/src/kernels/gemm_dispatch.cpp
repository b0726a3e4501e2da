#include "kernels/gemm_dispatch.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/shader_names.hpp"
#include "z123/error.hpp"

namespace z123::kernels::detail {
namespace {

constexpr uint32_t kFlagBias = 1, kFlagResidual = 2, kFlagLayerNorm = 4, kFlagRowStats = 8, kActShift = 8;
// The columns of each part of the row statistics the kernels write (GEMM_ROW_STATS): the
// cooperative-matrix kernel's four lanes of 8-column runs (ROW_PART_COLS in gemm_coopmat.comp),
// the plain kernel's block of TN columns.
constexpr uint32_t kCoopRowPartCols = 32, kPortableRowPartCols = 8;
// gemm.comp and gemm_coopmat.comp have a sixth binding: the row statistics (common/gemm_io.glsl).
constexpr uint32_t kGemmBindings = 5, kGemmBindingsWithRowStats = 6;
constexpr uint32_t kActGeglu = 3; // GEMM_ACT_GEGLU of common/gemm_io.glsl, past Epilogue's codes
// Row tiles per grid dimension: the Vulkan minimum for maxComputeWorkGroupCount[1..2].
constexpr uint32_t kMaxGroups = 65535;
uint32_t g_max_groups = kMaxGroups; // lowered by tests to exercise the split on small problems

// Portable kernel: each invocation computes a kPortableRows x kPortableCols block (TM/TN in
// gemm.comp; 8 x 8 measured fastest on lavapipe, 1.5-2.5x over 4 x 4, 8 x 4 and 16 x 4).
constexpr uint32_t kPortableRows = 8, kPortableCols = 8;
constexpr uint32_t kPortableInvocations = 64;
// The narrow variants (gemm_narrow_*, gemm_conv_narrow_*) compute 4 x 4 blocks, for N <= 4.
constexpr uint32_t kNarrowBlock = 4;
// Cooperative-matrix kernel: 128 x 128 tiles per workgroup of 8 subgroups of 32; for N <= 16
// the narrow variant's 128 x 16 tiles (128-wide ones would be over 90% padding: the 960x640
// conv_out 128->3 took 12 ms on an H200 with them).
constexpr uint32_t kCoopTileM = 128, kCoopTileN = 128, kCoopNarrowN = 16;
constexpr uint64_t kCoopWideMinGroups = 1024; // see the KHR conv tile choice in record_gemm
// The KHR kernel's 4-subgroup tilings, 64 x 128 (gemm*_khr_t64x128) and 128 x 64
// (gemm*_khr_t128x64), both 32-deep K steps, against the default 128 x 128 on 8 subgroups. An
// H100's driver fits one default workgroup per SM (167-178 registers per invocation) but three
// small ones (152-154), so what decides is how the tiles fill whole waves over the SMs. Measured
// per shape on an H100 (bench/NOTES.md session 5), a full wave of small tiles takes ~1.4x as long
// as a default wave (1.3-1.46 over the UNet's shapes); 128 x 64 convs ~1.65x (the implicit-im2col
// A operand is gathered once per 64 columns instead of 128). Small tiles win where that means
// fewer waves (convs 4800x640 304 -> 222 us, 2048x1280 753 -> 536; the level-0 N = 320 shapes in
// 128 x 64 tiles, no padding column: 19200x320x2880 335 -> 273, 19200x320x320 52 -> 35), lose
// where the default already fills its waves or M is short (the weights are read twice as often:
// 512x10240 94 vs 115 us), and 64 x 128 always wins at N <= 128 (the VAE's 128-channel convs:
// 262144x128x1152 2.4 ms against 6.0 with 128 x 256 tiles, half of them padding). Only where the
// device tells its SM count.
constexpr uint32_t kSmallTile = 64, kSmallTilesPerSm = 3, kSmallTileMinM = 2048;
constexpr double kSmallWaveCost = 1.4, kNarrowConvWaveCost = 1.65, kSmallWaveMargin = 0.95;

// NV cooperative matrix 2 kernel (gemm_coopmat2.comp): 128 x 128 tiles, or 128 x 256 where that
// still gives enough workgroups to fill the GPU (an H200 has 132 SMs: two waves at least).
// Problems with N <= kCoopNarrowN keep the v1 kernel's 128 x 16 tiles.
constexpr uint32_t kCm2TileM = 128, kCm2TileN = 128, kCm2WideTileN = 256, kCm2WideMinGroups = 264;

// Spreads `tiles` row tiles over grid y and z, each at most kMaxGroups.
void split_rows(uint32_t tiles, uint32_t& gy, uint32_t& gz) {
  gz = (tiles + g_max_groups - 1) / g_max_groups;
  gy = (tiles + gz - 1) / gz;
}

bool same_buffer(const Tensor& a, const Tensor* b) { return b && a.buffer == b->buffer; }

// Split K (coopmat kernels): only for fewer than kSplitKMaxTiles output tiles, then enough ranges
// for about kSplitKTargetGroups workgroups (~2 per compute unit on GPUs with 100-150 of them; the
// device does not tell us how many), with at least kSplitKMinChunk of K per range and at most
// kSplitKMax ranges. Ranges are multiples of kSplitKAlign (every variant's K step divides it).
// Measured on an H200 (bench/NOTES.md): 10-40 tiles gained 35-60% per conv, but 80-100 tiles
// split 3-4 ways got slower (the partial sums' traffic and the extra dispatch).
// Measured on an H100 (bench/NOTES.md session 4, split against unsplit per shape in one run):
// with 24-47 tiles and a short K the split lost (512x1280x1280: 64 + 8 us against 33 unsplit;
// 257-300 rows x 1280 x 1280 and 77x4096x1024 likewise), so those stay whole; below 24 tiles,
// or with K >= kSplitKShortK, it won (128x1280x1280 27 vs 33 us, 2x1280x1280 15 vs 38,
// 512x1280x11520 186 + 11 vs 309).
constexpr uint64_t kSplitKTargetGroups = 256, kSplitKMaxTiles = 48, kSplitKShortMaxTiles = 24;
constexpr uint32_t kSplitKShortK = 2560;
constexpr uint32_t kSplitKMinChunk = 256, kSplitKMax = 16, kSplitKAlign = 64, kReduceGroup = 256;

uint32_t round_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

// How many K ranges a coopmat GEMM with `tiles` output tiles runs (1 = no split).
// Tuning::gemm_split_k (Z123_GEMM_SPLITK=0) turns splitting off (for measuring).
uint32_t split_k_count(const Kernels& kernels, uint64_t tiles, uint32_t K) {
  if (kernels.whole_k() || !kernels.tuning().gemm_split_k || tiles == 0 || tiles >= kSplitKMaxTiles) return 1;
  if (tiles >= kSplitKShortMaxTiles && K < kSplitKShortK) return 1;
  uint64_t want = (kSplitKTargetGroups + tiles - 1) / tiles;
  return static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>({want, K / kSplitKMinChunk, kSplitKMax})));
}

// The count the coopmat kernel runs: split_k_count's, moved to whole waves where the device
// tells its SM count and the tiles are the default ones (one workgroup per SM on an H100; the
// narrow and small tilings fit several, and are not split this way).
uint32_t coopmat_split_k_count(const Kernels& kernels, uint64_t tiles, uint32_t K, bool default_tiles) {
  const uint32_t rule = split_k_count(kernels, tiles, K);
  if (rule == 1 || !default_tiles) return rule;
  return choose_split_k_by_waves(tiles, K, rule, kernels.device().info().compute_units);
}

// The second dispatch of a split-K GEMM: sums the partial sums in `partial` into the output of
// `bindings` with the epilogue.
void record_splitk_reduce(Kernels& kernels, vk::Recording& rec, const std::vector<vk::Binding>& bindings,
                          const vk::Buffer& partial, const GemmPush& push, DType dtype, const std::string& shape) {
  std::vector<vk::Binding> reduce_bindings(bindings.begin(), bindings.begin() + kGemmBindings);
  reduce_bindings[0] = vk::in(partial);
  const uint64_t groups = div_up(uint64_t{push.M} * push.N, kReduceGroup);
  const uint32_t rx = static_cast<uint32_t>(std::min<uint64_t>(groups, kMaxGroups));
  rec.dispatch(kernels.pipeline(variant("gemm_splitk_reduce", dtype), kGemmBindings, sizeof push), reduce_bindings,
               &push, sizeof push, rx, static_cast<uint32_t>(div_up(groups, rx)), 1, shape);
}

// Portable kernel, split K, on GPUs: its 64-invocation workgroups leave a GPU mostly idle when
// few output tiles run (the UNet's inner levels: 40-380 workgroups with K of 5,760-23,040, where
// an H100 holds ~2,000 at once; profile of bench/NOTES.md session 6). K is cut so that about
// kPortableGroupsPerUnit workgroups per compute unit run (64 units where the device does not
// say), in ranges of kSplitKMinChunk at least. Not on CPU devices, whose few cores are busy
// with any tile count.
constexpr uint64_t kPortableGroupsPerUnit = 16, kPortableUnknownUnits = 64;
uint32_t g_portable_splits = 0; // tests force a split count on any device; 0: the rule

uint32_t portable_split_k_count(const Kernels& kernels, uint64_t tiles, uint32_t K) {
  if (kernels.whole_k()) return 1;
  if (g_portable_splits) return std::max<uint32_t>(1, std::min(g_portable_splits, K / kSplitKAlign));
  const auto& info = kernels.device().info();
  if (info.type == VK_PHYSICAL_DEVICE_TYPE_CPU || tiles == 0) return 1;
  const uint64_t target = kPortableGroupsPerUnit * (info.compute_units ? info.compute_units : kPortableUnknownUnits);
  if (tiles * 2 >= target) return 1;
  return static_cast<uint32_t>(
      std::max<uint64_t>(1, std::min<uint64_t>({(target + tiles - 1) / tiles, K / kSplitKMinChunk, kSplitKMax})));
}

// Whether record_tiles splits K for this split count (its caller may need to know first).
bool splits_k(uint32_t splits, uint32_t row_tiles) { return splits > 1 && row_tiles <= g_max_groups; }

// The K range of each of `splits` workgroups along z: a multiple of every variant's K step.
uint32_t split_k_chunk(uint32_t K, uint32_t splits) { return round_up(div_up(K, splits), kSplitKAlign); }

// Records a GEMM over row_tiles x col_tiles workgroups: with splits > 1, K cut into ranges run
// side by side (grid z) into fp32 partial sums, then their sum with the epilogue applied
// (few output tiles: the UNet's inner levels, M of 128-1,200 rows with K up to 23,040); else
// one dispatch with the row tiles spread over grid y and z.
void record_tiles(Kernels& kernels, vk::Recording& rec, const vk::Pipeline& pipe,
                  const std::vector<vk::Binding>& bindings, GemmPush push, uint32_t row_tiles, uint32_t col_tiles,
                  uint32_t splits, DType dtype, const std::string& shape) {
  if (splits_k(splits, row_tiles)) {
    push.k_chunk = split_k_chunk(push.K, splits);
    const uint32_t used = div_up(push.K, push.k_chunk);
    const vk::Buffer& partial = kernels.splitk_scratch(uint64_t{used} * push.M * push.N * 4);
    std::vector<vk::Binding> split_bindings = bindings;
    split_bindings[4] = vk::out(partial);
    push.m_groups_y = row_tiles;
    rec.dispatch(pipe, split_bindings, &push, sizeof push, col_tiles, row_tiles, used, shape);
    record_splitk_reduce(kernels, rec, bindings, partial, push, dtype, shape);
    return;
  }
  uint32_t gy = 0, gz = 0;
  split_rows(row_tiles, gy, gz);
  push.m_groups_y = gy;
  rec.dispatch(pipe, bindings, &push, sizeof push, col_tiles, gy, gz, shape);
}

// The tiled portable kernel's square tiles (BM = BN in gemm_tiled.comp), and the narrowest output
// it takes (narrower ones keep the plain kernel's 4 x 4 or 8 x 8 blocks).
constexpr uint32_t kTiledTile = 128, kTiledSmallTile = 64, kTiledMinN = 32;

// Which kernel fp16 GEMMs off the cooperative-matrix path take: the tiled one on GPUs, the plain
// one on CPU devices (made for them: their caches do the staging the tiled kernel does in shared
// memory). Tuning::portable_gemm (Z123_PORTABLE_GEMM=tiled|tiled64|plain) forces one, and the
// tiled one's tile (tests, measurements): 128 x 128, 64 x 64, or the plain kernel. Returns Auto for
// the tiled kernel with its tile chosen per shape (tiled_portable_tile).
using PortableGemm = Tuning::PortableGemm;
PortableGemm portable_kernel(const Kernels& kernels, DType dtype) {
  if (dtype != DType::F16) return PortableGemm::Plain;
  const PortableGemm forced = kernels.tuning().portable_gemm;
  if (forced != PortableGemm::Auto) return forced;
  return kernels.device().info().type == VK_PHYSICAL_DEVICE_TYPE_CPU ? PortableGemm::Plain : PortableGemm::Auto;
}

// The tiled kernel's tile for an M x N output. With packed fp16 products, 64 x 64 (4 x 4 per
// invocation, fp16 sums flushed every 16 positions of K as in the 128 x 128 tiles) everywhere: on
// an H100 (bench/NOTES.md session 10) that ran the forced portable path at 290 ms per step with
// 32-deep K steps, as fast as choosing by waves, with one rule and the same rounding for every
// shape; 128 x 128 everywhere took 328. (Unflushed, 64 x 64 tiles ran at 267 ms but rounded past
// the project's 2-level parity.) Their K steps are 64 deep since session 12 (8% less per step, the
// same sums; 128 x 64 tiles were slower: one workgroup per SM). With fp32 products, 64 x 64 where
// 128 x 128 tiles would fill at least a wave of compute units (session 6: the level-0 and level-1
// shapes 15-20% faster, the 100-tile level-2 ones 13% slower), 128 x 128 where the device does
// not tell its compute units.
uint32_t tiled_portable_tile(const Kernels& kernels, PortableGemm kind, bool packed, uint32_t M, uint32_t N) {
  if (kind == PortableGemm::Tiled128) return kTiledTile;
  if (kind == PortableGemm::Tiled64 || packed) return kTiledSmallTile;
  const uint32_t units = kernels.device().info().compute_units;
  const uint64_t big = uint64_t{div_up(M, kTiledTile)} * div_up(N, kTiledTile);
  return units && big >= units ? kTiledSmallTile : kTiledTile;
}

// A cooperative-matrix GEMM variant: the pipeline name suffix and its workgroup tile.
struct CoopTile {
  std::string suffix;
  uint32_t m, n;
};

// The KHR tilings of shaders/variants/gemm.cmake besides the default 128 x 128 that
// record_gemm picks on its own.
const CoopTile kKhrRows64{"_t64x128", kSmallTile, kCoopTileN};
const CoopTile kKhrCols64{"_t128x64", kCoopTileM, kSmallTile};
const CoopTile kKhrWide{"_t128x256", 128, 256};
// 128 x 128 on 4 x 4 subgroups of 32 x 32 (512 invocations): what the KHR path runs where the
// rule says 128 x 128 (record_gemm; khr_square_tiles_win).
const CoopTile kKhrSixteen{"_w4x4", kCoopTileM, kCoopTileN};
// 256 x 64 on 8 x 2 subgroups of 32 x 32 (512 invocations): in place of 128 x 64 where
// khr_tall_tiles_win.
const CoopTile kKhrTall{"_t256x64", 2 * kCoopTileM, kSmallTile};
// 96 x 128 on 3 x 4 subgroups of 32 x 32 (384 invocations): in place of the square tiles where
// khr_short_tiles_win.
const CoopTile kKhrShort{"_t96x128", 96, kCoopTileN};

// The tilings Tuning::gemm_tile (Z123_GEMM_TILE=<name>) may pick instead of the automatic choice
// (for measuring them on a GPU): the default 128 x 128 and those of shaders/variants/gemm.cmake.
const std::vector<CoopTile>& khr_tilings() {
  static const std::vector<CoopTile> tilings{{"", kCoopTileM, kCoopTileN},
                                             kKhrWide,
                                             {"_t256x128", 256, 128},
                                             {"_k32s2", 128, 128},
                                             {"_w4x2", 128, 128},
                                             kKhrSixteen,
                                             {"_w4x4s2", 128, 128},
                                             kKhrShort,
                                             kKhrRows64,
                                             kKhrCols64,
                                             kKhrTall};
  return tilings;
}

// A tiling's name in Z123_GEMM_TILE: its variant-name suffix without the "_", "default" for none.
std::string tiling_name(const CoopTile& t) { return t.suffix.empty() ? "default" : t.suffix.substr(1); }

// The tiling named `name`; throws naming the variable and the tilings for any other name.
const CoopTile& khr_tiling_named(const std::string& name) {
  std::string names;
  for (const CoopTile& t : khr_tilings()) {
    if (tiling_name(t) == name) return t;
    names += " " + tiling_name(t);
  }
  throw invalid_argument("Z123_GEMM_TILE=" + name + ": expected one of" + names);
}

CoopTile khr_tile_override(const Kernels& kernels, const CoopTile& fallback) {
  const std::string& want = kernels.tuning().gemm_tile;
  return want.empty() ? fallback : khr_tiling_named(want);
}

// The variant-name parts and pipeline subgroup size of the cooperative-matrix GEMM on this
// context's path: "_nv" (16x16x16 on 32) or "_khr" with the device's fragment shape.
struct CoopmatApi {
  std::string api, shape;
  uint32_t subgroup;
};
CoopmatApi coopmat_api(const Kernels& kernels) {
  const CoopmatShape* s = kernels.khr_gemm_shape();
  if (kernels.matmul_path() != Path::KhrCoopMat || !s) return {"_nv", "", coopmat_subgroup_size(kernels.device())};
  return {"_khr", s->suffix, coopmat_subgroup_size(kernels.device(), s->subgroup)};
}

// Whether record_gemm may pick among the KHR tilings (the default fragment shape) rather than the
// one 128 x 128 tile (and its narrow form) of the NV v1 kernel and other fragment shapes.
bool khr_tilings_apply(const Kernels& kernels) {
  return kernels.matmul_path() == Path::KhrCoopMat && coopmat_api(kernels).shape.empty();
}

// Grouped weights on the cooperative-matrix kernel (Winograd's products): each group's rows a
// multiple of this. Where N leaves a half-empty 128-wide column tile (N = 320, level 0), the rule
// takes 256 x 64 tiles: 256 (4,800 tiles per product at level 0 pad to 4,864). Elsewhere 64 (the
// smallest KHR row tile; 300 and 1,200 pad to 320 and 1,216), and record_gemm falls back to 64-row
// tiles where the rule's tile rows do not divide a group; 128 where only the 128 x 128 tile runs.
uint32_t coopmat_group_row_align(const Kernels& kernels, uint32_t n) {
  if (!khr_tilings_apply(kernels)) return kCoopTileM;
  return n % kCoopTileN != 0 ? kKhrTall.m : kKhrRows64.m;
}

} // namespace

void check_gemm_tile(const std::string& name) { khr_tiling_named(name); }

std::vector<std::string> khr_tiling_names() {
  std::vector<std::string> names;
  for (const CoopTile& t : khr_tilings()) names.push_back(tiling_name(t));
  return names;
}

std::vector<std::string> khr_tiling_variants(const std::string& name) {
  const CoopTile& t = khr_tiling_named(name);
  return {composed_variant("gemm_khr" + t.suffix, DType::F16),
          composed_variant("gemm_conv_khr" + t.suffix, DType::F16)};
}

std::string tiled_portable_variant(const std::string& base, uint32_t tile, bool packed) {
  return composed_variant(base + (tile == kTiledTile ? "_tiled" : "_tiled_t64") + (packed ? "_packed" : ""),
                          DType::F16);
}

std::string plain_portable_variant(const std::string& base, bool narrow, DType dtype) {
  return composed_variant(base + (narrow ? "_narrow" : ""), dtype);
}

std::vector<uint32_t> tiled_portable_tiles() { return {kTiledTile, kTiledSmallTile}; }

void set_max_grid_rows_for_testing(uint32_t groups) { g_max_groups = groups ? groups : kMaxGroups; }
void force_portable_split_k_for_testing(uint32_t splits) { g_portable_splits = splits; }

// split_k_count aims at ~256 workgroups (two per SM), blind to the SM count: on an H100 (132 SMs,
// one default workgroup each) 40 tiles split 7 ways took 3 waves, the last 12% full, and 10 tiles
// split 15 ways 2 waves for the work of 1.14 (bench/NOTES.md session 15). The cost of s ranges, in
// K positions of one workgroup's products: the waves of its `used` ranges (those K's 64-aligned
// chunks really make) times each one's chunk plus its fp32 partial tile (64 KiB written, about
// the time of kSplitKTileCost positions of products at the ~1.4 TFLOP/s per SM measured), plus the
// reduce's reading of those tiles spread over the SMs; within the bounds split_k_count respects
// (kSplitKMinChunk of K per range, kSplitKMax ranges).
constexpr double kSplitKTileCost = 128;
uint32_t choose_split_k_by_waves(uint64_t tiles, uint32_t K, uint32_t rule, uint32_t sms) {
  if (sms == 0 || rule <= 1 || tiles == 0) return rule;
  const uint32_t most = std::max<uint32_t>(2, std::min<uint32_t>(kSplitKMax, K / kSplitKMinChunk));
  uint32_t best = rule;
  double best_cost = 1e300;
  for (uint32_t s = 2; s <= most; ++s) {
    const uint32_t chunk = split_k_chunk(K, s), used = div_up(K, chunk);
    const double groups_per_sm = static_cast<double>(tiles * used) / sms;
    const double cost = std::ceil(groups_per_sm) * (chunk + kSplitKTileCost) + groups_per_sm * kSplitKTileCost;
    if (cost < best_cost) {
      best_cost = cost;
      best = s;
    }
  }
  return best;
}

// A 512-invocation workgroup must fit 128 registers per invocation (the driver gave the 8-subgroup
// default 167-178, the 16-subgroup one 97-128), so an SM holds 16 warps instead of 8 (bench/NOTES.md
// session 16, runs 3-4). Measured per step on an H100: the 16-subgroup tile in place of the
// default alone 45.7-46.0 ms against 46.7-46.8; also in place of every 64 x 128 tile 45.9-46.1;
// also in place of the 64 x 128 tiles where 128 x 128 ones make two or more waves 45.4 (this
// rule); everywhere, 128 x 64 and 128 x 256 included, 46.3. Where 128 x 128 tiles make fewer
// waves, the 64 x 128 ones still fill the SMs better (4800 x 640 x 5760: 196 against 229 us).
bool khr_square_tiles_win(uint32_t M, uint32_t N, uint32_t sms) {
  return uint64_t{div_up(M, kCoopTileM)} * div_up(N, kCoopTileN) >= 2ull * sms;
}

// The same cap for the 128 x 64 tiles of N = 320 (the level-0 layers, the only ones that take
// them): 256 x 64 tiles on 8 x 2 subgroups of 32 x 32 took the step from 44.36-44.60 to
// 43.96-44.10 ms (19200x320x2880 235 -> 202 us); 128 x 64 on 4 x 2 subgroups of 32 x 32 (256
// invocations, no cap) 45.29-45.43 (bench/NOTES.md session 16, run 10). Measured where the
// 256-row tiles make 2.8 waves or more; fewer rows keep the 128 x 64 tiles.
bool khr_tall_tiles_win(uint32_t M, uint32_t N, uint32_t sms) {
  return uint64_t{div_up(M, 2 * kCoopTileM)} * div_up(N, kSmallTile) >= 2ull * sms;
}

// 96-row tiles: 1,200 rows make 13 of them where 128-row ones make 10, so the level-2 layers
// (1,200 x 1,280: 130 tiles against 100 on 132 SMs) and 2,048 x 640 (110 against 80) fill one
// wave. A 96 x 128 workgroup took 0.88 of a square one's time there (1200x1280x11520: 189.4
// against 215.7 us, bench/NOTES.md session 17, run 7); where the square tiles make many waves
// (the VAE decoder) they lost 10-17%, hence at most kShortTilesMaxWaves waves.
constexpr double kShortTileWaveCost = 0.88;
constexpr uint32_t kShortTileRows = 96, kShortTilesMaxWaves = 3;
bool khr_short_tiles_win(uint32_t M, uint32_t N, uint32_t sms) {
  if (sms == 0 || div_up(M, kShortTileRows) <= div_up(M, kCoopTileM)) return false;
  const uint64_t cols = div_up(N, kCoopTileN);
  auto waves = [&](uint32_t rows) { return static_cast<double>(div_up(div_up(M, rows) * cols, sms)); };
  const double square = waves(kCoopTileM);
  return square <= kShortTilesMaxWaves && waves(kShortTileRows) * kShortTileWaveCost < square;
}

KhrTiling choose_khr_tiling(uint32_t M, uint32_t N, bool conv, uint32_t sms) {
  if (sms == 0 || M < kSmallTileMinM) return KhrTiling::Default;
  if (N <= kCoopTileN) return KhrTiling::Rows64;
  // Waves of `tiles` workgroups, `per_sm` at a time on each SM.
  auto waves = [&](uint64_t tiles, uint64_t per_sm) { return static_cast<double>(div_up(tiles, sms * per_sm)); };
  const double big = waves(uint64_t{div_up(M, kCoopTileM)} * div_up(N, kCoopTileN), 1);
  const double rows64 =
      kSmallWaveCost * waves(uint64_t{div_up(M, kSmallTile)} * div_up(N, kCoopTileN), kSmallTilesPerSm);
  // 64-wide columns only pay where N leaves a half-empty 128-wide column tile (N = 320).
  const double cols64 = N % kCoopTileN == 0
                            ? 1e30
                            : (conv ? kNarrowConvWaveCost : kSmallWaveCost) *
                                  waves(uint64_t{div_up(M, kCoopTileM)} * div_up(N, kSmallTile), kSmallTilesPerSm);
  if (std::min(rows64, cols64) >= kSmallWaveMargin * big) return KhrTiling::Default;
  return rows64 <= cols64 ? KhrTiling::Rows64 : KhrTiling::Cols64;
}

GemmProblem make_gemm_problem(const char* op, const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y,
                              Epilogue act, const Tensor* residual, const std::vector<int64_t>& out) {
  expect_shape(op, "output", y, out);
  if (bias) expect_shape(op, "bias", *bias, {w.dim(0)});
  if (residual) expect_shape(op, "residual", *residual, out);
  GemmProblem p;
  p.x = &x;
  p.w = &w;
  p.bias = bias;
  p.residual = residual;
  p.y = &y;
  p.act = act;
  return p;
}

bool gemm_uses_coopmat(const Kernels& kernels, DType dtype) {
  if (dtype != DType::F16) return false;
  if (kernels.matmul_path() == Path::KhrCoopMat) return kernels.path_available(Path::KhrCoopMat);
  // Path::NvCoopMat2 sends the shapes its kernel does not cover (N <= 16) to the v1 kernel.
  const bool nv = kernels.matmul_path() == Path::NvCoopMat || kernels.matmul_path() == Path::NvCoopMat2;
  return nv && kernels.path_available(Path::NvCoopMat);
}

bool gemm_uses_coopmat2(const Kernels& kernels, DType dtype, uint32_t n) {
  return kernels.matmul_path() == Path::NvCoopMat2 && dtype == DType::F16 && n > kCoopNarrowN &&
         kernels.path_available(Path::NvCoopMat2);
}

bool gemm_uses_tiled_portable(const Kernels& kernels, DType dtype, uint32_t n, bool raw_f32) {
  return !gemm_uses_coopmat2(kernels, dtype, n) && !gemm_uses_coopmat(kernels, dtype) &&
         portable_kernel(kernels, dtype) != PortableGemm::Plain && !raw_f32 && n >= kTiledMinN;
}

bool gemm_groups_weights(const Kernels& kernels, DType dtype, uint32_t n) {
  return !gemm_uses_coopmat2(kernels, dtype, n);
}

uint32_t gemm_group_row_align(const Kernels& kernels, DType dtype, uint32_t n) {
  if (gemm_uses_coopmat(kernels, dtype)) return coopmat_group_row_align(kernels, n);
  if (!gemm_uses_tiled_portable(kernels, dtype, n, false)) return kPortableRows; // one invocation's rows
  // The tile tiled_portable_tile picks; with no rows to count it takes the larger of the two
  // where it chooses per shape, which the smaller one divides.
  return tiled_portable_tile(kernels, portable_kernel(kernels, dtype), kernels.portable_packed_products(), 0, n);
}

bool gemm_normalizes_input(const Kernels& kernels, DType dtype, uint32_t n, uint32_t k) {
  if (!kernels.tuning().gemm_layer_norm || n == 0 || k == 0) return false;
  return gemm_uses_coopmat(kernels, dtype) || !gemm_uses_tiled_portable(kernels, dtype, n, false);
}

uint32_t gemm_row_stats_cols(const Kernels& kernels, DType dtype, uint32_t n) {
  if (!kernels.tuning().gemm_layer_norm || n == 0) return 0;
  if (gemm_uses_coopmat(kernels, dtype)) return n > kCoopNarrowN && n % kCoopRowPartCols == 0 ? kCoopRowPartCols : 0;
  if (gemm_uses_tiled_portable(kernels, dtype, n, false)) return 0;
  return n % kPortableRowPartCols == 0 ? kPortableRowPartCols : 0;
}

bool gemm_fuses_geglu(const Kernels& kernels, DType dtype, uint32_t n) {
  return n > 0 && n % 32 == 0 && !gemm_uses_tiled_portable(kernels, dtype, n, false);
}

bool gemm_sums_fp16_products(const Kernels& kernels, DType dtype, uint32_t n, bool raw_f32) {
  return gemm_uses_tiled_portable(kernels, dtype, n, raw_f32) && kernels.portable_packed_products();
}

std::string describe_route(const Kernels& kernels, DType dtype) {
  if (gemm_uses_coopmat2(kernels, dtype, kCoopNarrowN + 1))
    return "nv-coopmat2, 128 x 128 or 128 x 256 tiles (N <= 16: nv-coopmat 128 x 16)";
  if (!gemm_uses_coopmat(kernels, dtype)) {
    const std::string split =
        kernels.device().info().type == VK_PHYSICAL_DEVICE_TYPE_CPU ? "" : ", split K for few tiles";
    if (portable_kernel(kernels, dtype) != PortableGemm::Plain)
      return std::string(kernels.portable_packed_products()
                             ? "portable tiled, 64 x 64 tiles in shared memory, packed fp16 products"
                             : "portable tiled, 128 x 128 or 64 x 64 tiles in shared memory, fp32 products") +
             " (N < " + std::to_string(kTiledMinN) + ": plain)" + split;
    return "portable plain, " + std::to_string(kPortableRows) + " x " + std::to_string(kPortableCols) +
           " outputs per invocation from global memory" + split;
  }
  const CoopmatShape* s = kernels.khr_gemm_shape();
  if (kernels.matmul_path() != Path::KhrCoopMat || !s)
    return "nv-coopmat 16x16x16, 128 x 128 tiles (N <= 16: 128 x 16)";
  const std::string khr = "khr-coopmat " + shape_name(*s);
  if (*s->suffix) return khr + ", 128 x 128 tiles (N <= 16: 128 x 16)";
  const uint32_t sms = kernels.device().info().compute_units;
  return khr + ", 128 x 128 tiles on 16 subgroups (N <= 16: 128 x 16; 96 x 128 where those leave SMs idle)" +
         (sms ? ", 64 x 128 / 128 x 64 (256 x 64 on 16 subgroups where many) where they fill waves of " +
                    std::to_string(sms) + " SMs better"
              : ", no 64-row tiles (SM count unknown)") +
         ", 128 x 256 for large convs";
}

// The EPI specialization constant of the cooperative-matrix kernel (gemm_coopmat.comp;
// common/gemm_io.glsl): the push block's epilogue flags, whether K is split (raw partial sums)
// and whether N % 8 == 0, so that each pipeline holds only the epilogue its GEMMs use (on an
// H100: 4-37% faster GEMMs, a 7% shorter step; bench/NOTES.md session 14).
constexpr uint32_t kEpiSplitK = 0x10000, kEpiN8 = 0x20000;
uint32_t epilogue_spec(const GemmPush& push, bool split) {
  return push.flags | (split ? kEpiSplitK : 0) | (push.N % 8 == 0 ? kEpiN8 : 0);
}

// The contiguous run along K that a vector load may cover: all of K, or one tap's Cin for a conv.
uint32_t contiguous_k_run(const GemmPush& push, bool conv) { return conv ? push.Cin : push.K; }

// The specialization constants of the tiled GEMM kernels (gemm_coopmat.comp, gemm_tiled.comp):
// VEC8 (16-byte loads along the contiguous run of K), the cooperative-matrix kernel's EPI where
// `epilogue_constant` (the tiled portable kernel has no constant 1: 0 there, so that its GEMMs of
// different epilogues share one pipeline), then the geometry that
// common/gemm_io.glsl's GEMM_GEOM_SPEC may fix per pipeline: K, the split-K range (k_chunk:
// what record_tiles will put in the push block, 0 unsplit), and for convolutions Cin, KW, H, W
// and the upsampling factor. A 0 leaves a field to the push block; which fields are fixed is
// Tuning::gemm_fixed_geometry. Measured on an H100 (bench/NOTES.md session 15, runs 2-3): all but
// the conv input's height and width (taps, the default) as fast as all of them, with 149
// pipelines for the model on the KHR path instead of 174 (58 with none fixed); K alone gave a
// quarter of the gain, the conv taps the rest. Last, constant 9: grouped weights
// (kernels::linear_grouped), so that only the pipelines that run them hold the loader's index.
std::vector<uint32_t> tiled_gemm_spec(const Kernels& kernels, const GemmPush& push, bool conv, uint32_t k_chunk,
                                      bool epilogue_constant) {
  using GF = Tuning::GemmFixedGeometry;
  const GF fixed = kernels.tuning().gemm_fixed_geometry;
  std::vector<uint32_t> spec{contiguous_k_run(push, conv) % 8 == 0 ? 1u : 0u,
                             epilogue_constant ? epilogue_spec(push, k_chunk != 0) : 0u};
  const bool k = fixed != GF::None, taps = conv && (fixed == GF::All || fixed == GF::Taps),
             hw = conv && fixed == GF::All;
  for (uint32_t v : {k ? push.K : 0u, k ? k_chunk : 0u, taps ? push.Cin : 0u, taps ? push.KW : 0u, hw ? push.H : 0u,
                     hw ? push.W : 0u, taps ? push.upsample : 0u, push.w_group_rows != 0 ? 1u : 0u})
    spec.push_back(v);
  return spec;
}

void record_gemm(Kernels& kernels, vk::Recording& rec, const char* op, const GemmProblem& p) {
  const Tensor& x = *p.x;
  const Tensor& w = *p.w;
  const Tensor& y = *p.y;
  expect_same_dtype(op, x, w);
  if (!p.raw_f32) expect_same_dtype(op, x, y);
  if (p.bias) expect_same_dtype(op, x, *p.bias);
  if (p.residual) expect_same_dtype(op, x, *p.residual);
  if (p.ln_colsum) {
    if (p.residual || p.conv || p.raw_f32 || p.geometry.w_group_rows || !p.ln_parts)
      throw internal_error(std::string(op) + ": an input LayerNorm with a residual, conv, raw or grouped GEMM, " +
                           "or without its row statistics");
    if (!gemm_normalizes_input(kernels, x.dtype, p.geometry.N, p.geometry.K))
      throw internal_error(std::string(op) + ": an input LayerNorm where gemm_normalizes_input says no");
    if (p.geometry.ln_part_cols == 0 || p.geometry.K % p.geometry.ln_part_cols != 0)
      throw internal_error(std::string(op) + ": row statistics in parts that do not divide K");
  }
  if (p.row_stats) {
    if (p.conv || p.raw_f32 || p.geglu || p.geometry.w_group_rows)
      throw internal_error(std::string(op) + ": row statistics of a conv, raw, GEGLU or grouped GEMM");
    if (gemm_row_stats_cols(kernels, x.dtype, p.geometry.N) == 0)
      throw internal_error(std::string(op) + ": row statistics where gemm_row_stats_cols says none");
    for (const Tensor* in : {&x, &w, p.bias, p.residual, p.ln_colsum, p.ln_parts, &y})
      if (in && same_buffer(*p.row_stats, in))
        throw invalid_argument(std::string(op) + ": row statistics " + p.row_stats->describe() + " alias " +
                               in->describe());
  }
  for (const Tensor* in : {&x, &w, p.bias, p.residual, p.ln_colsum, p.ln_parts})
    if (in && same_buffer(y, in))
      throw invalid_argument(std::string(op) + ": output " + y.describe() + " aliases input " + in->describe());
  // Shaders index with 32-bit (conv offsets: signed) integers.
  for (const Tensor* t : {&x, &w, &y})
    if (t->numel() >= (int64_t{1} << 31))
      throw unsupported(std::string(op) + ": " + t->describe() + " has 2^31 or more elements");

  GemmPush push = p.geometry;
  if (push.M == 0 || push.N == 0) return;
  push.flags = (p.bias ? kFlagBias : 0) | (p.residual ? kFlagResidual : 0) | (p.ln_colsum ? kFlagLayerNorm : 0) |
               (p.row_stats ? kFlagRowStats : 0) | ((p.geglu ? kActGeglu : static_cast<uint32_t>(p.act)) << kActShift);
  const uint32_t run = contiguous_k_run(push, p.conv);
  // A GEMM splits K only where its epilogue can wait for the reduce: not GEGLU's column pairs,
  // nor the LayerNorm (its rows' statistics meet the products in the epilogue), nor the row
  // statistics of the output (the reduce kernel writes none).
  const bool whole_k_only = p.geglu || p.ln_colsum || p.row_stats;

  // Binding 3: the residual, or the LayerNorm's column sums (common/gemm_io.glsl); binding 5 (the
  // plain and cooperative-matrix kernels' only, with_row_stats below): the row statistics written
  // (GEMM_ROW_STATS) or read (GEMM_LN_INPUT).
  const Tensor* third = p.ln_colsum ? p.ln_colsum : p.residual;
  std::vector<vk::Binding> bindings{vk::in(x.buf()), vk::in(w.buf()), vk::in(p.bias ? p.bias->buf() : x.buf()),
                                    vk::in(third ? third->buf() : x.buf()), vk::out(y.buf())};
  const auto with_row_stats = [&] {
    std::vector<vk::Binding> b = bindings;
    b.push_back(p.row_stats ? vk::out(p.row_stats->buf()) : vk::in(p.ln_parts ? p.ln_parts->buf() : x.buf()));
    return b;
  };
  std::string base = p.conv ? "gemm_conv" : "gemm";
  uint32_t gy = 0, gz = 0;
  // The profile label's detail: the problem and its epilogue ("19200x320x1280+bias+res").
  const std::string shape = std::to_string(push.M) + "x" + std::to_string(push.N) + "x" + std::to_string(push.K) +
                            (push.w_group_rows ? "x" + std::to_string(push.M / push.w_group_rows) + "g" : "") +
                            (p.ln_colsum ? "+ln" : "") + (p.bias ? "+bias" : "") + (p.residual ? "+res" : "") +
                            (p.row_stats ? "+stats" : "") +
                            (p.geglu                   ? "+geglu"
                             : p.act == Epilogue::Gelu ? "+gelu"
                             : p.act == Epilogue::Silu ? "+silu"
                                                       : "");

  if (p.raw_f32) {
    if (gemm_uses_coopmat(kernels, x.dtype)) {
      // The cooperative-matrix kernel's split-K mode with one K range writes the raw fp32 sums.
      const CoopmatApi cm = coopmat_api(kernels);
      const bool narrow = push.N <= kCoopNarrowN;
      const uint32_t tn = narrow ? kCoopNarrowN : kCoopTileN;
      const uint32_t row_tiles = div_up(push.M, kCoopTileM);
      if (row_tiles > g_max_groups) throw unsupported(std::string(op) + ": " + x.describe() + " has too many rows");
      push.k_chunk = split_k_chunk(push.K, 1);
      push.m_groups_y = row_tiles;
      const vk::Pipeline& pipe = kernels.pipeline(
          composed_variant(base + cm.api + (narrow ? "_narrow" : "") + cm.shape, x.dtype), kGemmBindingsWithRowStats,
          sizeof push, tiled_gemm_spec(kernels, push, p.conv, push.k_chunk, true), cm.subgroup);
      rec.dispatch(pipe, with_row_stats(), &push, sizeof push, div_up(push.N, tn), row_tiles, 1, shape + "+f32");
      return;
    }
    if (x.dtype == DType::F16) base += "_out32"; // fp32 y from fp16 inputs (f32 inputs: plain)
  }

  // GEGLU and the LayerNorm's statistics (read or written) take the v1/KHR kernel where the
  // context would use coopmat2: the latter's epilogue works on whole accumulator matrices, which
  // cannot pair columns or reach rows across lanes.
  if (!p.geglu && !p.ln_colsum && !p.row_stats && gemm_uses_coopmat2(kernels, x.dtype, push.N)) {
    // Tuning::gemm_cm2_tile_n (Z123_GEMM_CM2_TILE_N=128|256) pins the tile width (benchmarks
    // compare the two).
    const uint32_t forced = kernels.tuning().gemm_cm2_tile_n;
    const bool wide = forced ? forced == kCm2WideTileN
                             : uint64_t{div_up(push.M, kCm2TileM)} * div_up(push.N, kCm2WideTileN) >= kCm2WideMinGroups;
    const uint32_t tile_n = wide ? kCm2WideTileN : kCm2TileN;
    const vk::Pipeline& pipe =
        kernels.pipeline(composed_variant(base + (wide ? "_nvcm2_l" : "_nvcm2"), x.dtype), kGemmBindings, sizeof push,
                         {run % 8 == 0 ? 1u : 0u}, coopmat_subgroup_size(kernels.device()));
    split_rows(div_up(push.M, kCm2TileM), gy, gz);
    push.m_groups_y = gy;
    rec.dispatch(pipe, bindings, &push, sizeof push, div_up(push.N, tile_n), gy, gz, shape);
    return;
  }

  if (gemm_uses_coopmat(kernels, x.dtype)) {
    // One kernel source, built per extension: gemm*_nv* (NV) and gemm*_khr* (KHR), the latter
    // per fragment shape. The 4-subgroup and wide tilings exist for the default shape only.
    const CoopmatApi cm = coopmat_api(kernels);
    const bool tilings = khr_tilings_apply(kernels);
    bool narrow = push.N <= kCoopNarrowN;
    CoopTile tile = narrow ? CoopTile{"_narrow", kCoopTileM, kCoopNarrowN} : CoopTile{"", kCoopTileM, kCoopTileN};
    // The 4-subgroup tilings where they fill whole waves of SMs better (choose_khr_tiling, above).
    // Otherwise large convolutions (1,000+ workgroups even with 128 x 256 tiles) take 128 x 256
    // tiles on KHR: measured on an H200 (bench/NOTES.md), 614,400x128x1,152 2.83 vs 4.86 ms with
    // 128 x 128; the UNet's convs (150-300 workgroups) and linear layers measured noisy or worse
    // with them (a whole step 95 vs 74 ms when all convs took them).
    const uint32_t sms = kernels.device().info().compute_units;
    const bool whole_k =
        whole_k_only || split_k_count(kernels, uint64_t{div_up(push.M, tile.m)} * div_up(push.N, tile.n), push.K) == 1;
    const KhrTiling small =
        tilings && !narrow && whole_k ? choose_khr_tiling(push.M, push.N, p.conv, sms) : KhrTiling::Default;
    if (small == KhrTiling::Rows64)
      tile = kKhrRows64;
    else if (small == KhrTiling::Cols64)
      tile = kKhrCols64;
    else if (tilings && !narrow && p.conv &&
             uint64_t{div_up(push.M, kKhrWide.m)} * div_up(push.N, kKhrWide.n) >= kCoopWideMinGroups)
      tile = kKhrWide;
    // The 128 x 128 tile runs on 16 subgroups of 32 x 32 (khr_square_tiles_win), and so do the
    // 128 x 64 ones' columns in 256-row tiles where those make two or more waves (khr_tall_tiles_win).
    if (tilings && !narrow &&
        (tile.suffix.empty() || (small == KhrTiling::Rows64 && khr_square_tiles_win(push.M, push.N, sms))))
      tile = kKhrSixteen;
    if (tilings && small == KhrTiling::Cols64 && khr_tall_tiles_win(push.M, push.N, sms)) tile = kKhrTall;
    // And 96-row tiles where the square ones leave a wave's SMs idle (khr_short_tiles_win); a split
    // K has its own count of tiles and waves.
    if (tile.suffix == kKhrSixteen.suffix && whole_k && khr_short_tiles_win(push.M, push.N, sms)) tile = kKhrShort;
    if (tilings && !narrow) tile = khr_tile_override(kernels, tile);
    // Grouped weights: a row tile must lie in one group (coopmat_group_row_align).
    if (push.w_group_rows != 0 && push.w_group_rows % tile.m != 0) {
      if (!tilings || narrow || push.w_group_rows % kKhrRows64.m != 0)
        throw internal_error(std::string(op) + ": groups of " + std::to_string(push.w_group_rows) + " rows for " +
                             std::to_string(tile.m) + "-row tiles");
      tile = kKhrRows64;
    }
    const uint32_t row_tiles = div_up(push.M, tile.m), col_tiles = div_up(push.N, tile.n);
    const bool default_tiles = tile.m == kCoopTileM && tile.n == kCoopTileN;
    const uint32_t splits =
        whole_k_only ? 1 : coopmat_split_k_count(kernels, uint64_t{row_tiles} * col_tiles, push.K, default_tiles);
    const uint32_t k_chunk = splits_k(splits, row_tiles) ? split_k_chunk(push.K, splits) : 0;
    const vk::Pipeline& pipe =
        kernels.pipeline(composed_variant(base + cm.api + tile.suffix + cm.shape, x.dtype), kGemmBindingsWithRowStats,
                         sizeof push, tiled_gemm_spec(kernels, push, p.conv, k_chunk, true), cm.subgroup);
    record_tiles(kernels, rec, pipe, with_row_stats(), push, row_tiles, col_tiles, splits, x.dtype, shape);
    return;
  }

  // Tiled portable kernel (gemm_tiled.comp) for fp16 on GPUs (portable_kernel above): shared-
  // memory tiles where the plain kernel reads every operand from global memory itself.
  if (gemm_uses_tiled_portable(kernels, x.dtype, push.N, p.raw_f32)) {
    const bool packed = kernels.portable_packed_products();
    const uint32_t tile = tiled_portable_tile(kernels, portable_kernel(kernels, x.dtype), packed, push.M, push.N);
    // Its epilogue stays in the push block: fixed per pipeline (as the cooperative-matrix
    // kernel's), the forced-portable H100 step went from 221 to 231 ms (bench/NOTES.md session 14).
    // Its geometry is fixed as the other's (tiled_gemm_spec): 221 -> 214 ms (session 15).
    const uint32_t row_tiles = div_up(push.M, tile), col_tiles = div_up(push.N, tile);
    const uint32_t splits = split_k_count(kernels, uint64_t{row_tiles} * col_tiles, push.K);
    const uint32_t k_chunk = splits_k(splits, row_tiles) ? split_k_chunk(push.K, splits) : 0;
    const vk::Pipeline& pipe = kernels.pipeline(tiled_portable_variant(base, tile, packed), kGemmBindings, sizeof push,
                                                tiled_gemm_spec(kernels, push, p.conv, k_chunk, false));
    record_tiles(kernels, rec, pipe, bindings, push, row_tiles, col_tiles, splits, x.dtype, shape);
    return;
  }

  // Portable: 8 x 8 invocations of 8 x 8 blocks (a 64 x 64 tile) in general. Narrow outputs
  // (conv_out to RGB, latent and quant convs) get one column of 64 invocations instead, with
  // 4 x 4 blocks when N <= 4, so most of each workgroup is not padding. Few shapes on purpose:
  // each is a pipeline that lavapipe compiles for about 0.3 s in every cold CI run.
  bool narrow = push.N <= kNarrowBlock && !(p.raw_f32 && x.dtype == DType::F16); // no narrow fp32-output variant
  uint32_t rows = narrow ? kNarrowBlock : kPortableRows, cols = narrow ? kNarrowBlock : kPortableCols;
  uint32_t wg_n = push.N <= cols ? 1 : 8;
  uint32_t wg_m = kPortableInvocations / wg_n;
  const vk::Pipeline& pipe = kernels.pipeline(plain_portable_variant(base, narrow, x.dtype), kGemmBindingsWithRowStats,
                                              sizeof push, {wg_n, wg_m, run % 4 == 0 ? 1u : 0u});
  const uint32_t row_tiles = div_up(push.M, wg_m * rows), col_tiles = div_up(push.N, wg_n * cols);
  // Raw fp32 output (matmul_f32) has no epilogue to defer, and keeps one K range.
  const uint32_t splits =
      p.raw_f32 || whole_k_only ? 1 : portable_split_k_count(kernels, uint64_t{row_tiles} * col_tiles, push.K);
  record_tiles(kernels, rec, pipe, with_row_stats(), push, row_tiles, col_tiles, splits, x.dtype, shape);
}

} // namespace z123::kernels::detail
