// Reading Z123_* environment variables the same way everywhere (z123/tuning.hpp): a value that
// is set must be one the variable takes, or the error names the variable and what it takes. Kept
// apart from the kernel knobs (util/tuning.cpp) so that the process-wide knobs (threads,
// validation, profiling) need none of the kernel code: the fuzz targets link only this.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace z123::env_values {

// The variable's value, or null where it is unset or empty (empty means unset for every knob).
const char* get(const char* name);

[[noreturn]] void refuse(const char* name, const std::string& value, const std::string& accepted);

// One of `choices` (word, value); `fallback` where unset.
template <class T>
T choice(const char* name, const std::vector<std::pair<std::string, T>>& choices, T fallback) {
  const char* v = get(name);
  if (!v) return fallback;
  std::string accepted;
  for (const auto& [word, value] : choices) {
    if (word == v) return value;
    accepted += (accepted.empty() ? "" : "|") + word;
  }
  refuse(name, v, accepted);
}

// 0 or 1; `fallback` where unset.
bool flag(const char* name, bool fallback = false);

// A whole decimal number in [1, max]; `fallback` where unset.
int64_t positive(const char* name, int64_t fallback, int64_t max);

} // namespace z123::env_values
