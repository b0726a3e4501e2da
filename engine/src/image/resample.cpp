// Pillow's antialiased separable resampling, reproduced operation by operation so the uint8
// output is bit-identical (tests/image checks it against Pillow 9.4):
//  * per output index: center = (i + 0.5) * scale, the filter widened by max(scale, 1) so a
//    downscale averages every input pixel (antialiasing), taps [int(center - support + 0.5),
//    int(center + support + 0.5)) clipped to the image, weights normalised to sum 1 in double;
//  * weights rounded to 22 fractional bits (PRECISION_BITS = 32 - 8 - 2 keeps 255 * sum|w|
//    inside an int32), accumulated from 1 << 21 (round half up), clipped to 0..255;
//  * horizontal pass first, only over the input rows the vertical pass reads, with a uint8
//    intermediate image; a pass whose size does not change is skipped (it would be an identity).
// The floating-point expressions keep Pillow's exact order and constants (e.g. 1/filterscale
// multiplied, not divided; float literals in the Hamming window), since one ulp can flip a
// rounded coefficient.
#include "image/resample.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "z123/error.hpp"
#include "z123/parallel.hpp"

namespace z123::image_detail {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;
// Rows of a pass per host thread at least: rows are independent (integer sums), so splitting them
// changes no byte. A 512-wide row of three channels takes a few microseconds, about what a
// thread's start costs; the 512 x 512 VAE input took 1.8 ms on one core (session 21).
constexpr std::size_t kRowsPerThread = 32;

double box_filter(double x) { return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0; }

double bilinear_filter(double x) {
  if (x < 0.0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

double hamming_filter(double x) {
  if (x < 0.0) x = -x;
  if (x == 0.0) return 1.0;
  if (x >= 1.0) return 0.0;
  x = x * std::numbers::pi;
  return std::sin(x) / x * (0.54f + 0.46f * std::cos(x)); // Pillow writes these as float literals
}

double bicubic_filter(double x) {
  constexpr double a = -0.5; // Keys' kernel as Pillow uses it (not -0.75 as OpenCV/PyTorch)
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

double sinc_filter(double x) {
  if (x == 0.0) return 1.0;
  x = x * std::numbers::pi;
  return std::sin(x) / x;
}

double lanczos_filter(double x) { return (-3.0 <= x && x < 3.0) ? sinc_filter(x) * sinc_filter(x / 3) : 0.0; }

struct Filter {
  double (*fn)(double);
  double support;
};

Filter filter_for(Resample r) {
  switch (r) {
  case Resample::Box: return {box_filter, 0.5};
  case Resample::Bilinear: return {bilinear_filter, 1.0};
  case Resample::Hamming: return {hamming_filter, 1.0};
  case Resample::Bicubic: return {bicubic_filter, 2.0};
  case Resample::Lanczos: return {lanczos_filter, 3.0};
  }
  throw invalid_argument("resize: unknown filter code " + std::to_string(static_cast<int>(r)));
}

// Fixed-point taps of the output indices [first, first + count) of one axis.
struct Taps {
  int stride = 0;              // coefficients stored per output index
  std::vector<int> start;      // first input index read
  std::vector<int> length;     // number of input indices read
  std::vector<std::int32_t> k; // [count * stride]
};

Taps precompute_taps(int in_size, int out_size, int first, int count, const Filter& filter) {
  // Pillow: scale = (double)(in1 - in0) / outSize with the float box (0, in_size).
  const double scale = static_cast<double>(static_cast<float>(in_size)) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;
  const double support = filter.support * filterscale;
  Taps t;
  t.stride = static_cast<int>(std::ceil(support)) * 2 + 1;
  t.start.resize(static_cast<std::size_t>(count));
  t.length.resize(static_cast<std::size_t>(count));
  t.k.assign(static_cast<std::size_t>(count) * static_cast<std::size_t>(t.stride), 0);
  std::vector<double> w(static_cast<std::size_t>(t.stride));
  for (int i = 0; i < count; ++i) {
    const int xx = first + i;
    const double center = 0.0 + (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      const double v = filter.fn((x + xmin - center + 0.5) * ss);
      w[static_cast<std::size_t>(x)] = v;
      ww += v;
    }
    std::int32_t* k = &t.k[static_cast<std::size_t>(i) * static_cast<std::size_t>(t.stride)];
    for (int x = 0; x < xmax; ++x) {
      double v = w[static_cast<std::size_t>(x)];
      if (ww != 0.0) v /= ww;
      // normalize_coeffs_8bpc: round half away from zero.
      k[x] = v < 0 ? static_cast<std::int32_t>(-0.5 + v * (1 << kPrecisionBits))
                   : static_cast<std::int32_t>(0.5 + v * (1 << kPrecisionBits));
    }
    t.start[static_cast<std::size_t>(i)] = xmin;
    t.length[static_cast<std::size_t>(i)] = xmax;
  }
  return t;
}

// Pillow's clip8 (255 from 1 << 30 up, 0 at or below 0, else in >> 22), written without branches
// so that the row loops vectorize: an arithmetic shift keeps negatives negative.
inline std::uint8_t clip8(std::int32_t in) {
  return static_cast<std::uint8_t>(std::clamp(in >> kPrecisionBits, 0, 255));
}

// Output columns [x0, x0 + width) of the horizontal pass over input rows [row0, row1).
Image horizontal_pass(const Image& in, int out_width, int x0, int width, int row0, int row1, const Filter& f) {
  const int c = in.channels;
  const Taps t = precompute_taps(in.width, out_width, x0, width, f);
  Image out = Image::blank(width, row1 - row0, c);
  parallel_ranges(static_cast<std::size_t>(row1 - row0), kRowsPerThread, [&](std::size_t first, std::size_t last) {
    for (int y = row0 + static_cast<int>(first); y < row0 + static_cast<int>(last); ++y) {
      const std::uint8_t* src = in.row(y);
      std::uint8_t* dst = out.row(y - row0);
      for (int i = 0; i < width; ++i) {
        const std::int32_t* k = &t.k[static_cast<std::size_t>(i) * static_cast<std::size_t>(t.stride)];
        const std::uint8_t* s = src + static_cast<std::size_t>(t.start[static_cast<std::size_t>(i)]) * c;
        const int n = t.length[static_cast<std::size_t>(i)];
        std::int32_t ss[4] = {1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1),
                              1 << (kPrecisionBits - 1)};
        for (int x = 0; x < n; ++x) {
          for (int ch = 0; ch < c; ++ch) ss[ch] += s[x * c + ch] * k[x];
        }
        for (int ch = 0; ch < c; ++ch) dst[i * c + ch] = clip8(ss[ch]);
      }
    }
  });
  return out;
}

// The vertical pass with taps `t` (of the window's output rows); `in` holds the source rows
// starting at source row `row0` (the horizontal pass only produced the rows that are read).
// Rows are accumulated whole (row-major friendly); integer sums do not depend on the order.
Image vertical_pass(const Image& in, int row0, const Taps& t) {
  const int height = static_cast<int>(t.start.size());
  Image out = Image::blank(in.width, height, in.channels);
  const std::size_t rb = in.row_bytes();
  parallel_ranges(static_cast<std::size_t>(height), kRowsPerThread, [&](std::size_t first, std::size_t last) {
    std::vector<std::int32_t> acc(rb);
    for (std::size_t i = first; i < last; ++i) {
      const std::int32_t* k = &t.k[i * static_cast<std::size_t>(t.stride)];
      const std::uint8_t* s = in.row(t.start[i] - row0);
      const int n = t.length[i];
      std::fill(acc.begin(), acc.end(), 1 << (kPrecisionBits - 1));
      std::int32_t* a = acc.data();
      for (int y = 0; y < n; ++y) {
        const std::uint8_t* src = s + static_cast<std::size_t>(y) * rb;
        const std::int32_t ky = k[y]; // hoisted: `a` might alias k for all the compiler knows
        for (std::size_t b = 0; b < rb; ++b) a[b] += src[b] * ky;
      }
      std::uint8_t* dst = out.row(static_cast<int>(i));
      for (std::size_t b = 0; b < rb; ++b) dst[b] = clip8(a[b]);
    }
  });
  return out;
}

// Columns [x0, x0 + width) of rows [y0, y0 + height), as a new image.
Image copy_region(const Image& in, int x0, int y0, int width, int height) {
  Image out = Image::blank(width, height, in.channels);
  const std::size_t n = out.row_bytes();
  for (int y = 0; y < height; ++y) {
    const std::uint8_t* s = in.row(y0 + y) + static_cast<std::size_t>(x0) * in.channels;
    std::copy(s, s + n, out.row(y));
  }
  return out;
}

} // namespace

Image resample_window(const Image& image, int out_width, int out_height, Resample filter, int x0, int y0, int width,
                      int height) {
  check_image(image, "resize input");
  if (out_width <= 0 || out_height <= 0 || x0 < 0 || y0 < 0 || width <= 0 || height <= 0 || x0 > out_width - width ||
      y0 > out_height - height) {
    throw invalid_argument("resize: window " + std::to_string(width) + "x" + std::to_string(height) + " at (" +
                           std::to_string(x0) + ", " + std::to_string(y0) + ") does not fit in the " +
                           std::to_string(out_width) + "x" + std::to_string(out_height) + " output");
  }
  const Filter f = filter_for(filter);
  const bool need_horizontal = out_width != image.width;
  const bool need_vertical = out_height != image.height;

  if (!need_vertical) { // the window's own rows, resampled horizontally or copied
    return need_horizontal ? horizontal_pass(image, out_width, x0, width, y0, y0 + height, f)
                           : copy_region(image, x0, y0, width, height);
  }
  const Taps vt = precompute_taps(image.height, out_height, y0, height, f);
  // Source rows the window reads (Pillow's ybox_first / ybox_last, for the window only).
  int row0 = image.height, row1 = 0;
  for (int i = 0; i < height; ++i) {
    row0 = std::min(row0, vt.start[static_cast<std::size_t>(i)]);
    row1 = std::max(row1, vt.start[static_cast<std::size_t>(i)] + vt.length[static_cast<std::size_t>(i)]);
  }
  const Image columns = need_horizontal ? horizontal_pass(image, out_width, x0, width, row0, row1, f)
                                        : copy_region(image, x0, row0, width, row1 - row0);
  return vertical_pass(columns, row0, vt);
}

} // namespace z123::image_detail
