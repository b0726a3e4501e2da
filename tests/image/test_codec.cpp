// PNG / JPEG decoding against what Pillow decodes from the same files (fixtures written by
// make_pillow_reference.py; CMYK/YCCK JPEGs against Pillow's convert("RGB")), and encode/decode
// round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "image/codec_formats.hpp"
#include "image_test_util.hpp"
#include "z123/image/codec.hpp"

namespace z123::test {
namespace {

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::path(::testing::TempDir()) / ("z123_image_" + name);
}

// Decodes a manifest entry's file and compares every byte with what Pillow decoded from it.
::testing::AssertionResult decodes_like_pillow(const nlohmann::json& e) {
  const std::string file = e.at("file");
  const Image got = load_image(image_data_dir() / file);
  if (got.width != e.at("width").get<int>() || got.height != e.at("height").get<int>() ||
      got.channels != e.at("channels").get<int>()) {
    return ::testing::AssertionFailure() << file << ": decoded " << got.width << "x" << got.height << "x"
                                         << got.channels << ", Pillow " << e.at("width") << "x" << e.at("height") << "x"
                                         << e.at("channels");
  }
  const std::vector<std::uint8_t> want = read_file_bytes(image_data_dir() / e.at("expected").get<std::string>());
  if (got.pixels.size() != want.size()) {
    return ::testing::AssertionFailure() << file << ": " << want.size() << " expected bytes for the size";
  }
  std::size_t diffs = 0, first = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (got.pixels[i] != want[i] && diffs++ == 0) first = i;
  }
  if (diffs == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << file << ": " << diffs << " bytes differ, the first at byte " << first << ": "
                                       << int(got.pixels[first]) << " vs Pillow " << int(want[first]);
}

const nlohmann::json& fixture(const std::string& file) {
  for (const auto& e : image_manifest().at("codec")) {
    if (e.at("file") == file) return e;
  }
  throw io_error("manifest.json: no codec fixture " + file + " (re-run make_pillow_reference.py)");
}

TEST(Codec, DecodesEveryFixtureLikePillow) {
  int checked = 0;
  for (const auto& e : image_manifest().at("codec")) {
    if (!e.contains("expected")) continue;
    EXPECT_TRUE(decodes_like_pillow(e));
    ++checked;
  }
  EXPECT_GE(checked, 24);
}

// Print workflows write CMYK (Photoshop: inverted, with an Adobe APP14 marker) and YCCK; Pillow
// opens all of them as mode CMYK and the pipeline converts to RGB.
TEST(Codec, CmykAndYcckJpegsDecodeLikePillowsConvertRgb) {
  for (const char* file : {"cmyk.jpg", "cmyk_no_adobe.jpg", "cmyk_progressive_odd.jpg", "ycck.jpg"}) {
    const nlohmann::json& e = fixture(file);
    ASSERT_TRUE(e.contains("expected")) << file;
    EXPECT_EQ(e.at("channels").get<int>(), 3) << file;
    EXPECT_TRUE(decodes_like_pillow(e));
  }
  // Pillow inverts a 4-component JPEG whether or not it carries the Adobe marker.
  EXPECT_TRUE(load_image(image_data_dir() / "cmyk.jpg").pixels ==
              load_image(image_data_dir() / "cmyk_no_adobe.jpg").pixels);
}

// Every (ink, black) pair through the CMYK -> RGB step, against Pillow's convert("RGB") of the
// same 256 x 256 CMYK image (make_pillow_reference.py's cmyk_to_rgb_table). libjpeg hands the
// samples over in Adobe polarity, so the decoder's function takes them inverted.
TEST(Codec, CmykToRgbMatchesPillowForEveryInkAndBlack) {
  std::vector<std::uint8_t> adobe(256 * 256 * 4);
  for (int y = 0; y < 256; ++y) {
    for (int x = 0; x < 256; ++x) {
      const int cmyk[4] = {x, 255 - x, (7 * x + 3 * y) % 256, y};
      for (int c = 0; c < 4; ++c) adobe[(static_cast<std::size_t>(y) * 256 + x) * 4 + c] = 255 - cmyk[c];
    }
  }
  Image rgb = Image::blank(256, 256, 3);
  image_detail::adobe_cmyk_to_rgb(adobe.data(), rgb.pixels.data(), 256 * 256);
  EXPECT_TRUE(matches_record(rgb, image_manifest().at("cmyk_to_rgb"), "cmyk_to_rgb"));
}

TEST(Codec, TruncatedCmykAndYcckJpegsFail) {
  for (const char* file : {"cmyk.jpg", "cmyk_progressive_odd.jpg", "ycck.jpg"}) {
    const std::vector<std::uint8_t> jpg = read_file_bytes(image_data_dir() / file);
    for (std::size_t n = 1; n < jpg.size(); ++n) {
      try {
        decode_image(std::vector<std::uint8_t>(jpg.begin(), jpg.begin() + static_cast<std::ptrdiff_t>(n)), file);
        ADD_FAILURE() << file << " cut to " << n << " of " << jpg.size() << " bytes decoded";
      } catch (const Error& e) {
        ASSERT_EQ(e.kind(), ErrorKind::Format) << file << " cut to " << n << ": " << e.what();
      }
    }
  }
}

TEST(Codec, SniffsSignatures) {
  const std::vector<std::uint8_t> png = encode_png(synthetic("noise", 2, 2, 3, 1));
  EXPECT_EQ(sniff_image_format(png), ImageFormat::Png);
  const std::vector<std::uint8_t> jpg = encode_jpeg(synthetic("noise", 8, 8, 3, 1));
  EXPECT_EQ(sniff_image_format(jpg), ImageFormat::Jpeg);
  const std::vector<std::uint8_t> other{'G', 'I', 'F', '8', '9', 'a'};
  EXPECT_EQ(sniff_image_format(other), ImageFormat::Unknown);
  EXPECT_EQ(sniff_image_format({}), ImageFormat::Unknown);
}

TEST(Codec, PngRoundTripIsLossless) {
  for (int c : {1, 3, 4}) {
    for (auto [w, h] : {std::pair{1, 1}, std::pair{13, 7}, std::pair{64, 33}, std::pair{300, 2}}) {
      const Image in = synthetic("noise", w, h, c, static_cast<std::uint64_t>(w * 10 + c));
      const Image out = decode_image(encode_png(in), "memory");
      EXPECT_EQ(out.width, w);
      EXPECT_EQ(out.height, h);
      EXPECT_EQ(out.channels, c);
      EXPECT_TRUE(out.pixels == in.pixels) << w << "x" << h << "x" << c;
    }
  }
}

TEST(Codec, SavePngLoadImageThroughAFile) {
  const Image in = synthetic("smooth", 40, 30, 4, 2);
  const std::filesystem::path p = temp_file("roundtrip.png");
  save_png(p, in);
  const Image out = load_image(p);
  EXPECT_TRUE(out.pixels == in.pixels);
  std::filesystem::remove(p);
}

double mean_abs_diff(const Image& a, const Image& b, int* max_diff) {
  double sum = 0;
  *max_diff = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i) {
    const int d = std::abs(int(a.pixels[i]) - int(b.pixels[i]));
    sum += d;
    *max_diff = std::max(*max_diff, d);
  }
  return sum / static_cast<double>(a.pixels.size());
}

TEST(Codec, JpegRoundTripIsClose) {
  for (int c : {1, 3}) {
    const Image in = synthetic("smooth", 61, 45, c, 3);
    const std::filesystem::path p = temp_file("roundtrip.jpg");
    save_jpeg(p, in, 95);
    const Image out = load_image(p);
    std::filesystem::remove(p);
    ASSERT_EQ(out.width, 61);
    ASSERT_EQ(out.height, 45);
    ASSERT_EQ(out.channels, c);
    int max_diff = 0;
    const double mad = mean_abs_diff(in, out, &max_diff);
    // The smooth image carries +-8 of hash noise, which JPEG partly smooths away.
    EXPECT_LT(mad, 4.0) << c << " channels";
    EXPECT_LT(max_diff, 32) << c << " channels";
  }
}

TEST(Codec, LowerJpegQualityIsSmaller) {
  const Image in = synthetic("smooth", 64, 64, 3, 4);
  EXPECT_LT(encode_jpeg(in, 30).size(), encode_jpeg(in, 95).size());
}

TEST(Codec, EncodersRejectWhatTheyCannotStore) {
  expect_error([] { encode_jpeg(synthetic("noise", 4, 4, 4, 5)); }, ErrorKind::InvalidArgument,
               {"4 channels", "no alpha"});
  expect_error([] { encode_jpeg(synthetic("noise", 4, 4, 3, 5), 0); }, ErrorKind::InvalidArgument,
               {"quality 0", "1..100"});
  expect_error(
      [] {
        encode_png(Image{4, 4, 2, std::vector<std::uint8_t>(32)});
      },
      ErrorKind::InvalidArgument, {"encode_png", "2 channels"});
}

} // namespace
} // namespace z123::test
