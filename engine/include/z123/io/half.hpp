// Scalar conversions between float32 and the two 16-bit float formats found in weight files.
// Header-only so hot loops (weight conversion at load time) inline them. Bit patterns travel as
// uint16_t because C++20 has no portable 16-bit float type.
#pragma once

#include <cstdint>
#include <cstring>

namespace z123 {

// IEEE binary16 bits -> float32. Exact (every half value is representable as a float).
inline float f16_bits_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0x1fu) {
    bits = sign | 0x7f800000u | (mant << 13); // inf / NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (mant << 13); // rebias 15 -> 127
  } else if (mant == 0) {
    bits = sign; // signed zero
  } else {
    // Subnormal half: normalize into a float (value = mant * 2^-24).
    std::uint32_t e = 113; // float exponent of 2^-14
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// float32 -> IEEE binary16 bits, round to nearest, ties to even (what PyTorch's .half() does).
// Overflow gives +-inf, NaN stays NaN (quiet), tiny values become subnormals or signed zero.
inline std::uint16_t f32_to_f16_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) { // inf or NaN
    if (absx == 0x7f800000u) return sign | 0x7c00u;
    return static_cast<std::uint16_t>(sign | 0x7e00u | ((absx >> 13) & 0x1ffu));
  }
  const int e = static_cast<int>(absx >> 23) - 127;
  if (e > 15) return sign | 0x7c00u; // >= 65536: beyond the rounding range of the largest half
  if (e >= -14) {
    // Normal half. A carry out of the mantissa bumps the exponent, which is exactly right
    // (including rounding 65520.. up to inf).
    const std::uint32_t mant = absx & 0x7fffffu;
    std::uint32_t h = (static_cast<std::uint32_t>(e + 15) << 10) | (mant >> 13);
    const std::uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  // Subnormal half (value = q * 2^-24): shift the full 24-bit significand right by -e-1.
  const int shift = -e - 1;
  if (shift > 24) return sign; // below half of the smallest subnormal: rounds to zero
  const std::uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
  std::uint32_t q = mant >> shift;
  const std::uint32_t rem = mant & ((1u << shift) - 1u);
  const std::uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1u))) ++q; // may carry into the smallest normal
  return static_cast<std::uint16_t>(sign | q);
}

// bfloat16 bits -> float32. Exact: bf16 is the top half of a float32.
inline float bf16_bits_to_f32(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

} // namespace z123
