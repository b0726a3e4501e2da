// IEEE binary16 conversion on the host (weights are stored fp16 on the device; tests round their
// references through these). Round-to-nearest-even, like PyTorch's .half().
#pragma once

#include <cstdint>
#include <cstring>

namespace z123 {

inline uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));
  if (mag >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u); // rounds to >= 65520: inf
  if (mag < 0x38800000u) {                                              // subnormal or zero in fp16
    if (mag < 0x33000000u) return static_cast<uint16_t>(sign);          // < 2^-25: rounds to 0
    uint32_t e = mag >> 23;
    uint32_t m = (mag & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e; // 14 + (113 - e) - 1 ... number of bits dropped beyond 13
    uint32_t half_m = m >> (shift - 0);
    // m has 24 significant bits; fp16 subnormal unit is 2^-24. value = m * 2^(e-150).
    // result = value / 2^-24 = m * 2^(e-126) = m >> (126 - e).
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_m & 1u))) half_m++;
    return static_cast<uint16_t>(sign | half_m);
  }
  uint32_t e = (mag >> 23) - 112; // rebias 127 -> 15
  uint32_t m = mag & 0x7fffffu;
  uint32_t h = (e << 10) | (m >> 13);
  uint32_t rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | h);
}

inline float f16_to_f32(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  uint32_t x;
  if (e == 0) {
    if (m == 0) {
      x = sign;
    } else { // subnormal: normalize
      e = 113;
      while (!(m & 0x400u)) {
        m <<= 1;
        e--;
      }
      x = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
  } else if (e == 31) {
    x = sign | 0x7f800000u | (m << 13);
  } else {
    x = sign | ((e + 112) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// Rounds a float to the nearest fp16 value (and back), for building fp16 references.
inline float round_f16(float f) { return f16_to_f32(f32_to_f16(f)); }

} // namespace z123
