// Safetensors reader and writer: round trips, dtype conversion, and rejection of every kind of
// corrupt header with a message that says which tensor and what was expected vs found.
#include "io_test_util.hpp"
#include "support/synthetic_model.hpp"
#include "z123/half.hpp"
#include "z123/io/safetensors.hpp"
#include "z123/io/safetensors_writer.hpp"
#include "z123/model/model_folder.hpp"
#include "z123/tensor.hpp" // compile check: the loader headers coexist with the device tensor types

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <vector>

namespace {

using namespace z123;
using z123::test::expect_error;

// A file image from a raw header text and `data_bytes` zero bytes of data.
std::vector<std::byte> image(const std::string& header, std::size_t data_bytes) {
  std::vector<std::byte> out(8 + header.size() + data_bytes);
  const std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}

SafetensorsFile parse(const std::string& header, std::size_t data_bytes) {
  return SafetensorsFile::from_bytes(image(header, data_bytes), "mem.safetensors");
}

void expect_rejected(const std::string& header, std::size_t data_bytes, ErrorKind kind,
                     std::initializer_list<std::string> substrings) {
  expect_error([&] { parse(header, data_bytes); }, kind, substrings);
}

TEST(SafetensorsTest, RoundTripF32F16AndMetadata) {
  SafetensorsWriter w;
  const std::vector<float> a{1.0f, -2.5f, 3.25f, 0.0f, 1e-3f, 65504.0f};
  const std::vector<std::uint16_t> b{f32_to_f16(0.5f), f32_to_f16(-1.0f), 0x7bff};
  w.add_f32("layer.weight", {2, 3}, a);
  w.add_f16("layer.bias", {3}, b);
  w.add_f32("empty", {0, 4}, {});
  w.add_f32("scalar", {}, std::vector<float>{7.0f});
  w.set_metadata("format", "pt");
  const std::vector<std::byte> bytes = w.serialize();

  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u) << "header is padded so the data area is 8-aligned";

  const SafetensorsFile f = SafetensorsFile::from_bytes(bytes, "roundtrip");
  ASSERT_EQ(f.tensors().size(), 4u);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.header_size(), n);
  EXPECT_EQ(f.data_size(), 6 * 4 + 3 * 2 + 4u);

  const TensorView& wt = f.at("layer.weight");
  EXPECT_EQ(wt.dtype, StoredDType::F32);
  EXPECT_EQ(wt.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(wt.numel, 6u);
  EXPECT_EQ(to_f32(wt), a);

  const TensorView& bias = f.at("layer.bias");
  EXPECT_EQ(bias.dtype, StoredDType::F16);
  EXPECT_EQ(to_f16(bias), b);
  EXPECT_EQ(to_f32(bias), (std::vector<float>{0.5f, -1.0f, 65504.0f}));

  EXPECT_EQ(f.at("empty").numel, 0u);
  EXPECT_TRUE(f.at("empty").bytes.empty());
  EXPECT_EQ(f.at("scalar").numel, 1u);
  EXPECT_EQ(to_f32(f.at("scalar")), std::vector<float>{7.0f});
  EXPECT_EQ(f.find("nope"), nullptr);

  // Tensors come in data order (insertion order for our writer).
  EXPECT_EQ(f.tensors()[0].name, "layer.weight");
  EXPECT_EQ(f.tensors()[1].name, "layer.bias");
}

TEST(SafetensorsTest, OpenFromDiskAndMove) {
  z123::test::TempDir dir;
  SafetensorsWriter w;
  std::vector<float> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  w.add_f32("x", {10, 100}, values);
  const auto path = dir.path() / "x.safetensors";
  w.write(path);

  SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_EQ(f.source(), path.string());
  EXPECT_EQ(f.file_size(), std::filesystem::file_size(path));
  const SafetensorsFile moved = std::move(f);
  EXPECT_EQ(to_f32(moved.at("x")), values); // spans survive the move
}

// A weight file truncated while it is mapped (replaced or cut short during loading): the pages
// past the new end raise SIGBUS, which the readers turn into an Io error naming the tensor. The
// process survives and the part still in the file reads normally.
TEST(SafetensorsTest, FileTruncatedWhileMappedGivesAnErrorNotSigbus) {
  z123::test::TempDir dir;
  SafetensorsWriter w;
  std::vector<float> values(1 << 20); // 4 MiB: many pages past the cut
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1000);
  w.add_f32("big", {1024, 1024}, values);
  const auto path = dir.path() / "w.safetensors";
  w.write(path);
  const SafetensorsFile f = SafetensorsFile::open(path);
  std::filesystem::resize_file(path, 64 * 1024); // the header and the first ~60 KiB stay
  std::vector<std::uint16_t> head(1000);
  convert_range_to_f16(f.at("big"), 0, 1, head); // still in the file
  EXPECT_EQ(f16_to_f32(head[999]), 999.0f);
  std::vector<float> all(values.size());
  expect_error([&] { convert_to_f32(f.at("big"), all); }, ErrorKind::Io, {"'big'", "shrank"});
  std::vector<std::uint16_t> all16(values.size());
  expect_error([&] { convert_to_f16(f.at("big"), all16); }, ErrorKind::Io, {"'big'", "shrank"});
  f.prefetch(); // touches every page: must not crash either
}

TEST(SafetensorsTest, ConversionsRoundToNearestEven) {
  SafetensorsWriter w;
  // 1 + 2^-11 is exactly between halves 1.0 and 1.0009765625 -> even (1.0).
  const std::vector<float> f32{1.0f + 0x1.0p-11f, 1.0f + 0x1.8p-11f, 70000.0f, -0.0f};
  w.add_f32("f", {4}, f32);
  // bf16 1.0, -2.0, 3.140625 (not representable in f16 exactly: rounds)
  const std::vector<std::uint16_t> bf{0x3f80, 0xc000, 0x4049};
  w.add_raw("b", "BF16", {3}, std::as_bytes(std::span<const std::uint16_t>(bf)));
  const SafetensorsFile f = SafetensorsFile::from_bytes(w.serialize(), "conv");

  EXPECT_EQ(to_f16(f.at("f")), (std::vector<std::uint16_t>{0x3c00, 0x3c01, 0x7c00, 0x8000}));
  EXPECT_EQ(f.at("b").dtype, StoredDType::BF16);
  EXPECT_EQ(to_f32(f.at("b")), (std::vector<float>{1.0f, -2.0f, 3.140625f}));
  EXPECT_EQ(to_f16(f.at("b")), (std::vector<std::uint16_t>{0x3c00, 0xc000, f32_to_f16(3.140625f)}));

  std::vector<float> small(3);
  expect_error([&] { convert_to_f32(f.at("f"), small); }, ErrorKind::InvalidArgument,
               {"tensor 'f'", "output buffer has 3 elements, the tensor has 4"});
}

TEST(SafetensorsTest, UnalignedDataIsReadCorrectly) {
  // A 3-byte-odd header puts the data at an odd address.
  const std::string header =
      R"({"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"f":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  std::vector<std::byte> bytes = image(header, 8);
  const std::uint16_t h[2] = {0x3c00, 0x4000};
  const float one = 1.5f;
  std::memcpy(bytes.data() + 8 + header.size(), h, 4);
  std::memcpy(bytes.data() + 8 + header.size() + 4, &one, 4);
  const SafetensorsFile f = SafetensorsFile::from_bytes(bytes, "unaligned");
  EXPECT_EQ(to_f32(f.at("h")), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(to_f32(f.at("f")), std::vector<float>{1.5f});
}

TEST(SafetensorsTest, WriterRejectsBadInput) {
  SafetensorsWriter w;
  w.add_f32("a", {1}, std::vector<float>{1});
  expect_error([&] { w.add_f32("a", {1}, std::vector<float>{1}); }, ErrorKind::InvalidArgument,
               {"tensor 'a' added twice"});
  expect_error(
      [&] {
        w.add_f32("b", {2, 2}, std::vector<float>{1, 2, 3});
      },
      ErrorKind::InvalidArgument, {"tensor 'b'", "shape holds 4 elements, got 3 values"});
  expect_error([&] { w.add_f32("__metadata__", {1}, std::vector<float>{1}); }, ErrorKind::InvalidArgument,
               {"reserved"});
}

TEST(SafetensorsTest, RejectsTruncatedFile) {
  expect_error([] { SafetensorsFile::from_bytes(std::vector<std::byte>(5), "short.safetensors"); }, ErrorKind::Format,
               {"short.safetensors", "file is 5 bytes", "8-byte"});
}

TEST(SafetensorsTest, RejectsHeaderLengthPastEnd) {
  std::vector<std::byte> bytes = image("{}", 0);
  const std::uint64_t n = 100;
  std::memcpy(bytes.data(), &n, 8);
  expect_error([&] { SafetensorsFile::from_bytes(bytes, "mem.safetensors"); }, ErrorKind::Format,
               {"mem.safetensors", "header length 100 bytes runs past the end of the file (10 bytes"});
}

TEST(SafetensorsTest, RejectsHugeHeaderLength) {
  std::vector<std::byte> bytes = image("{}", 0);
  const std::uint64_t n = 1ull << 40;
  std::memcpy(bytes.data(), &n, 8);
  expect_error([&] { SafetensorsFile::from_bytes(bytes, "mem.safetensors"); }, ErrorKind::Format,
               {"header length 1099511627776 bytes exceeds the limit of 104857600"});
}

TEST(SafetensorsTest, RejectsBadJson) {
  expect_rejected("{\"a\": ", 0, ErrorKind::Format, {"mem.safetensors", "invalid JSON", "parse error"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":[1e400],"data_offsets":[0,0]}})", 0, ErrorKind::Format,
                  {"invalid JSON"});
  expect_rejected("[1, 2]", 0, ErrorKind::Format, {"header must be a JSON object, found array of 2"});
  expect_rejected("\"text\"", 0, ErrorKind::Format, {"found string"});
  expect_rejected(R"({"a": [1]})", 0, ErrorKind::Format, {"tensor 'a': entry must be an object, found array"});
}

TEST(SafetensorsTest, RejectsUnsupportedDtypes) {
  expect_rejected(R"({"w":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", 8, ErrorKind::Unsupported,
                  {"mem.safetensors: tensor 'w' has dtype 'I64'", "expected F32, F16 or BF16"});
  expect_rejected(R"({"w":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}})", 1, ErrorKind::Unsupported,
                  {"tensor 'w' has dtype 'Q4'"});
  expect_rejected(R"({"w":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})", 4, ErrorKind::Format,
                  {"tensor 'w': 'dtype' must be a string, found number 7"});
}

TEST(SafetensorsTest, SkipsNamedNonFloatBuffersOnRequest) {
  const std::string header =
      R"({"m.embeddings.position_ids":{"dtype":"I64","shape":[1,3],"data_offsets":[0,24]},"w":{"dtype":"F32","shape":[2],"data_offsets":[24,32]}})";
  SafetensorsOptions options;
  options.skip_non_float_suffixes = {"embeddings.position_ids"};
  const SafetensorsFile f = SafetensorsFile::from_bytes(image(header, 32), "clip", options);
  ASSERT_EQ(f.tensors().size(), 1u);
  ASSERT_EQ(f.skipped().size(), 1u);
  EXPECT_EQ(f.skipped()[0].name, "m.embeddings.position_ids");
  EXPECT_EQ(f.skipped()[0].dtype, "I64");
  // Without the option it is an error; a skipped tensor is still validated.
  expect_rejected(header, 32, ErrorKind::Unsupported, {"tensor 'm.embeddings.position_ids' has dtype 'I64'"});
  expect_error(
      [&] {
        SafetensorsFile::from_bytes(
            image(R"({"embeddings.position_ids":{"dtype":"I64","shape":[3],"data_offsets":[0,16]}})", 16), "clip",
            options);
      },
      ErrorKind::Format, {"data_offsets span 16 bytes but shape [3] x I64 needs 24 bytes"});
}

TEST(SafetensorsTest, RejectsShapeLengthMismatch) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8, ErrorKind::Format,
                  {"tensor 'w'", "data_offsets span 8 bytes but shape [3] x F32 needs 12 bytes"});
}

TEST(SafetensorsTest, RejectsOffsetsPastEnd) {
  expect_rejected(R"({"w":{"dtype":"F16","shape":[8],"data_offsets":[0,16]}})", 8, ErrorKind::Format,
                  {"tensor 'w'", "data_offsets end 16 is past the end of the data area (8 bytes"});
  expect_rejected(R"({"w":{"dtype":"F16","shape":[0],"data_offsets":[9,9]}})", 8, ErrorKind::Format,
                  {"data_offsets end 9 is past the end"});
  expect_rejected(R"({"w":{"dtype":"F16","shape":[1],"data_offsets":[4,2]}})", 8, ErrorKind::Format,
                  {"tensor 'w': data_offsets begin 4 > end 2"});
  expect_rejected(R"({"w":{"dtype":"F16","shape":[1],"data_offsets":[0]}})", 8, ErrorKind::Format,
                  {"'data_offsets' must be [begin, end], found array of 1"});
  expect_rejected(R"({"w":{"dtype":"F16","shape":[1],"data_offsets":[-2,0]}})", 8, ErrorKind::Format,
                  {"data_offsets[0] is -2, expected a non-negative integer"});
}

TEST(SafetensorsTest, RejectsOverlappingRanges) {
  expect_rejected(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
      12, ErrorKind::Format, {"mem.safetensors: tensors 'a' [0, 8) and 'b' [4, 12) overlap"});
  // A range nested inside an earlier, longer one is caught too.
  expect_rejected(
      R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"c":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
      16, ErrorKind::Format, {"tensors 'a' [0, 16) and 'b' [4, 8) overlap"});
  // Touching ranges and empty tensors are fine.
  EXPECT_NO_THROW(parse(
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"e":{"dtype":"F32","shape":[0],"data_offsets":[2,2]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
      8));
}

TEST(SafetensorsTest, RejectsBadShapes) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,-3],"data_offsets":[0,0]}})", 0, ErrorKind::Format,
                  {"tensor 'w'", "shape[1] is -3, expected a non-negative integer"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,0]}})", 0,
                  ErrorKind::Format, {"tensor 'w'", "overflows 64 bits"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})", 0, ErrorKind::Format,
                  {"byte size of shape [4611686018427387904] overflows 64 bits"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,0]}})", 0, ErrorKind::Format,
                  {"shape[0] must be a non-negative integer, found number 2.5"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":3,"data_offsets":[0,0]}})", 0, ErrorKind::Format,
                  {"'shape' must be a list of integers, found number 3"});
  expect_rejected(R"({"w":{"dtype":"F32","data_offsets":[0,0]}})", 0, ErrorKind::Format,
                  {"tensor 'w': missing 'shape'"});
  expect_rejected(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 4, ErrorKind::Format, {"tensor 'w': missing 'dtype'"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":[1]}})", 4, ErrorKind::Format, {"tensor 'w': missing 'data_offsets'"});
}

TEST(SafetensorsTest, ValidatesMetadata) {
  EXPECT_EQ(parse(R"({"__metadata__":{"format":"pt"}})", 0).metadata().at("format"), "pt");
  expect_rejected(R"({"__metadata__":{"format":1}})", 0, ErrorKind::Format,
                  {"'__metadata__' key 'format': expected string value, found number 1"});
  expect_rejected(R"({"__metadata__":[]})", 0, ErrorKind::Format,
                  {"'__metadata__' must be an object of strings, found array"});
}

TEST(SafetensorsTest, LookupErrorsNameFileAndTensor) {
  const SafetensorsFile f = parse("{}", 0);
  expect_error([&] { f.at("conv_in.weight"); }, ErrorKind::Model,
               {"mem.safetensors: tensor 'conv_in.weight' not found"});
}

TEST(SafetensorsTest, FileErrors) {
  z123::test::TempDir dir;
  expect_error([&] { SafetensorsFile::open(dir.path() / "missing.safetensors"); }, ErrorKind::Io,
               {"missing.safetensors: cannot open", "No such file"});
  expect_error([&] { SafetensorsFile::open(dir.path()); }, ErrorKind::Io, {"is not a regular file"});
  const auto empty = dir.path() / "empty.safetensors";
  std::ofstream(empty).close();
  expect_error([&] { SafetensorsFile::open(empty); }, ErrorKind::Format, {"empty.safetensors: file is 0 bytes"});

  // A file cut short on disk: the last tensor's range runs past the data area.
  SafetensorsWriter w;
  w.add_f32("a", {4}, std::vector<float>{1, 2, 3, 4});
  w.add_f32("b", {4}, std::vector<float>{1, 2, 3, 4});
  const auto cut = dir.path() / "cut.safetensors";
  w.write(cut);
  std::filesystem::resize_file(cut, std::filesystem::file_size(cut) - 3);
  expect_error([&] { SafetensorsFile::open(cut); }, ErrorKind::Format,
               {"cut.safetensors: tensor 'b'", "data_offsets end 32 is past the end of the data area (29 bytes"});
}

} // namespace
