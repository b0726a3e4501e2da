// zero123pp-bench-make-model: writes a full-size Zero123++ v1.2 model folder with random weights
// (the released configs of tests/data/v1.2-configs, the released dtypes: UNet F32, the rest F16,
// 5.6 GB) in seconds, for timing model loading and generation on a machine without the real
// weights or PyTorch. Values are uniform with std 1/sqrt(fan_in) (norm weights around 1), from a
// counter-based generator, so every run writes the same bytes.
//
// Usage: zero123pp-bench-make-model OUT_DIR [CONFIG_DIR]   (CONFIG_DIR: tests/data/v1.2-configs)
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "z123/error.hpp"
#include "z123/half.hpp"
#include "z123/model/configs.hpp"
#include "z123/model/expected_tensors.hpp"
#include "z123/model/model_folder.hpp"
#include "z123/parallel.hpp"

namespace fs = std::filesystem;
using namespace z123;

namespace {

// splitmix64: element i of tensor t is a function of (t, i) alone, so slices fill in parallel.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void write_all(int fd, const void* data, size_t bytes, uint64_t offset, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (bytes) {
    ssize_t n = ::pwrite(fd, p, bytes, static_cast<off_t>(offset));
    if (n <= 0) throw io_error("writing " + path + " failed: " + std::strerror(errno));
    p += n, bytes -= static_cast<size_t>(n), offset += static_cast<uint64_t>(n);
  }
}

void write_weights(const fs::path& path, const std::vector<ExpectedTensor>& tensors, bool f32, uint64_t seed) {
  const uint64_t es = f32 ? 4 : 2;
  std::string header = "{";
  std::vector<uint64_t> begin;
  uint64_t offset = 0;
  for (const ExpectedTensor& t : tensors) {
    std::string shape;
    for (int64_t d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    begin.push_back(offset);
    const uint64_t end = offset + t.numel() * es;
    header += (offset == 0 ? "\"" : ",\"") + t.name + "\":{\"dtype\":\"" + (f32 ? "F32" : "F16") + "\",\"shape\":[" +
              shape + "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  const std::string name = path.string();
  int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw io_error("cannot create " + name + ": " + std::strerror(errno));
  try {
    uint64_t n = header.size();
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
    write_all(fd, len, 8, 0, name);
    write_all(fd, header.data(), header.size(), 8, name);
    const uint64_t data0 = 8 + header.size();
    // Slices of at most 4 Mi elements, spread over the cores.
    constexpr uint64_t kSlice = 4ull << 20;
    struct Slice {
      size_t tensor;
      uint64_t first, count;
    };
    std::vector<Slice> slices;
    for (size_t t = 0; t < tensors.size(); ++t)
      for (uint64_t i = 0; i < tensors[t].numel(); i += kSlice)
        slices.push_back({t, i, std::min(kSlice, tensors[t].numel() - i)});
    parallel_for(slices.size(), [&](size_t s) {
      const Slice& sl = slices[s];
      const ExpectedTensor& t = tensors[sl.tensor];
      const bool vector = t.shape.size() == 1;
      const bool norm_weight = vector && t.name.ends_with(".weight");
      const double fan_in = vector ? 1.0 : static_cast<double>(t.numel() / static_cast<uint64_t>(t.shape[0]));
      const double scale = norm_weight || vector ? 0.1 : std::sqrt(3.0 / fan_in); // uniform: std = scale/sqrt(3)
      std::vector<unsigned char> buf(sl.count * es);
      for (uint64_t i = 0; i < sl.count; ++i) {
        uint64_t r = mix(seed ^ mix(sl.tensor * 0x100000001b3ull + sl.first + i));
        double u = (static_cast<double>(r >> 11) * 0x1.0p-53) * 2.0 - 1.0;
        float v = static_cast<float>((norm_weight ? 1.0 : 0.0) + scale * u);
        if (f32) {
          std::memcpy(&buf[i * 4], &v, 4);
        } else {
          uint16_t h = f32_to_f16(v);
          std::memcpy(&buf[i * 2], &h, 2);
        }
      }
      write_all(fd, buf.data(), buf.size(), data0 + begin[sl.tensor] + sl.first * es, name);
    });
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw io_error("closing " + name + " failed: " + std::strerror(errno));
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || std::string(argv[1]) == "--help") {
    std::fprintf(stderr, "usage: zero123pp-bench-make-model OUT_DIR [CONFIG_DIR]\n");
    return 2;
  }
  try {
    const fs::path dir = argv[1];
    const fs::path configs = argc > 2 ? fs::path(argv[2]) : fs::path("tests/data/v1.2-configs");
    fs::create_directories(dir);
    fs::copy(configs, dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    for (const PipelineComponent& c : load_pipeline_index(dir / "model_index.json").components)
      if (!c.is_null()) fs::create_directories(dir / c.name);
    const ModelConfigs mc = load_model_configs(dir);
    uint64_t seed = 1;
    for (ModelModule m : kModelModules) {
      const bool f32 = m == ModelModule::Unet;
      write_weights(dir / module_weights_path(m), expected_tensors(m, mc), f32, mix(seed++));
      std::printf("wrote %s\n", (dir / module_weights_path(m)).string().c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zero123pp-bench-make-model: %s\n", e.what());
    return 1;
  }
}
