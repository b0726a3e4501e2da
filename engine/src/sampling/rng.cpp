// Philox4x32-10 and the reproducible fp32 Box-Muller transform specified in docs/rng.md. The
// transform uses integer operations and fp32 +, -, * only, each rounded to nearest even and never
// fused: those are the operations IEEE 754 and Vulkan (for 32-bit floats) both define exactly, so
// this code, another CPU and a shader with `precise` temporaries all produce the same bits.
#include "z123/sampling/rng.hpp"

#include "z123/error.hpp"

#include <bit>
#include <limits>
#include <string>

namespace z123::sampling {
namespace {

// ---- fp32 arithmetic that the compiler cannot contract into fused multiply-adds ----------------
// The float operands are widened to double: a product of two floats is exact there, and a double
// sum of two floats rounded to float is the correctly rounded fp32 sum (53 >= 2*24 + 2). The cast
// back to float is a rounding the optimizer must keep, so no FMA contraction (allowed by GCC's
// default -ffp-contract=fast on FMA targets) can change a result.
inline float mul(float a, float b) { return static_cast<float>(static_cast<double>(a) * static_cast<double>(b)); }
inline float add(float a, float b) { return static_cast<float>(static_cast<double>(a) + static_cast<double>(b)); }
inline float sub(float a, float b) { return static_cast<float>(static_cast<double>(a) - static_cast<double>(b)); }

// Constants of docs/rng.md, bit patterns given so the doc and shader can quote them exactly.
constexpr float kInv3 = 0x1.555556p-2f;   // 0x3EAAAAAB  fl(1/3)
constexpr float kInv5 = 0x1.99999ap-3f;   // 0x3E4CCCCD  fl(1/5)
constexpr float kInv7 = 0x1.24924ap-3f;   // 0x3E124925  fl(1/7)
constexpr float kInv9 = 0x1.c71c72p-4f;   // 0x3DE38E39  fl(1/9)
constexpr float kInv11 = 0x1.745d18p-4f;  // 0x3DBA2E8C  fl(1/11)
constexpr float kLn2Hi = 0x1.62e4p-1f;    // 0x3F317200  ln 2 to 15 bits: k * kLn2Hi is exact for |k| <= 32
constexpr float kLn2Lo = 0x1.7f7d1cp-20f; // 0x35BFBE8E  fl(ln 2 - kLn2Hi)
// sin(pi/2 g) = g * sum S_j g^(2j), cos(pi/2 g) = 1 + sum_{j>=1} C_j g^(2j): Taylor coefficients
// (-1)^j (pi/2)^(2j+1)/(2j+1)! and (-1)^j (pi/2)^(2j)/(2j)! rounded to fp32.
constexpr float kS0 = 0x1.921fb6p+0f;   // 0x3FC90FDB
constexpr float kS1 = -0x1.4abbcep-1f;  // 0xBF255DE7
constexpr float kS2 = 0x1.466bc6p-4f;   // 0x3DA335E3
constexpr float kS3 = -0x1.32d2ccp-8f;  // 0xBB996966
constexpr float kS4 = 0x1.507834p-13f;  // 0x39283C1A
constexpr float kS5 = -0x1.e3075p-19f;  // 0xB67183A8
constexpr float kC1 = -0x1.3bd3ccp+0f;  // 0xBF9DE9E6
constexpr float kC2 = 0x1.03c1fp-2f;    // 0x3E81E0F8
constexpr float kC3 = -0x1.55d3c8p-6f;  // 0xBCAAE9E4
constexpr float kC4 = 0x1.e1f506p-11f;  // 0x3A70FA83
constexpr float kC5 = -0x1.a6d1f2p-16f; // 0xB7D368F9

constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

// -2 ln(u) for u = (w | 1) * 2^-32 in (0, 1): always > 0.
float minus_two_log_uniform(std::uint32_t w) {
  const std::uint32_t v = w | 1u;                                   // odd: u is the midpoint of a 2^-31 cell
  const int e = std::bit_width(v) - 1;                              // findMSB, 0..31
  const std::uint32_t mb = e >= 23 ? v >> (e - 23) : v << (23 - e); // leading 24 bits, in [2^23, 2^24)
  int k = e - 32;                                                   // u ~= mb * 2^(k - 23)
  float m;                                                          // u ~= m * 2^k, m in (sqrt(1/2), sqrt(2)]
  if (mb > 0xB504F3u) {                                             // mb * 2^-23 > sqrt(2): halve
    m = mul(static_cast<float>(mb), 0x1p-24f);
    k += 1;
  } else {
    m = mul(static_cast<float>(mb), 0x1p-23f);
  }
  // ln m = 2 atanh(s), s = (m - 1)/(m + 1), |s| <= 0.1716; 1/(m+1) by three Newton steps from a
  // linear guess (no division: Vulkan's fp32 division is not correctly rounded).
  const float f = sub(m, 1.0f); // exact (Sterbenz)
  const float d = add(m, 1.0f);
  float y = sub(0.75f, mul(0.125f, d));
  for (int it = 0; it < 3; ++it) y = mul(y, sub(2.0f, mul(d, y)));
  const float s = mul(f, y);
  const float z = mul(s, s);
  float p = kInv11;
  p = add(mul(p, z), kInv9);
  p = add(mul(p, z), kInv7);
  p = add(mul(p, z), kInv5);
  p = add(mul(p, z), kInv3);
  const float ln_m = mul(add(s, mul(s, mul(p, z))), 2.0f);
  const float kf = static_cast<float>(k);
  const float ln_u = add(add(mul(kf, kLn2Lo), ln_m), mul(kf, kLn2Hi));
  return mul(ln_u, -2.0f);
}

// sqrt(x) for normal x > 0: reciprocal square root from the classic bit-level guess, three Newton
// steps, then x * rsqrt(x).
float sqrt_newton(float x) {
  const float half = mul(x, 0.5f);
  float y = std::bit_cast<float>(0x5F3759DFu - (std::bit_cast<std::uint32_t>(x) >> 1));
  for (int it = 0; it < 3; ++it) y = mul(y, sub(1.5f, mul(half, mul(y, y))));
  return mul(x, y);
}

} // namespace

PhiloxCounter philox4x32_10(PhiloxCounter c, PhiloxKey k) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) { // the key schedule bumps the key before every round but the first
      k[0] += kPhiloxW0;
      k[1] += kPhiloxW1;
    }
    const std::uint64_t p0 = static_cast<std::uint64_t>(kPhiloxM0) * c[0];
    const std::uint64_t p1 = static_cast<std::uint64_t>(kPhiloxM1) * c[2];
    c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<std::uint32_t>(p0)};
  }
  return c;
}

PhiloxCounter random_block(std::uint64_t seed, std::uint64_t stream, std::uint64_t block) {
  const PhiloxCounter counter{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                              static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)};
  const PhiloxKey key{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
  return philox4x32_10(counter, key);
}

std::array<float, 2> box_muller(std::uint32_t radius_word, std::uint32_t angle_word) {
  const float r = sqrt_newton(minus_two_log_uniform(radius_word));
  // Angle 2*pi*a/2^24 from the top 24 bits, split as (pi/2)(q + g) with quadrant q and
  // g in [-1/2, 1/2) so the polynomials only see |angle| <= pi/4.
  const std::uint32_t a = angle_word >> 8;
  const std::uint32_t b = (a + 0x200000u) & 0xFFFFFFu;
  const std::uint32_t q = b >> 22;
  const float g = mul(static_cast<float>(static_cast<std::int32_t>(b & 0x3FFFFFu) - 0x200000), 0x1p-22f);
  const float x = mul(g, g);
  float sp = kS5;
  sp = add(mul(sp, x), kS4);
  sp = add(mul(sp, x), kS3);
  sp = add(mul(sp, x), kS2);
  sp = add(mul(sp, x), kS1);
  sp = add(mul(sp, x), kS0);
  const float sn = mul(g, sp);
  float cp = kC5;
  cp = add(mul(cp, x), kC4);
  cp = add(mul(cp, x), kC3);
  cp = add(mul(cp, x), kC2);
  cp = add(mul(cp, x), kC1);
  const float cs = add(mul(cp, x), 1.0f);
  float cos_t = cs, sin_t = sn; // rotate by q quarter turns (negation is exact)
  switch (q) {
  case 1: cos_t = -sn, sin_t = cs; break;
  case 2: cos_t = -cs, sin_t = -sn; break;
  case 3: cos_t = sn, sin_t = -cs; break;
  default: break;
  }
  return {mul(r, cos_t), mul(r, sin_t)};
}

float normal_at(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const PhiloxCounter w = random_block(seed, stream, index >> 2);
  const unsigned lane = static_cast<unsigned>(index & 3u);
  const auto z = lane < 2 ? box_muller(w[0], w[1]) : box_muller(w[2], w[3]);
  return z[lane & 1u];
}

void normal_fill(std::uint64_t seed, std::uint64_t stream, std::span<float> out, std::uint64_t offset) {
  if (out.size() > std::numeric_limits<std::uint64_t>::max() - offset) {
    throw invalid_argument("normal_fill: offset " + std::to_string(offset) + " + " + std::to_string(out.size()) +
                           " elements overflows the 64-bit element index");
  }
  std::size_t i = 0;
  std::uint64_t index = offset;
  while (i < out.size()) {
    const PhiloxCounter w = random_block(seed, stream, index >> 2);
    const auto z01 = box_muller(w[0], w[1]);
    const auto z23 = box_muller(w[2], w[3]);
    const float z[4] = {z01[0], z01[1], z23[0], z23[1]};
    for (auto lane = static_cast<unsigned>(index & 3u); lane < 4 && i < out.size(); ++lane, ++i, ++index) {
      out[i] = z[lane];
    }
  }
}

} // namespace z123::sampling
