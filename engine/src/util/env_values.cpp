#include "util/env_values.hpp"

#include <cstdlib>

#include "z123/error.hpp"
#include "z123/tuning.hpp"

namespace z123 {
namespace env_values {

const char* get(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

void refuse(const char* name, const std::string& value, const std::string& accepted) {
  throw invalid_argument(std::string(name) + "=" + value + ": expected " + accepted);
}

bool flag(const char* name, bool fallback) { return choice<bool>(name, {{"0", false}, {"1", true}}, fallback); }

int64_t positive(const char* name, int64_t fallback, int64_t max) {
  const char* v = get(name);
  if (!v) return fallback;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (*end || n < 1 || n > max) refuse(name, v, "a whole number from 1 to " + std::to_string(max));
  return n;
}

} // namespace env_values

// The process-wide knobs of z123/tuning.hpp.
bool validation_from_environment() { return env_values::flag("Z123_VALIDATION"); }
bool profiling_from_environment() { return env_values::flag("Z123_PROFILE"); }
bool level_profiling_from_environment() { return env_values::flag("Z123_PROFILE_LEVELS"); }
unsigned threads_from_environment() { return static_cast<unsigned>(env_values::positive("Z123_THREADS", 0, 1024)); }

} // namespace z123
