// Preprocessing semantics beyond the recorded Pillow cases: the blend and size rules, the fused
// resize+crop window path, rescale/normalize against numpy's float32 tables, preprocess() with the
// v1.2 configs, and argument errors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include "image_test_util.hpp"
#include "z123/image/preprocess.hpp"
#include "z123/model/configs.hpp"

namespace z123::test {
namespace {

std::filesystem::path v12_config(const char* branch) {
  return image_data_dir().parent_path() / "v1.2-configs" / (std::string("feature_extractor_") + branch) /
         "preprocessor_config.json";
}

// Distance in representable floats (0 = identical bits).
std::int64_t ulp_distance(float a, float b) {
  auto key = [](float f) {
    const auto i = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(f));
    return i < 0 ? std::int64_t{INT32_MIN} - i : i; // monotonic over the sign
  };
  return std::llabs(key(a) - key(b));
}

float table_value(const nlohmann::json& table, int u, int c) {
  return std::bit_cast<float>(
      table.at(static_cast<std::size_t>(u)).at(static_cast<std::size_t>(c)).get<std::uint32_t>());
}

TEST(ToRgb, BlendIsRoundHalfUpOfExactQuotientForEveryColourAndAlpha) {
  Image rgba = Image::blank(256, 256, 4);
  for (int a = 0; a < 256; ++a) {
    for (int v = 0; v < 256; ++v) {
      std::uint8_t* p = rgba.row(a) + 4 * v;
      p[0] = p[1] = p[2] = static_cast<std::uint8_t>(v);
      p[3] = static_cast<std::uint8_t>(a);
    }
  }
  const Image rgb = to_rgb(rgba);
  for (int a = 0; a < 256; ++a) {
    for (int v = 0; v < 256; ++v) {
      const int x = 127 * (255 - a) + v * a;
      const int expected = (2 * x + 255) / 510; // floor(x / 255 + 1/2)
      ASSERT_EQ(rgb.at(v, a, 0), expected) << "colour " << v << " alpha " << a;
    }
  }
}

TEST(ToRgb, RgbIsUnchangedAndGrayIsReplicated) {
  const Image rgb = synthetic("noise", 5, 4, 3, 1);
  EXPECT_EQ(to_rgb(rgb).pixels, rgb.pixels);
  const Image gray = synthetic("noise", 5, 4, 1, 2);
  const Image out = to_rgb(gray);
  ASSERT_EQ(out.channels, 3);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x)
      for (int c = 0; c < 3; ++c) EXPECT_EQ(out.at(x, y, c), gray.at(x, y, 0));
}

TEST(ToRgb, RejectsTwoChannelsAndInconsistentBuffers) {
  expect_error(
      [] {
        to_rgb(Image{2, 2, 2, std::vector<std::uint8_t>(8)});
      },
      ErrorKind::InvalidArgument, {"2 channels", "expected 1 (gray), 3 (RGB) or 4 (RGBA)"});
  expect_error(
      [] {
        to_rgb(Image{3, 2, 3, std::vector<std::uint8_t>(17)});
      },
      ErrorKind::InvalidArgument, {"to_rgb", "needs 18 bytes, found 17"});
  expect_error([] { to_rgb(Image{}); }, ErrorKind::InvalidArgument, {"0x0"});
}

TEST(ShortestEdgeSize, TruncatesTheLongSideLikeTransformers) {
  EXPECT_EQ(shortest_edge_size(600, 450, 512), (ImageSize{682, 512})); // 682.67
  EXPECT_EQ(shortest_edge_size(450, 600, 224), (ImageSize{224, 298})); // 298.67
  EXPECT_EQ(shortest_edge_size(37, 53, 512), (ImageSize{512, 733}));   // 733.4
  EXPECT_EQ(shortest_edge_size(513, 512, 512), (ImageSize{513, 512}));
  EXPECT_EQ(shortest_edge_size(513, 512, 224), (ImageSize{224, 224})); // 224.44
  EXPECT_EQ(shortest_edge_size(1, 1, 224), (ImageSize{224, 224}));
  EXPECT_EQ(shortest_edge_size(300, 7, 224), (ImageSize{9600, 224}));
  EXPECT_EQ(shortest_edge_size(3, 3, 512), (ImageSize{512, 512}));
  // 512 * 1000 / 3 = 170666.67: the division is in double, then truncated.
  EXPECT_EQ(shortest_edge_size(3, 1000, 512), (ImageSize{512, 170666}));
  expect_error([] { shortest_edge_size(0, 5, 512); }, ErrorKind::InvalidArgument, {"0x5"});
  expect_error([] { shortest_edge_size(5, 5, 0); }, ErrorKind::InvalidArgument, {"shortest edge 0"});
}

TEST(Resample, PillowCodes) {
  EXPECT_EQ(resample_from_pil_code(2), Resample::Bilinear);
  EXPECT_EQ(resample_from_pil_code(3), Resample::Bicubic);
  EXPECT_EQ(resample_from_pil_code(1), Resample::Lanczos);
  expect_error([] { resample_from_pil_code(0); }, ErrorKind::Unsupported, {"resample filter 0", "nearest"});
  expect_error([] { resample_from_pil_code(7); }, ErrorKind::Unsupported, {"resample filter 7"});
}

TEST(Resize, SameSizeIsAnExactCopyAndOtherSizesChangeSomething) {
  const Image in = synthetic("noise", 9, 7, 3, 3);
  EXPECT_EQ(resize(in, 9, 7, Resample::Bicubic).pixels, in.pixels);
  const Image up = resize(in, 18, 14, Resample::Bilinear);
  EXPECT_EQ(up.width, 18);
  EXPECT_EQ(up.height, 14);
}

TEST(Resize, ConstantImageStaysConstant) {
  // Weights are normalised to sum 1, so a flat image must come out flat for every filter/scale.
  Image flat = Image::blank(31, 17, 3);
  std::fill(flat.pixels.begin(), flat.pixels.end(), std::uint8_t{200});
  for (Resample f : {Resample::Bilinear, Resample::Bicubic, Resample::Lanczos, Resample::Box, Resample::Hamming}) {
    for (auto [w, h] : {std::pair{5, 3}, std::pair{64, 40}, std::pair{31, 2}}) {
      const Image out = resize(flat, w, h, f);
      for (std::uint8_t v : out.pixels) ASSERT_EQ(v, 200) << static_cast<int>(f) << " " << w << "x" << h;
    }
  }
}

TEST(Resize, RejectsRgbaAndBadSizes) {
  const Image rgba = synthetic("noise", 4, 4, 4, 4);
  expect_error([&] { resize(rgba, 8, 8, Resample::Bilinear); }, ErrorKind::InvalidArgument, {"4-channel", "to_rgb"});
  const Image rgb = synthetic("noise", 4, 4, 3, 4);
  expect_error([&] { resize(rgb, 0, 8, Resample::Bilinear); }, ErrorKind::InvalidArgument, {"0x8"});
  expect_error([&] { resize(rgb, 20000, 8, Resample::Bilinear); }, ErrorKind::InvalidArgument, {"20000x8", "16384"});
}

TEST(CenterCrop, FloorsTheOffsetAndZeroPadsLargerCrops) {
  const Image in = synthetic("noise", 6, 5, 1, 5);
  const Image c = center_crop(in, 3, 2); // left = 1, top = 1
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) EXPECT_EQ(c.at(x, y, 0), in.at(x + 1, y + 1, 0));
  const Image p = center_crop(in, 9, 8); // transformers pads ceil((9-6)/2) = 2 left, 2 top
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 9; ++x) {
      const bool inside = x >= 2 && x < 8 && y >= 2 && y < 7;
      EXPECT_EQ(p.at(x, y, 0), inside ? in.at(x - 2, y - 2, 0) : 0) << x << "," << y;
    }
  }
}

// The window path must give exactly resize-then-crop, including crops larger than the resized
// image (padding) and sizes that need no resampling on one axis.
TEST(CenterCrop, FusedResizeCropEqualsResizeThenCrop) {
  struct Case {
    int w, h, shortest, cw, ch;
    Resample f;
  };
  const Case cases[] = {{600, 450, 224, 224, 224, Resample::Bicubic}, {37, 53, 64, 64, 64, Resample::Bilinear},
                        {300, 7, 40, 40, 40, Resample::Bicubic},      {7, 300, 40, 33, 50, Resample::Lanczos},
                        {50, 40, 30, 45, 20, Resample::Bilinear},     {50, 40, 40, 41, 39, Resample::Hamming},
                        {64, 64, 32, 16, 48, Resample::Box},          {20, 10, 10, 3, 3, Resample::Bicubic}};
  for (const Case& k : cases) {
    const Image in = synthetic("noise", k.w, k.h, 3, 6);
    const Image fused = resize_shortest_edge_center_crop(in, k.shortest, k.f, k.cw, k.ch);
    const Image ref = center_crop(resize_shortest_edge(in, k.shortest, k.f), k.cw, k.ch);
    EXPECT_EQ(fused.width, ref.width);
    EXPECT_EQ(fused.height, ref.height);
    EXPECT_TRUE(fused.pixels == ref.pixels)
        << k.w << "x" << k.h << " -> " << k.shortest << ", crop " << k.cw << "x" << k.ch;
  }
}

TEST(CenterCrop, FusedPathHandlesHugeResizedLongSide) {
  // 1x9000 -> 224 x 2016000: too large to materialise (and over kMaxImageSide), but the crop is fine.
  Image thin = synthetic("smooth", 1, 9000, 3, 7);
  const Image out = resize_shortest_edge_center_crop(thin, 224, Resample::Bicubic, 224, 224);
  EXPECT_EQ(out.width, 224);
  EXPECT_EQ(out.height, 224);
}

TEST(Normalize, MatchesNumpyFloat32TablesWithinOneUlp) {
  const auto& tables = image_manifest().at("normalize_tables");
  // One row holding every uint8 value in every channel.
  Image ramp = Image::blank(256, 1, 3);
  for (int u = 0; u < 256; ++u)
    for (int c = 0; c < 3; ++c) ramp.pixels[static_cast<std::size_t>(3 * u + c)] = static_cast<std::uint8_t>(u);
  for (const char* branch : {"vae", "clip"}) {
    const PreprocessorConfig cfg = load_preprocessor_config(v12_config(branch));
    const std::vector<float> got = normalize_hwc(ramp, cfg.image_mean, cfg.image_std, cfg.rescale_factor);
    std::int64_t worst = 0;
    for (int u = 0; u < 256; ++u) {
      for (int c = 0; c < 3; ++c) {
        const float want = table_value(tables.at(branch), u, c);
        const std::int64_t d = ulp_distance(got[static_cast<std::size_t>(3 * u + c)], want);
        worst = std::max(worst, d);
        EXPECT_LE(d, 1) << branch << " value " << u << " channel " << c << ": " << got[3 * u + c] << " vs numpy "
                        << want;
      }
    }
    RecordProperty(std::string(branch) + "_max_ulp", static_cast<int>(worst));
  }
}

TEST(Normalize, ChwIsTheTransposeOfHwc) {
  const Image in = synthetic("noise", 7, 5, 3, 8);
  const std::array<double, 3> mean{0.1, 0.2, 0.3}, stdev{0.5, 0.25, 2.0};
  const std::vector<float> hwc = normalize_hwc(in, mean, stdev), chw = normalize_chw(in, mean, stdev);
  ASSERT_EQ(hwc.size(), chw.size());
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < 35; ++p)
      EXPECT_EQ(chw[static_cast<std::size_t>(c * 35 + p)], hwc[static_cast<std::size_t>(p * 3 + c)]);
}

TEST(Normalize, IdentityParametersGiveTheRawValues) {
  const Image in = synthetic("noise", 16, 16, 3, 9);
  const std::vector<float> v = normalize_hwc(in, {0, 0, 0}, {1, 1, 1}, 1.0);
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<float>(in.pixels[i]));
}

TEST(Normalize, RejectsZeroStdAndNonRgb) {
  const Image in = synthetic("noise", 2, 2, 3, 10);
  expect_error([&] { normalize_hwc(in, {0, 0, 0}, {1, 0, 1}); }, ErrorKind::InvalidArgument, {"channel 1", "std"});
  const Image gray = synthetic("noise", 2, 2, 1, 10);
  expect_error(
      [&] {
        normalize_chw(gray, {0, 0, 0}, {1, 1, 1});
      },
      ErrorKind::InvalidArgument, {"normalize_chw", "3-channel"});
}

// preprocess() with the real v1.2 configs equals the Pillow-verified uint8 crop mapped through
// numpy's normalize tables.
TEST(Preprocess, V12ConfigsMatchPillowAndNumpy) {
  const PreprocessorConfig vae = load_preprocessor_config(v12_config("vae"));
  const PreprocessorConfig clip = load_preprocessor_config(v12_config("clip"));
  const auto& tables = image_manifest().at("normalize_tables");
  for (const auto& c : image_manifest().at("preprocess")) {
    const Image input = synthetic(c.at("input"));
    const PreprocessedInputs out = preprocess(input, vae, clip);
    ASSERT_EQ(out.vae_height, 512);
    ASSERT_EQ(out.vae_width, 512);
    ASSERT_EQ(out.clip_height, 224);
    ASSERT_EQ(out.clip_width, 224);
    ASSERT_EQ(out.vae_nhwc.size(), 512u * 512u * 3u);
    ASSERT_EQ(out.clip_nhwc.size(), 224u * 224u * 3u);
    const Image rgb = to_rgb(input);
    const struct {
      const char* name;
      const std::vector<float>& got;
      Image crop;
    } branches[] = {{"vae", out.vae_nhwc, resize_shortest_edge_center_crop(rgb, 512, Resample::Bilinear, 512, 512)},
                    {"clip", out.clip_nhwc, resize_shortest_edge_center_crop(rgb, 224, Resample::Bicubic, 224, 224)}};
    for (const auto& b : branches) {
      const std::string what = std::string(b.name) + " " + describe(c.at("input"));
      ASSERT_TRUE(matches_record(b.crop, c.at(b.name), what));
      std::int64_t worst = 0;
      for (std::size_t i = 0; i < b.got.size(); ++i) {
        worst = std::max(worst, ulp_distance(b.got[i], table_value(tables.at(b.name), b.crop.pixels[i], int(i % 3))));
      }
      EXPECT_LE(worst, 1) << what;
    }
    for (float v : out.vae_nhwc) ASSERT_TRUE(v >= -0.625f && v <= 0.625f) << v;
  }
}

TEST(Preprocess, DisabledStepsAreSkipped) {
  PreprocessorConfig cfg; // transformers defaults: CLIP mean/std, 224, bicubic
  cfg.do_resize = false;
  cfg.do_center_crop = false;
  cfg.do_rescale = false;
  cfg.do_normalize = false;
  const Image in = synthetic("noise", 9, 6, 3, 11);
  const PreprocessedImage raw = preprocess_image(in, cfg);
  ASSERT_EQ(raw.width, 9);
  ASSERT_EQ(raw.height, 6);
  for (std::size_t i = 0; i < raw.nhwc.size(); ++i) ASSERT_EQ(raw.nhwc[i], static_cast<float>(in.pixels[i]));

  cfg.do_center_crop = true; // crop without resize: left = (9 - 5) // 2, top = (6 - 4) // 2
  cfg.crop_width = 5;
  cfg.crop_height = 4;
  const PreprocessedImage cropped = preprocess_image(in, cfg);
  EXPECT_EQ(cropped.width, 5);
  EXPECT_EQ(cropped.height, 4);
  EXPECT_EQ(cropped.nhwc[0], static_cast<float>(in.at(2, 1, 0)));

  cfg.do_center_crop = false;
  cfg.do_resize = true;
  cfg.shortest_edge = 12;
  const PreprocessedImage resized = preprocess_image(in, cfg);
  EXPECT_EQ(resized.width, 18);
  EXPECT_EQ(resized.height, 12);
}

TEST(Preprocess, RejectsUnsupportedFilter) {
  PreprocessorConfig cfg;
  cfg.resample = 0;
  expect_error([&] { preprocess_image(synthetic("noise", 4, 4, 3, 12), cfg); }, ErrorKind::Unsupported,
               {"resample filter 0"});
}

} // namespace
} // namespace z123::test
