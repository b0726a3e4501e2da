// Bit-exact parity of the uint8 preprocessing stages with Pillow 9.4 / transformers' numpy crop,
// against the results recorded by make_pillow_reference.py (tests/data/image/manifest.json).
#include <gtest/gtest.h>

#include "image_test_util.hpp"
#include "z123/image/preprocess.hpp"
#include "z123/model/configs.hpp"

namespace z123::test {
namespace {

const char* filter_name(int code) { return resample_name(code); }

TEST(PillowParity, ToRgbMatchesPasteOnGray127) {
  const auto& cases = image_manifest().at("to_rgb");
  ASSERT_FALSE(cases.empty());
  for (const auto& c : cases) {
    const std::string what = "to_rgb " + describe(c.at("input"));
    EXPECT_TRUE(matches_record(to_rgb(synthetic(c.at("input"))), c.at("output"), what));
  }
}

TEST(PillowParity, ResizeMatchesPillow) {
  const auto& cases = image_manifest().at("resize");
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    const Image in = synthetic(c.at("input"));
    const int code = c.at("filter");
    std::string what = "resize " + describe(c.at("input")) + " -> " + std::to_string(c.at("width").get<int>()) + "x" +
                       std::to_string(c.at("height").get<int>()) + " " + filter_name(code);
    const Image got = c.at("shortest_edge").is_null()
                          ? resize(in, c.at("width"), c.at("height"), resample_from_pil_code(code))
                          : resize_shortest_edge(in, c.at("shortest_edge"), resample_from_pil_code(code));
    EXPECT_TRUE(matches_record(got, c.at("output"), what));
  }
}

// The records must be able to tell near-identical resamplers apart (bilinear vs bicubic here
// differ by a level or two on most pixels), or the parity tests above would prove nothing.
TEST(PillowParity, RecordsDiscriminateFilters) {
  for (const auto& c : image_manifest().at("resize")) {
    const Image in = synthetic(c.at("input"));
    if (c.at("filter").get<int>() != 3 || c.at("shortest_edge").is_null() || in.width * in.height == 1 ||
        (in.width == c.at("width").get<int>() && in.height == c.at("height").get<int>())) {
      continue; // flat or copied outputs do not depend on the filter
    }
    const Image other = resize_shortest_edge(in, c.at("shortest_edge"), Resample::Bilinear);
    EXPECT_FALSE(matches_record(other, c.at("output"), "bilinear instead of bicubic", /*dump=*/false))
        << describe(c.at("input"));
  }
}

TEST(PillowParity, CenterCropMatchesTransformers) {
  const auto& cases = image_manifest().at("center_crop");
  ASSERT_FALSE(cases.empty());
  for (const auto& c : cases) {
    const std::string what = "center_crop " + describe(c.at("input")) + " to " +
                             std::to_string(c.at("width").get<int>()) + "x" + std::to_string(c.at("height").get<int>());
    EXPECT_TRUE(
        matches_record(center_crop(synthetic(c.at("input")), c.at("width"), c.at("height")), c.at("output"), what));
  }
}

// to_rgb -> resize -> crop of both v1.2 feature extractors, through the fused window path that
// preprocess() uses.
TEST(PillowParity, FeatureExtractorUint8StagesMatch) {
  const auto& cases = image_manifest().at("preprocess");
  ASSERT_FALSE(cases.empty());
  struct Branch {
    const char* name;
    int shortest, crop;
    Resample filter;
  };
  const Branch branches[] = {{"vae", 512, 512, Resample::Bilinear}, {"clip", 224, 224, Resample::Bicubic}};
  for (const auto& c : cases) {
    const Image rgb = to_rgb(synthetic(c.at("input")));
    for (const Branch& b : branches) {
      const std::string what = std::string(b.name) + " branch of " + describe(c.at("input"));
      EXPECT_TRUE(matches_record(resize_shortest_edge_center_crop(rgb, b.shortest, b.filter, b.crop, b.crop),
                                 c.at(b.name), what));
    }
  }
}

} // namespace
} // namespace z123::test
