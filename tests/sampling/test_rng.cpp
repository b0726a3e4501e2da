// Counter-based RNG: Philox4x32-10 against Random123's published known answers, the fp32
// Box-Muller against float64 libm on the same quantized inputs, the bit-exact known answers that
// docs/rng.md publishes, the statistics of the normals, stream independence and offset addressing.
#include "z123/error.hpp"
#include "z123/sampling/rng.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace z123::sampling;

// Random123 tests/kat_vectors, the three "philox4x32 10" lines: counter, key -> output.
TEST(Rng, PhiloxKnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}), (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Rng, CounterAndKeyLayout) {
  const std::uint64_t seed = 0x0123456789ABCDEFull, stream = 0xFEDCBA9876543210ull, block = 0x1122334455667788ull;
  EXPECT_EQ(random_block(seed, stream, block),
            philox4x32_10({0x55667788, 0x11223344, 0x76543210, 0xFEDCBA98}, {0x89ABCDEF, 0x01234567}));
  EXPECT_EQ(random_block(0, 0, 0), (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// The known answers published in docs/rng.md (bit patterns of the fp32 results).
TEST(Rng, NormalKnownAnswers) {
  struct Case {
    std::uint64_t seed, stream, index;
    std::uint32_t z;
  };
  const Case cases[] = {
      {0, 0, 0, 0x3F7DBB30},
      {0, 0, 1, 0xBF6CB6B3},
      {0, 0, 2, 0xBF1E1BA2},
      {0, 0, 3, 0xBEF6D1AC},
      {0, 0, 4, 0xBE1D535A},
      {0, 0, 5, 0x3E392A78},
      {0, 0, 6, 0x3F54EC9B},
      {0, 0, 7, 0x3E4A2D9E},
      {42, 2, 0, 0xBFAC4021},
      {42, 2, 1, 0xBE302E0C},
      {42, 2, 2, 0xBEF0600A},
      {42, 2, 3, 0xBF9D20A5},
      {42, 4, 38399, 0xBFC3E7D4},
      {123456789, 3, (1ull << 40) + 5, 0xBE556C2A},
      {~0ull, ~0ull, ~0ull - 1, 0xBD066A9B},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(bits(normal_at(c.seed, c.stream, c.index)), c.z)
        << "seed " << c.seed << " stream " << c.stream << " index " << c.index;
  }
  struct Pair {
    std::uint32_t r, a, z0, z1;
  };
  const Pair pairs[] = {
      {0x00000000, 0x00000000, 0x40D5224D, 0x00000000}, // u = 2^-32: r = sqrt(64 ln 2); angle 0
      {0x80000000, 0x80000000, 0xBF96B560, 0x80000000}, // u = 1/2: r = sqrt(2 ln 2); angle pi
      {0xFFFFFFFF, 0x40000000, 0x80000000, 0x39B504F4}, // u = 1 - 2^-24 after truncation; angle pi/2
      {0x12345678, 0x9ABCDEF0, 0xBFE92F3C, 0xBFB3937C},
  };
  for (const Pair& p : pairs) {
    const auto z = box_muller(p.r, p.a);
    EXPECT_EQ(bits(z[0]), p.z0) << std::hex << p.r << " " << p.a;
    EXPECT_EQ(bits(z[1]), p.z1) << std::hex << p.r << " " << p.a;
  }
}

// The polynomial log / sqrt / sincos against float64 libm, on the inputs the transform actually
// sees (u truncated to 24 significant bits, angle to 24 bits).
TEST(Rng, BoxMullerMatchesLibm) {
  auto ideal = [](std::uint32_t rw, std::uint32_t aw) {
    const std::uint32_t v = rw | 1u;
    const int e = std::bit_width(v) - 1;
    const std::uint32_t mb = e >= 23 ? v >> (e - 23) : v << (23 - e);
    const double u = std::ldexp(static_cast<double>(mb), e - 55);
    const double r = std::sqrt(-2.0 * std::log(u));
    const double theta = 2.0 * std::numbers::pi * std::ldexp(static_cast<double>(aw >> 8), -24);
    return std::array<double, 2>{r * std::cos(theta), r * std::sin(theta)};
  };
  std::mt19937 gen(2024);
  auto rng = [&gen] { return static_cast<std::uint32_t>(gen()); };
  std::vector<std::array<std::uint32_t, 2>> inputs;
  for (std::uint32_t e = 0; e < 32; ++e) { // every octave of u, both sides of the sqrt(2) split
    for (std::uint32_t m : {0u, 1u, 0x3504F2u, 0x3504F3u, 0x3504F4u, 0x7FFFFFu}) {
      inputs.push_back({(1u << e) | (e >= 23 ? m << (e - 23) : m >> (23 - e)), rng()});
    }
  }
  for (int i = 0; i < 1 << 20; ++i) inputs.push_back({rng(), rng()});
  for (std::uint32_t a = 0; a < 1u << 24; a += 4099) inputs.push_back({rng(), a << 8});
  double worst = 0;
  for (const auto& in : inputs) {
    const auto z = box_muller(in[0], in[1]);
    const auto want = ideal(in[0], in[1]);
    const double r = std::hypot(want[0], want[1]);
    for (int k = 0; k < 2; ++k) {
      const double err = std::fabs(z[k] - want[k]) / std::max(r, 1e-3);
      worst = std::max(worst, err);
      ASSERT_LE(err, 1e-6) << std::hex << in[0] << " " << in[1] << std::dec << " got " << z[k] << " want " << want[k];
    }
  }
  RecordProperty("worst_relative_error", std::to_string(worst));
  std::printf("box_muller: worst error / radius vs float64 libm = %.3g\n", worst);
}

TEST(Rng, NormalStatistics) {
  const std::size_t n = 1u << 20;
  std::vector<float> z(n);
  normal_fill(20240601, rng_stream::kInitialLatent, z);
  double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  std::size_t beyond3 = 0;
  for (float v : z) {
    const double d = v;
    s1 += d;
    s2 += d * d;
    s3 += d * d * d;
    s4 += d * d * d * d;
    beyond3 += std::fabs(d) > 3.0;
  }
  const double N = static_cast<double>(n);
  const double mean = s1 / N, var = s2 / N - mean * mean;
  // 5 standard errors of each estimator under N(0, 1).
  EXPECT_LE(std::fabs(mean), 5.0 / std::sqrt(N));
  EXPECT_LE(std::fabs(var - 1.0), 5.0 * std::sqrt(2.0 / N));
  EXPECT_LE(std::fabs(s3 / N), 5.0 * std::sqrt(15.0 / N));
  EXPECT_LE(std::fabs(s4 / N - 3.0), 5.0 * std::sqrt(96.0 / N));
  const double p3 = 0.0026997960632601866; // P(|z| > 3)
  EXPECT_LE(std::fabs(static_cast<double>(beyond3) / N - p3), 5.0 * std::sqrt(p3 * (1 - p3) / N));
  std::printf("normal stats over %zu: mean %.3g var %.5f skew %.3g kurt %.4f P(|z|>3) %.5f\n", n, mean, var, s3 / N,
              s4 / N, static_cast<double>(beyond3) / N);
}

double correlation(const std::vector<float>& a, const std::vector<float>& b) {
  double sab = 0, saa = 0, sbb = 0, sa = 0, sb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sa += a[i];
    sb += b[i];
    sab += static_cast<double>(a[i]) * b[i];
    saa += static_cast<double>(a[i]) * a[i];
    sbb += static_cast<double>(b[i]) * b[i];
  }
  const double n = static_cast<double>(a.size());
  return (sab / n - sa / n * sb / n) / std::sqrt((saa / n - sa * sa / n / n) * (sbb / n - sb * sb / n / n));
}

// Different streams (and seeds) must look unrelated: no shared values, correlation within 5
// standard errors of 0, also at small shifts and between the cos/sin lanes of one block.
TEST(Rng, StreamsAreIndependent) {
  const std::size_t n = 1u << 20;
  const double bound = 5.0 / std::sqrt(static_cast<double>(n));
  std::vector<float> a(n), b(n), c(n);
  normal_fill(7, rng_stream::reference_noise(0), a);
  normal_fill(7, rng_stream::ancestral_noise(0), b);
  normal_fill(8, rng_stream::reference_noise(0), c);
  EXPECT_LE(std::fabs(correlation(a, b)), bound);
  EXPECT_LE(std::fabs(correlation(a, c)), bound);
  std::size_t equal = 0;
  for (std::size_t i = 0; i < n; ++i) equal += a[i] == b[i];
  EXPECT_LE(equal, 2u);
  for (std::size_t shift : {1u, 2u, 4u}) { // neighbours within one stream
    const std::vector<float> x(a.begin(), a.end() - static_cast<std::ptrdiff_t>(shift));
    const std::vector<float> y(a.begin() + static_cast<std::ptrdiff_t>(shift), a.end());
    EXPECT_LE(std::fabs(correlation(x, y)), bound * 1.01) << shift;
  }
  EXPECT_EQ(rng_stream::kConditionPosterior, 0u);
  EXPECT_EQ(rng_stream::kZeroPosterior, 1u);
  EXPECT_EQ(rng_stream::kInitialLatent, 2u);
  EXPECT_EQ(rng_stream::reference_noise(0), 3u);
  EXPECT_EQ(rng_stream::ancestral_noise(0), 4u);
  EXPECT_EQ(rng_stream::reference_noise(27), 57u);
  EXPECT_EQ(rng_stream::ancestral_noise(27), 58u);
}

// A fill that starts at `offset` equals the tail of a longer fill, for every alignment to the
// 4-element blocks, and normal_at agrees element by element.
TEST(Rng, OffsetAddressing) {
  std::vector<float> whole(4096);
  normal_fill(99, 5, whole);
  for (std::size_t offset : {0u, 1u, 2u, 3u, 4u, 5u, 7u, 1023u, 4000u}) {
    for (std::size_t len : {1u, 2u, 3u, 5u, 8u, 13u, 96u}) {
      if (offset + len > whole.size()) continue;
      std::vector<float> part(len);
      normal_fill(99, 5, part, offset);
      for (std::size_t i = 0; i < len; ++i) {
        ASSERT_EQ(bits(part[i]), bits(whole[offset + i])) << offset << " " << len << " " << i;
      }
    }
  }
  for (std::size_t i = 0; i < whole.size(); i += 37) EXPECT_EQ(bits(normal_at(99, 5, i)), bits(whole[i])) << i;
  std::vector<float> empty;
  normal_fill(1, 1, empty, 12345); // nothing to do, no error
  std::vector<float> two(2);
  try {
    normal_fill(1, 1, two, std::numeric_limits<std::uint64_t>::max());
    ADD_FAILURE() << "index overflow accepted";
  } catch (const z123::Error& e) {
    EXPECT_EQ(e.kind(), z123::ErrorKind::InvalidArgument);
  }
  normal_fill(1, 1, two, std::numeric_limits<std::uint64_t>::max() - 2); // the last two indices
  EXPECT_EQ(bits(two[1]), bits(normal_at(1, 1, std::numeric_limits<std::uint64_t>::max() - 1)));
}

// Split across threads at arbitrary boundaries, the result is the same bits as one fill.
TEST(Rng, ThreadCountDoesNotMatter) {
  const std::size_t n = 100003;
  std::vector<float> single(n);
  normal_fill(31337, rng_stream::kInitialLatent, single);
  for (unsigned threads : {2u, 3u, 7u}) {
    std::vector<float> split(n);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      const std::size_t begin = n * t / threads, end = n * (t + 1) / threads;
      pool.emplace_back([&split, begin, end] {
        normal_fill(31337, rng_stream::kInitialLatent, std::span<float>(split).subspan(begin, end - begin), begin);
      });
    }
    for (auto& th : pool) th.join();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(bits(split[i]), bits(single[i])) << threads << " " << i;
  }
}

} // namespace
