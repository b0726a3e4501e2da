// Error assertions shared by the test suites.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "z123/error.hpp"

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

} // namespace z123::test
