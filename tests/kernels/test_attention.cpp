// kernels::attention() against the float64 reference (reference_attention.hpp), on both paths:
// plain, second K/V source, fused-QKV windows, causal, head sizes 64/80/512, cross-attention
// key count 77, batch 1 and 2, both dtypes, large-magnitude scores, and argument errors.
// Sizes are small and deliberately not tile multiples (lavapipe is slow); every output element
// is checked after poisoning.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/composed_names.hpp"
#include "reference_attention.hpp"
#include "support/check.hpp"
#include "support/vk_env.hpp"
#include "vk/shader_table.hpp"
#include "z123/error.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/vk/recording.hpp"

using namespace z123;
using kernels::AttnOperand;
using kernels::Path;

namespace {

struct Case {
  DType dtype = DType::F32;
  int64_t batch = 2, heads = 3, head_dim = 64, nq = 37, nk = 53, nk2 = 0;
  bool causal = false;
  float scale = 0;     // 0: kernel default 1/sqrt(D)
  float magnitude = 1; // inputs uniform in [-magnitude, magnitude)
  // > 0 (separate q/k/v only): key j's row of K scaled by key_ramp (j + 1) / nk, so that the rows'
  // maxima grow over the key tiles (the coopmat kernel's lazy rescaling, attention_coopmat.glsl).
  double key_ramp = 0;
  bool fused = false; // q/k/v are windows of one [B, N, 3HD+lead] tensor (needs nq == nk), k2/v2 of one [B, Nk2, 2HD]
  int64_t lead = 8;   // fused: elements before the Q window (a multiple of 8: the widest loads)
  // k2/v2 tensors with this many batch rows before the attention's (AttnOperand::first_batch) and
  // one after, as the UNet's main pass reads one step's rows of a reference pass made for two.
  int64_t kv2_rows_before = 0;
  Path path = Path::Portable;

  std::string describe() const {
    return std::string(dtype_name(dtype)) + " B" + std::to_string(batch) + " H" + std::to_string(heads) + " D" +
           std::to_string(head_dim) + " Nq" + std::to_string(nq) + " Nk" + std::to_string(nk) + "+" +
           std::to_string(nk2) + (causal ? " causal" : "") + (fused ? " fused+" + std::to_string(lead) : "") +
           (kv2_rows_before ? " kv2 from row " + std::to_string(kv2_rows_before) : "") + " x" +
           std::to_string(magnitude) + (key_ramp > 0 ? " key ramp " + std::to_string(key_ramp) : "") + " " +
           kernels::path_name(path);
  }
};

// One host tensor with its device twin; data holds what the device holds (fp16-rounded for F16).
struct HostTensor {
  Tensor t;
  std::vector<float> data;
};

HostTensor make_input(vk::Device& dev, const Case& c, std::vector<int64_t> shape, uint64_t seed, const char* name) {
  HostTensor h;
  h.t = make_tensor(dev, c.dtype, std::move(shape), name);
  h.data =
      test::as_stored(test::random_uniform(static_cast<size_t>(h.t.numel()), seed, -c.magnitude, c.magnitude), c.dtype);
  upload(dev, h.t, h.data);
  return h;
}

// Tolerances (|got - ref| <= atol + rtol |ref|), all relative to the value magnitude, since every
// output is a convex combination of V rows:
//  * score error: fp32 dot products of D terms of size ~magnitude², so an absolute error of
//    ~1e-7 · D · magnitude² · scale in the exponent, i.e. that relative error on each weight;
//    4e-7 · magnitude² covers D <= 512 with 4x margin (the scale shrinks the sum by 1/sqrt(D));
//  * fp16 storage: one output rounding, 2^-11 relative (rtol 1e-3 gives 2x margin);
//  * coopmat: the softmax weights enter P·V as fp16 (2^-11 relative each), so up to 2^-11 of the
//    value magnitude in absolute terms (atol 1e-3 · magnitude: 2x margin);
//  * the tiled kernel's packed P·V: the same fp16 weights, and P·V summed in fp16 over 16 keys
//    (two such sums added in fp16 for runs of 32, ATTN_PV_PAIRED; shaders/variants/attention.cmake):
//    17 roundings at most, the fp16 summation bound gamma_17 = 17 · 2^-11 / (1 - 17 · 2^-11) of
//    sum |p v| <= sum p · magnitude, so at most gamma_17 · magnitude once divided by the row sum
//    (one sum of 32, the pv32 trial: gamma_33). That worst case is loose, so the overall
//    relative L2 error is capped too (kPackedPvMaxRelL2).
struct Tolerance {
  double atol, rtol;
};
Tolerance tolerance(const Case& c, bool packed_pv, int pv_run = 16) {
  const double mag = c.magnitude, key_mag = mag * std::max(1.0, c.key_ramp); // V's and K's magnitudes
  double atol = mag * (1e-5 + 4e-7 * mag * key_mag * std::sqrt(static_cast<double>(c.head_dim)));
  double rtol = c.dtype == DType::F16 ? 1e-3 : 1e-5;
  if (c.path == Path::NvCoopMat || c.path == Path::KhrCoopMat || c.path == Path::NvCoopMat2 || packed_pv)
    atol += 1e-3 * mag;
  if (packed_pv) {
    const double n = pv_run + 1; // gamma_17 at the default runs of 16 keys
    atol += n / 2048 / (1 - n / 2048) * mag;
  }
  return {atol, rtol};
}
// Packed P·V gave relative L2 errors up to 7e-4 on these tests' shapes on lavapipe (fp32 P·V:
// up to 2.1e-4); a key left out of a 16-key run shifts an output by about its weight, 1/Nk of the
// value magnitude, far above the cap.
constexpr double kPackedPvMaxRelL2 = 3e-3;

class Attention : public test::VkTest {
protected:
  void SetUp() override {
    test::VkTest::SetUp();
    tuning_ = device().tuning();
  }
  // The knobs check() runs with: the device's, with what a test pins.
  Tuning tuning_;

  // c made causal (self-attention of its queries), and c with scores up to ~512 in log units.
  void check_causal_and_large(const Case& c) {
    Case causal = c;
    causal.nk = causal.nq;
    causal.nk2 = 0;
    causal.causal = true;
    check(causal);
    Case big = c;
    big.magnitude = 8;
    check(big);
  }

  // Runs one case on c.path and compares every element with the reference.
  void check(const Case& c) {
    SCOPED_TRACE(c.describe());
    const uint64_t seed = test::test_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    kernels::Kernels kern(device(), tuning_);
    kern.set_attention_path(c.path);
    const int64_t hd = c.heads * c.head_dim;

    std::vector<HostTensor> inputs;
    inputs.reserve(5);
    AttnOperand q, k, v, k2, v2;
    test::RefAttnOperand rq, rk, rv, rk2, rv2;
    if (c.fused) {
      // [B, N, lead | Q | K | V]: stride from the tensor (row_stride 0), windows at lead, HD+lead, 2HD+lead.
      EXPECT_EQ(c.nq, c.nk);
      const int64_t w = 3 * hd + c.lead;
      inputs.push_back(make_input(device(), c, {c.batch, c.nq, w}, seed, "qkv"));
      const HostTensor& f = inputs.back();
      q = {&f.t, 0, c.lead};
      k = {&f.t, 0, hd + c.lead};
      v = {&f.t, 0, 2 * hd + c.lead};
      rq = {&f.data, c.nq, w, c.lead};
      rk = {&f.data, c.nk, w, hd + c.lead};
      rv = {&f.data, c.nk, w, 2 * hd + c.lead};
      if (c.nk2 > 0) {
        const int64_t rows = c.kv2_rows_before ? c.kv2_rows_before + c.batch + 1 : c.batch;
        inputs.push_back(make_input(device(), c, {rows, c.nk2, 2 * hd}, seed + 1, "kv2"));
        const HostTensor& g = inputs.back();
        const int64_t skip = c.kv2_rows_before * c.nk2 * 2 * hd; // elements before the attention's rows
        k2 = {&g.t, 2 * hd, 0, c.kv2_rows_before};
        v2 = {&g.t, 2 * hd, hd, c.kv2_rows_before};
        rk2 = {&g.data, c.nk2, 2 * hd, skip};
        rv2 = {&g.data, c.nk2, 2 * hd, skip + hd};
      }
    } else {
      inputs.push_back(make_input(device(), c, {c.batch, c.nq, hd}, seed, "q"));
      inputs.push_back(make_input(device(), c, {c.batch, c.nk, hd}, seed + 1, "k"));
      if (c.key_ramp > 0) {
        HostTensor& kt = inputs.back();
        for (size_t e = 0; e < kt.data.size(); ++e)
          kt.data[e] *= static_cast<float>(c.key_ramp * static_cast<double>(e / hd % c.nk + 1) / c.nk);
        kt.data = test::as_stored(kt.data, c.dtype);
        upload(device(), kt.t, kt.data);
      }
      inputs.push_back(make_input(device(), c, {c.batch, c.nk, hd}, seed + 2, "v"));
      q = {&inputs[0].t};
      k = {&inputs[1].t};
      v = {&inputs[2].t};
      rq = {&inputs[0].data, c.nq, hd, 0};
      rk = {&inputs[1].data, c.nk, hd, 0};
      rv = {&inputs[2].data, c.nk, hd, 0};
      if (c.nk2 > 0) {
        inputs.push_back(make_input(device(), c, {c.batch, c.nk2, hd}, seed + 3, "k2"));
        inputs.push_back(make_input(device(), c, {c.batch, c.nk2, hd}, seed + 4, "v2"));
        k2 = {&inputs[3].t};
        v2 = {&inputs[4].t};
        rk2 = {&inputs[3].data, c.nk2, hd, 0};
        rv2 = {&inputs[4].data, c.nk2, hd, 0};
      }
    }

    // A cooperative-matrix case runs a cooperative-matrix kernel (nvcm/khrcm), not a fallback.
    if ((c.path == Path::NvCoopMat || c.path == Path::KhrCoopMat) && c.dtype == DType::F16 &&
        kernels::attention_coopmat_supports(c.head_dim)) {
      const std::string shader =
          kernels::choose_attention_kernel(kern, c.dtype, c.head_dim, c.causal, true, c.nq, c.heads * c.batch).shader;
      EXPECT_NE(shader.find("cm"), std::string::npos) << shader;
    }
    Tensor out = make_tensor(device(), c.dtype, {c.batch, c.nq, hd}, "out");
    test::poison(device(), out);
    vk::Recording rec(device());
    kernels::attention(kern, rec, q, k, v, out, {c.heads, c.head_dim, c.scale, c.causal}, k2, v2);
    rec.finish();
    device().run(rec);

    const double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(c.head_dim));
    std::vector<double> ref =
        test::reference_attention(c.batch, c.heads, c.head_dim, scale, c.causal, rq, rk, rv, rk2, rv2);
    // The tiled portable kernel multiplies P·V as packed fp16 where the engine's rule says so.
    const bool packed_pv = c.path == Path::Portable && kernels::portable_attention_packed_pv(kern, c.head_dim, c.dtype);
    const bool run32 = tuning_.attn_tiled_trial == "pv32"; // fp16 sums of 32 keys (the default: of 16)
    const Tolerance tol = tolerance(c, packed_pv, run32 ? 32 : 16);
    const std::vector<float> got = download(device(), out);
    EXPECT_TRUE(test::all_close(got, ref, tol.atol, tol.rtol));
    if (packed_pv) {
      const test::ErrorReport rep = test::compare(got, ref);
      EXPECT_LE(rep.rel_l2, kPackedPvMaxRelL2) << rep.summary();
    }
  }

  // The NV cooperative-matrix path runs where the device and the build have it (not lavapipe).
  bool coopmat_available() {
    kernels::Kernels kern(device());
    return kern.path_available(Path::NvCoopMat);
  }
};

Case with(Case c, DType dt, Path path = Path::Portable) {
  c.dtype = dt;
  c.path = path;
  return c;
}

// Expects fn() to throw an Error of this kind; `what` names the case in a failure.
template <typename Fn>
void expect_kind(ErrorKind kind, Fn&& fn, const char* what) {
  try {
    fn();
    ADD_FAILURE() << what << ": no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << what << ": " << e.what();
  }
}

const DType kDtypes[] = {DType::F32, DType::F16};

} // namespace

// ---- portable path ----

TEST_F(Attention, Plain) {
  for (DType dt : kDtypes) check(with(Case{}, dt));
}

TEST_F(Attention, SecondKeyValueSource) {
  Case c;
  c.nk2 = 19;
  for (DType dt : kDtypes) check(with(c, dt));
}

TEST_F(Attention, FusedQkvWindows) {
  // Self-attention from one fused projection; reference K/V from a fused [K2 | V2] tensor.
  Case c;
  c.nq = c.nk = 45;
  c.nk2 = 21;
  c.fused = true;
  for (DType dt : kDtypes) check(with(c, dt));
  // Windows at offsets 4 mod 8: the tiled portable kernel's fp16 K and V reads of 8 elements
  // fall back to two of 4.
  c.lead = 4;
  for (DType dt : kDtypes) check(with(c, dt));
  // Windows at odd offsets: the kernels that read 4 elements at a time (the tiled portable one)
  // fall back to element-wise loads.
  c.lead = 3;
  for (DType dt : kDtypes) check(with(c, dt));
}

TEST_F(Attention, SecondSourceFromLaterBatchRows) {
  // The reference keys/values of one step in a tensor that holds two steps' (and one row more).
  Case c;
  c.nq = c.nk = 45;
  c.nk2 = 21;
  c.fused = true;
  for (int64_t before : {1, 2}) {
    c.kv2_rows_before = before;
    for (DType dt : kDtypes) check(with(c, dt));
  }
}

TEST_F(Attention, CausalClipText) {
  // CLIP text: 77 tokens, head size 64, causal (2 heads instead of 16 to keep lavapipe fast).
  Case c;
  c.heads = 2;
  c.nq = c.nk = 77;
  c.causal = true;
  for (DType dt : kDtypes) {
    check(with(c, dt));
    Case single = c;
    single.batch = 1;
    single.fused = true;
    check(with(single, dt));
  }
}

TEST_F(Attention, HeadDim80ClipVision) {
  // CLIP vision: 257 tokens, head size 80 (4 of the 16 heads), batch 1.
  Case c;
  c.batch = 1;
  c.heads = 4;
  c.head_dim = 80;
  c.nq = c.nk = 257;
  for (DType dt : kDtypes) check(with(c, dt));
}

TEST_F(Attention, HeadDim512SingleHead) {
  // VAE mid attention: one 512-wide head (few tokens), with a second source to cross its tiles.
  Case c;
  c.heads = 1;
  c.head_dim = 512;
  c.nq = 21;
  c.nk = 18;
  c.nk2 = 7;
  for (DType dt : kDtypes) check(with(c, dt));
  Case self = c;
  self.batch = 1;
  self.nq = self.nk = 40;
  self.nk2 = 0;
  self.fused = true;
  check(with(self, DType::F16));
}

TEST_F(Attention, SmallHeadDimsOfTinyConfigs) {
  // Head sizes 16 and 32 of the tiny test models (tests/data/golden/tiny-model).
  for (int64_t d : {16, 32}) {
    Case c;
    c.heads = 2;
    c.head_dim = d;
    c.nk2 = 9;
    for (DType dt : kDtypes) check(with(c, dt));
  }
}

TEST_F(Attention, CrossAttention77Keys) {
  Case c;
  c.heads = 2;
  c.nq = 70;
  c.nk = 77;
  c.scale = 0.3f; // an explicit scale, not 1/sqrt(D)
  for (DType dt : kDtypes) check(with(c, dt));
}

TEST_F(Attention, MultipleQueryBlocksAndTinyShapes) {
  Case c;
  c.batch = 1;
  c.heads = 1;
  c.nq = 130; // three portable query blocks
  c.nk = 70;
  check(with(c, DType::F16));
  c.nq = 1;
  c.nk = 1;
  c.batch = 2;
  for (DType dt : kDtypes) check(with(c, dt));
}

TEST_F(Attention, LargeScoresStayStable) {
  // Inputs x8 give scores up to ~|64 · 64 / 8| = 512 (natural-log units): exp would overflow
  // fp32 without the running max.
  Case c;
  c.magnitude = 8;
  c.nk2 = 11;
  for (DType dt : kDtypes) check(with(c, dt));
  Case big = c;
  big.heads = 1;
  big.head_dim = 512;
  big.nq = 9;
  big.nk = 12;
  check(with(big, DType::F32));
  // A scale past ~1.1 turns the masked scores into -inf in the log2 domain: masked keys must still
  // weigh 0 (causal, head sizes of both row-maxima routes on lavapipe's 8-wide subgroups).
  for (int64_t d : {32, 64}) {
    Case steep;
    steep.head_dim = d;
    steep.causal = true;
    steep.nq = steep.nk = 70;
    steep.scale = 2.0f;
    for (DType dt : kDtypes) check(with(steep, dt));
  }
}

TEST_F(Attention, BothTiledWorkgroupSizes) {
  // The tiled kernel in both sizes (Z123_ATTN_TILED_INVOCATIONS), where the device has the shared
  // memory: several query blocks, several key tiles of both sources and a partial last one, so the
  // next-tile prefetch runs across the K/K2 boundary and past the end.
  Case c;
  c.heads = 2;
  c.nq = 200;
  c.nk = 150;
  c.nk2 = 45;
  int ran = 0;
  for (uint32_t nt : {128u, 256u}) {
    if (nt == 256 && device().info().max_shared_memory < kernels::kTiledAttention256SharedBytes) continue;
    SCOPED_TRACE(std::to_string(nt) + " invocations");
    tuning_.attn_tiled_invocations = nt;
    for (DType dt : kDtypes) check(with(c, dt));
    ++ran;
    Case causal = c;
    causal.causal = true;
    causal.nk = causal.nq;
    causal.nk2 = 0;
    for (DType dt : kDtypes) check(with(causal, dt));
  }
  EXPECT_GE(ran, 1);
  tuning_.attn_tiled_invocations = 256;
  if (device().info().max_shared_memory < kernels::kTiledAttention256SharedBytes) {
    kernels::Kernels kern(device(), tuning_);
    try {
      kernels::choose_attention_kernel(kern, DType::F16, 64, false, true);
      ADD_FAILURE() << "256 invocations chosen without the shared memory for them";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
      EXPECT_NE(std::string(e.what()).find("Z123_ATTN_TILED_INVOCATIONS=256"), std::string::npos) << e.what();
    }
  }
}

// The tiled kernel's P·V both ways (Z123_PORTABLE_ARITH): packed fp16 products and fp32 ones,
// head sizes 16, 32 and 64, two key sources with a partial last tile, causal, large scores.
TEST_F(Attention, TiledPackedAndFp32Products) {
  Case c;
  c.dtype = DType::F16;
  c.nq = 150;
  c.nk = 90;
  c.nk2 = 45;
  for (Tuning::PortableArith arith : {Tuning::PortableArith::Packed, Tuning::PortableArith::Fp32}) {
    SCOPED_TRACE(arith == Tuning::PortableArith::Packed ? "packed P·V" : "fp32 P·V");
    tuning_.portable_arith = arith;
    for (int64_t d : {16, 32, 64}) {
      Case cd = c;
      cd.head_dim = d;
      check(cd);
    }
    check_causal_and_large(c);
  }
}

// The tiled kernel's bench-only trials (Z123_ATTN_TILED_TRIAL), each a candidate for the default:
// the same cases as the default kernel's tests at head size 64, against the same reference and
// tolerances (runs of 32 keys: gamma_33), with operands aligned to 8 elements (the 8-half loads)
// and to 4 only (their fallback).
TEST_F(Attention, TiledTrialsMatchReference) {
  tuning_.portable_arith = Tuning::PortableArith::Packed;
  Case c;
  c.dtype = DType::F16;
  c.nq = 150;
  c.nk = 90;
  c.nk2 = 45;
  {
    kernels::Kernels kern(device(), tuning_);
    kern.set_attention_path(Path::Portable);
    const std::string full =
        kernels::choose_attention_kernel(kern, c.dtype, c.head_dim, false, true, c.nq, c.heads * c.batch).shader;
    if (!vk::find_shader(kernels::detail::ablated_attention_variant(full, 1)))
      GTEST_SKIP() << "the trials are bench-only; configure with -DZ123_BENCH_VARIANTS=ON to test them";
  }
  for (const std::string& trial : kernels::tiled_attention_trials()) {
    SCOPED_TRACE("trial " + trial);
    tuning_.attn_tiled_trial = trial;
    kernels::Kernels kern(device(), tuning_);
    kern.set_attention_path(Path::Portable);
    const std::string shader =
        kernels::choose_attention_kernel(kern, c.dtype, c.head_dim, false, true, c.nq, c.heads * c.batch).shader;
    EXPECT_NE(shader.find("_pv16_" + trial + "_"), std::string::npos) << shader;
    // A bench build embeds every trial that kernels::tiled_attention_trials names.
    ASSERT_TRUE(vk::find_shader(shader)) << shader << " is missing from Z123_ATTN_TILED_TRIALS";
    check(c);
    check_causal_and_large(c);
    Case fused = c; // rows of 3 x 128 + 4: K and V windows at offsets 4 mod 8
    fused.nk = fused.nq;
    fused.fused = true;
    fused.lead = 4;
    check(fused);
  }
}

// The tiled kernel's bench-only ablations (zero123pp-bench-attn-ceiling): each one runs under the
// validation layer, writes every output, and changes it (a mode its variant compiled out would
// not), and a route without them is refused before anything is recorded.
TEST_F(Attention, TiledAblationsRunAndChangeTheOutput) {
  tuning_.portable_arith = Tuning::PortableArith::Packed;
  kernels::Kernels kern(device(), tuning_);
  kern.set_attention_path(Path::Portable);
  Case c;
  c.dtype = DType::F16;
  c.nq = 150;
  c.nk = 90;
  c.nk2 = 45;
  const std::string full_shader =
      kernels::choose_attention_kernel(kern, c.dtype, c.head_dim, false, true, c.nq, c.heads * c.batch).shader;
  const std::string first = kernels::detail::ablated_attention_variant(full_shader, 1);
  if (!vk::find_shader(first))
    GTEST_SKIP() << first << " is bench-only; configure with -DZ123_BENCH_VARIANTS=ON to test it";
  const uint64_t seed = test::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int64_t hd = c.heads * c.head_dim;
  HostTensor q = make_input(device(), c, {c.batch, c.nq, hd}, seed, "q");
  HostTensor k = make_input(device(), c, {c.batch, c.nk, hd}, seed + 1, "k");
  HostTensor v = make_input(device(), c, {c.batch, c.nk, hd}, seed + 2, "v");
  HostTensor k2 = make_input(device(), c, {c.batch, c.nk2, hd}, seed + 3, "k2");
  HostTensor v2 = make_input(device(), c, {c.batch, c.nk2, hd}, seed + 4, "v2");
  const kernels::AttentionParams p{c.heads, c.head_dim, 0.0f, false};
  auto run = [&](int ablation) {
    Tensor out = make_tensor(device(), c.dtype, {c.batch, c.nq, hd}, "out");
    test::poison(device(), out);
    vk::Recording rec(device());
    if (ablation == 0)
      kernels::attention(kern, rec, {&q.t}, {&k.t}, {&v.t}, out, p, {&k2.t}, {&v2.t});
    else
      kernels::detail::attention_ablated(kern, rec, {&q.t}, {&k.t}, {&v.t}, out, p, {&k2.t}, {&v2.t}, ablation);
    rec.finish();
    device().run(rec);
    return download(device(), out);
  };
  const std::vector<float> full = run(0);
  for (int mode = 1; mode <= kernels::detail::kAttentionAblations; ++mode) {
    SCOPED_TRACE("ablation " + std::to_string(mode));
    const std::vector<float> got = run(mode);
    size_t poisoned = 0, changed = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] == test::kPoisonValue) ++poisoned;
      if (!(std::fabs(got[i] - full[i]) <= 1e-3f)) ++changed;
    }
    EXPECT_EQ(poisoned, 0u);
    EXPECT_GT(changed, got.size() / 2) << "of " << got.size() << " outputs";
  }
  // fp32 storage takes the tiled kernel without packed P·V, which has no ablations; and a mode
  // past the last is refused.
  Case f32 = c;
  f32.dtype = DType::F32;
  HostTensor q32 = make_input(device(), f32, {c.batch, c.nq, hd}, seed, "q32");
  Tensor out32 = make_tensor(device(), DType::F32, {c.batch, c.nq, hd}, "out32");
  Tensor out16 = make_tensor(device(), DType::F16, {c.batch, c.nq, hd}, "out16");
  vk::Recording rec(device());
  expect_kind(
      ErrorKind::Unsupported,
      [&] { kernels::detail::attention_ablated(kern, rec, {&q32.t}, {&q32.t}, {&q32.t}, out32, p, {}, {}, 1); },
      "fp32");
  expect_kind(
      ErrorKind::InvalidArgument,
      [&] {
        kernels::detail::attention_ablated(kern, rec, {&q.t}, {&k.t}, {&v.t}, out16, p, {}, {},
                                           kernels::detail::kAttentionAblations + 1);
      },
      "mode past the last");
  EXPECT_EQ(rec.dispatch_count(), 0u);
}

TEST_F(Attention, WrongArgumentsThrow) {
  kernels::Kernels kern(device());
  auto t = [&](std::vector<int64_t> s, DType dt = DType::F32) { return make_tensor(device(), dt, s, "t"); };
  Tensor q = t({2, 5, 128}), k = t({2, 7, 128}), v = t({2, 7, 128}), out = t({2, 5, 128});
  Tensor v_short = t({2, 6, 128}), k_b1 = t({1, 7, 128}), q16 = t({2, 5, 128}, DType::F16);
  Tensor narrow = t({2, 7, 120}), q2d = t({10, 128}), out_bad = t({2, 5, 64});
  kernels::AttentionParams p{2, 64};
  vk::Recording rec(device());
  const ErrorKind bad = ErrorKind::InvalidArgument;
  expect_kind(
      bad, [&] { kernels::attention(kern, rec, {&q}, {&k}, {&v_short}, out, p); }, "k/v token mismatch");
  expect_kind(
      bad, [&] { kernels::attention(kern, rec, {&q}, {&k_b1}, {&v}, out, p); }, "batch mismatch");
  expect_kind(
      bad,
      [&] {
        kernels::attention(kern, rec, {&q}, {&k}, {&v}, out, p, {&k, 0, 0, 1}, {&v, 0, 0, 1});
      },
      "batch rows past the tensor's");
  expect_kind(
      bad,
      [&] {
        kernels::attention(kern, rec, {&q}, {&k}, {&v}, out, p, {&k, 0, 0, -1}, {&v});
      },
      "negative first batch row");
  expect_kind(
      bad, [&] { kernels::attention(kern, rec, {&q16}, {&k}, {&v}, out, p); }, "dtype mismatch");
  expect_kind(
      bad, [&] { kernels::attention(kern, rec, {&q}, {&narrow}, {&v}, out, p); }, "rows too narrow");
  expect_kind(
      bad,
      [&] {
        kernels::attention(kern, rec, {&q}, {&k, 0, 8}, {&v}, out, p);
      },
      "window past the row");
  expect_kind(
      bad,
      [&] {
        kernels::attention(kern, rec, {&q}, {&k, 256, 0}, {&v}, out, p);
      },
      "stride past the end");
  expect_kind(
      bad, [&] { kernels::attention(kern, rec, {&q2d}, {&k}, {&v}, out, p); }, "q not 3-D");
  expect_kind(
      bad, [&] { kernels::attention(kern, rec, {&q}, {&k}, {&v}, out_bad, p); }, "out shape");
  expect_kind(
      bad, [&] { kernels::attention(kern, rec, {&q}, {&k}, {&v}, q, p); }, "out aliases q");
  expect_kind(
      bad, [&] { kernels::attention(kern, rec, {&q}, {&k}, {&v}, out, p, {&k}); }, "k2 without v2");
  expect_kind(
      bad,
      [&] {
        kernels::attention(kern, rec, {&q}, {&k}, {&v}, out, {0, 64});
      },
      "zero heads");
  expect_kind(
      bad, [&] { kernels::attention(kern, rec, {}, {&k}, {&v}, out, p); }, "missing q");
  expect_kind(
      ErrorKind::Unsupported,
      [&] {
        kernels::attention(kern, rec, {&q}, {&k}, {&v}, out, {2, 48});
      },
      "head size 48 has no variant");
  EXPECT_EQ(rec.dispatch_count(), 0u);
}

// ---- NV cooperative-matrix path (fp16, tensor cores): skipped where unavailable ----

class AttentionCoopMat : public Attention {
protected:
  void SetUp() override {
    Attention::SetUp();
    if (!coopmat_available()) GTEST_SKIP() << "NV cooperative matrix path not available on this device/build";
  }
};

// The coopmat cases: the portable cases' shapes plus several query blocks / key tiles.
std::vector<Case> coopmat_cases() {
  std::vector<Case> cs;
  Case plain;
  cs.push_back(plain);
  Case second;
  second.nk2 = 19;
  cs.push_back(second);
  Case fused;
  fused.nq = fused.nk = 45;
  fused.nk2 = 21;
  fused.fused = true;
  cs.push_back(fused);
  Case later = fused; // the reference rows of the second step of a pair
  later.kv2_rows_before = 2;
  cs.push_back(later);
  Case causal; // CLIP text
  causal.heads = 16;
  causal.nq = causal.nk = 77;
  causal.causal = true;
  cs.push_back(causal);
  Case cross;
  cross.heads = 5;
  cross.nq = 300;
  cross.nk = 77;
  cs.push_back(cross);
  Case many; // several query blocks and key tiles, both sources, partial tiles everywhere
  many.heads = 5;
  many.nq = 600;
  many.nk = 600;
  many.nk2 = 256 + 13;
  cs.push_back(many);
  Case large;
  large.magnitude = 8;
  large.nk2 = 11;
  cs.push_back(large);
  Case tiny;
  tiny.nq = 1;
  tiny.nk = 1;
  cs.push_back(tiny);
  Case ramp; // rows' maxima growing over 16 key tiles: rescaled at some tiles, not at others
  ramp.heads = 2;
  ramp.nq = 300;
  ramp.nk = 1000;
  ramp.magnitude = 2;
  ramp.key_ramp = 4;
  cs.push_back(ramp);
  Case clip_vision; // head size 80 (32-key tiles): 16 heads of 257 tokens, one key past a tile
  clip_vision.batch = 1;
  clip_vision.heads = 16;
  clip_vision.head_dim = 80;
  clip_vision.nq = clip_vision.nk = 257;
  cs.push_back(clip_vision);
  Case d80_second; // head size 80 with a second source: partial tiles in both, several query blocks
  d80_second.head_dim = 80;
  d80_second.nq = 300;
  d80_second.nk = 45;
  d80_second.nk2 = 29;
  cs.push_back(d80_second);
  for (Case& c : cs) c = with(c, DType::F16, Path::NvCoopMat);
  return cs;
}

TEST_F(AttentionCoopMat, Shapes) {
  for (const Case& c : coopmat_cases()) check(c);
}

// The generic route (row statistics through shared memory) the kernel takes when the
// accumulator layout is not the quad layout; forced here, since NVIDIA GPUs take the quad route.
TEST_F(AttentionCoopMat, GenericRowReductions) {
  tuning_.attn_coopmat_generic = true;
  for (const Case& c : coopmat_cases()) check(c);
}

// Level-0 UNet self-attention with the reference tokens (spec §14.4): B 2, 5 heads x 64,
// Nq 9600, Nk 9600 + 4096, on one coopmat path; checks a sample of rows (the float64 reference
// of all rows is slow) and prints the kernel time.
void check_unet_level0(vk::Device& dev, Path path, const Tuning& tuning) {
  Case c;
  c.dtype = DType::F16;
  c.path = path;
  c.heads = 5;
  c.nq = 9600;
  c.nk = 9600;
  c.nk2 = 4096;
  const uint64_t seed = test::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  kernels::Kernels kern(dev, tuning);
  kern.set_attention_path(path);
  const int64_t hd = c.heads * c.head_dim;
  HostTensor q = make_input(dev, c, {c.batch, c.nq, hd}, seed, "q");
  HostTensor k = make_input(dev, c, {c.batch, c.nk, hd}, seed + 1, "k");
  HostTensor v = make_input(dev, c, {c.batch, c.nk, hd}, seed + 2, "v");
  HostTensor k2 = make_input(dev, c, {c.batch, c.nk2, hd}, seed + 3, "k2");
  HostTensor v2 = make_input(dev, c, {c.batch, c.nk2, hd}, seed + 4, "v2");
  Tensor out = make_tensor(dev, c.dtype, {c.batch, c.nq, hd}, "out");
  test::poison(dev, out);
  vk::Recording rec(dev, 2);
  rec.timestamp("start");
  kernels::attention(kern, rec, {&q.t}, {&k.t}, {&v.t}, out, {c.heads, c.head_dim}, {&k2.t}, {&v2.t});
  rec.timestamp("attention");
  rec.finish();
  // Warm up first: an idle GPU needs tens of ms of work before its clocks settle.
  double best = 1e30;
  for (int i = 0; i < 20; ++i) {
    dev.run(rec);
    if (i >= 10) best = std::min(best, rec.timings().back().second);
  }
  const double flop = 4.0 * c.batch * c.heads * c.nq * (c.nk + c.nk2) * c.head_dim;
  std::printf("attention L0 (B2 H5 D64 Nq 9600 Nk 13696, %s): %.3f ms, %.1f TFLOP/s\n", kernels::path_name(path), best,
              flop / best * 1e-9);

  // Reference for a sample of query rows: run the reference on a Q made of those rows only.
  std::vector<int64_t> rows = {0, 1, 127, 128, 4999, 9471, 9599};
  const int64_t nr = static_cast<int64_t>(rows.size());
  std::vector<float> qs(static_cast<size_t>(c.batch * nr * hd));
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t r = 0; r < nr; ++r)
      for (int64_t e = 0; e < hd; ++e) qs[(b * nr + r) * hd + e] = q.data[(b * c.nq + rows[r]) * hd + e];
  std::vector<double> ref = test::reference_attention(c.batch, c.heads, c.head_dim, 1.0 / 8.0, false, {&qs, nr, hd, 0},
                                                      {&k.data, c.nk, hd, 0}, {&v.data, c.nk, hd, 0},
                                                      {&k2.data, c.nk2, hd, 0}, {&v2.data, c.nk2, hd, 0});
  std::vector<float> got_all = download(dev, out), got(ref.size());
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t r = 0; r < nr; ++r)
      for (int64_t e = 0; e < hd; ++e) got[(b * nr + r) * hd + e] = got_all[(b * c.nq + rows[r]) * hd + e];
  const Tolerance tol = tolerance(c, false); // cooperative-matrix paths only
  EXPECT_TRUE(test::all_close(got, ref, tol.atol, tol.rtol));
  size_t poisoned = 0;
  for (float x : got_all) poisoned += x == test::kPoisonValue;
  EXPECT_EQ(poisoned, 0u) << "output elements never written";
}

TEST_F(AttentionCoopMat, UnetLevel0) { check_unet_level0(device(), Path::NvCoopMat, tuning_); }

// ---- KHR cooperative-matrix path: the same kernel built for GL_KHR_cooperative_matrix ----

class AttentionKhrCoopMat : public Attention {
protected:
  void SetUp() override {
    Attention::SetUp();
    if (!kernels::Kernels(device()).path_available(Path::KhrCoopMat))
      GTEST_SKIP() << "KHR cooperative matrix path not available on this device/build (needs a glslc with "
                      "GL_KHR_cooperative_matrix, and VK_KHR_cooperative_matrix with an fp16 shape the kernels are "
                      "built for at a subgroup width the device can run)";
  }
};

TEST_F(AttentionKhrCoopMat, Shapes) {
  for (Case c : coopmat_cases()) {
    c.path = Path::KhrCoopMat;
    check(c);
  }
}

// The accumulator layout probe: on NVIDIA GPUs, where it runs (KHR with NV cooperative matrix 2
// on 16 x 16 x 16 fragments), it must find the tensor-core layout the 16-subgroup attention
// assumes, and the attention takes that variant exactly where the probe found it.
TEST_F(AttentionKhrCoopMat, LayoutProbeAndTheVariantItAllows) {
  kernels::Kernels k(device());
  const kernels::CoopmatShape* shape = k.khr_gemm_shape();
  const bool probed = k.path_available(Path::NvCoopMat2) && k.khr_attention_available() && shape->m == 16 &&
                      shape->n == 16 && shape->k == 16 && shape->subgroup == 32;
  if (probed && device().info().vendor_id == 0x10de) {
    EXPECT_TRUE(k.khr_accumulator_rows_in_quads());
    // Every invocation holds four of its eight elements in row lane / 4 + 8, in one order for all
    // (elements 4-7 with driver 580 on an H200, session 28): the order the attention then takes as
    // a constant.
    const uint32_t upmask = k.khr_accumulator_quad_upmask();
    EXPECT_EQ(std::popcount(upmask), 4) << "upmask " << upmask;
    EXPECT_EQ(upmask >> 8, 0u) << "upmask " << upmask;
  }
  if (!probed) {
    EXPECT_FALSE(k.khr_accumulator_rows_in_quads());
  }
  if (!k.khr_accumulator_rows_in_quads()) {
    EXPECT_EQ(k.khr_accumulator_quad_upmask(), 0u);
  }
  const kernels::AttentionKernel chosen = kernels::choose_attention_kernel(k, DType::F16, 64, false, true);
  EXPECT_EQ(chosen.shader.find("_nw16") != std::string::npos, k.khr_accumulator_rows_in_quads()) << chosen.shader;
  EXPECT_EQ(chosen.queries_per_group, k.khr_accumulator_rows_in_quads() ? 256 : 128);
  EXPECT_EQ(chosen.quad_upmask, k.khr_accumulator_quad_upmask());
}

// Where another queue's work shares the GPU (kernels::QueuesShareTheGpu: the step's passes one step
// apart), the problems that alone take the 8-subgroup variant for fuller waves keep the
// 16-subgroup one; level 0 takes it either way. Only where the 16-subgroup variant runs at all.
TEST_F(AttentionKhrCoopMat, TheWaveRuleYieldsToAnotherQueue) {
  kernels::Kernels k(device());
  k.set_attention_path(Path::KhrCoopMat);
  if (kernels::choose_attention_kernel(k, DType::F16, 64, false, true).shader.find("_nw16") == std::string::npos)
    GTEST_SKIP() << "the 16-subgroup KHR attention does not run on this device";
  const uint32_t sms = device().info().compute_units;
  if (!kernels::khr_attention_eight_subgroups_win(4096, 10, sms))
    GTEST_SKIP() << "the reference pass's attention fills this device's waves either way";
  auto chosen = [&](int64_t queries, int64_t rows) {
    return kernels::choose_attention_kernel(k, DType::F16, 64, false, true, queries, rows).shader;
  };
  EXPECT_EQ(chosen(4096, 10).find("_nw16"), std::string::npos) << chosen(4096, 10);
  EXPECT_NE(chosen(9600, 10).find("_nw16"), std::string::npos) << chosen(9600, 10);
  {
    kernels::QueuesShareTheGpu shared(k);
    EXPECT_TRUE(k.queues_share_the_gpu());
    EXPECT_NE(chosen(4096, 10).find("_nw16"), std::string::npos) << chosen(4096, 10);
    EXPECT_NE(chosen(9600, 10).find("_nw16"), std::string::npos) << chosen(9600, 10);
  }
  EXPECT_FALSE(k.queues_share_the_gpu());
  EXPECT_EQ(chosen(4096, 10).find("_nw16"), std::string::npos) << chosen(4096, 10);
}

// As AttentionCoopMat.GenericRowReductions; P reaches P·V through shared memory on either route.
TEST_F(AttentionKhrCoopMat, GenericRowReductions) {
  tuning_.attn_coopmat_generic = true;
  for (Case c : coopmat_cases()) {
    c.path = Path::KhrCoopMat;
    check(c);
  }
}

TEST_F(AttentionKhrCoopMat, UnetLevel0) { check_unet_level0(device(), Path::KhrCoopMat, tuning_); }

// The attention follows the GEMMs' fragment shape and subgroup width (Tuning::coopmat_shape forces
// one): its variant is that shape's, one fragment of query rows per subgroup, 8 subgroups.
TEST_F(AttentionKhrCoopMat, TakesTheGemmFragmentShape) {
  kernels::Kernels k(device());
  k.set_attention_path(Path::KhrCoopMat);
  const kernels::CoopmatShape* shape = k.khr_gemm_shape();
  const kernels::AttentionKernel kernel = kernels::choose_attention_kernel(k, DType::F16, 64, false, true);
  SCOPED_TRACE(kernel.shader);
  EXPECT_EQ(kernel.shader.rfind("attention_d64_khrcm", 0), 0u);
  EXPECT_NE(kernel.shader.find(std::string(shape->suffix) + "_f16"), std::string::npos);
  // 8 subgroups of one fragment of rows each, 16 where the 16-subgroup variant runs.
  EXPECT_EQ(kernel.queries_per_group, (k.khr_accumulator_rows_in_quads() ? 16 : 8) * int64_t(shape->m));
  // CLIP vision's head size 80: the same shape's 8-subgroup variant.
  const kernels::AttentionKernel d80 = kernels::choose_attention_kernel(k, DType::F16, 80, false, true);
  SCOPED_TRACE(d80.shader);
  EXPECT_EQ(d80.shader.rfind("attention_d80_khrcm", 0), 0u);
  EXPECT_NE(d80.shader.find(std::string(shape->suffix) + "_f16"), std::string::npos);
  EXPECT_EQ(d80.queries_per_group, 8 * int64_t(shape->m));
}

// Every KHR variant whatever the default: P through shared memory (khrcm) and, where
// VK_NV_cooperative_matrix2 is enabled and P's fragments have A's shape (16 x N x N on 32-wide
// subgroups: the fragment shape is Tuning::coopmat_shape's where set), converted in registers
// (khrcm_cv); then the khrcm_cv_* ones where this build has them (default fragment shape only;
// khrcm_cv_nw16 where the accumulators are laid out in quads).
TEST_F(AttentionKhrCoopMat, EveryVariant) {
  kernels::Kernels k(device());
  const kernels::CoopmatShape* shape = k.khr_gemm_shape();
  const bool convert =
      k.path_available(Path::NvCoopMat2) && shape->m == 16 && shape->n == shape->k && shape->subgroup == 32;
  for (const std::string& v : kernels::khr_attention_knob_values()) {
    if (v.rfind("khrcm_cv", 0) == 0 && !convert) continue;
    if (v.rfind("khrcm_cv_nw16", 0) == 0 && !k.khr_accumulator_rows_in_quads()) continue; // they assume it
    if (v.rfind("khrcm_cv_", 0) == 0 &&
        (shape->suffix[0] != '\0' || !vk::find_shader(kernels::khr_attention_knob_variant(v))))
      continue;
    SCOPED_TRACE(std::string("attention variant ") + v);
    tuning_.attn_variant = v;
    for (Case c : coopmat_cases()) {
      c.path = Path::KhrCoopMat;
      check(c);
    }
    check_unet_level0(device(), Path::KhrCoopMat, tuning_);
  }
}

// ---- NV cooperative matrix 2 path (fp16, workgroup-scope matrices): skipped where unavailable ----

class AttentionCoopMat2 : public Attention {
protected:
  void SetUp() override {
    Attention::SetUp();
    kernels::Kernels kern(device());
    if (!kern.path_available(Path::NvCoopMat2))
      GTEST_SKIP() << "NV cooperative matrix 2 path not available on this device/build";
  }
  // Whether the 128-row variant is in this build (bench-only: Z123_BENCH_VARIANTS).
  static bool has_128_rows() { return vk::find_shader(kernels::nvcm2_attention_variant(128)) != nullptr; }
  static constexpr const char* kNo128Rows =
      "the 128-row coopmat2 attention is bench-only; configure with -DZ123_BENCH_VARIANTS=ON to test it";
  // The coopmat cases on Path::NvCoopMat2 (the causal one exercises its fallback to v1).
  void check_all() {
    for (Case c : coopmat_cases()) {
      c.path = Path::NvCoopMat2;
      check(c);
    }
  }
};

TEST_F(AttentionCoopMat2, Shapes) { check_all(); }
TEST_F(AttentionCoopMat2, Shapes128Rows) {
  if (!has_128_rows()) GTEST_SKIP() << kNo128Rows;
  tuning_.attn_cm2_rows = 128;
  check_all();
}
// Both sources with partial tiles in each, more query blocks than one of either variant.
TEST_F(AttentionCoopMat2, PartialTilesBothSources) {
  Case c = with(Case{}, DType::F16, Path::NvCoopMat2);
  c.heads = 2;
  c.nq = 200;
  c.nk = 70;
  c.nk2 = 65;
  check(c);
  c.nk = 64;
  c.nk2 = 1;
  check(c);
}
TEST_F(AttentionCoopMat2, UnetLevel0) { check_unet_level0(device(), Path::NvCoopMat2, tuning_); }
TEST_F(AttentionCoopMat2, UnetLevel0Rows128) {
  if (!has_128_rows()) GTEST_SKIP() << kNo128Rows;
  tuning_.attn_cm2_rows = 128;
  check_unet_level0(device(), Path::NvCoopMat2, tuning_);
}

// The 8-subgroup KHR attention takes over from the 16-subgroup one where 256-query workgroups
// leave the last wave mostly empty (H100: 132 SMs). The UNet's shapes (batch 2): level 0, 9,600
// queries x 5 heads: 380 workgroups, 2.9 waves, stays; the 4,096-token reference pass (160, 1.2
// waves) and level 1 (2,400 x 10 heads: 200, 1.5 waves) switch; level 2 and the reference pass's
// level 1 (one wave either way) stay.
TEST(AttentionWaves, EightSubgroupsWhereTheyFillTheSms) {
  EXPECT_FALSE(kernels::khr_attention_eight_subgroups_win(9600, 10, 132));
  EXPECT_TRUE(kernels::khr_attention_eight_subgroups_win(4096, 10, 132));
  EXPECT_TRUE(kernels::khr_attention_eight_subgroups_win(2400, 20, 132));
  EXPECT_FALSE(kernels::khr_attention_eight_subgroups_win(1024, 20, 132));
  EXPECT_FALSE(kernels::khr_attention_eight_subgroups_win(600, 40, 132));
  EXPECT_FALSE(kernels::khr_attention_eight_subgroups_win(4096, 10, 0)); // SM count unknown
}

// kernels::QueuesShareTheGpu scopes nest, and the context forgets them when the last one ends
// (AttentionKhrCoopMat.TheWaveRuleYieldsToAnotherQueue: what they change, on GPUs that have it).
TEST_F(Attention, QueuesShareTheGpuScopesNest) {
  kernels::Kernels k(device());
  EXPECT_FALSE(k.queues_share_the_gpu());
  {
    kernels::QueuesShareTheGpu outer(k);
    {
      kernels::QueuesShareTheGpu inner(k);
      EXPECT_TRUE(k.queues_share_the_gpu());
    }
    EXPECT_TRUE(k.queues_share_the_gpu());
  }
  EXPECT_FALSE(k.queues_share_the_gpu());
}

// Timings of the model's attention shapes (spec §14.4) on the portable and, where available,
// the coopmat path, fp16. Not a correctness test (the tests above are); run with
// --gtest_also_run_disabled_tests --gtest_filter='*AttentionBench*' on the GPU machine.
TEST_F(Attention, DISABLED_AttentionBench) {
  struct Shape {
    const char* name;
    int64_t batch, heads, head_dim, nq, nk, nk2;
  };
  const Shape shapes[] = {
      {"L0 ref-attn 2x5x9600x(9600+4096)x64", 2, 5, 64, 9600, 9600, 4096},
      {"L1 ref-attn 2x10x2400x(2400+1024)x64", 2, 10, 64, 2400, 2400, 1024},
      {"L0 cross 2x5x9600x77x64", 2, 5, 64, 9600, 77, 0},
      {"ref pass L0 2x5x4096x4096x64", 2, 5, 64, 4096, 4096, 0},
      {"vae mid 1x1x9600x9600x512", 1, 1, 512, 9600, 9600, 0},
      {"clip vision 1x16x257x257x80", 1, 16, 80, 257, 257, 0},
  };
  kernels::Kernels kern(device());
  for (Path path : {Path::Portable, Path::NvCoopMat, Path::KhrCoopMat, Path::NvCoopMat2}) {
    if (!kern.path_available(path)) continue;
    kern.set_attention_path(path);
    for (const Shape& s : shapes) {
      const int64_t hd = s.heads * s.head_dim;
      auto mk = [&](int64_t n, const char* name) {
        Tensor t = make_tensor(device(), DType::F16, {s.batch, n, hd}, name);
        upload(device(), t, test::random_uniform(static_cast<size_t>(t.numel()), 1));
        return t;
      };
      Tensor q = mk(s.nq, "q"), k = mk(s.nk, "k"), v = mk(s.nk, "v"), out = mk(s.nq, "out");
      Tensor k2 = mk(std::max<int64_t>(s.nk2, 1), "k2"), v2 = mk(std::max<int64_t>(s.nk2, 1), "v2");
      vk::Recording rec(device(), 2);
      rec.timestamp("start");
      if (s.nk2 > 0)
        kernels::attention(kern, rec, {&q}, {&k}, {&v}, out, {s.heads, s.head_dim}, {&k2}, {&v2});
      else
        kernels::attention(kern, rec, {&q}, {&k}, {&v}, out, {s.heads, s.head_dim});
      rec.timestamp("attention");
      rec.finish();
      double best = 1e30;
      for (int i = 0; i < 20; ++i) { // the first 10 warm the GPU clocks up
        device().run(rec);
        if (i >= 10) best = std::min(best, rec.timings().back().second);
      }
      const double flop = 4.0 * s.batch * s.heads * s.nq * (s.nk + s.nk2) * s.head_dim;
      std::printf("%-12s %-40s %9.3f ms %7.1f TFLOP/s\n", kernels::path_name(path), s.name, best, flop / best * 1e-9);
    }
  }
}
