// Helpers shared by the io tests: error assertions that check the kind and message substrings
// (every message must name the file / tensor / key and expected vs found), and fixture paths.
#pragma once

#include "z123/error.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <string>

namespace z123::test {

// Runs `fn`, expects a z123::Error of `kind` whose message contains every substring.
template <class Fn>
void expect_error(Fn&& fn, ErrorKind kind, std::initializer_list<std::string> substrings) {
  try {
    fn();
    ADD_FAILURE() << "expected a " << error_kind_name(kind) << " error, nothing was thrown";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.kind(), kind) << "kind " << error_kind_name(e.kind()) << ", message: " << msg;
    for (const std::string& s : substrings) {
      EXPECT_NE(msg.find(s), std::string::npos) << "message: " << msg << "\nlacks: " << s;
    }
  }
}

// tests/data (the shared fixtures: v1.2 configs, the tensor TSV).
inline std::filesystem::path shared_test_data() { return Z123_SHARED_TEST_DATA; }
inline std::filesystem::path v12_configs() { return shared_test_data() / "v1.2-configs"; }

} // namespace z123::test
