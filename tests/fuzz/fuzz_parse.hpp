// Shared by the config fuzz targets: runs one parser on the input. The parser must return a
// config or throw z123::Error; an escaping nlohmann or std exception (a check we forgot), a
// crash, a sanitizer report or an absurd allocation (libFuzzer's -malloc_limit_mb) is a bug.
#pragma once

#include "z123/error.hpp"

#include <string_view>

namespace z123::fuzz {

template <class Parse>
void run_parser(Parse parse, std::string_view text) {
  try {
    (void)parse(text, "fuzz.json");
  } catch (const z123::Error&) {
    // Rejected with a typed error: fine.
  }
}

} // namespace z123::fuzz
