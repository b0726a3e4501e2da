#include "z123/io/safetensors_writer.hpp"

#include "z123/error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>

namespace z123 {

void SafetensorsWriter::check_name(const std::string& name) const {
  if (name == "__metadata__") throw invalid_argument("safetensors writer: '__metadata__' is reserved");
  const bool dup = std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == name; });
  if (dup) throw invalid_argument("safetensors writer: tensor '" + name + "' added twice");
}

void SafetensorsWriter::add_checked(const std::string& name, std::string dtype, std::vector<std::int64_t> shape,
                                    std::span<const std::byte> bytes, std::size_t count) {
  std::uint64_t numel = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw invalid_argument("safetensors writer: tensor '" + name + "' has a negative dimension");
    numel *= static_cast<std::uint64_t>(d);
  }
  if (numel != count) {
    throw invalid_argument("safetensors writer: tensor '" + name + "': shape holds " + std::to_string(numel) +
                           " elements, got " + std::to_string(count) + " values");
  }
  add_raw(name, std::move(dtype), std::move(shape), bytes);
}

void SafetensorsWriter::add_f32(const std::string& name, std::vector<std::int64_t> shape,
                                std::span<const float> values) {
  add_checked(name, "F32", std::move(shape), std::as_bytes(values), values.size());
}

void SafetensorsWriter::add_f16(const std::string& name, std::vector<std::int64_t> shape,
                                std::span<const std::uint16_t> bits) {
  add_checked(name, "F16", std::move(shape), std::as_bytes(bits), bits.size());
}

void SafetensorsWriter::add_raw(const std::string& name, std::string dtype, std::vector<std::int64_t> shape,
                                std::span<const std::byte> bytes) {
  check_name(name);
  entries_.push_back(
      Entry{name, std::move(dtype), std::move(shape), std::vector<std::byte>(bytes.begin(), bytes.end())});
}

void SafetensorsWriter::set_metadata(const std::string& key, const std::string& value) { metadata_[key] = value; }

std::vector<std::byte> SafetensorsWriter::serialize() const {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  std::uint64_t offset = 0;
  for (const Entry& e : entries_) {
    header[e.name] = {{"dtype", e.dtype}, {"shape", e.shape}, {"data_offsets", {offset, offset + e.bytes.size()}}};
    offset += e.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');

  std::vector<std::byte> out(8 + text.size() + offset);
  const std::uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8); // little-endian host (asserted in safetensors.cpp)
  std::memcpy(out.data() + 8, text.data(), text.size());
  std::byte* p = out.data() + 8 + text.size();
  for (const Entry& e : entries_) {
    if (!e.bytes.empty()) std::memcpy(p, e.bytes.data(), e.bytes.size());
    p += e.bytes.size();
  }
  return out;
}

void SafetensorsWriter::write(const std::filesystem::path& path) const {
  const std::vector<std::byte> bytes = serialize();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw io_error(path.string() + ": cannot open for writing");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw io_error(path.string() + ": write failed");
}

} // namespace z123
