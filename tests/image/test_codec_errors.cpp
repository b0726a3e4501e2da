// Bad input to the decoders: empty, foreign, truncated at every length, corrupt, and files that
// declare absurd dimensions. Each must give a typed z123::Error naming the file, never a crash.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "image/png_data_check.hpp"
#include "image_test_util.hpp"
#include "z123/image/codec.hpp"

namespace z123::test {
namespace {

std::uint32_t crc32(const std::uint8_t* p, std::size_t n) {
  std::uint32_t c = 0xffffffffU;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320U & (0U - (c & 1U)));
  }
  return ~c;
}

void put_be32(std::vector<std::uint8_t>& v, std::uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<std::uint8_t>(x >> s));
}

void add_chunk(std::vector<std::uint8_t>& png, const char* tag, const std::vector<std::uint8_t>& data) {
  put_be32(png, static_cast<std::uint32_t>(data.size()));
  const std::size_t start = png.size();
  png.insert(png.end(), tag, tag + 4);
  png.insert(png.end(), data.begin(), data.end());
  put_be32(png, crc32(png.data() + start, png.size() - start));
}

// A PNG whose header says width x height; the image data is a stub (never reached when the
// header is rejected).
std::vector<std::uint8_t> png_with_header(std::uint32_t width, std::uint32_t height, std::uint8_t bit_depth = 8,
                                          std::uint8_t color_type = 2, std::uint8_t interlace = 0,
                                          const std::vector<std::uint8_t>& idat = {0x78, 0x9c, 0x63, 0x00, 0x00}) {
  std::vector<std::uint8_t> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<std::uint8_t> ihdr;
  put_be32(ihdr, width);
  put_be32(ihdr, height);
  ihdr.insert(ihdr.end(), {bit_depth, color_type, 0, 0, interlace});
  add_chunk(png, "IHDR", ihdr);
  add_chunk(png, "IDAT", idat);
  add_chunk(png, "IEND", {});
  return png;
}

// Byte offset just past the last IDAT chunk (its CRC included).
std::size_t end_of_image_data(const std::vector<std::uint8_t>& png) {
  std::size_t pos = 8, end = 0;
  while (pos + 8 <= png.size()) {
    const std::uint32_t len =
        (std::uint32_t(png[pos]) << 24) | (png[pos + 1] << 16) | (png[pos + 2] << 8) | png[pos + 3];
    if (std::memcmp(&png[pos + 4], "IDAT", 4) == 0) end = pos + 12 + len;
    pos += 12 + len;
  }
  return end;
}

// Index of the first occurrence of the two-byte JPEG marker.
std::size_t find_marker(const std::vector<std::uint8_t>& jpg, std::uint8_t marker) {
  for (std::size_t i = 0; i + 1 < jpg.size(); ++i) {
    if (jpg[i] == 0xff && jpg[i + 1] == marker) return i;
  }
  return std::string::npos;
}

std::filesystem::path write_temp(const std::string& name, const std::vector<std::uint8_t>& bytes) {
  const std::filesystem::path p = std::filesystem::path(::testing::TempDir()) / ("z123_image_" + name);
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return p;
}

TEST(CodecErrors, EmptyFileNamesTheFile) {
  const std::filesystem::path p = write_temp("empty.png", {});
  expect_error([&] { load_image(p); }, ErrorKind::Format, {p.string(), "empty file (0 bytes)"});
  std::filesystem::remove(p);
}

TEST(CodecErrors, GarbageIsNotAnImage) {
  const std::string text = "hello, this is not an image";
  const std::filesystem::path p = write_temp("garbage.jpg", {text.begin(), text.end()});
  expect_error([&] { load_image(p); }, ErrorKind::Format,
               {p.string(), "not a PNG or JPEG", "found 68 65 6c 6c 6f 2c 20 74"});
  std::filesystem::remove(p);
}

TEST(CodecErrors, OtherFormatsAreUnsupported) {
  const std::vector<std::uint8_t> gif{'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0};
  expect_error([&] { decode_image(gif, "cat.gif"); }, ErrorKind::Unsupported, {"cat.gif", "GIF", "PNG or JPEG"});
  const std::vector<std::uint8_t> webp{'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'E', 'B', 'P'};
  expect_error([&] { decode_image(webp, "cat.webp"); }, ErrorKind::Unsupported, {"cat.webp", "WebP"});
}

TEST(CodecErrors, MissingFileAndDirectoryAreIoErrors) {
  const std::filesystem::path missing = std::filesystem::path(::testing::TempDir()) / "z123_image_missing.png";
  expect_error([&] { load_image(missing); }, ErrorKind::Io, {missing.string()});
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir());
  expect_error([&] { load_image(dir); }, ErrorKind::Io, {"is a directory"});
  expect_error([&] { save_png(missing / "sub" / "x.png", synthetic("noise", 2, 2, 3, 1)); }, ErrorKind::Io,
               {"cannot open for writing"});
}

// Pipes read like files (zero123pp <(cat x.png) out.png, /dev/stdin).
TEST(CodecErrors, ImagesLoadFromAPipe) {
  const Image in = synthetic("noise", 50, 40, 3, 1);
  const std::vector<std::uint8_t> png = encode_png(in);
  const std::filesystem::path fifo = std::filesystem::path(::testing::TempDir()) / "z123_image_fifo.png";
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer(
      [&] { std::ofstream(fifo, std::ios::binary).write(reinterpret_cast<const char*>(png.data()), png.size()); });
  Image got = load_image(fifo);
  writer.join();
  std::filesystem::remove(fifo);
  EXPECT_EQ(got.width, 50);
  EXPECT_EQ(got.pixels, in.pixels);
}

// A large file that is no image fails on its signature (it is not read whole first).
TEST(CodecErrors, LargeNonImageFailsOnItsSignature) {
  const std::filesystem::path big = std::filesystem::path(::testing::TempDir()) / "z123_image_big.png";
  std::ofstream(big) << "not an image at all";
  std::filesystem::resize_file(big, 3ull << 30); // sparse: takes no disk
  expect_error([&] { load_image(big); }, ErrorKind::Format, {"not a PNG or JPEG"});
  std::filesystem::remove(big);
}

TEST(CodecErrors, PngTruncatedAtEveryLength) {
  const Image in = synthetic("noise", 50, 40, 3, 1);
  const std::vector<std::uint8_t> png = encode_png(in);
  const std::size_t data_end = end_of_image_data(png);
  ASSERT_GT(data_end, 33u);
  for (std::size_t n = 1; n < png.size(); ++n) {
    const std::vector<std::uint8_t> prefix(png.begin(), png.begin() + static_cast<std::ptrdiff_t>(n));
    if (n < data_end) {
      try {
        decode_image(prefix, "cut.png");
        ADD_FAILURE() << "a PNG cut to " << n << " of " << png.size() << " bytes decoded";
      } catch (const Error& e) {
        ASSERT_EQ(e.kind(), ErrorKind::Format) << n << ": " << e.what();
        ASSERT_NE(std::string(e.what()).find("cut.png"), std::string::npos) << e.what();
      }
    } else { // only trailing chunks (IEND) are missing: tolerated, as by Pillow
      EXPECT_TRUE(decode_image(prefix, "cut.png").pixels == in.pixels) << n;
    }
  }
  expect_error([&] { decode_image(std::vector<std::uint8_t>(png.begin(), png.begin() + 60), "cut.png"); },
               ErrorKind::Format, {"cut.png", "truncated PNG", "ends after 60 bytes"});
}

TEST(CodecErrors, PngCorruptDataIsAFormatError) {
  const std::vector<std::uint8_t> png = encode_png(synthetic("noise", 30, 20, 3, 2));
  std::vector<std::uint8_t> bad_crc = png;
  bad_crc[end_of_image_data(png) - 1] ^= 0x55; // the last IDAT's stored CRC
  expect_error([&] { decode_image(bad_crc, "crc.png"); }, ErrorKind::Format, {"crc.png", "corrupt PNG", "CRC"});
  std::vector<std::uint8_t> bad_data = png;
  bad_data[end_of_image_data(png) - 20] ^= 0x55; // deflate data: zlib notices before the CRC is read
  expect_error([&] { decode_image(bad_data, "data.png"); }, ErrorKind::Format, {"data.png", "corrupt PNG"});

  // Valid chunk CRCs around a broken zlib stream.
  std::vector<std::uint8_t> bad_zlib{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<std::uint8_t> ihdr;
  put_be32(ihdr, 30);
  put_be32(ihdr, 20);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});
  add_chunk(bad_zlib, "IHDR", ihdr);
  add_chunk(bad_zlib, "IDAT", {0x78, 0x9c, 0xff, 0xff, 0xff, 0xff, 0x12, 0x34, 0x56});
  add_chunk(bad_zlib, "IEND", {});
  expect_error([&] { decode_image(bad_zlib, "zlib.png"); }, ErrorKind::Format, {"zlib.png", "PNG"});

  expect_error([&] { decode_image(png_with_header(30, 20, 7, 2), "depth.png"); }, ErrorKind::Format,
               {"depth.png", "corrupt PNG"});
  expect_error([&] { decode_image(png_with_header(0, 20), "zero.png"); }, ErrorKind::Format, {"zero.png"});
}

TEST(CodecErrors, PngHugeDimensionsAreRejectedBeforeAllocating) {
  expect_error([] { decode_image(png_with_header(20000, 1), "wide.png"); }, ErrorKind::Format,
               {"wide.png", "20000x1", "16384"});
  expect_error([] { decode_image(png_with_header(16384, 16384), "big.png"); }, ErrorKind::Format,
               {"big.png", "16384x16384", "256000000"});
  expect_error([] { decode_image(png_with_header(0x7fffffff, 0x7fffffff), "max.png"); }, ErrorKind::Format,
               {"max.png", "2147483647x2147483647"});
}

// The process's peak resident memory so far (Linux reports ru_maxrss in KiB). A test that checks
// it cannot see an allocation smaller than an earlier peak of the same process; ctest runs each
// test in a process of its own, so there the checks below hold from a small baseline.
std::int64_t peak_rss_mib() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<std::int64_t>(u.ru_maxrss) / 1024;
}

// A 120-byte file that declares 16000 x 16000 RGB: interlaced, the decoder used to allocate the
// whole 768 MB image before reading any data. The check of the IDAT size now refuses it first;
// the peak RSS shows nothing large was touched (a zero-filled buffer would add its full size).
TEST(CodecErrors, PngDeclaringMorePixelsThanItsDataCanHoldFailsBeforeAllocating) {
  const std::int64_t before = peak_rss_mib();
  for (std::uint8_t interlace : {1, 0}) {
    const std::vector<std::uint8_t> bomb = png_with_header(16000, 16000, 8, 2, interlace);
    ASSERT_LT(bomb.size(), 128u);
    expect_error([&] { decode_image(bomb, "bomb.png"); }, ErrorKind::Format,
                 {"bomb.png", "truncated or corrupt PNG", "16000x16000", "holds only 5 bytes of image data"});
  }
  EXPECT_LT(peak_rss_mib() - before, 64) << "MiB of new peak RSS while refusing the files";
}

// Enough IDAT bytes to pass the size check, but no valid zlib stream: 1-bit gray interlaced
// 16000 x 16000 expands to a 256 MB image, which must not be allocated before rows decode.
TEST(CodecErrors, InterlacedPngMemoryFollowsTheDecodedData) {
  std::vector<std::uint8_t> junk(64 * 1024);
  for (std::size_t i = 0; i < junk.size(); ++i)
    junk[i] = static_cast<std::uint8_t>(hash32(static_cast<std::uint32_t>(i)));
  junk[0] = 0x78; // a zlib header, then random deflate data
  junk[1] = 0x9c;
  const std::int64_t before = peak_rss_mib();
  expect_error([&] { decode_image(png_with_header(16000, 16000, 1, 0, 1, junk), "junk.png"); }, ErrorKind::Format,
               {"junk.png", "PNG"});
  EXPECT_LT(peak_rss_mib() - before, 64) << "MiB of new peak RSS while failing";
}

// The bound is exact: deflate's best ratio is 1032:1, so a file holding N bytes of IDAT may
// declare up to 1032 * N bytes of scanlines and not one more.
TEST(CodecErrors, PngDataSizeBoundIsDeflatesBestRatio) {
  using image_detail::check_png_data_size;
  using image_detail::png_idat_bytes;
  using image_detail::png_inflated_bytes;
  EXPECT_EQ(png_inflated_bytes(16000, 16000, 8, 2, false), 16000ull * (1 + 48000));
  EXPECT_EQ(png_inflated_bytes(1, 1, 8, 2, true), 4u);             // pass 1 only
  EXPECT_EQ(png_inflated_bytes(3, 2, 8, 0, true), 2 + 2 + 2 + 4u); // passes 1, 4, 6 (1 px each), 7 (3 px)
  EXPECT_EQ(png_inflated_bytes(13, 1, 1, 0, false), 3u);           // filter byte + 13 bits
  // Adam7 against a per-pixel count of the passes: each pass's rows, each with a filter byte.
  for (std::uint32_t w : {1u, 2u, 5u, 8u, 9u, 17u}) {
    for (std::uint32_t h : {1u, 3u, 8u, 12u}) {
      std::uint64_t want = 0;
      for (int pass = 0; pass < 7; ++pass) {
        static const int x0[7] = {0, 4, 0, 2, 0, 1, 0}, y0[7] = {0, 0, 4, 0, 2, 0, 1};
        static const int dx[7] = {8, 8, 4, 4, 2, 2, 1}, dy[7] = {8, 8, 8, 4, 4, 2, 2};
        std::uint64_t cols = 0, rows = 0;
        for (std::uint32_t x = x0[pass]; x < w; x += dx[pass]) ++cols;
        for (std::uint32_t y = y0[pass]; y < h; y += dy[pass]) ++rows;
        if (cols && rows) want += rows * (1 + cols * 3);
      }
      EXPECT_EQ(png_inflated_bytes(w, h, 8, 2, true), want) << w << "x" << h;
    }
  }

  const std::vector<std::uint8_t> png = png_with_header(5159, 1, 8, 0); // 5-byte IDAT
  EXPECT_EQ(png_idat_bytes(png), 5u);
  EXPECT_EQ(png_idat_bytes(std::vector<std::uint8_t>(png.begin(), png.end() - 19)), 2u); // cut inside the IDAT
  EXPECT_NO_THROW(check_png_data_size(png, 5159, 1, 8, 0, false, "edge.png"));           // 1 + 5159 = 5 * 1032
  expect_error([&] { check_png_data_size(png, 5160, 1, 8, 0, false, "edge.png"); }, ErrorKind::Format,
               {"edge.png", "5160x1", "5161 bytes of scanlines", "only 5 bytes"});
}

// Writes a PNG of one colour with zlib at its best (level 9), interlaced or not, as the most
// compressed PNGs real encoders produce. Returns the file and the inflated size.
std::vector<std::uint8_t> flat_png(std::uint32_t w, std::uint32_t h, bool interlaced, std::uint8_t value,
                                   std::size_t& inflated) {
  std::vector<std::uint8_t> raw;
  const auto add_rows = [&](std::uint32_t cols, std::uint32_t rows) {
    for (std::uint32_t r = 0; cols && r < rows; ++r) {
      raw.push_back(0); // filter: none
      raw.insert(raw.end(), static_cast<std::size_t>(cols) * 3, value);
    }
  };
  if (interlaced) {
    for (const auto& p : image_detail::kAdam7) add_rows(p.cols(w), p.rows(h));
  } else {
    add_rows(w, h);
  }
  inflated = raw.size();
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::vector<std::uint8_t> z(size);
  EXPECT_EQ(compress2(z.data(), &size, raw.data(), static_cast<uLong>(raw.size()), 9), Z_OK);
  z.resize(size);
  std::vector<std::uint8_t> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<std::uint8_t> ihdr;
  put_be32(ihdr, w);
  put_be32(ihdr, h);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, static_cast<std::uint8_t>(interlaced ? 1 : 0)});
  add_chunk(png, "IHDR", ihdr);
  add_chunk(png, "IDAT", z);
  add_chunk(png, "IEND", {});
  return png;
}

// The size check must not refuse real files that compress as well as zlib can: a 4096 x 4096
// white image compresses about 859:1 (Pillow's PNG of it too; interlaced, with shorter rows,
// 785:1), against the bound of 1032:1.
TEST(CodecErrors, HighlyCompressiblePngsStillDecode) {
  for (bool interlaced : {false, true}) {
    std::size_t inflated = 0;
    const std::vector<std::uint8_t> png = flat_png(4096, 4096, interlaced, 255, inflated);
    const double ratio = static_cast<double>(inflated) / static_cast<double>(image_detail::png_idat_bytes(png));
    EXPECT_GT(ratio, interlaced ? 780.0 : 850.0) << "the test file is not as compressed as zlib's best";
    const Image im = decode_image(png, "white.png");
    ASSERT_EQ(im.width, 4096);
    ASSERT_EQ(im.height, 4096);
    ASSERT_EQ(im.channels, 3);
    EXPECT_EQ(std::count(im.pixels.begin(), im.pixels.end(), std::uint8_t{255}),
              static_cast<std::ptrdiff_t>(im.pixels.size()))
        << (interlaced ? "interlaced" : "not interlaced") << ", ratio " << ratio;
  }
}

// A JPEG cut inside its first scan still declares its full size; libjpeg would pad the missing
// rows with gray (a progressive file: every coefficient block of the image too), so the decoder
// must stop at the end of the data, not allocate and decode 16000 x 16000 pixels first. (The cut
// is inside the scan's data: data that runs into the next marker instead is "corrupt", which
// Pillow, and so the decoder, tolerates by padding.)
TEST(CodecErrors, TruncatedJpegDeclaringAHugeImageFailsEarly) {
  const std::vector<std::uint8_t> baseline = encode_jpeg(synthetic("noise", 64, 64, 3, 7), 90);
  const std::vector<std::uint8_t> progressive = read_file_bytes(image_data_dir() / "rgb_progressive.jpg");
  for (const auto& [original, sof_marker] : {std::pair{baseline, 0xc0}, std::pair{progressive, 0xc2}}) {
    std::vector<std::uint8_t> jpg = original;
    const std::size_t sof = find_marker(jpg, static_cast<std::uint8_t>(sof_marker)), sos = find_marker(jpg, 0xda);
    ASSERT_NE(sof, std::string::npos);
    ASSERT_NE(sos, std::string::npos);
    for (std::size_t at : {sof + 5, sof + 7}) { // height, width
      jpg[at] = 16000 >> 8;
      jpg[at + 1] = 16000 & 255;
    }
    const std::size_t data = sos + 2 + (std::size_t{jpg[sos + 2]} << 8 | jpg[sos + 3]);
    std::size_t next = data; // the first marker after the entropy data (not a stuffed FF 00)
    while (next + 1 < jpg.size() && !(jpg[next] == 0xff && jpg[next + 1] != 0)) ++next;
    ASSERT_GT(next, data + 8);
    jpg.resize(data + std::min<std::size_t>(200, (next - data) / 2));
    const std::int64_t before = peak_rss_mib();
    expect_error([&] { decode_image(jpg, "huge.jpg"); }, ErrorKind::Format, {"huge.jpg", "truncated JPEG"});
    EXPECT_LT(peak_rss_mib() - before, 64) << "MiB of new peak RSS while failing, SOF " << std::hex << sof_marker;
  }
}

TEST(CodecErrors, JpegTruncatedAtEveryLength) {
  const std::vector<std::uint8_t> jpg = encode_jpeg(synthetic("smooth", 24, 16, 3, 3), 90);
  for (std::size_t n = 1; n < jpg.size(); ++n) {
    const std::vector<std::uint8_t> prefix(jpg.begin(), jpg.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      decode_image(prefix, "cut.jpg");
      ADD_FAILURE() << "a JPEG cut to " << n << " of " << jpg.size() << " bytes decoded";
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::Format) << n << ": " << e.what();
      ASSERT_NE(std::string(e.what()).find("cut.jpg"), std::string::npos) << e.what();
    }
  }
  expect_error([&] { decode_image(std::vector<std::uint8_t>(jpg.begin(), jpg.end() - 40), "cut.jpg"); },
               ErrorKind::Format, {"cut.jpg", "truncated JPEG"});
}

TEST(CodecErrors, JpegHugeOrZeroDimensions) {
  const std::vector<std::uint8_t> jpg = encode_jpeg(synthetic("smooth", 24, 16, 3, 4), 90);
  const std::size_t sof = find_marker(jpg, 0xc0);
  ASSERT_NE(sof, std::string::npos);
  std::vector<std::uint8_t> tall = jpg; // SOF0: FF C0, length(2), precision(1), height(2), width(2)
  tall[sof + 5] = 20000 >> 8;
  tall[sof + 6] = 20000 & 255;
  expect_error([&] { decode_image(tall, "tall.jpg"); }, ErrorKind::Format, {"tall.jpg", "24x20000", "16384"});
  std::vector<std::uint8_t> empty = jpg;
  empty[sof + 5] = empty[sof + 6] = 0;
  expect_error([&] { decode_image(empty, "flat.jpg"); }, ErrorKind::Format, {"flat.jpg", "JPEG"});
}

// Random byte damage must end in a decoded image or a z123::Error, never a crash or a foreign
// exception (run under -DZ123_SANITIZE=ON to also catch memory errors).
TEST(CodecErrors, RandomlyDamagedFilesFailCleanly) {
  const std::vector<std::vector<std::uint8_t>> originals{encode_png(synthetic("noise", 20, 12, 4, 5)),
                                                         encode_jpeg(synthetic("smooth", 20, 12, 3, 6), 80)};
  int errors = 0, decoded = 0;
  for (const auto& original : originals) {
    for (std::uint32_t trial = 0; trial < 400; ++trial) {
      std::vector<std::uint8_t> bytes = original;
      const std::uint32_t r = hash32(trial * 7919U + static_cast<std::uint32_t>(bytes.size()));
      for (std::uint32_t k = 0; k <= r % 4; ++k) {
        const std::uint32_t h = hash32(r + k);
        bytes[3 + h % (bytes.size() - 3)] = static_cast<std::uint8_t>(h >> 24); // keep the signature
      }
      try {
        const Image im = decode_image(bytes, "damaged");
        EXPECT_NO_THROW(check_image(im, "damaged"));
        ++decoded;
      } catch (const Error&) {
        ++errors;
      }
    }
  }
  EXPECT_GT(errors, 0);
  EXPECT_GT(decoded, 0);
}

} // namespace
} // namespace z123::test
