// zero123pp-bench-kernels [--ceilings torch.json] [--reps N] [--device SEL] [--markdown OUT.md]
//
// Times each kernel family at the real Zero123++ shapes (spec §14) with GPU timestamps (fp16
// storage, the path the device would use) and prints time, TFLOP/s or GB/s, and the ceilings
// measured in the same run on the same GPU: a large vkCmdCopyBuffer for bandwidth, and, given
// --ceilings, PyTorch's fp16 matmul / SDPA / GroupNorm+SiLU from bench/torch_ceilings.py.
// The path is the one kernels::Kernels picks (NV cooperative matrix 2 where available), or the
// one Z123_KERNEL_PATH=portable|nv|khr|nv2 names; the header line reports it.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "z123/error.hpp"
#include "z123/kernels/attention.hpp"
#include "z123/kernels/conv2d.hpp"
#include "z123/kernels/matmul.hpp"
#include "z123/kernels/norm.hpp"
#include "z123/vk/device.hpp"

using namespace z123;
using namespace z123::kernels;

namespace {

struct Timer {
  vk::Device& dev;
  int reps;
  // Median over reps replays of one recording that runs the body `inner` times.
  double median_ms(const std::function<void(vk::Recording&)>& body, int inner = 5) {
    vk::Recording rec(dev, 2);
    body(rec); // warm-up pass inside the same recording is not timed: record it separately
    vk::Recording timed(dev, 2);
    timed.timestamp("start");
    for (int i = 0; i < inner; ++i) body(timed);
    timed.timestamp("end");
    dev.run(rec);
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      dev.run(timed);
      t.push_back(timed.timings().at(0).second / inner);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

Tensor random_tensor(vk::Device& dev, DType dt, std::vector<int64_t> shape, const std::string& name, float scale) {
  Tensor t = make_tensor(dev, dt, std::move(shape), name);
  std::vector<float> v(static_cast<size_t>(t.numel()));
  uint32_t s = 12345u + static_cast<uint32_t>(v.size());
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / 16777216.0f * 2.0f - 1.0f);
  }
  upload(dev, t, v);
  return t;
}

} // namespace

int main(int argc, char** argv) {
  std::string ceilings_path, device_sel, md_path;
  int reps = 10;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ceilings" && i + 1 < argc)
      ceilings_path = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--device" && i + 1 < argc)
      device_sel = argv[++i];
    else if (a == "--markdown" && i + 1 < argc)
      md_path = argv[++i];
    else {
      std::printf("usage: zero123pp-bench-kernels [--ceilings torch.json] [--reps N] [--device SEL] [--markdown F]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  try {
    nlohmann::json ceil = nlohmann::json::object();
    if (!ceilings_path.empty()) ceil = nlohmann::json::parse(std::ifstream(ceilings_path));
    vk::Instance instance;
    vk::Device dev(instance, vk::choose_device(instance, device_sel));
    Kernels k(dev);
    Timer timer{dev, reps};
    const DType dt = DType::F16;
    std::ostringstream md;
    md << "device: " << dev.info().name << ", driver " << dev.info().driver_info << "; matmul path "
       << path_name(k.matmul_path()) << ", attention path " << path_name(k.attention_path()) << "\n\n";
    md << "| kernel | shape | ours ms | ours rate | PyTorch ms | PyTorch rate | ratio "
          "|\n|---|---|---|---|---|---|---|\n";
    auto row = [&](const std::string& kind, const std::string& name, double ms, double work, bool flops) {
      double rate = work / ms / (flops ? 1e9 : 1e6); // TFLOP/s or GB/s
      std::string unit = flops ? " TFLOP/s" : " GB/s";
      double tms = 0;
      if (ceil.contains(kind) && ceil[kind].contains(name)) tms = ceil[kind][name]["ms"].get<double>();
      char buf[512];
      if (tms > 0)
        std::snprintf(buf, sizeof buf, "| %s | %s | %.3f | %.1f%s | %.3f | %.1f%s | %.2f |\n", kind.c_str(),
                      name.c_str(), ms, rate, unit.c_str(), tms, work / tms / (flops ? 1e9 : 1e6), unit.c_str(),
                      tms / ms);
      else
        std::snprintf(buf, sizeof buf, "| %s | %s | %.3f | %.1f%s | | | |\n", kind.c_str(), name.c_str(), ms, rate,
                      unit.c_str());
      md << buf;
      std::printf("%s", buf);
      std::fflush(stdout);
    };

    // Copy bandwidth ceiling (bytes read + written), the device's own copy engine path.
    {
      const uint64_t bytes = 1ull << 30;
      uint64_t chunk = std::min<uint64_t>(bytes, dev.info().max_storage_buffer_range);
      vk::Buffer a = dev.allocator().create_buffer(chunk, vk::MemoryUsage::DeviceLocal, "copy a");
      vk::Buffer b = dev.allocator().create_buffer(chunk, vk::MemoryUsage::DeviceLocal, "copy b");
      double ms = timer.median_ms([&](vk::Recording& r) { r.copy(a, b, chunk); });
      row("copy", "vkCmdCopyBuffer " + std::to_string(chunk >> 20) + " MiB", ms, 2.0 * chunk, false);
      if (ceil.contains("copy_gbps")) std::printf("PyTorch device copy: %.0f GB/s\n", ceil["copy_gbps"].get<double>());
    }
    // Matmuls: y[M,N] = x[M,K] w[N,K]^T at the UNet's projection shapes.
    struct Mm {
      const char* name;
      int64_t m, n, kk;
    };
    for (Mm s : {Mm{"L0 proj 19200x320x320", 19200, 320, 320}, Mm{"L0 ff1 19200x2560x320", 19200, 2560, 320},
                 Mm{"L0 ff2 19200x320x1280", 19200, 320, 1280}, Mm{"L0 kv 27392x320x320", 27392, 320, 320},
                 Mm{"L1 ff1 4800x5120x640", 4800, 5120, 640}, Mm{"L1 ff2 4800x640x2560", 4800, 640, 2560},
                 Mm{"L2 ff1 1200x10240x1280", 1200, 10240, 1280}}) {
      Tensor x = random_tensor(dev, dt, {s.m, s.kk}, "x", 1.0f), w = random_tensor(dev, dt, {s.n, s.kk}, "w", 0.05f);
      Tensor y = make_tensor(dev, dt, {s.m, s.n}, "y");
      double ms = timer.median_ms([&](vk::Recording& r) { linear(k, r, x, w, nullptr, y); });
      row("matmul", s.name, ms, 2.0 * s.m * s.n * s.kk, true);
    }
    // Convolutions as implicit GEMM (3x3, pad 1).
    struct Cv {
      const char* name;
      int64_t b, h, w, cin, cout;
    };
    for (Cv s :
         {Cv{"conv L0 3x3 19200x320x2880", 2, 120, 80, 320, 320}, Cv{"conv L1 3x3 4800x640x5760", 2, 60, 40, 640, 640},
          Cv{"vae conv 614400x128x1152", 1, 960, 640, 128, 128}}) {
      Tensor x = random_tensor(dev, dt, {s.b, s.h, s.w, s.cin}, "x", 1.0f);
      Tensor w = random_tensor(dev, dt, {s.cout, 3, 3, s.cin}, "w", 0.02f);
      Tensor y = make_tensor(dev, dt, {s.b, s.h, s.w, s.cout}, "y");
      double ms = timer.median_ms([&](vk::Recording& r) { conv2d(k, r, x, w, nullptr, y, conv_pad(1)); });
      row("matmul", s.name, ms, 2.0 * s.b * s.h * s.w * s.cout * s.cin * 9, true);
    }
    // Attention (reference attention: the extra keys come from a second source).
    struct At {
      const char* name;
      int64_t b, heads, nq, nk, nk2, d;
    };
    for (At s : {At{"L0 ref-attn 2x5x9600x13696x64", 2, 5, 9600, 9600, 4096, 64},
                 At{"L1 ref-attn 2x10x2400x3424x64", 2, 10, 2400, 2400, 1024, 64},
                 At{"L0 cross 2x5x9600x77x64", 2, 5, 9600, 77, 0, 64},
                 At{"ref pass L0 2x5x4096x4096x64", 2, 5, 4096, 4096, 0, 64},
                 At{"vae mid 1x1x9600x9600x512", 1, 1, 9600, 9600, 0, 512}}) {
      int64_t C = s.heads * s.d;
      Tensor q = random_tensor(dev, dt, {s.b, s.nq, C}, "q", 1.0f);
      Tensor kk = random_tensor(dev, dt, {s.b, s.nk, C}, "k", 1.0f),
             v = random_tensor(dev, dt, {s.b, s.nk, C}, "v", 1.0f);
      Tensor k2, v2;
      if (s.nk2) {
        k2 = random_tensor(dev, dt, {s.b, s.nk2, C}, "k2", 1.0f);
        v2 = random_tensor(dev, dt, {s.b, s.nk2, C}, "v2", 1.0f);
      }
      Tensor o = make_tensor(dev, dt, {s.b, s.nq, C}, "o");
      double ms = timer.median_ms([&](vk::Recording& r) {
        attention(k, r, {&q}, {&kk}, {&v}, o, {s.heads, s.d, 0.0f, false}, s.nk2 ? AttnOperand{&k2} : AttnOperand{},
                  s.nk2 ? AttnOperand{&v2} : AttnOperand{});
      });
      row("attention", s.name, ms, 4.0 * s.b * s.heads * s.nq * (s.nk + s.nk2) * s.d, true);
    }
    // Group norm + SiLU at the UNet's level 0 (bytes: one read, one write).
    {
      Tensor x = random_tensor(dev, dt, {2, 9600, 320}, "x", 1.0f);
      Tensor g = random_tensor(dev, dt, {320}, "g", 1.0f), b = random_tensor(dev, dt, {320}, "b", 1.0f);
      Tensor y = make_tensor(dev, dt, {2, 9600, 320}, "y");
      double ms = timer.median_ms([&](vk::Recording& r) { group_norm(k, r, x, g, b, y, 32, 1e-5f, true); });
      double bytes = 2.0 * x.bytes();
      row("group_norm_silu", "2x320x120x80", ms, bytes, false);
      // The single-dispatch register-resident path on the same tensor (on request only: slower
      // on the H200 so far), for comparison with the path Auto picks.
      double ms_resident = timer.median_ms(
          [&](vk::Recording& r) { group_norm(k, r, x, g, b, y, 32, 1e-5f, true, GroupNormPath::Resident); });
      row("group_norm_silu_resident", "2x320x120x80", ms_resident, bytes, false);
      if (ceil.contains("group_norm_silu"))
        std::printf("PyTorch GroupNorm+SiLU (channels_last): %.3f ms\n", ceil["group_norm_silu"]["ms"].get<double>());
      if (ceil.contains("copy_gbps"))
        std::printf("group norm + SiLU at %.1f%% of PyTorch-measured copy bandwidth (%.0f GB/s)\n",
                    100.0 * bytes / ms / 1e6 / ceil["copy_gbps"].get<double>(), ceil["copy_gbps"].get<double>());
    }
    if (!md_path.empty()) std::ofstream(md_path) << md.str();
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "zero123pp-bench-kernels: %s\n", e.what());
    return 1;
  }
}
