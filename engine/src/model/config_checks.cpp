#include "model/config_checks.hpp"

#include "z123/error.hpp"

#include <algorithm>
#include <sstream>

namespace z123::config_checks {

using nlohmann::json;

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

bool one_of(const std::string& v, std::initializer_list<const char*> allowed) {
  return std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return v == a; });
}

namespace {

std::string list_of(std::initializer_list<const char*> allowed) {
  std::string s;
  for (const char* a : allowed) s += (s.empty() ? "" : ", ") + in_quotes(a);
  return s;
}

std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

} // namespace

std::string supported_string(const Fields& f, std::string_view key, const char* fallback,
                             std::initializer_list<const char*> allowed) {
  const std::string v = f.string_or(key, fallback);
  if (!one_of(v, allowed)) {
    throw unsupported(f.where(key) + " is " + json_util::clipped_dump(json(v)) + "; the engine implements only " +
                      list_of(allowed));
  }
  return v;
}

void require_null(const Fields& f, std::string_view key, std::string_view meaning) {
  if (!f.is_null(key)) {
    throw unsupported(f.where(key) + " is " + json_util::clipped_dump(*f.get(key)) +
                      "; the engine implements only null (" + std::string(meaning) + ")");
  }
}

void require_bool(const Fields& f, std::string_view key, bool expected) {
  if (f.bool_or(key, expected) != expected) {
    throw unsupported(f.where(key) + " is " + (expected ? "false" : "true") + "; the engine implements only " +
                      (expected ? "true" : "false"));
  }
}

void require_number_value(const Fields& f, std::string_view key, double expected) {
  const double v = f.number_or(key, expected);
  if (v != expected) {
    throw unsupported(f.where(key) + " is " + number_text(v) + "; the engine implements only " + number_text(expected));
  }
}

void check_class_name(const Fields& f, const char* expected) {
  const std::optional<std::string> cls = f.optional_string("_class_name");
  if (cls && *cls != expected) {
    throw unsupported(f.where("_class_name") + " is " + json_util::clipped_dump(json(*cls)) + ", expected " +
                      in_quotes(expected));
  }
}

void check_architecture(const Fields& f, const char* architecture, const char* model_type) {
  if (!f.is_null("architectures")) {
    const std::vector<std::string> archs = f.require_string_list("architectures");
    if (std::find(archs.begin(), archs.end(), architecture) == archs.end()) {
      throw unsupported(f.where("architectures") + " is " + json_util::clipped_dump(*f.get("architectures")) +
                        ", expected it to contain " + in_quotes(architecture));
    }
  }
  const std::optional<std::string> mt = f.optional_string("model_type");
  if (mt && *mt != model_type) {
    throw unsupported(f.where("model_type") + " is " + json_util::clipped_dump(json(*mt)) + ", expected " +
                      in_quotes(model_type));
  }
}

void check_int(const Fields& f, std::string_view key, std::int64_t value, std::int64_t lo, std::int64_t hi,
               std::string_view why) {
  if (value >= lo && value <= hi) return;
  throw model_error(f.where(key) + " is " + std::to_string(value) + ", expected an integer in " + std::to_string(lo) +
                    ".." + std::to_string(hi) + (why.empty() ? "" : " (" + std::string(why) + ")"));
}

int int_in(const Fields& f, std::string_view key, int fallback, int lo, int hi) {
  const int v = f.int_or(key, fallback);
  check_int(f, key, v, lo, hi);
  return v;
}

void check_int_list(const Fields& f, std::string_view key, const std::vector<int>& values, int lo, int hi) {
  const json* written = f.get(key);
  const bool is_list = written == nullptr || written->is_array(); // a default is described as a list
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] >= lo && values[i] <= hi) continue;
    const std::string entry = is_list ? ": entry " + std::to_string(i) : std::string();
    throw model_error(f.where(key) + entry + " is " + std::to_string(values[i]) + ", expected an integer in " +
                      std::to_string(lo) + ".." + std::to_string(hi));
  }
}

std::vector<int> int_list_in(const Fields& f, std::string_view key, int fallback, std::size_t count, int lo, int hi) {
  std::vector<int> v = f.int_or_list(key, fallback, count);
  check_int_list(f, key, v, lo, hi);
  return v;
}

void check_number(const Fields& f, std::string_view key, double value, double lo, double hi, bool lo_open) {
  // Written so that NaN fails every comparison and is refused.
  if ((lo_open ? value > lo : value >= lo) && value <= hi) return;
  throw model_error(f.where(key) + " is " + number_text(value) + ", expected a number in " + (lo_open ? "(" : "[") +
                    number_text(lo) + ", " + number_text(hi) + "]");
}

double number_in(const Fields& f, std::string_view key, double fallback, double lo, double hi, bool lo_open) {
  const double v = f.number_or(key, fallback);
  check_number(f, key, v, lo, hi, lo_open);
  return v;
}

void check_list_length(const Fields& f, std::string_view key, std::size_t found, std::size_t max_count) {
  if (found >= 1 && found <= max_count) return;
  throw model_error(f.where(key) + ": expected 1.." + std::to_string(max_count) + " entries, found " +
                    std::to_string(found));
}

} // namespace z123::config_checks
