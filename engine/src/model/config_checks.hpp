// Checks on single config values shared by the config parsers (configs.cpp): implemented-option
// checks (`unsupported` errors) and range checks (`model_error`s). Every message starts with
// Fields::where(key), so it names the file and the key the user wrote, then the value found and
// what is allowed. Range bounds come from z123/model/config_limits.hpp.
#pragma once

#include "io/json_util.hpp"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace z123::config_checks {

using json_util::Fields;

std::string in_quotes(const std::string& s);
bool one_of(const std::string& v, std::initializer_list<const char*> allowed);

// ---- options the engine implements only in some forms (`unsupported`) ------------------------

// A string option whose value must be one the engine implements.
std::string supported_string(const Fields& f, std::string_view key, const char* fallback,
                             std::initializer_list<const char*> allowed);
// An option the engine implements only in its "off" form (null / absent).
void require_null(const Fields& f, std::string_view key, std::string_view meaning);
void require_bool(const Fields& f, std::string_view key, bool expected);
void require_number_value(const Fields& f, std::string_view key, double expected);
// diffusers configs carry "_class_name"; a different class means a different network.
void check_class_name(const Fields& f, const char* expected);
// transformers configs carry "architectures" (list) and "model_type".
void check_architecture(const Fields& f, const char* architecture, const char* model_type);

// ---- ranges (`model_error`) ------------------------------------------------------------------
// Values are checked right after they are read, before anything is sized by them. Bounds are
// inclusive; 64-bit parameters so derived sizes (a product of two config values) can be checked
// without overflowing first.

// Throws unless lo <= value <= hi: "<file>: key '<key>' is <value>, expected an integer in lo..hi".
// `why` (optional) is appended in parentheses, e.g. which other key the bound comes from.
void check_int(const Fields& f, std::string_view key, std::int64_t value, std::int64_t lo, std::int64_t hi,
               std::string_view why = {});
// f.int_or(key, fallback), range-checked.
int int_in(const Fields& f, std::string_view key, int fallback, int lo, int hi);
// Every entry of a per-level list read from `key`; messages say "entry i" when the file holds a
// list, and just the value when it holds one integer that was expanded to every level.
void check_int_list(const Fields& f, std::string_view key, const std::vector<int>& values, int lo, int hi);
// f.int_or_list(key, fallback, count), range-checked.
std::vector<int> int_list_in(const Fields& f, std::string_view key, int fallback, std::size_t count, int lo, int hi);

// A floating-point value in [lo, hi], or (lo, hi] when `lo_open`; NaN is always refused.
void check_number(const Fields& f, std::string_view key, double value, double lo, double hi, bool lo_open = false);
double number_in(const Fields& f, std::string_view key, double fallback, double lo, double hi, bool lo_open = false);

// Lists with one entry per level (block_out_channels): 1..max_count entries.
void check_list_length(const Fields& f, std::string_view key, std::size_t found, std::size_t max_count);

} // namespace z123::config_checks
