// The UNet on the bundled tiny model vs the official diffusers UNet2DConditionModel, plain and
// with Zero123++'s reference attention exactly as the official RefOnlyNoisedUNet runs it (write
// pass on the noised reference latent, read pass on the main latent, two batch halves). Twice:
// with v1.2's topology (one BasicTransformerBlock per transformer) and with two per transformer
// (tests/data/golden-tlpb2), where the write pass must store all 32 attn1 layers before it stops.
// Each with the 3x3 convs direct and in Winograd form (Z123_CONV_WINOGRAD=on: the resnets' and
// upsamplers' convs outside the innermost level through kernels::conv2d_winograd, whose roundings
// of the transformed inputs, weights and products fit the same tolerances). The transformer
// blocks' LayerNorms run as passes of their own by default (normalized rows without gamma and
// beta, which stay folded into the projection weights), and once more inside the GEMMs that read
// them (Z123_GEMM_LN=1).
// Tolerances: fp32 1e-4 relative L2 (accumulation order only); fp16 1e-2 (11-bit rounding of
// every stored activation across ~100 stages; the fp16 target).
#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <tuple>

#include "support/check.hpp"
#include "support/golden.hpp"
#include "support/vk_env.hpp"
#include "z123/kernels/linear.hpp"
#include "z123/nets/unet.hpp"

using namespace z123;

namespace {

double tolerance(DType dt) { return dt == DType::F32 ? 1e-4 : 1e-2; }

Tensor upload_nchw(vk::Device& dev, DType dt, const test::GoldenTensor& g, const std::string& name) {
  int64_t B = g.shape[0], C = g.shape[1], H = g.shape[2], W = g.shape[3];
  Tensor t = make_tensor(dev, dt, {B, H, W, C}, name);
  upload(dev, t, test::nchw_to_nhwc(g.values, B, C, H, W));
  return t;
}

Tensor upload_plain(vk::Device& dev, DType dt, const test::GoldenTensor& g, const std::string& name) {
  Tensor t = make_tensor(dev, dt, g.shape, name);
  upload(dev, t, g.values);
  return t;
}

// The sinusoidal embedding of timestep t, one row (every batch row shares it).
Tensor time_input(vk::Device& dev, const nets::UNet& unet, DType dt, float t) {
  std::vector<float> f = unet.timestep_frequencies(t);
  Tensor out = make_tensor(dev, dt, {1, static_cast<int64_t>(f.size())}, "t_freq");
  upload(dev, out, f);
  return out;
}

// out [B, H, W, C] on the device against a golden [B, C, H, W] within the dtype's tolerance.
void expect_matches(vk::Device& dev, const Tensor& out, const test::GoldenTensor& want, DType dt) {
  auto got = test::nhwc_to_nchw(download(dev, out), out.dim(0), out.dim(1), out.dim(2), out.dim(3));
  auto rep = test::compare(got, test::to_double(want.values));
  EXPECT_LE(rep.rel_l2, tolerance(dt)) << rep.summary();
  EXPECT_EQ(rep.nonfinite, 0u);
}

// A tiny model and the goldens the official modules computed from it.
struct GoldenSet {
  const char* name;
  std::filesystem::path (*model_dir)();
  std::filesystem::path (*golden_dir)();
};
void PrintTo(const GoldenSet& s, std::ostream* os) { *os << s.name; }
const GoldenSet kV12Topology{"tiny", test::tiny_model_dir, test::golden_dir};
const GoldenSet kTwoTransformerLayers{"tiny_tlpb2", test::tlpb2_model_dir, test::tlpb2_golden_dir};

// The route variations each parity test runs under.
struct RouteVariant {
  const char* suffix; // of the test name
  Tuning::ConvWinograd winograd;
  bool layer_norm_in_gemm;
};
void PrintTo(const RouteVariant& v, std::ostream* os) { *os << (*v.suffix ? v.suffix : "_default"); }
const RouteVariant kDirect{"", Tuning::ConvWinograd::Off, false};
const RouteVariant kWinograd{"_winograd", Tuning::ConvWinograd::On, false};
const RouteVariant kLayerNormInGemm{"_ln_in_gemm", Tuning::ConvWinograd::Off, true};

class UNetParity : public test::VkTest,
                   public ::testing::WithParamInterface<std::tuple<GoldenSet, DType, RouteVariant>> {
protected:
  DType dtype() const { return std::get<1>(GetParam()); }
  const GoldenSet& set() const { return std::get<0>(GetParam()); }
  const RouteVariant& variant() const { return std::get<2>(GetParam()); }
  Tuning tuning() {
    Tuning t = device().tuning();
    t.conv_winograd = variant().winograd;
    t.gemm_layer_norm = variant().layer_norm_in_gemm;
    return t;
  }
  // With Winograd on, the convs it takes hold their weights in its form (the innermost level's
  // and the mid block's stay direct: nets::UNet says why); the others stay direct.
  void expect_conv_form(const nets::UNet& unet) {
    const size_t form = variant().winograd == Tuning::ConvWinograd::On ? 3u : 4u;
    const UNetLayout& l = unet.layout();
    for (const UNetBlockDecl* block : {&l.down.front(), &l.up.back()})
      for (const UNetLayerDecl& layer : block->layers)
        for (const char* conv : {".conv1.weight", ".conv2.weight"})
          EXPECT_EQ(unet.weights().at(layer.resnet.prefix + conv).shape.size(), form) << layer.resnet.prefix + conv;
    for (const UNetBlockDecl* block : {&l.down.back(), &l.up.front()})
      for (const UNetLayerDecl& layer : block->layers)
        EXPECT_EQ(unet.weights().at(layer.resnet.prefix + ".conv1.weight").shape.size(), 4u) << "innermost level";
    EXPECT_EQ(unet.weights().at(l.mid_first.prefix + ".conv1.weight").shape.size(), 4u) << "mid block";
    for (const UNetBlockDecl& block : l.up)
      if (block.resampler) {
        EXPECT_EQ(unet.weights().at(*block.resampler + ".weight").shape.size(), form);
      }
    EXPECT_EQ(unet.weights().at("conv_in.weight").shape.size(), 4u);
    for (const UNetBlockDecl& block : unet.layout().down)
      if (block.resampler) {
        EXPECT_EQ(unet.weights().at(*block.resampler + ".weight").shape.size(), 4u) << "stride 2";
      }
  }
};

} // namespace

TEST_P(UNetParity, PlainForwardMatchesDiffusers) {
  const DType dt = dtype();
  kernels::Kernels k(device(), tuning());
  ModelFolder folder = ModelFolder::open(set().model_dir());
  nets::UNet unet(k, folder, dt);
  expect_conv_form(unet);
  // The folded weights' GEMMs normalize their rows themselves exactly where the variant says.
  const std::string attn1 = unet.layout().self_attention_prefixes().front(); // "….transformer_blocks.0.attn1"
  const Tensor& ff =
      unet.weights().at(attn1.substr(0, attn1.size() - std::string("attn1").size()) + "ff.net.0.proj.weight");
  EXPECT_EQ(kernels::linear_normalizes(k, dt, ff.dim(0), ff.dim(1)), variant().layer_norm_in_gemm);
  test::GoldenFile g(set().golden_dir(), "unet.safetensors");
  for (const char* t : {"999", "35"}) {
    SCOPED_TRACE(std::string("t = ") + t);
    auto sample_g = g.at("sample");
    Tensor sample = upload_nchw(device(), dt, sample_g, "sample");
    Tensor ctx = upload_plain(device(), dt, g.at("ctx"), "ctx");
    Tensor tf = time_input(device(), unet, dt, std::stof(t));
    Tensor out = make_tensor(device(), dt, sample.shape, "out");
    test::poison(device(), out);
    Workspace ws(device());
    vk::Recording rec(device());
    nets::TimeBiases time(device());
    unet.record_time(rec, ws, tf, time);
    unet.record(rec, ws, sample, time, ctx, &out);
    device().run(rec);
    expect_matches(device(), out, g.at(std::string("t") + t + ".out"), dt);
  }
}

TEST_P(UNetParity, ReferenceAttentionMatchesRefOnlyNoisedUNet) {
  const DType dt = dtype();
  kernels::Kernels k(device(), tuning());
  ModelFolder folder = ModelFolder::open(set().model_dir());
  nets::UNet unet(k, folder, dt);
  expect_conv_form(unet);
  test::GoldenFile g(set().golden_dir(), "unet_ref.safetensors");
  Tensor ref_in = upload_nchw(device(), dt, g.at("ref_input"), "ref_input");
  Tensor main_in = upload_nchw(device(), dt, g.at("main_input"), "main_input");
  Tensor ctx = upload_plain(device(), dt, g.at("ctx"), "ctx");
  float t = g.at("timestep").values.at(0);
  Tensor tf = time_input(device(), unet, dt, t);
  Tensor out = make_tensor(device(), dt, main_in.shape, "out");
  test::poison(device(), out);
  nets::ReferenceCache cache(device());
  Workspace ws(device());
  vk::Recording rec(device());
  nets::TimeBiases time(device());
  unet.record_time(rec, ws, tf, time);
  unet.record(rec, ws, ref_in, time, ctx, nullptr, nets::RefMode::Write, &cache);
  unet.record(rec, ws, main_in, time, ctx, &out, nets::RefMode::Read, &cache);
  device().run(rec);
  expect_matches(device(), out, g.at("out"), dt);
}

// One write pass for two steps, as the step program runs it where the reference pass runs ahead:
// batch 2B, the golden's reference input at its timestep in one half and another input at another
// timestep (999) in the other (UNet::record_time_rows: a timestep per row), then the read pass on
// the golden's half alone (ref_batch0), both halves in turn. The same tolerances as above: the
// time injection of the write pass now takes diffusers' two roundings instead of one.
TEST_P(UNetParity, OneReferencePassForTwoStepsMatchesRefOnlyNoisedUNet) {
  const DType dt = dtype();
  kernels::Kernels k(device(), tuning());
  ModelFolder folder = ModelFolder::open(set().model_dir());
  nets::UNet unet(k, folder, dt);
  test::GoldenFile g(set().golden_dir(), "unet_ref.safetensors");
  const test::GoldenTensor ref_g = g.at("ref_input"), ctx_g = g.at("ctx");
  const int64_t B = ref_g.shape[0];
  const float t = g.at("timestep").values.at(0), t_other = 999.0f;
  Tensor main_in = upload_nchw(device(), dt, g.at("main_input"), "main_input");
  Tensor ctx = upload_plain(device(), dt, ctx_g, "ctx");
  Tensor tf = time_input(device(), unet, dt, t);
  for (int64_t member : {0, 1}) {
    SCOPED_TRACE("the golden's rows at half " + std::to_string(member));
    test::GoldenTensor ref2 = ref_g, ctx2 = ctx_g;
    ref2.shape[0] = ctx2.shape[0] = 2 * B;
    ref2.values.clear();
    ctx2.values.clear();
    std::vector<float> rows;
    for (int64_t half : {0, 1}) {
      const bool golden = half == member;
      for (float v : ref_g.values) ref2.values.push_back(golden ? v : -0.5f * v);
      ctx2.values.insert(ctx2.values.end(), ctx_g.values.begin(), ctx_g.values.end());
      const std::vector<float> f = unet.timestep_frequencies(golden ? t : t_other);
      for (int64_t b = 0; b < B; ++b) rows.insert(rows.end(), f.begin(), f.end());
    }
    Tensor ref_in = upload_nchw(device(), dt, ref2, "ref_input x2");
    Tensor ctx_2 = upload_plain(device(), dt, ctx2, "ctx x2");
    Tensor t_rows = make_tensor(device(), dt, {2 * B, static_cast<int64_t>(rows.size()) / (2 * B)}, "t_freq rows");
    upload(device(), t_rows, rows);
    Tensor out = make_tensor(device(), dt, main_in.shape, "out");
    test::poison(device(), out);
    nets::ReferenceCache cache(device());
    Workspace ws(device());
    vk::Recording rec(device());
    nets::TimeBiases time(device()), per_row(device());
    unet.record_time(rec, ws, tf, time);
    unet.record_time_rows(rec, ws, t_rows, per_row);
    EXPECT_TRUE(per_row.per_row());
    EXPECT_FALSE(time.per_row());
    unet.record(rec, ws, ref_in, per_row, ctx_2, nullptr, nets::RefMode::Write, &cache);
    unet.record(rec, ws, main_in, time, ctx, &out, nets::RefMode::Read, &cache, nullptr, member * B);
    device().run(rec);
    expect_matches(device(), out, g.at("out"), dt);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, UNetParity,
                         ::testing::Combine(::testing::Values(kV12Topology, kTwoTransformerLayers),
                                            ::testing::Values(DType::F32, DType::F16),
                                            ::testing::Values(kDirect, kWinograd, kLayerNormInGemm)),
                         [](const auto& param_info) {
                           return std::string(std::get<0>(param_info.param).name) + "_" +
                                  dtype_name(std::get<1>(param_info.param)) + std::get<2>(param_info.param).suffix;
                         });
