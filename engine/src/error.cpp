#include "z123/error.hpp"

namespace z123 {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::Io: return "io";
  case ErrorKind::Format: return "format";
  case ErrorKind::Model: return "model";
  case ErrorKind::InvalidArgument: return "invalid argument";
  case ErrorKind::Unsupported: return "unsupported";
  case ErrorKind::Vulkan: return "vulkan";
  case ErrorKind::NoDevice: return "no device";
  case ErrorKind::OutOfMemory: return "out of memory";
  case ErrorKind::Cancelled: return "cancelled";
  case ErrorKind::Internal: return "internal";
  }
  return "unknown";
}

Error::Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}

} // namespace z123
