// Internal JSON helpers shared by the safetensors header parser and the config parsers: parsing
// with errors that name the file and the parser's position, and typed field access whose errors
// name the file, the key and expected vs found type. Internal because it exposes nlohmann::json,
// which the public headers must not.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace z123::json_util {

// Deepest nesting parse() accepts. No config nests deeper than 3 levels and no safetensors
// header deeper than 3; nlohmann parses any depth, but dump() and comparisons recurse, so a file
// of a million '[' would overflow the stack in an error message.
inline constexpr int kMaxJsonDepth = 64;

// Parses `text`; a syntax error becomes format_error("<source>: invalid JSON: <parser message
// with byte/line/column>"), and so does nesting deeper than kMaxJsonDepth. Does not check the
// top-level type.
nlohmann::json parse(std::string_view text, const std::string& source);

// Reads a whole (small) text file; io_error naming the path if it cannot be read, format_error
// if it is larger than `max_bytes`.
std::string read_text_file(const std::string& path, std::uint64_t max_bytes = 16ull << 20);

// "string \"abc\"", "number 2.5", "array of 3", "object", "null", "boolean true" — what a
// message says was found. Long values are truncated.
std::string describe(const nlohmann::json& value);

// value.dump(), cut to at most `max_chars` (ending in "...") so a message quoting a value the
// user wrote stays one readable line whatever its size.
std::string clipped_dump(const nlohmann::json& value, std::size_t max_chars = 80);

// Typed view of one JSON object of one file. Every accessor throws format_error naming
// `source` and the key path on a missing required key or a wrong type. Integers must be JSON
// integers that fit in int (2.0 is rejected: configs written by Python never contain it).
class Fields {
public:
  // Throws format_error if `object` is not an object. `path` prefixes key names in messages
  // (e.g. "size." for a nested object); empty for the top level.
  Fields(const nlohmann::json& object, std::string source, std::string path = {});

  const std::string& source() const { return source_; }
  // "<source>: key '<path><key>'" — the start of every message about that key.
  std::string where(std::string_view key) const;

  bool has(std::string_view key) const;     // present (null counts as present)
  bool is_null(std::string_view key) const; // absent or null
  const nlohmann::json* get(std::string_view key) const;

  int require_int(std::string_view key) const;
  int int_or(std::string_view key, int fallback) const;        // absent -> fallback, null is an error
  std::optional<int> optional_int(std::string_view key) const; // absent or null -> nullopt

  double require_number(std::string_view key) const;
  double number_or(std::string_view key, double fallback) const;
  std::optional<double> optional_number(std::string_view key) const;

  bool bool_or(std::string_view key, bool fallback) const;

  std::string require_string(std::string_view key) const;
  std::string string_or(std::string_view key, std::string fallback) const;
  std::optional<std::string> optional_string(std::string_view key) const;

  std::vector<int> require_int_list(std::string_view key) const;
  std::vector<std::string> require_string_list(std::string_view key) const;
  // Integer or list of integers (diffusers' "int or tuple" options), expanded to `count` entries;
  // a list of the wrong length is a model_error naming the key and both lengths.
  std::vector<int> int_or_list(std::string_view key, int fallback, std::size_t count) const;
  // Number or list of `count` numbers (image_mean / image_std).
  std::vector<double> number_or_list(std::string_view key, std::vector<double> fallback, std::size_t count) const;

  // Nested object accessor (throws if present but not an object).
  std::optional<Fields> optional_object(std::string_view key) const;

  [[noreturn]] void type_error(std::string_view key, std::string_view expected, const nlohmann::json& found) const;

private:
  int to_int(std::string_view key, const nlohmann::json& v) const;
  double to_number(std::string_view key, const nlohmann::json& v) const;

  const nlohmann::json* object_;
  std::string source_;
  std::string path_;
};

} // namespace z123::json_util
