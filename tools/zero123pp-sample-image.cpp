// zero123pp-sample-image: renders the main job's sample input, a lit cube with six differently
// coloured faces seen from above at an angle, on a transparent background, so the project needs
// no downloaded photo. Orthographic ray casting with 4x4 samples per pixel (smooth, antialiased
// edges and an alpha channel from coverage). Only basic float arithmetic: the same size gives
// the same bytes on every run.
//   zero123pp-sample-image [--size N] [--white] OUTPUT.png
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "z123/image/codec.hpp"

namespace {

struct Vec {
  float x, y, z;
};
Vec operator*(float s, Vec v) { return {s * v.x, s * v.y, s * v.z}; }
float dot(Vec a, Vec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
Vec normalized(Vec v) { return (1.0f / std::sqrt(dot(v, v))) * v; }

// Camera space: x right, y up, z towards the viewer. The cube (half side 1, axis-aligned in its
// own space) is turned 35 degrees about the vertical axis and tipped 25 degrees towards the
// viewer, so three faces show, each at a different angle to the light.
struct Pose {
  float cy = std::cos(0.6109f), sy = std::sin(0.6109f);  // yaw 35 degrees
  float cp = std::cos(0.4363f), sp = -std::sin(0.4363f); // pitch 25 degrees, top towards the viewer
  // Camera -> cube space (the inverse rotation: pitch back, then yaw back).
  Vec to_cube(Vec v) const {
    const Vec p{v.x, cp * v.y - sp * v.z, sp * v.y + cp * v.z};
    return {cy * p.x + sy * p.z, p.y, -sy * p.x + cy * p.z};
  }
  // Cube space -> camera space.
  Vec to_camera(Vec v) const {
    const Vec p{cy * v.x - sy * v.z, v.y, sy * v.x + cy * v.z};
    return {p.x, cp * p.y + sp * p.z, -sp * p.y + cp * p.z};
  }
};

// Face colours (linear 0..1): +x, -x, +y (top), -y, +z (front), -z.
constexpr std::array<Vec, 6> kFaceColour{{{0.85f, 0.25f, 0.20f},
                                          {0.20f, 0.65f, 0.30f},
                                          {0.95f, 0.80f, 0.25f},
                                          {0.30f, 0.30f, 0.35f},
                                          {0.20f, 0.40f, 0.85f},
                                          {0.80f, 0.45f, 0.80f}}};

// Colour of the cube where the viewing ray through camera point (u, v) hits it; false on a miss.
bool shade(const Pose& pose, float u, float v, Vec& colour) {
  const Vec origin = pose.to_cube({u, v, 10.0f});
  const Vec dir = pose.to_cube({0.0f, 0.0f, -1.0f});
  const float o[3] = {origin.x, origin.y, origin.z}, d[3] = {dir.x, dir.y, dir.z};
  // Slab test: the ray enters the cube at the largest of the per-axis entry distances.
  float t_in = -1e30f, t_out = 1e30f;
  int face = -1;
  for (int a = 0; a < 3; ++a) {
    if (std::fabs(d[a]) < 1e-8f) {
      if (std::fabs(o[a]) > 1.0f) return false;
      continue;
    }
    float t0 = (-1.0f - o[a]) / d[a], t1 = (1.0f - o[a]) / d[a];
    const int near_face = 2 * a + (d[a] < 0.0f ? 0 : 1); // entering through +a when moving towards -a
    if (t0 > t1) std::swap(t0, t1);
    if (t0 > t_in) {
      t_in = t0;
      face = near_face;
    }
    t_out = std::min(t_out, t1);
  }
  if (face < 0 || t_in > t_out) return false;
  Vec normal{0, 0, 0};
  const float sign = face % 2 == 0 ? 1.0f : -1.0f;
  (face / 2 == 0 ? normal.x : face / 2 == 1 ? normal.y : normal.z) = sign;
  const Vec light = normalized({-0.45f, 0.75f, 0.55f}); // from the upper left, in front
  const float lambert = std::max(0.0f, dot(pose.to_camera(normal), light));
  colour = (0.30f + 0.70f * lambert) * kFaceColour[static_cast<std::size_t>(face)];
  return true;
}

std::uint8_t to_byte(float linear) {
  const float srgb = linear <= 0.0031308f ? 12.92f * linear : 1.055f * std::pow(linear, 1.0f / 2.4f) - 0.055f;
  return static_cast<std::uint8_t>(std::lround(std::clamp(srgb, 0.0f, 1.0f) * 255.0f));
}

z123::Image render(int size, bool white) {
  constexpr int kSamples = 4;      // per axis: 16 samples per pixel
  constexpr float kExtent = 2.05f; // half-width of the view in cube units: the cube fills ~80%
  const Pose pose;
  z123::Image img = z123::Image::blank(size, size, 4);
  for (int y = 0; y < size; ++y) {
    for (int x = 0; x < size; ++x) {
      Vec sum{0, 0, 0};
      int hits = 0;
      for (int sy = 0; sy < kSamples; ++sy) {
        for (int sx = 0; sx < kSamples; ++sx) {
          const float u = ((static_cast<float>(x) + (sx + 0.5f) / kSamples) / size * 2.0f - 1.0f) * kExtent;
          const float v = (1.0f - (static_cast<float>(y) + (sy + 0.5f) / kSamples) / size * 2.0f) * kExtent;
          Vec c{};
          if (!shade(pose, u, v, c)) continue;
          sum = {sum.x + c.x, sum.y + c.y, sum.z + c.z};
          ++hits;
        }
      }
      std::uint8_t* px = img.row(y) + static_cast<std::size_t>(x) * 4;
      const float coverage = static_cast<float>(hits) / (kSamples * kSamples);
      if (hits == 0) {
        std::memset(px, 255, 3); // white under the transparent background, as object photos have
        px[3] = white ? 255 : 0;
        continue;
      }
      Vec c = (1.0f / static_cast<float>(hits)) * sum; // straight (not premultiplied) colour
      if (white)
        c = {coverage * c.x + (1 - coverage), coverage * c.y + (1 - coverage), coverage * c.z + (1 - coverage)};
      px[0] = to_byte(c.x);
      px[1] = to_byte(c.y);
      px[2] = to_byte(c.z);
      px[3] = white ? 255 : static_cast<std::uint8_t>(std::lround(coverage * 255.0f));
    }
  }
  return img;
}

const char* kHelp = R"(NAME
    zero123pp-sample-image - render the sample input image (a lit cube)

SYNOPSIS
    zero123pp-sample-image [--size N] [--white] OUTPUT.png

DESCRIPTION
    Renders a lit cube on a transparent background into an N x N RGBA PNG, the same bytes on
    every run: the sample input of scripts/run.sh, for trying zero123pp without an image.

OPTIONS
    --size N           side in pixels, 16..4096 (default 512)
    --white            a white background instead of a transparent one
    -h, --help         this text

EXIT STATUS
    0 success; 1 the file could not be written; 2 usage error
)";

int usage(const char* why) {
  std::fprintf(stderr, "zero123pp-sample-image: %s\nTry 'zero123pp-sample-image --help'.\n", why);
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  int size = 512;
  bool white = false;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (a == "--white") {
      white = true;
    } else if (a == "--size") {
      if (i + 1 >= argc) return usage("--size needs a number");
      char* end = nullptr;
      const long n = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || n < 16 || n > 4096) return usage("--size must be a number from 16 to 4096");
      size = static_cast<int>(n);
    } else if (!a.empty() && a[0] == '-') {
      return usage(("unknown option " + a).c_str());
    } else if (out.empty()) {
      out = a;
    } else {
      return usage("only one OUTPUT.png");
    }
  }
  if (out.empty()) return usage("need an OUTPUT.png");
  try {
    z123::save_png(out, render(size, white));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zero123pp-sample-image: cannot write %s: %s\n", out.c_str(), e.what());
    return 1;
  }
  return 0;
}
