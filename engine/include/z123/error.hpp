// Typed errors for the whole engine. Every failure carries a kind (what class of problem) and a
// message that names the file / tensor / key involved and the expected vs found values, so a
// user can act on it without a debugger.
#pragma once

#include <stdexcept>
#include <string>

namespace z123 {

enum class ErrorKind {
  Io,              // file missing, unreadable, short read
  Format,          // malformed file contents: bad JSON, corrupt safetensors header, bad image
  Model,           // well-formed files that do not describe a usable model (missing tensor, wrong shape)
  InvalidArgument, // caller passed something out of range
  Unsupported,     // valid request the device / build cannot do
  Vulkan,          // a Vulkan call failed
  NoDevice,        // no usable Vulkan device
  OutOfMemory,     // device or host allocation failed / limits exceeded
  Cancelled,       // generation stopped by the caller
  Internal,        // a bug: an invariant broke
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
public:
  Error(ErrorKind kind, const std::string& message);
  ErrorKind kind() const noexcept { return kind_; }

private:
  ErrorKind kind_;
};

// Shorthand constructors so call sites read as sentences:  throw format_error(path + ": ...");
inline Error io_error(const std::string& m) { return Error(ErrorKind::Io, m); }
inline Error format_error(const std::string& m) { return Error(ErrorKind::Format, m); }
inline Error model_error(const std::string& m) { return Error(ErrorKind::Model, m); }
inline Error invalid_argument(const std::string& m) { return Error(ErrorKind::InvalidArgument, m); }
inline Error unsupported(const std::string& m) { return Error(ErrorKind::Unsupported, m); }
inline Error internal_error(const std::string& m) { return Error(ErrorKind::Internal, m); }

} // namespace z123
