// Strict parsing of the CLI's numeric option values: the whole text must be the number (no
// leading blanks, no suffix such as "28x" or "1.5.2"), and a value the type cannot hold is
// reported as out of range instead of wrapping (stoull turned "-1" and " -1" into 2^64 - 1) or
// being called "not a number". Range rules of the options themselves are the engine's
// (check_generate_options); these only make sure the value reaches it intact.
#pragma once

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

namespace z123cli {

// The problem with a value, or "" when `out` was set.
inline std::string parse_uint64(const std::string& v, std::uint64_t& out) {
  if (v.empty()) return "an empty value";
  // strtoull accepts blanks and a minus sign (negating the result), so only digits are let in.
  for (char c : v)
    if (c < '0' || c > '9') return "'" + v + "' (digits only)";
  errno = 0;
  char* end = nullptr;
  unsigned long long r = std::strtoull(v.c_str(), &end, 10);
  if (errno == ERANGE) return "'" + v + "' (more than 18446744073709551615)";
  if (*end) return "'" + v + "'";
  out = r;
  return "";
}

// A decimal integer with an optional sign that fits in an int.
inline std::string parse_int(const std::string& v, int& out) {
  if (v.empty()) return "an empty value";
  const std::size_t digits = (v[0] == '-' || v[0] == '+') ? 1 : 0;
  if (digits == v.size()) return "'" + v + "'";
  for (std::size_t i = digits; i < v.size(); ++i)
    if (v[i] < '0' || v[i] > '9') return "'" + v + "'";
  errno = 0;
  long long r = std::strtoll(v.c_str(), nullptr, 10);
  if (errno == ERANGE || r < std::numeric_limits<int>::min() || r > std::numeric_limits<int>::max())
    return "'" + v + "' (out of range)";
  out = static_cast<int>(r);
  return "";
}

// A decimal or hexadecimal floating-point number, "inf" or "nan" (the engine says why those are
// not accepted for its options) that a float can hold: 1e39 overflows and 1e-400 underflows to
// 0, and both are refused rather than silently turned into another value.
inline std::string parse_float(const std::string& v, float& out) {
  if (v.empty()) return "an empty value";
  if (v[0] == ' ' || v[0] == '\t' || v[0] == '\n') return "'" + v + "'";
  errno = 0;
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end) return "'" + v + "'";
  const bool finite = std::isfinite(d);
  if (errno == ERANGE && finite && d != 0 && std::fabs(d) >= DBL_MIN) errno = 0; // precision loss only
  if (errno == ERANGE || (finite && std::fabs(d) > FLT_MAX) || (d != 0 && std::fabs(d) < FLT_TRUE_MIN))
    return "'" + v + "' (out of range of a float)";
  out = static_cast<float>(d);
  return "";
}

} // namespace z123cli
