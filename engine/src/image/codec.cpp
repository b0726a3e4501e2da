// Format sniffing, file reading/writing and dispatch to the PNG / JPEG codecs.
#include "z123/image/codec.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>

#include "image/codec_formats.hpp"
#include "z123/error.hpp"

namespace z123 {
namespace {

bool starts_with(std::span<const std::uint8_t> bytes, std::string_view magic, std::size_t offset = 0) {
  if (bytes.size() < offset + magic.size()) return false;
  for (std::size_t i = 0; i < magic.size(); ++i) {
    if (bytes[offset + i] != static_cast<std::uint8_t>(magic[i])) return false;
  }
  return true;
}

// Formats people commonly pass by mistake; named so the error says "unsupported", not "corrupt".
const char* other_known_format(std::span<const std::uint8_t> bytes) {
  if (starts_with(bytes, "GIF87a") || starts_with(bytes, "GIF89a")) return "GIF";
  if (starts_with(bytes, "RIFF") && starts_with(bytes, "WEBP", 8)) return "WebP";
  if (starts_with(bytes, std::string_view("II*\0", 4)) || starts_with(bytes, std::string_view("MM\0*", 4))) {
    return "TIFF";
  }
  if (starts_with(bytes, "BM")) return "BMP";
  return nullptr;
}

std::string hex_prefix(std::span<const std::uint8_t> bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < bytes.size() && i < 8; ++i) {
    if (i) s += ' ';
    s += digits[bytes[i] >> 4];
    s += digits[bytes[i] & 15];
  }
  return s;
}

void write_file(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw io_error(path.string() + ": cannot open for writing (" + std::strerror(errno) + ")");
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw io_error(path.string() + ": writing " + std::to_string(bytes.size()) + " bytes failed");
}

} // namespace

ImageFormat sniff_image_format(std::span<const std::uint8_t> bytes) {
  if (starts_with(bytes, "\x89PNG\r\n\x1a\n")) return ImageFormat::Png;
  if (starts_with(bytes, "\xff\xd8\xff")) return ImageFormat::Jpeg;
  return ImageFormat::Unknown;
}

Image decode_image(std::span<const std::uint8_t> bytes, const std::string& source) {
  if (bytes.empty()) throw format_error(source + ": empty file (0 bytes), expected a PNG or JPEG image");
  switch (sniff_image_format(bytes)) {
  case ImageFormat::Png: return image_detail::decode_png(bytes, source);
  case ImageFormat::Jpeg: return image_detail::decode_jpeg(bytes, source);
  case ImageFormat::Unknown: break;
  }
  if (const char* other = other_known_format(bytes)) {
    throw unsupported(source + ": " + other + " image; expected PNG or JPEG (convert it first)");
  }
  throw format_error(source +
                     ": not a PNG or JPEG image (expected signature 89 50 4e 47 0d 0a 1a 0a or ff d8 ff, found " +
                     hex_prefix(bytes) + ")");
}

Image load_image(const std::filesystem::path& path) {
  // Read as a stream, not by its size: pipes and process substitutions (/dev/stdin, <(cat x))
  // work like files. The signature is checked on the first bytes, so a large file that is no
  // image fails before it is read, and no input may exceed kMaxImageFileBytes.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw io_error(path.string() + ": is a directory, not an image");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw io_error(path.string() + ": cannot open image (" + std::strerror(errno) + ")");
  std::vector<std::uint8_t> bytes(16);
  f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(f.gcount()));
  if (bytes.size() < 16 || sniff_image_format(bytes) == ImageFormat::Unknown) return decode_image(bytes, path.string());
  constexpr std::size_t kChunk = 1 << 20;
  while (f) {
    const std::size_t have = bytes.size();
    if (have > kMaxImageFileBytes)
      throw io_error(path.string() + ": larger than " + std::to_string(kMaxImageFileBytes >> 20) +
                     " MiB, more than any image this program takes");
    bytes.resize(have + kChunk);
    f.read(reinterpret_cast<char*>(bytes.data() + have), static_cast<std::streamsize>(kChunk));
    bytes.resize(have + static_cast<std::size_t>(f.gcount()));
  }
  if (f.bad()) throw io_error(path.string() + ": read error (" + std::strerror(errno) + ")");
  return decode_image(bytes, path.string());
}

void save_png(const std::filesystem::path& path, const Image& image) { write_file(path, encode_png(image)); }

void save_jpeg(const std::filesystem::path& path, const Image& image, int quality) {
  write_file(path, encode_jpeg(image, quality));
}

} // namespace z123
