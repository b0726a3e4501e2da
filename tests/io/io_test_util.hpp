// Helpers shared by the io tests: error assertions that check the kind and message substrings
// (every message must name the file / tensor / key and expected vs found), and fixture paths.
#pragma once

#include "support/expect_error.hpp"
#include "z123/error.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <string>

namespace z123::test {

// tests/data (the shared fixtures: v1.2 configs, the tensor TSV).
inline std::filesystem::path shared_test_data() { return Z123_SHARED_TEST_DATA; }
inline std::filesystem::path v12_configs() { return shared_test_data() / "v1.2-configs"; }

} // namespace z123::test
