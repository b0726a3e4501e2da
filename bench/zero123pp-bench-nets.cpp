// zero123pp-bench-nets MODEL_DIR INPUTS.safetensors OUT.safetensors [--dtype f16|f32] [--reps N]
//
// Runs every network of a Zero123++ model folder on given inputs, writes the outputs (for the
// full-size parity check against the official modules, tests/reference/full_size_parity.py) and
// times each network with GPU timestamps: the recording is made once and replayed --reps times;
// the median is printed. Inputs (NCHW / token-major as PyTorch has them, F32):
//   vision.pixel_values [1,3,224,224]; vae.enc_input [1,3,H,W]; vae.dec_latent [1,4,h,w];
//   unet.ref_input [B,4,hr,wr]; unet.main_input [B,4,h,w]; unet.ctx [B,77,D]; unet.timestep [1]
// Outputs: text.last_hidden_state, vision.image_embeds, vae.moments, vae.dec_output,
//   unet.plain_out (main input, no reference), unet.ref_out (write pass then read pass).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "z123/error.hpp"
#include "z123/host_layout.hpp"
#include "z123/io/safetensors.hpp"
#include "z123/io/safetensors_writer.hpp"
#include "z123/nets/clip.hpp"
#include "z123/nets/unet.hpp"
#include "z123/nets/vae.hpp"
#include "z123/vk/device.hpp"

using namespace z123;

namespace {

struct Bench {
  vk::Device& dev;
  int reps;
  std::map<std::string, double> median_ms;

  // Records `body` once between two timestamps, replays it reps times, keeps the median.
  void time(const std::string& name, const std::function<void(vk::Recording&)>& body) {
    vk::Recording rec(dev, 2);
    rec.timestamp("start");
    body(rec);
    rec.timestamp(name);
    std::vector<double> t;
    for (int i = 0; i < std::max(1, reps); ++i) {
      dev.run(rec);
      t.push_back(rec.timings().at(0).second);
    }
    std::sort(t.begin(), t.end());
    median_ms[name] = t[t.size() / 2];
    std::printf("  %-28s %9.3f ms (median of %zu)\n", name.c_str(), median_ms[name], t.size());
  }
};

} // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: zero123pp-bench-nets MODEL_DIR INPUTS.safetensors OUT.safetensors "
                         "[--dtype f16|f32] [--reps N] [--device SEL]\n");
    return 2;
  }
  DType dt = DType::F16;
  int reps = 5;
  std::string device_sel;
  for (int i = 4; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dtype" && i + 1 < argc)
      dt = std::strcmp(argv[++i], "f32") == 0 ? DType::F32 : DType::F16;
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--device" && i + 1 < argc)
      device_sel = argv[++i];
  }
  try {
    vk::Instance instance;
    vk::Device dev(instance, vk::choose_device(instance, device_sel));
    kernels::Kernels k(dev);
    std::printf("device %s, dtype %s, matmul path %s, attention path %s\n", dev.info().name.c_str(), dtype_name(dt),
                kernels::path_name(k.matmul_path()), kernels::path_name(k.attention_path()));
    ModelFolder folder = ModelFolder::open(argv[1]);
    SafetensorsFile inputs = SafetensorsFile::open(argv[2]);
    SafetensorsWriter out;
    Bench bench{dev, reps, {}};
    auto input = [&](const std::string& name, bool nchw) {
      const TensorView& v = inputs.at(name);
      std::vector<float> f = to_f32(v);
      std::vector<int64_t> shape = v.shape;
      if (nchw) {
        f = nchw_to_nhwc(f, v.shape[0], v.shape[1], v.shape[2], v.shape[3]);
        shape = {v.shape[0], v.shape[2], v.shape[3], v.shape[1]};
      }
      Tensor t = make_tensor(dev, dt, shape, name);
      upload(dev, t, f);
      return t;
    };
    auto save = [&](const std::string& name, const Tensor& t, bool nhwc) {
      std::vector<float> f = download(dev, t);
      std::vector<int64_t> shape = t.shape;
      if (nhwc) {
        f = nhwc_to_nchw(f, t.shape[0], t.shape[1], t.shape[2], t.shape[3]);
        shape = {t.shape[0], t.shape[3], t.shape[1], t.shape[2]};
      }
      out.add_f32(name, shape, f);
    };
    auto load_time = [](const char* what, auto&& fn) {
      auto t0 = std::chrono::steady_clock::now();
      auto r = fn();
      std::printf("%s loaded in %.2f s\n", what,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      return r;
    };

    {
      auto text = load_time("text encoder", [&] { return std::make_unique<nets::ClipTextEncoder>(k, folder, dt); });
      Tensor e = text->encode(text->empty_prompt_ids());
      save("text.last_hidden_state", e, false);
      std::printf("  text encoder weights %.1f MiB\n", text->weight_bytes() / 1048576.0);
    }
    {
      auto vision =
          load_time("vision encoder", [&] { return std::make_unique<nets::ClipVisionEncoder>(k, folder, dt); });
      Tensor px = input("vision.pixel_values", true);
      Tensor emb = make_tensor(dev, dt, {1, vision->config().projection_dim}, "image_embeds");
      Workspace ws(dev, "vision");
      bench.time("clip vision", [&](vk::Recording& rec) { vision->record(rec, ws, px, emb); });
      save("vision.image_embeds", emb, false);
      std::printf("  vision weights %.1f MiB, workspace %.1f MiB\n", vision->weight_bytes() / 1048576.0,
                  ws.pooled_bytes() / 1048576.0);
    }
    {
      auto vae = load_time("vae", [&] { return std::make_unique<nets::Vae>(k, folder, dt); });
      Tensor img = input("vae.enc_input", true);
      int64_t f = vae->downscale();
      Tensor moments = make_tensor(dev, dt, {1, img.dim(1) / f, img.dim(2) / f, 8}, "moments");
      Workspace ws(dev, "vae");
      bench.time("vae encode", [&](vk::Recording& rec) { vae->record_encode(rec, ws, img, moments); });
      save("vae.moments", moments, true);
      Tensor lat = input("vae.dec_latent", true);
      Tensor dec = make_tensor(dev, dt, {1, lat.dim(1) * f, lat.dim(2) * f, 3}, "decoded");
      bench.time("vae decode", [&](vk::Recording& rec) { vae->record_decode(rec, ws, lat, dec); });
      save("vae.dec_output", dec, true);
      std::printf("  vae weights %.1f MiB, workspace %.1f MiB\n", vae->weight_bytes() / 1048576.0,
                  ws.pooled_bytes() / 1048576.0);
    }
    {
      auto unet = load_time("unet", [&] { return std::make_unique<nets::UNet>(k, folder, dt); });
      Tensor ref_in = input("unet.ref_input", true), main_in = input("unet.main_input", true);
      Tensor ctx = input("unet.ctx", false);
      float t = to_f32(inputs.at("unet.timestep")).at(0);
      std::vector<float> freq = unet->timestep_frequencies(t);
      Tensor tf = make_tensor(dev, dt, {1, static_cast<int64_t>(freq.size())}, "t_freq");
      upload(dev, tf, freq);
      Tensor o = make_tensor(dev, dt, main_in.shape, "unet out");
      Workspace ws(dev, "unet");
      nets::ReferenceCache cache(dev);
      nets::TimeBiases time(dev);
      {
        vk::Recording rec(dev);
        unet->record_time(rec, ws, tf, time);
        dev.run(rec);
      }
      bench.time("unet plain (main shape)", [&](vk::Recording& rec) { unet->record(rec, ws, main_in, time, ctx, &o); });
      save("unet.plain_out", o, true);
      bench.time("unet reference (write)", [&](vk::Recording& rec) {
        unet->record(rec, ws, ref_in, time, ctx, nullptr, nets::RefMode::Write, &cache);
      });
      bench.time("unet main (read)", [&](vk::Recording& rec) {
        unet->record(rec, ws, main_in, time, ctx, &o, nets::RefMode::Read, &cache);
      });
      save("unet.ref_out", o, true);
      std::printf("  unet weights %.1f MiB, workspace %.1f MiB, reference cache %.1f MiB\n",
                  unet->weight_bytes() / 1048576.0, ws.pooled_bytes() / 1048576.0, cache.bytes() / 1048576.0);
    }
    auto st = dev.allocator().stats();
    std::printf("peak device-local memory %.1f MiB\n", st.peak_device_local_allocated_bytes / 1048576.0);
    for (auto& [name, ms] : bench.median_ms) out.set_metadata("ms." + name, std::to_string(ms));
    out.write(argv[3]);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "zero123pp-bench-nets: %s\n", e.what());
    return 1;
  }
}
