#include "io/json_util.hpp"

#include "z123/error.hpp"

#include <fstream>
#include <limits>
#include <sstream>

namespace z123::json_util {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxParserMessage = 300;

// Counts bracket nesting outside strings; brackets that do not match are left to the parser.
void check_depth(std::string_view text, const std::string& source) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        throw format_error(source + ": invalid JSON: nested deeper than " + std::to_string(kMaxJsonDepth) +
                           " levels at byte " + std::to_string(i));
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

} // namespace

json parse(std::string_view text, const std::string& source) {
  check_depth(text, source);
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    // parse_error says "at line L, column C"; out_of_range (a number like 1e400) names the
    // number. Both are malformed input, so both become format errors with the parser's text.
    // The parser quotes the offending token, which can be megabytes long; the position comes
    // first, so cutting the text keeps what the user needs.
    std::string what = e.what();
    if (what.size() > kMaxParserMessage) what = what.substr(0, kMaxParserMessage - 3) + "...";
    throw format_error(source + ": invalid JSON: " + what);
  }
}

std::string read_text_file(const std::string& path, std::uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw io_error(path + ": cannot open for reading (missing or unreadable)");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw io_error(path + ": cannot determine the file size");
  if (static_cast<std::uint64_t>(size) > max_bytes) {
    throw format_error(path + ": file is " + std::to_string(size) + " bytes, expected at most " +
                       std::to_string(max_bytes) + " for a JSON config");
  }
  in.seekg(0, std::ios::beg);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in.read(text.data(), size)) throw io_error(path + ": short read");
  return text;
}

std::string describe(const json& value) {
  auto clip = [](std::string s) {
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return s;
  };
  switch (value.type()) {
  case json::value_t::null: return "null";
  case json::value_t::boolean: return std::string("boolean ") + (value.get<bool>() ? "true" : "false");
  case json::value_t::string: return "string " + clip(value.dump());
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
  case json::value_t::number_float: return "number " + clip(value.dump());
  case json::value_t::array: return "array of " + std::to_string(value.size());
  case json::value_t::object: return "object";
  case json::value_t::binary: return "binary";
  case json::value_t::discarded: return "discarded value";
  }
  return "unknown";
}

std::string clipped_dump(const json& value, std::size_t max_chars) {
  // `replace`: never throw on bad UTF-8 (the parser already refuses it; this is for safety).
  std::string s = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > max_chars) s = s.substr(0, max_chars > 3 ? max_chars - 3 : 0) + "...";
  return s;
}

Fields::Fields(const json& object, std::string source, std::string path)
    : object_(&object), source_(std::move(source)), path_(std::move(path)) {
  if (!object.is_object()) {
    if (path_.empty()) {
      throw format_error(source_ + ": expected a JSON object at the top level, found " + describe(object));
    }
    throw format_error(source_ + ": key '" + path_.substr(0, path_.size() - 1) + "': expected object, found " +
                       describe(object));
  }
}

std::string Fields::where(std::string_view key) const { return source_ + ": key '" + path_ + std::string(key) + "'"; }

const json* Fields::get(std::string_view key) const {
  auto it = object_->find(std::string(key)); // string copy: heterogeneous find needs 3.11
  return it == object_->end() ? nullptr : &*it;
}

bool Fields::has(std::string_view key) const { return get(key) != nullptr; }

bool Fields::is_null(std::string_view key) const {
  const json* v = get(key);
  return v == nullptr || v->is_null();
}

void Fields::type_error(std::string_view key, std::string_view expected, const json& found) const {
  throw format_error(where(key) + ": expected " + std::string(expected) + ", found " + describe(found));
}

int Fields::to_int(std::string_view key, const json& v) const {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      type_error(key, "integer in int range", v);
    }
    return static_cast<int>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max()) {
      type_error(key, "integer in int range", v);
    }
    return static_cast<int>(i);
  }
  type_error(key, "integer", v);
}

double Fields::to_number(std::string_view key, const json& v) const {
  if (!v.is_number()) type_error(key, "number", v);
  return v.get<double>();
}

int Fields::require_int(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr) throw format_error(where(key) + ": required key is missing (expected integer)");
  return to_int(key, *v);
}

int Fields::int_or(std::string_view key, int fallback) const {
  const json* v = get(key);
  return v == nullptr ? fallback : to_int(key, *v);
}

std::optional<int> Fields::optional_int(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return to_int(key, *v);
}

double Fields::require_number(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr) throw format_error(where(key) + ": required key is missing (expected number)");
  return to_number(key, *v);
}

double Fields::number_or(std::string_view key, double fallback) const {
  const json* v = get(key);
  return v == nullptr ? fallback : to_number(key, *v);
}

std::optional<double> Fields::optional_number(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return to_number(key, *v);
}

bool Fields::bool_or(std::string_view key, bool fallback) const {
  const json* v = get(key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) type_error(key, "boolean", *v);
  return v->get<bool>();
}

std::string Fields::require_string(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr) throw format_error(where(key) + ": required key is missing (expected string)");
  if (!v->is_string()) type_error(key, "string", *v);
  return v->get<std::string>();
}

std::string Fields::string_or(std::string_view key, std::string fallback) const {
  const json* v = get(key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) type_error(key, "string", *v);
  return v->get<std::string>();
}

std::optional<std::string> Fields::optional_string(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_string()) type_error(key, "string or null", *v);
  return v->get<std::string>();
}

std::vector<int> Fields::require_int_list(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr) {
    throw format_error(where(key) + ": required key is missing (expected list of integers)");
  }
  if (!v->is_array()) type_error(key, "list of integers", *v);
  std::vector<int> out;
  out.reserve(v->size());
  for (std::size_t i = 0; i < v->size(); ++i) {
    out.push_back(to_int(std::string(key) + "[" + std::to_string(i) + "]", (*v)[i]));
  }
  return out;
}

std::vector<std::string> Fields::require_string_list(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr) {
    throw format_error(where(key) + ": required key is missing (expected list of strings)");
  }
  if (!v->is_array()) type_error(key, "list of strings", *v);
  std::vector<std::string> out;
  out.reserve(v->size());
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    if (!e.is_string()) type_error(std::string(key) + "[" + std::to_string(i) + "]", "string", e);
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::vector<int> Fields::int_or_list(std::string_view key, int fallback, std::size_t count) const {
  const json* v = get(key);
  if (v == nullptr) return std::vector<int>(count, fallback);
  if (v->is_array()) {
    std::vector<int> out = require_int_list(key);
    if (out.size() != count) {
      throw model_error(where(key) + ": expected " + std::to_string(count) + " entries (one per block), found " +
                        std::to_string(out.size()));
    }
    return out;
  }
  if (!v->is_number_integer()) type_error(key, "integer or list of integers", *v);
  return std::vector<int>(count, to_int(key, *v));
}

std::vector<double> Fields::number_or_list(std::string_view key, std::vector<double> fallback,
                                           std::size_t count) const {
  const json* v = get(key);
  if (v == nullptr) return fallback;
  if (v->is_number()) return std::vector<double>(count, v->get<double>());
  if (!v->is_array()) type_error(key, "number or list of numbers", *v);
  if (v->size() != count) {
    throw model_error(where(key) + ": expected " + std::to_string(count) + " values, found " +
                      std::to_string(v->size()));
  }
  std::vector<double> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    out.push_back(to_number(std::string(key) + "[" + std::to_string(i) + "]", (*v)[i]));
  }
  return out;
}

std::optional<Fields> Fields::optional_object(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_object()) type_error(key, "object", *v);
  return Fields(*v, source_, path_ + std::string(key) + ".");
}

} // namespace z123::json_util
