// Shared by the image tests: the synthetic images of make_pillow_reference.py (same integer hash,
// so inputs need not be committed), the manifest of Pillow results in tests/data/image, and
// checks of an image against a recorded result (size, sampled pixels, FNV-1a 64 of all bytes).
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "support/expect_error.hpp"
#include "z123/error.hpp"
#include "z123/image/codec.hpp"
#include "z123/image/image.hpp"

namespace z123::test {

inline std::filesystem::path image_data_dir() { return Z123_IMAGE_TEST_DATA; }

inline const nlohmann::json& image_manifest() {
  static const nlohmann::json m = [] {
    std::ifstream f(image_data_dir() / "manifest.json");
    if (!f) throw io_error((image_data_dir() / "manifest.json").string() + ": cannot open");
    return nlohmann::json::parse(f);
  }();
  return m;
}

inline std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw io_error(p.string() + ": cannot open");
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// lowbias32, as hash32 in make_pillow_reference.py.
inline std::uint32_t hash32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// make_pillow_reference.py's synthetic(kind, w, h, c, seed).
inline Image synthetic(const std::string& kind, int w, int h, int c, std::uint64_t seed) {
  Image im = Image::blank(w, h, c);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int ch = 0; ch < c; ++ch) {
        const std::uint64_t idx = (static_cast<std::uint64_t>(y) * w + x) * c + ch;
        const std::uint32_t noise = hash32(static_cast<std::uint32_t>((idx + seed * 0x9E3779B9ULL) & 0xffffffffU));
        int v = 0;
        if (kind == "noise") {
          v = static_cast<int>(noise & 255);
        } else if (kind == "smooth") {
          const int gx = x * 255 / std::max(w - 1, 1), gy = y * 255 / std::max(h - 1, 1);
          const int gd = (x + y) * 255 / std::max(w + h - 2, 1);
          const int base = ch % 3 == 0 ? gx : ch % 3 == 1 ? gy : gd;
          v = std::clamp(base + static_cast<int>(noise & 15) - 8, 0, 255);
        } else if (kind == "alpha_sweep") {
          v = ch == 0 ? x : ch == 1 ? 255 - x : ch == 2 ? static_cast<int>(noise & 255) : y;
        } else {
          throw invalid_argument("synthetic: unknown kind " + kind);
        }
        im.pixels[idx] = static_cast<std::uint8_t>(v);
      }
    }
  }
  return im;
}

inline Image synthetic(const nlohmann::json& spec) {
  return synthetic(spec.at("kind").get<std::string>(), spec.at("width").get<int>(), spec.at("height").get<int>(),
                   spec.at("channels").get<int>(), spec.at("seed").get<std::uint64_t>());
}

inline std::string describe(const nlohmann::json& spec) {
  return spec.at("kind").get<std::string>() + " " + std::to_string(spec.at("width").get<int>()) + "x" +
         std::to_string(spec.at("height").get<int>()) + "x" + std::to_string(spec.at("channels").get<int>()) +
         " seed " + std::to_string(spec.at("seed").get<int>());
}

inline std::string fnv1a64(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ULL;
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(h));
  return s;
}

// Size, sampled pixels (which localise a difference) and the hash of all bytes. On a mismatch the
// image is saved under the test temp dir so it can be compared with Pillow's by hand.
inline ::testing::AssertionResult matches_record(const Image& got, const nlohmann::json& rec, const std::string& what,
                                                 bool dump = true) {
  const int w = rec.at("width"), h = rec.at("height"), c = rec.at("channels");
  if (got.width != w || got.height != h || got.channels != c) {
    return ::testing::AssertionFailure() << what << ": size " << got.width << "x" << got.height << "x" << got.channels
                                         << ", Pillow " << w << "x" << h << "x" << c;
  }
  auto fail = ::testing::AssertionFailure();
  bool bad = false;
  for (const auto& s : rec.at("samples")) {
    const int x = s[0], y = s[1];
    for (int ch = 0; ch < c; ++ch) {
      const int want = s[2][static_cast<std::size_t>(ch)];
      if (got.at(x, y, ch) != want) {
        fail << what << ": pixel (" << x << ", " << y << ") channel " << ch << " is " << int(got.at(x, y, ch))
             << ", Pillow " << want << "\n";
        bad = true;
      }
    }
  }
  const std::string hash = fnv1a64(got.pixels);
  if (hash != rec.at("fnv1a64").get<std::string>()) {
    fail << what << ": FNV-1a of the pixels " << hash << ", Pillow " << rec.at("fnv1a64").get<std::string>();
    bad = true;
  }
  if (!bad) return ::testing::AssertionSuccess();
  if (!dump) return fail;
  std::string name = what;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  const std::filesystem::path file = std::filesystem::path(::testing::TempDir()) / (name + ".png");
  try {
    save_png(file, got);
    fail << "\n(saved as " << file.string() << ")";
  } catch (const std::exception&) {
  }
  return fail;
}

} // namespace z123::test
