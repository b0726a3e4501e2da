// Engine: model loading (open) and one image → six views (generate), spec §3.
#include "z123/engine.hpp"
#include "z123/engine_testing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "pipeline/host_math.hpp"
#include "pipeline/memory_mode.hpp"
#include "pipeline/sampling_plan.hpp"
#include "pipeline/step_program.hpp"
#include "z123/half.hpp"
#include "z123/image/preprocess.hpp"
#include "z123/kernels/elementwise.hpp"
#include "z123/kernels/sampler_ops.hpp"
#include "z123/model/model_folder.hpp"
#include "z123/nets/clip.hpp"
#include "z123/nets/unet.hpp"
#include "z123/nets/vae.hpp"
#include "z123/sampling/rng.hpp"

namespace z123 {

using Clock = std::chrono::steady_clock;
static double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

using pipeline::StepProgram;

// Recorded once per model (conditioning) or per output size (decoding) and replayed per image;
// inputs are host-visible, so a new image is written straight into them.
// Where the device has a side queue (Engine::Impl::reference_ahead), CLIP vision runs there
// (vision_rec) beside the VAE encode (rec): it streams its weights from host memory over the bus
// and leaves the SMs to the encode. Elsewhere both are in rec.
struct ConditionProgram {
  Tensor clip_in, vae_in; // host-visible, storage dtype
  Tensor embeds, moments; // device (embeds host-visible when vision_rec runs it: no copy from the other queue)
  std::unique_ptr<vk::Recording> vision_rec, rec;
};

struct DecodeProgram {
  int64_t h = 0, w = 0;
  Tensor latent;                    // host-visible, storage dtype
  Tensor image;                     // device
  std::shared_ptr<vk::Buffer> rgba; // host-visible: the kernel writes the output pixels straight there
  std::unique_ptr<vk::Recording> rec;
};

struct Engine::Impl {
  std::unique_ptr<vk::Instance> instance;
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<kernels::Kernels> k;
  DType dtype = DType::F16;
  ModelConfigs configs;
  std::unique_ptr<nets::ClipVisionEncoder> vision;
  bool vision_in_host_memory = false;
  std::unique_ptr<nets::Vae> vae;
  std::unique_ptr<nets::UNet> unet;
  std::vector<float> text_embedding; // E, [77, D] (constant: the prompt is always "")
  // Posterior of the all-zero VAE input, NHWC [S/8, S/8, 8]: computed at the first generation
  // with guidance (not in open(): on a CPU device that VAE encode at 512x512 is most of the load
  // time, and an element cycled through its states would pay it on every start).
  std::vector<float> zero_moments;
  // The main pass's scratch (and, in the low-memory layout, the reference pass's).
  std::unique_ptr<Workspace> scratch;
  // The conditioning and decoding programs take their scratch from this pool, whose buffers take
  // the Second turn of device memory (vk::MemoryTurn): the programs run one after another (the
  // host waits for each), so what sampling holds and what the programs around it hold can share
  // memory, and the peak is the larger of the two rather than the sum (decoding at 640x960 alone
  // needs about 1 GiB). The First turn:
  // - normal layout: the sampling pools (scratch, reference) and the step caches, which every
  //   image's steps write before they read them (sampling_turn());
  // - low-memory layout: the UNet's weights; restore_unet copies them back from their host copy
  //   before sampling, when unet_on_device says the other turn overwrote them.
  std::unique_ptr<Workspace> around;
  // Normal layout, with a side queue: CLIP vision's scratch beside the VAE encode (the Second
  // turn too, in buffers of its own: the two run at the same time). Null elsewhere.
  std::unique_ptr<Workspace> beside;
  std::unique_ptr<vk::Recording> restore_unet;
  bool unet_on_device = false;
  // The turn memory the normal layout reserved for the recorded programs (record_planned).
  uint64_t turn_bytes = 0;
  vk::MemoryTurn sampling_turn() const { return restore_unet ? vk::MemoryTurn::None : vk::MemoryTurn::First; }
  // The reference pass's scratch in the normal layout: a pool of its own, so that nothing but the
  // keys and values it writes orders the main pass after it (its split-K GEMMs have a scratch
  // lane of their own as well: kernels::SplitKLane), and the step program (ordered by
  // levels: vk::Recording::order_by_levels) runs the two passes side by side. Null in the
  // low-memory layout, where both passes share `scratch` (a smaller peak before overlap). In the
  // First turn with `scratch` (the memory turns of `around`).
  std::unique_ptr<Workspace> reference;
  Workspace& reference_scratch() { return reference ? *reference : *scratch; }
  // Whether the step's reference pass runs one step ahead on the side queue (StepProgram): where
  // the device has one (Tuning::reference_queue), in the normal layout (its own pool: the
  // low-memory one shares `scratch` between the passes), and not while profiling (the profile
  // times one queue's commands one after another).
  bool reference_ahead() const { return device->has_side_queue() && reference && !vk::Profiler::requested(); }
  std::unique_ptr<Workspace> make_reference() const {
    return restore_unet ? nullptr : std::make_unique<Workspace>(*device, "reference-pass", sampling_turn());
  }
  Workspace& around_scratch() { return *around; }
  // Where CLIP vision runs beside the VAE encode (reference_ahead()).
  Workspace& beside_scratch() { return beside ? *beside : *around; }
  // Marks the UNet's weights overwritten by a program that uses `around`, before it runs (a run
  // that fails half-way has overwritten them as well).
  void will_run_around() {
    if (restore_unet) unet_on_device = false;
  }
  // Makes sure the UNet's weights are on the device; returns the milliseconds it took.
  double restore_unet_weights() {
    if (!restore_unet || unet_on_device) return 0;
    auto t0 = Clock::now();
    device->run(*restore_unet);
    unet_on_device = true;
    return ms_since(t0);
  }
  std::unique_ptr<StepProgram> step;
  std::unique_ptr<ConditionProgram> condition;
  std::unique_ptr<DecodeProgram> decode;
  // Work may still be in flight after an error (a failed wait, a failure half-way through
  // open()): the buffers the members free must be idle first. On a lost device the wait reports
  // an error, which changes nothing about tearing down.
  ~Impl() {
    if (device) try {
        device->wait_idle();
      } catch (const Error&) {
      }
  }
  std::mutex mutex;
  std::atomic<std::thread::id> generating{}; // the thread inside generate(), to refuse re-entry
  LoadReport load;
  uint64_t weight_bytes = 0;

  Tensor host_tensor(DType dt, std::vector<int64_t> shape, const std::string& name) {
    Tensor t;
    t.dtype = dt;
    t.shape = std::move(shape);
    t.buffer = std::make_shared<vk::Buffer>(
        device->allocator().create_buffer((t.bytes() + 3) & ~size_t(3), vk::MemoryUsage::Upload, name));
    return t;
  }
  StepProgram& step_program(int64_t h, int64_t w, int64_t hr, int64_t wr, int halves);
  ConditionProgram& condition_program();
  DecodeProgram& decode_program(int64_t h, int64_t w);
  std::vector<float> encode_moments(const std::vector<float>& vae_nhwc, int64_t s);
  void check_output_size(int width, int height) const {
    const int64_t levels = static_cast<int64_t>(configs.unet.block_out_channels.size());
    const int64_t multiple = vae->downscale() * (int64_t(1) << (levels - 1));
    if (width < multiple || height < multiple || width % multiple || height % multiple || width > 4096 || height > 4096)
      throw invalid_argument("output size " + std::to_string(width) + "x" + std::to_string(height) +
                             " must be a multiple of " + std::to_string(multiple) + " between " +
                             std::to_string(multiple) + " and 4096");
  }
  // Records the three programs for one output size (with guidance), which creates every pipeline
  // they use: done in open() when asked, so the first image runs as fast as the ones after it.
  void prepare(int width, int height) {
    check_output_size(width, height);
    const int64_t f = vae->downscale();
    record_planned(height / f, width / f, 2);
  }
  bool programs_for(int64_t h, int64_t w, int halves) const {
    return condition && step && step->h == h && step->w == w && step->halves == halves && decode && decode->h == h &&
           decode->w == w;
  }
  // Records the programs for latents of h x w (halves: 2 with guidance) twice, in fresh pools:
  // first against buffers with no memory, which tells the pools every tensor's size and lifetime
  // (Workspace::begin_planning), then for real into pools laid out from that (1,542 -> 971 MiB
  // of scratch at 640x960, bench/NOTES.md session 9). In the normal layout the turn memory is
  // reserved in between, for the larger turn, so that neither turn's buffers open blocks of
  // their own.
  void record_planned(int64_t h, int64_t w, int halves) {
    reset_programs();
    std::vector<Workspace*> pools{scratch.get(), around.get()};
    if (reference) pools.push_back(reference.get());
    if (beside) pools.push_back(beside.get());
    for (Workspace* ws : pools) ws->begin_planning();
    uint64_t caches = 0;
    try {
      record_programs(h, w, halves);
      caches = step->cache_bytes(); // real buffers, made while recording
    } catch (...) {
      reset_programs(); // new pools, not planning
      throw;
    }
    drop_programs();
    for (Workspace* ws : pools) ws->end_planning();
    if (sampling_turn() != vk::MemoryTurn::None) {
      const uint64_t first = scratch->planned_bytes() + (reference ? reference->planned_bytes() : 0) + caches;
      const uint64_t second = around->planned_bytes() + (beside ? beside->planned_bytes() : 0);
      // Each buffer starts at its alignment and is rounded up to 256 bytes: a margin for both.
      size_t buffers = 0;
      for (Workspace* ws : pools) buffers += ws->buffers();
      turn_bytes = std::max(first, second) + uint64_t(buffers + 256) * 4096;
      device->allocator().reserve_turn_memory(turn_bytes, "sampling, taking turns with conditioning and decoding");
    }
    record_programs(h, w, halves);
  }
  void record_programs(int64_t h, int64_t w, int halves) {
    const int64_t f = vae->downscale(), S = configs.feature_extractor_vae.crop_height;
    condition_program();
    step_program(h, w, S / f, S / f, halves);
    decode_program(h, w);
  }
  // Closes the recordings (their first submission would otherwise): waits for their pipelines.
  void finish_programs() {
    std::vector<vk::Recording*> all = step ? step->recordings() : std::vector<vk::Recording*>{};
    for (vk::Recording* r : {step ? step->context_rec.get() : nullptr, condition ? condition->rec.get() : nullptr,
                             condition ? condition->vision_rec.get() : nullptr, decode ? decode->rec.get() : nullptr})
      all.push_back(r);
    for (vk::Recording* r : all)
      if (r) r->finish();
  }
  void drop_programs() {
    step.reset();
    condition.reset();
    decode.reset();
  }
  // Drops every recorded program and the scratch pool (a new output size: the old recordings
  // reference pooled buffers, so none can be freed while any of them lives).
  void reset_programs() {
    drop_programs();
    make_pools();
  }
  // Fresh scratch pools for this layout (scratch and around; reference and beside where the
  // layout has them).
  void make_pools() {
    around.reset();
    beside.reset();
    reference.reset();
    scratch = std::make_unique<Workspace>(*device, "scratch", sampling_turn());
    around = std::make_unique<Workspace>(*device, "around-sampling", vk::MemoryTurn::Second);
    reference = make_reference();
    if (reference_ahead()) beside = std::make_unique<Workspace>(*device, "conditioning-side", vk::MemoryTurn::Second);
  }
};

// ---------------------------------------------------------------------------------------------
std::unique_ptr<Engine> Engine::open(const std::filesystem::path& model_dir, const EngineOptions& options) {
  auto t_open = Clock::now();
  auto impl = std::make_unique<Impl>();
  LoadReport& report = impl->load;
  const bool prepare = options.prepare_width > 0 || options.prepare_height > 0;
  constexpr int kStages = 6;
  int stage = 0;
  auto t = Clock::now();
  // Starts the next stage: reports it, and returns the time since the previous one began.
  auto next_stage = [&](const char* name) {
    double ms = ms_since(t);
    t = Clock::now();
    if (options.on_progress && name) options.on_progress({name, ++stage, kStages});
    return ms;
  };
  next_stage("Vulkan device");
  vk::InstanceOptions io;
  io.validation = options.validation;
  impl->instance = std::make_unique<vk::Instance>(io);
  const vk::DeviceInfo& info = vk::choose_device(*impl->instance, options.device);
  impl->device = std::make_unique<vk::Device>(*impl->instance, info);
  impl->k = std::make_unique<kernels::Kernels>(*impl->device);
  const auto& f = impl->device->features();
  bool fp16_ok = f.shader_float16 && f.storage_buffer_16bit;
  switch (options.precision) {
  case Precision::F16:
    if (!fp16_ok) throw unsupported("device '" + info.name + "' lacks shaderFloat16 / 16-bit storage for f16");
    impl->dtype = DType::F16;
    break;
  case Precision::F32: impl->dtype = DType::F32; break;
  case Precision::Auto: impl->dtype = fp16_ok ? DType::F16 : DType::F32; break;
  }
  vk::Device& device = *impl->device;

  report.device_ms = next_stage("model folder");
  // What the folder holds that the engine does not implement (a tensor dtype, a class or block
  // type in a config) is a problem of the model, not of the device: Model, so front ends report
  // it as a bad model folder.
  ModelFolder folder = [&] {
    try {
      return ModelFolder::open(model_dir);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Unsupported) throw model_error(e.what());
      throw;
    }
  }();
  FolderCheck check = check_model_folder(folder);
  if (!check.consistency_problems.empty())
    throw model_error(model_dir.string() + ": " + check.consistency_problems.front());
  impl->configs = folder.configs();

  // Every network's tensors first (uploads deferred), then every recording: that starts the
  // compilation of all pipelines on worker threads, which then overlaps reading and uploading
  // the weights (on a first run the driver compiles for many seconds).
  report.folder_ms = next_stage("kernels");
  nets::WeightUploads uploads;
  // The text encoder only ever sees "": it runs once here, and its weights go with it.
  auto text = std::make_unique<nets::ClipTextEncoder>(*impl->k, folder, impl->dtype, &uploads);
  impl->vision = std::make_unique<nets::ClipVisionEncoder>(
      *impl->k, folder, impl->dtype,
      options.vision_weights_in_host_memory ? vk::MemoryUsage::HostStreamed : vk::MemoryUsage::DeviceLocal, &uploads);
  impl->vision_in_host_memory = options.vision_weights_in_host_memory;
  impl->vae = std::make_unique<nets::Vae>(*impl->k, folder, impl->dtype, &uploads);
  const bool low_memory = pipeline::use_low_memory(options.memory, info);
  impl->unet = std::make_unique<nets::UNet>(*impl->k, folder, impl->dtype, &uploads,
                                            nets::WeightPlacement{vk::MemoryUsage::DeviceLocal, low_memory});
  impl->weight_bytes = impl->vision->weight_bytes() + impl->vae->weight_bytes() + impl->unet->weight_bytes();
  if (low_memory) {
    impl->restore_unet = std::make_unique<vk::Recording>(device);
    impl->unet->weights().record_restore(*impl->restore_unet);
  }
  impl->make_pools();
  auto text_ws = std::make_unique<Workspace>(device, "clip-text");
  vk::Recording text_rec(device);
  Tensor text_out = text->record_encode(text_rec, *text_ws, text->empty_prompt_ids());
  if (prepare) impl->prepare(options.prepare_width, options.prepare_height);
  report.record_ms = next_stage("weights");

  uploads.run(device);
  report.weights_ms = next_stage("text encoder");
  device.run(text_rec);
  impl->text_embedding = download(device, text_out);
  text_ws.reset();
  text.reset();
  report.text_ms = next_stage("compiling kernels");

  if (prepare) {
    impl->finish_programs();
    if (impl->step) {
      // One step's commands: the first step slot's (with the reference pass ahead, and its
      // reference program, which serves Tuning::reference_steps steps).
      const StepProgram& sp = *impl->step;
      for (const vk::Recording* r : {sp.references.front().rec.get(), sp.steps.front().rec.get()}) {
        if (!r) continue;
        report.step_dispatches += static_cast<uint32_t>(r->dispatch_count());
        report.step_barriers += static_cast<uint32_t>(r->barrier_count());
      }
    }
  }
  vk::PipelineCache& pipes = device.pipelines();
  pipes.wait_all();
  report.pipelines_wait_ms = next_stage(nullptr);
  pipes.save();
  report.save_ms = next_stage(nullptr);
  const vk::TransferStats& ts = device.transfer_stats();
  report.read_ms = ts.read_ms;
  report.convert_ms = ts.produce_ms;
  report.upload_wait_ms = ts.wait_ms;
  report.staged_bytes = ts.staged_bytes;
  report.direct_bytes = ts.direct_bytes;
  report.pipelines = static_cast<uint32_t>(pipes.pipelines_created());
  report.pipeline_cache_hits = static_cast<uint32_t>(pipes.cache_hits());
  report.pipelines_cpu_ms = pipes.creation_ms();
  report.slowest_pipelines = pipes.slowest(3);
  report.total_ms = ms_since(t_open);
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

std::string Engine::device_name() const { return impl_->device->info().name; }
Precision Engine::precision() const { return impl_->dtype == DType::F16 ? Precision::F16 : Precision::F32; }
bool Engine::low_memory() const { return impl_->restore_unet != nullptr; }
uint64_t Engine::weight_bytes() const { return impl_->weight_bytes; }
uint32_t Engine::validation_errors() const { return impl_->instance->validation_error_count(); }
double Engine::load_ms() const { return impl_->load.total_ms; }
const LoadReport& Engine::load_report() const { return impl_->load; }

std::string Engine::memory_report() const {
  // The pools change while generate() runs: wait for it, but not from inside its callback (the
  // same thread holds the lock).
  if (impl_->generating.load() == std::this_thread::get_id())
    throw invalid_argument("memory_report() called from inside generate() (its on_step callback): call it after");
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const Impl& m = *impl_;
  auto mib = [](uint64_t b) { return static_cast<int>(b >> 20); };
  const vk::MemoryStats st = m.device->allocator().stats();
  const nets::Weights& unet = m.unet->weights();
  const std::string unet_where = unet.takes_turns() ? " (taking turns with conditioning/decoding; host copy " +
                                                          std::to_string(mib(unet.host_copy_bytes())) + " MiB)"
                                                    : "";
  // The reference pass's pool exists in the normal layout only (the low-memory one shares `scratch`).
  const std::string reference_pool =
      m.reference ? " (and the reference pass's, " + std::to_string(mib(m.reference->pooled_bytes())) + " MiB)"
                  : " (the reference pass's too)";
  const std::string around_where = m.restore_unet ? " (in the UNet weights' memory)"
                                                  : " (taking turns with the sampling pools and step caches in " +
                                                        std::to_string(mib(m.turn_bytes)) + " MiB)";
  // Ahead, two reference caches: the pass of the next steps writes one while the main passes read the other.
  std::string reference_caches;
  if (m.step && m.step->ahead())
    reference_caches =
        m.step->steps_per_reference == 1
            ? " (two: its pass one step ahead)"
            : " (two: its pass ahead, one for " + std::to_string(m.step->steps_per_reference) + " steps at a time)";
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "memory (%s layout): device-local %d MiB now, %d MiB peak\n"
                "  UNet weights           %6d MiB%s\n"
                "  VAE weights            %6d MiB\n"
                "  CLIP vision weights    %6d MiB (%s)\n"
                "  sampling scratch pool  %6d MiB%s\n"
                "  conditioning/decoding  %6d MiB%s\n"
                "  step caches            %6d MiB (reference%s and cross-attention keys/values)\n",
                m.restore_unet ? "low-memory" : "normal", mib(st.device_local_allocated_bytes),
                mib(st.peak_device_local_allocated_bytes), mib(m.unet->weight_bytes()), unet_where.c_str(),
                mib(m.vae->weight_bytes()), mib(m.vision->weight_bytes()),
                m.vision_in_host_memory ? "host memory on discrete GPUs" : "device",
                mib(m.scratch ? m.scratch->pooled_bytes() : 0), reference_pool.c_str(),
                mib(m.around->pooled_bytes() + (m.beside ? m.beside->pooled_bytes() : 0)), around_where.c_str(),
                mib(m.step ? m.step->cache_bytes() : 0), reference_caches.c_str());
  return buf;
}

std::vector<float> Engine::Impl::encode_moments(const std::vector<float>& vae_nhwc, int64_t s) {
  Tensor img = make_tensor(*device, dtype, {1, s, s, 3}, "vae input");
  upload(*device, img, vae_nhwc);
  int64_t f = vae->downscale();
  Tensor moments = make_tensor(*device, dtype, {1, s / f, s / f, 2 * int64_t(configs.vae.latent_channels)}, "moments");
  vk::Recording rec(*device);
  vae->record_encode(rec, around_scratch(), img, moments);
  will_run_around();
  device->run(rec);
  return download(*device, moments);
}

} // namespace z123

namespace z123 {

StepProgram& Engine::Impl::step_program(int64_t h, int64_t w, int64_t hr, int64_t wr, int halves) {
  if (step && step->h == h && step->w == w && step->hr == hr && step->wr == wr && step->halves == halves) return *step;
  if (step) reset_programs(); // a new shape
  auto p = std::make_unique<StepProgram>();
  p->h = h, p->w = w, p->hr = hr, p->wr = wr, p->halves = halves;
  const int64_t c = configs.unet.in_channels, B = halves, D = configs.unet.cross_attention_dim.at(0);
  const int64_t tokens = configs.text_encoder.max_position_embeddings, freqs = configs.unet.block_out_channels[0];
  const bool ahead = reference_ahead();
  const int g = ahead ? device->tuning().reference_steps : 1;
  p->steps_per_reference = g;
  p->steps.resize(ahead ? size_t(2 * g) : 1);
  p->references.resize(ahead ? 2 : 1);
  for (StepProgram::StepSlot& s : p->steps) {
    s.params = device->allocator().create_buffer(sizeof(kernels::StepParams), vk::MemoryUsage::Upload, "step params");
    s.t_freq = host_tensor(dtype, {1, freqs}, "t_freq");
    s.time = std::make_unique<nets::TimeBiases>(*device);
    s.anc_noise = host_tensor(DType::F32, {1, h, w, c}, "ancestral noise");
    s.rec = std::make_unique<vk::Recording>(*device);
    s.rec->order_by_levels(); // the reference and main passes side by side (`reference`)
  }
  for (StepProgram::ReferenceSlot& r : p->references) {
    r.ref_noise = host_tensor(DType::F32, {g * B, hr, wr, c}, "reference noise");
    r.cache = std::make_unique<nets::ReferenceCache>(*device, sampling_turn());
    if (g > 1) {
      r.t_rows = host_tensor(dtype, {g * B, freqs}, "t_freq rows");
      r.rows = std::make_unique<nets::TimeBiases>(*device);
    }
    if (ahead) {
      r.rec = std::make_unique<vk::Recording>(*device, vk::QueueRole::Side);
      r.rec->order_by_levels();
    }
  }
  p->cond_lat = make_tensor(*device, DType::F32, {B, hr, wr, c}, "cond_lat");
  p->x = make_tensor(*device, DType::F32, {1, h, w, c}, "x");
  p->ctx = make_tensor(*device, dtype, {B, tokens, D}, "ctx");
  p->ref_in = make_tensor(*device, dtype, {g * B, hr, wr, c}, "reference input");
  p->main_in = make_tensor(*device, dtype, {B, h, w, c}, "main input");
  p->v = make_tensor(*device, dtype, {B, h, w, c}, "v");
  p->context_kv = std::make_unique<nets::ReferenceCache>(*device, sampling_turn());
  if (g > 1) {
    p->ref_ctx = make_tensor(*device, dtype, {g * B, tokens, D}, "reference ctx");
    p->ref_context_kv = std::make_unique<nets::ReferenceCache>(*device, sampling_turn());
  }
  const uint32_t ref_count = static_cast<uint32_t>(B * hr * wr * c), count = static_cast<uint32_t>(h * w * c);
  // One step ahead, each pass runs beside the other's queue: kernels keep their choices for that.
  std::optional<kernels::QueuesShareTheGpu> shared;
  if (ahead) shared.emplace(*k);
  for (size_t j = 0; j < p->references.size(); ++j) {
    StepProgram::ReferenceSlot& r = p->references[j];
    // Its steps' slots: steps jg .. jg + g - 1 (mod 2g).
    std::vector<StepProgram::StepSlot*> members;
    for (int m = 0; m < g; ++m) members.push_back(&p->steps[j * size_t(g) + size_t(m)]);
    vk::Recording& ref_rec = ahead ? *r.rec : *members.front()->rec;
    // With a pool of its own, the reference pass gets a split-K lane of its own too (nothing
    // shared with the main pass then but the reference cache and the inputs). Ahead, the time
    // biases are the reference program's to compute, in its pool and its lane: the main pass of
    // the step before runs beside it, and its GEMMs (split K too: M is 1) sharing the main
    // pass's scratch would race it (bench/NOTES.md session 20, run 1).
    std::optional<kernels::SplitKLane> lane;
    if (ahead) lane.emplace(*k, 1); // ahead implies `reference`
    Workspace& time_pool = ahead ? reference_scratch() : *scratch;
    for (int m = 0; m < g; ++m) {
      StepProgram::StepSlot& s = *members[size_t(m)];
      kernels::sampler_ref_input(*k, ref_rec, s.params, p->cond_lat, r.ref_noise, p->ref_in, ref_count,
                                 uint32_t(m) * ref_count);
      unet->record_time(ref_rec, time_pool, s.t_freq, *s.time);
    }
    if (g > 1) unet->record_time_rows(ref_rec, time_pool, r.t_rows, *r.rows);
    if (reference && !lane) lane.emplace(*k, 1);
    unet->record(ref_rec, reference_scratch(), p->ref_in, g > 1 ? *r.rows : *members.front()->time,
                 g > 1 ? p->ref_ctx : p->ctx, nullptr, nets::RefMode::Write, r.cache.get(),
                 g > 1 ? p->ref_context_kv.get() : p->context_kv.get());
    lane.reset();
    for (int m = 0; m < g; ++m) {
      StepProgram::StepSlot& s = *members[size_t(m)];
      kernels::sampler_main_input(*k, *s.rec, s.params, p->x, p->main_in, count);
      unet->record(*s.rec, *scratch, p->main_in, *s.time, p->ctx, &p->v, nets::RefMode::Read, r.cache.get(),
                   p->context_kv.get(), m * B);
      kernels::sampler_step(*k, *s.rec, s.params, p->x, p->v, s.anc_noise, count);
    }
  }
  p->context_rec = std::make_unique<vk::Recording>(*device);
  unet->record_context(*p->context_rec, p->ctx, *p->context_kv);
  if (g > 1) unet->record_context(*p->context_rec, p->ref_ctx, *p->ref_context_kv);
  step = std::move(p);
  return *step;
}

ConditionProgram& Engine::Impl::condition_program() {
  if (condition) return *condition;
  const int64_t S = configs.feature_extractor_vae.crop_height, Sc = configs.feature_extractor_clip.crop_height;
  const int64_t f = vae->downscale(), c = configs.unet.in_channels;
  auto p = std::make_unique<ConditionProgram>();
  p->clip_in = host_tensor(dtype, {1, Sc, Sc, 3}, "clip input");
  p->vae_in = host_tensor(dtype, {1, S, S, 3}, "vae input");
  // Beside the encode on the side queue: in a pool of its own and the reference pass's split-K
  // lane, which nothing uses until the steps (the host waits for the conditioning first).
  const bool side = reference_ahead();
  p->embeds = make_tensor(*device, dtype, {1, int64_t(configs.vision_encoder.projection_dim)}, "image_embeds",
                          side ? vk::MemoryUsage::Download : vk::MemoryUsage::DeviceLocal);
  p->moments = make_tensor(*device, dtype, {1, S / f, S / f, 2 * c}, "moments");
  p->rec = std::make_unique<vk::Recording>(*device);
  if (side) {
    p->vision_rec = std::make_unique<vk::Recording>(*device, vk::QueueRole::Side);
    kernels::SplitKLane lane(*k, 1);
    vision->record(*p->vision_rec, beside_scratch(), p->clip_in, p->embeds);
  } else {
    vision->record(*p->rec, around_scratch(), p->clip_in, p->embeds);
  }
  vae->record_encode(*p->rec, around_scratch(), p->vae_in, p->moments);
  condition = std::move(p);
  return *condition;
}

DecodeProgram& Engine::Impl::decode_program(int64_t h, int64_t w) {
  if (decode && decode->h == h && decode->w == w) return *decode;
  if (decode) reset_programs(); // another output size
  const int64_t f = vae->downscale();
  auto p = std::make_unique<DecodeProgram>();
  p->h = h, p->w = w;
  p->latent = host_tensor(dtype, {1, h, w, int64_t(configs.vae.latent_channels)}, "latent");
  p->image = make_tensor(*device, dtype, {1, h * f, w * f, int64_t(configs.vae.out_channels)}, "decoded");
  p->rec = std::make_unique<vk::Recording>(*device);
  vae->record_decode(*p->rec, around_scratch(), p->latent, p->image);
  p->rgba = std::make_shared<vk::Buffer>(device->allocator().create_buffer(static_cast<VkDeviceSize>(4 * h * f * w * f),
                                                                           vk::MemoryUsage::Download, "output RGBA"));
  kernels::image_to_rgba8(*k, *p->rec, p->image, *p->rgba, pipeline::kImageUnscale);
  decode = std::move(p);
  return *decode;
}

void check_generate_options(const GenerateOptions& o) {
  auto bad = [](const std::string& what) { throw invalid_argument(what); };
  if (o.steps < sampling::kMinInferenceSteps || o.steps > sampling::kMaxInferenceSteps)
    bad("steps must be between " + std::to_string(sampling::kMinInferenceSteps) + " and " +
        std::to_string(sampling::kMaxInferenceSteps) + ", not " + std::to_string(o.steps));
  if (!std::isfinite(o.guidance_scale) || o.guidance_scale < 0.0f || o.guidance_scale > 100.0f) {
    char v[64];
    std::snprintf(v, sizeof v, "%g", static_cast<double>(o.guidance_scale));
    bad(std::string("guidance scale must be a number between 0 and 100 (<= 1 turns guidance off), not ") + v);
  }
  const std::string size = std::to_string(o.width) + "x" + std::to_string(o.height);
  if (o.width < 64 || o.height < 64 || o.width > 4096 || o.height > 4096)
    bad("output size " + size + " must be between 64 and 4096 on each side");
  if (o.width % kViewColumns != 0 || o.height % kViewRows != 0)
    bad("output size " + size + " does not split into the " + std::to_string(kViewColumns) + " x " +
        std::to_string(kViewRows) + " grid of views (width a multiple of " + std::to_string(kViewColumns) +
        ", height a multiple of " + std::to_string(kViewRows) + ")");
}

void check_input_image(const Image& image, const std::string& what) {
  check_image(image, what);
  if (image.width < kMinInputSide || image.height < kMinInputSide)
    throw invalid_argument(what + ": " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                           " pixels is too small; each side must be at least " + std::to_string(kMinInputSide) +
                           " pixels");
}

FailureClass classify_failure(ErrorKind kind, FailureStage stage) {
  switch (kind) {
  case ErrorKind::Cancelled: return FailureClass::Cancelled;
  case ErrorKind::NoDevice: return FailureClass::NoDevice;
  case ErrorKind::Io:
  case ErrorKind::Format: return stage == FailureStage::Opening ? FailureClass::BadModel : FailureClass::BadInput;
  case ErrorKind::Model: return stage == FailureStage::Opening ? FailureClass::BadModel : FailureClass::EngineFailure;
  case ErrorKind::InvalidArgument:
    return stage == FailureStage::Generating ? FailureClass::BadInput : FailureClass::EngineFailure;
  default: return FailureClass::EngineFailure;
  }
}

GenerateResult Engine::generate(const Image& input, const GenerateOptions& o) {
  check_generate_options(o);
  if (impl_->generating.load() == std::this_thread::get_id())
    throw invalid_argument("generate() called from inside a running generate() (its on_step callback): the "
                           "engine runs one call at a time, so this would wait for itself forever");
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->generating.store(std::this_thread::get_id());
  struct ClearOwner {
    std::atomic<std::thread::id>& id;
    ~ClearOwner() { id.store(std::thread::id{}); }
  } clear_owner{impl_->generating};
  Impl& m = *impl_;
  auto t_total = Clock::now();
  GenerateResult result;
  const auto& cfg = m.configs;
  m.check_output_size(o.width, o.height);
  const int64_t f = m.vae->downscale();
  const sampling::SamplingPlan plan = pipeline::make_sampling_plan(cfg.scheduler, o.steps, o.sampler, o.spacing);
  const int64_t S = cfg.feature_extractor_vae.crop_height, Sc = cfg.feature_extractor_clip.crop_height;
  const int64_t h = o.height / f, w = o.width / f, hr = S / f, wr = S / f, c = cfg.unet.in_channels;
  const int halves = o.guidance_scale > 1.0f ? 2 : 1;
  const InjectedInputs* inj = o.inject;

  // 1. Preprocessing (CPU, Pillow-exact) or injected tensors.
  auto t0 = Clock::now();
  std::vector<float> vae_in, clip_in;
  if (!inj || inj->vae_input.empty() || inj->clip_input.empty()) {
    check_input_image(input, "input image");
    PreprocessedInputs pre = preprocess(input, cfg.feature_extractor_vae, cfg.feature_extractor_clip);
    vae_in = std::move(pre.vae_nhwc);
    clip_in = std::move(pre.clip_nhwc);
  }
  auto injected_image = [&](const std::vector<float>& v, int64_t side, const char* what) {
    if (v.size() != static_cast<size_t>(3 * side * side))
      throw invalid_argument(std::string("injected ") + what + " has " + std::to_string(v.size()) +
                             " values, expected [1,3," + std::to_string(side) + "," + std::to_string(side) + "]");
    return nchw_to_nhwc(v, 1, 3, side, side);
  };
  if (inj && !inj->vae_input.empty()) vae_in = injected_image(inj->vae_input, S, "VAE input");
  if (inj && !inj->clip_input.empty()) clip_in = injected_image(inj->clip_input, Sc, "CLIP input");
  result.timings.preprocess_ms = ms_since(t0);

  // 2. Conditioning: image embedding, condition latent, context. A size or guidance the
  // programs were not recorded for records them anew (open() records the prepared size).
  t0 = Clock::now();
  if (!m.programs_for(h, w, halves)) m.record_planned(h, w, halves);
  auto noise = [&](uint64_t stream, const std::vector<float>* injected, int64_t b, int64_t hh, int64_t ww) {
    std::vector<float> v(static_cast<size_t>(b * c * hh * ww));
    if (injected && !injected->empty()) {
      if (injected->size() != v.size())
        throw invalid_argument("injected noise stream " + std::to_string(stream) + " has " +
                               std::to_string(injected->size()) + " values, expected " + std::to_string(v.size()));
      v = *injected;
    } else {
      sampling::normal_fill(o.seed, stream, v);
    }
    return nchw_to_nhwc(v, b, c, hh, ww); // streams are defined in NCHW order (docs/rng.md)
  };
  const int n = static_cast<int>(plan.steps.size());
  auto make_inputs = [&](int i) {
    const sampling::StepScalars& st = plan.steps[static_cast<size_t>(i)];
    pipeline::StepInputs in;
    in.params = {m.dtype == DType::F16 ? st.ref_sigma_f16 : st.sigma,
                 st.c_in,
                 st.a,
                 st.b,
                 st.sigma_up,
                 o.guidance_scale,
                 static_cast<uint32_t>(halves),
                 static_cast<uint32_t>(h * w * c),
                 static_cast<uint32_t>(halves * hr * wr * c)};
    in.t_freq = m.unet->timestep_frequencies(st.t);
    const std::vector<float>* rn =
        inj && i < static_cast<int>(inj->reference.size()) ? &inj->reference[size_t(i)] : nullptr;
    const std::vector<float>* an =
        inj && i < static_cast<int>(inj->ancestral.size()) ? &inj->ancestral[size_t(i)] : nullptr;
    in.ref_noise = noise(3 + 2 * uint64_t(i), rn, halves, hr, wr);
    in.anc_noise = noise(4 + 2 * uint64_t(i), an, 1, h, w);
    return in;
  };
  // Made while the GPU runs the conditioning (the host would wait for it anyway): the posterior
  // noises, the initial latent and the first two steps' inputs, a few ms of CPU that otherwise
  // come between the conditioning and the first step.
  std::vector<float> embeds, moments, posterior_noise, zero_noise, x;
  std::vector<pipeline::StepInputs> first_inputs;
  {
    ConditionProgram& cp = m.condition_program();
    pipeline::write_host(cp.clip_in, clip_in);
    pipeline::write_host(cp.vae_in, vae_in);
    m.will_run_around();
    // Whatever leaves this block, neither program is still running (the next call rewrites their inputs).
    vk::InFlight in_flight{*m.device};
    if (cp.vision_rec) in_flight.side = m.device->submit(*cp.vision_rec);
    in_flight.main = m.device->submit(*cp.rec);
    posterior_noise = noise(0, inj ? &inj->posterior_cond : nullptr, 1, hr, wr);
    if (halves == 2) zero_noise = noise(1, inj ? &inj->posterior_zero : nullptr, 1, hr, wr);
    x = noise(2, inj ? &inj->initial : nullptr, 1, h, w);
    for (float& v : x) v *= plan.init_noise_sigma;
    for (int i = 0; i < std::min(n, 2); ++i) first_inputs.push_back(make_inputs(i));
    in_flight.wait();
    embeds = download(*m.device, cp.embeds);
    moments = download(*m.device, cp.moments);
  }
  std::vector<float> cond = pipeline::posterior_sample(moments, posterior_noise, c);
  std::vector<float> cond_lat;
  if (halves == 2) {
    if (m.zero_moments.empty()) m.zero_moments = m.encode_moments(std::vector<float>(size_t(S * S * 3), 0.0f), S);
    cond_lat = pipeline::posterior_sample(m.zero_moments, zero_noise, c);
    cond_lat.insert(cond_lat.end(), cond.begin(), cond.end());
  } else {
    cond_lat = cond;
  }
  const int64_t tokens = cfg.text_encoder.max_position_embeddings, D = cfg.text_encoder.hidden_size;
  std::vector<float> ctx = pipeline::conditioning_context(m.text_embedding, embeds, cfg.index.ramping_coefficients,
                                                          tokens, D, halves, m.dtype == DType::F16);
  result.timings.condition_ms = ms_since(t0);
  if (o.capture) {
    o.capture->cond_lat = nhwc_to_nchw(cond_lat, halves, hr, wr, c);
    o.capture->context = ctx;
    o.capture->image_embeds = embeds;
  }

  // 3. Sampling: one recorded step, replayed with new scalars and noise.
  t0 = Clock::now();
  StepProgram& sp = m.step_program(h, w, hr, wr, halves);
  result.timings.weights_restore_ms = m.restore_unet_weights();
  upload(*m.device, sp.cond_lat, cond_lat);
  upload(*m.device, sp.ctx, ctx);
  if (sp.ref_ctx.buffer) { // the reference pass's batch: ctx once per step it serves
    std::vector<float> repeated;
    for (int i = 0; i < sp.steps_per_reference; ++i) repeated.insert(repeated.end(), ctx.begin(), ctx.end());
    upload(*m.device, sp.ref_ctx, repeated);
  }
  m.device->run(*sp.context_rec);
  upload(*m.device, sp.x, x);
  auto step_inputs = [&](int i) {
    return i < static_cast<int>(first_inputs.size()) ? std::move(first_inputs[size_t(i)]) : make_inputs(i);
  };
  auto check_cancel = [&](int i) {
    if (o.cancel && o.cancel->load())
      throw Error(ErrorKind::Cancelled,
                  "generation cancelled before step " + std::to_string(i + 1) + " of " + std::to_string(n));
  };
  auto after_step = [&](int i) {
    if (o.capture) o.capture->latents.push_back(nhwc_to_nchw(download(*m.device, sp.x), 1, h, w, c));
    if (o.on_step) o.on_step(i + 1, n);
  };
  result.timings.step_ms =
      pipeline::run_steps(*m.device, sp, n, {step_inputs, check_cancel, after_step, o.capture != nullptr});
  result.timings.sampling_ms = ms_since(t0);

  // 4. Decode: unscale, VAE decoder, uint8 RGBA.
  t0 = Clock::now();
  {
    std::vector<float> z = pipeline::unscale_latents(download(*m.device, sp.x), cfg.vae.scaling_factor);
    DecodeProgram& dp = m.decode_program(h, w);
    pipeline::write_host(dp.latent, z);
    m.will_run_around();
    m.device->run(*dp.rec);
    result.image = Image::blank(o.width, o.height, 4);
    m.device->download(*dp.rgba, result.image.pixels.data(), result.image.pixels.size());
    if (o.capture) {
      o.capture->decoded = nhwc_to_nchw(download(*m.device, dp.image), 1, h * f, w * f, 3);
      for (float& v : o.capture->decoded) v = std::clamp(v * pipeline::kImageUnscale / 2.0f + 0.5f, 0.0f, 1.0f);
    }
  }
  result.timings.decode_ms = ms_since(t0);
  result.timings.total_ms = ms_since(t_total);
  result.peak_device_bytes = m.device->allocator().stats().peak_device_local_allocated_bytes;
  return result;
}

std::string format_load_report(const LoadReport& r) {
  char buf[2048];
  int n = std::snprintf(
      buf, sizeof buf,
      "open %.2f s:\n"
      "  Vulkan device          %7.0f ms\n"
      "  model folder checks    %7.0f ms\n"
      "  recording programs     %7.0f ms (starts compiling %u pipelines in the background)\n"
      "  weights                %7.0f ms (%.0f MiB staged, %.0f MiB written in place)\n"
      "    reading files        %7.0f ms (all cores)\n"
      "    converting           %7.0f ms (all cores)\n"
      "    waiting for copies   %7.0f ms\n"
      "  text encoder run       %7.0f ms\n"
      "  waiting for pipelines  %7.0f ms (%u of %u from the pipeline cache; %.0f ms of compiling summed over threads)\n"
      "  saving pipeline cache  %7.0f ms\n",
      r.total_ms / 1000.0, r.device_ms, r.folder_ms, r.record_ms, r.pipelines, r.weights_ms, r.staged_bytes / 1048576.0,
      r.direct_bytes / 1048576.0, r.read_ms, r.convert_ms, r.upload_wait_ms, r.text_ms, r.pipelines_wait_ms,
      r.pipeline_cache_hits, r.pipelines, r.pipelines_cpu_ms, r.save_ms);
  std::string out(buf, static_cast<size_t>(std::max(0, std::min<int>(n, sizeof buf - 1))));
  for (const auto& [name, ms] : r.slowest_pipelines) {
    std::snprintf(buf, sizeof buf, "    slowest pipeline %7.0f ms %s\n", ms, name.c_str());
    out += buf;
  }
  if (r.step_dispatches) {
    std::snprintf(buf, sizeof buf, "  step program           %u dispatches, %u barriers\n", r.step_dispatches,
                  r.step_barriers);
    out += buf;
  }
  return out;
}

ViewRect view_rect(int index, int width, int height) {
  const int w = width / kViewColumns, h = height / kViewRows;
  return {(index % kViewColumns) * w, (index / kViewColumns) * h, w, h};
}

std::array<ViewPose, kViewCount> view_poses() {
  // v1.2 (spec §12): azimuths 30° apart by 60°, elevations alternate 20° / −10°, FoV 30°.
  std::array<ViewPose, kViewCount> p{};
  for (int i = 0; i < kViewCount; ++i) p[size_t(i)] = {30.0f + 60.0f * i, i % 2 == 0 ? 20.0f : -10.0f, 30.0f};
  return p;
}

std::vector<DeviceSummary> list_devices() {
  vk::Instance instance;
  std::vector<DeviceSummary> out;
  for (const auto& d : instance.devices())
    out.push_back({d.name, d.type_name(), d.driver_name + " " + d.driver_info, d.device_local_bytes,
                   d.nv_coopmat || d.khr_coopmat || d.nv_coopmat2});
  return out;
}

} // namespace z123
