// The public engine API: open a Zero123++ v1.2 model folder (the diffusers layout as downloaded
// from Hugging Face) on a Vulkan device, then turn an image into a 640×960 frame of six 320×320
// novel views (2 columns × 3 rows, spec §12).
//
// Threading: an Engine may be used from several threads, one call at a time: generate() holds an
// internal lock for its whole duration, so concurrent calls are serialized, never interleaved,
// and each gives the result it would give alone. The const accessors (device_name(), load
// report, ...) read state fixed by open() and may be called at any time from any thread.
// Calling generate() from inside a running call's on_step callback (the same thread, which
// holds the lock) is refused with InvalidArgument instead of deadlocking. The engine must not be
// destroyed while a call is running. Several engines may share one device, each on its own
// threads (two elements in one pipeline). The `cancel` flag and the progress callback are the
// ways to interact with a running call.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "z123/error.hpp"
#include "z123/image/image.hpp"

namespace z123 {

// Where Engine::open spent its time (zero123pp --verbose, zero123pp-bench-e2e). Phases are wall
// time and add up to total_ms; the lines under a phase break it down further.
struct LoadReport {
  double device_ms = 0;                        // Vulkan instance, device, kernel paths
  double folder_ms = 0;                        // configs, safetensors headers, tensor checks
  double record_ms = 0;                        // allocating the networks' tensors, recording the programs: this starts
                                               // compiling their pipelines on worker threads, which overlaps the rest
  double weights_ms = 0;                       // text, vision, VAE and UNet weights: read, convert, upload
  double read_ms = 0;                          //   bringing the files into memory (all cores)
  double convert_ms = 0;                       //   converting to the device precision into staging (all cores)
  double upload_wait_ms = 0;                   //   waiting for the GPU's copies
  uint64_t staged_bytes = 0, direct_bytes = 0; // through staging / straight into mapped memory
  double text_ms = 0;                          // running the text encoder (the embedding of "")
  double pipelines_wait_ms = 0;                // waiting for pipeline compilations still running
  double pipelines_cpu_ms = 0;                 //   pipeline compilation, summed over the threads that did it
  uint32_t pipelines = 0;                      //   pipelines created
  uint32_t pipeline_cache_hits = 0;            // of those, found in the pipeline cache (0: the driver cannot tell)
  std::vector<std::pair<std::string, double>> slowest_pipelines; // the longest compilations (ms)
  double save_ms = 0;                                            // writing the pipeline cache
  double total_ms = 0;
  // The prepared size's UNet step program (0 when open() prepared none): its dispatches, and the
  // barriers between them (one per level of dependence: vk::Recording::order_by_levels).
  uint32_t step_dispatches = 0, step_barriers = 0;
};

// The report as indented lines ("open 2.41 s\n  device 0.21 s\n ..."), for --verbose and benches.
std::string format_load_report(const LoadReport& report);

// open() reports each stage as it begins (stage `index` of `count`, e.g. "UNet weights").
struct LoadProgress {
  std::string stage;
  int index = 0, count = 0;
};

// The options that take one of a few values, as enums. Their names (option_name) are how the
// command line and the element spell them; parse_option turns a name back, or throws
// InvalidArgument naming the option, the value and the accepted names.
enum class Precision { Auto, F16, F32 };            // "auto" (fp16 where supported), "f16", "f32"
enum class MemoryLayout { Auto, Normal, Low };      // "auto", "normal", "low" (EngineOptions::memory)
enum class Sampler { EulerAncestral, Euler };       // "euler_a" (the reference), "euler" (deterministic)
enum class Spacing { Trailing, Linspace, Leading }; // "trailing" (the reference), "linspace", "leading"
const char* option_name(Precision value);
const char* option_name(MemoryLayout value);
const char* option_name(Sampler value);
const char* option_name(Spacing value);
// T is one of the four enums above; `option` names the option in the error ("--sampler").
template <typename T>
T parse_option(const std::string& option, const std::string& name);

// Testing hooks (z123/engine_testing.hpp): noise and inputs injected instead of generated, and
// the intermediate tensors captured, for the parity tests against the official pipeline.
struct InjectedInputs;
struct GenerateCapture;

struct EngineOptions {
  std::string device; // "" = best device; a number = index; else a name substring
  Precision precision = Precision::Auto;
  bool validation = false; // Vulkan validation layer (slow; for debugging)
  // Output size to get ready for in open(): the recordings of every stage are made and every
  // compute pipeline they use is created there (on a GPU that compiles shaders for seconds), so
  // the first image takes as long as the ones after it. 0 x 0 = make them at the first image.
  int prepare_width = 0, prepare_height = 0;
  // Keep the CLIP vision encoder's weights (1.2 GiB for v1.2) in host memory that a discrete GPU
  // reads over the bus, instead of in VRAM: it runs once per image, so this trades ~25 ms per
  // image (H200: 2.55 -> 2.58 s) for 1.25 GiB less device memory (peak 4.63 -> 3.38 GiB). No
  // effect on devices that share host memory.
  bool vision_weights_in_host_memory = true;
  // Low: the UNet's weights (1.6 GiB for v1.2 in fp16) take turns
  // with the conditioning and decoding activations in one region of device memory, and are
  // copied back from a host-memory copy before each image's sampling, so the device peak is the
  // larger of the two rather than their sum (~1 GiB less at 640x960, same output bytes). Costs
  // the copy per image (1.6 GB over the bus) and 1.6 GB of host memory. Auto: low on discrete
  // GPUs with less than 6 GiB of VRAM (pipeline/memory_mode.hpp).
  MemoryLayout memory = MemoryLayout::Auto;
  // Called from open()'s thread as each loading stage begins (progress lines, bus messages).
  std::function<void(const LoadProgress&)> on_progress;
};

struct GenerateOptions {
  int steps = 28;              // 1..200
  float guidance_scale = 4.0f; // classifier-free guidance; <= 1 skips the unconditional half
  uint64_t seed = 0;           // counter-based RNG (docs/rng.md): same output on every device
  Sampler sampler = Sampler::EulerAncestral;
  Spacing spacing = Spacing::Trailing;
  int width = 640, height = 960;                    // output size; multiples of 64 (8 per latent × 8 per UNet level)
  std::function<void(int step, int total)> on_step; // called after each completed step
  const std::atomic<bool>* cancel = nullptr;        // checked before each step: Error(Cancelled)
  const InjectedInputs* inject = nullptr;           // testing only (engine_testing.hpp)
  GenerateCapture* capture = nullptr;               // testing only: filled with intermediates
};

struct GenerateTimings {
  double preprocess_ms = 0, condition_ms = 0, sampling_ms = 0, decode_ms = 0, total_ms = 0;
  double weights_restore_ms = 0; // low-memory mode: copying the UNet's weights back (part of sampling_ms)
  std::vector<double> step_ms;
};

struct GenerateResult {
  Image image; // RGBA, width × height (640×960 by default)
  GenerateTimings timings;
  uint64_t peak_device_bytes = 0; // device-local memory high-water mark of the engine
};

// Throws InvalidArgument (the message names the option, the value and the accepted range) for
// options no model can run: steps outside 1..200, a guidance scale that is not a finite number in
// [0, 100] (NaN silently turned guidance off, 1e30 gave a black image), an output size outside 64..4096 or one the 2 x
// 3 grid of views cannot divide (width even, height a multiple of 3). generate() checks this first; front ends call it
// before loading a model. The model's own constraint (sizes a multiple of 64 for v1.2) is checked by generate().
void check_generate_options(const GenerateOptions& options);

// The smallest input side generate() takes. The model enlarges the input's short side to 512
// pixels (its VAE condition) and 224 (CLIP): an image smaller than this holds too little of an
// object to turn, and such a frame is almost always a mistake (an empty selection, a 1-pixel
// layer). Front ends check it before loading a model, with this function's words.
inline constexpr int kMinInputSide = 8;
// Throws InvalidArgument naming `what` (a file, a layer) for an image generate() cannot take: not
// 1, 3 or 4 channels, a wrong pixel count, or a side shorter than kMinInputSide.
void check_input_image(const Image& image, const std::string& what);

// What a failure means to the user, from the error's kind and the call that threw it: the one
// mapping behind the command line's exit codes and the plug-ins' status codes. Opening: a file
// problem (Io, Format, Model) is a bad model folder. Generating: Io, Format and InvalidArgument are
// a bad input. Cancelled is itself; NoDevice is no device; everything else is an engine failure.
enum class FailureClass { BadModel, BadInput, NoDevice, Cancelled, EngineFailure };
enum class FailureStage { Opening, Generating };
FailureClass classify_failure(ErrorKind kind, FailureStage stage);

// The model's grid of views (spec §12), the one definition the engine, the command line and the
// element use: kViewColumns x kViewRows views, index = kViewColumns·row + column.
inline constexpr int kViewColumns = 2, kViewRows = 3, kViewCount = kViewColumns * kViewRows;
struct ViewRect {
  int x, y, width, height;
};
// Where view `index` lies in a generated image of width x height.
ViewRect view_rect(int index, int width, int height);

// The views' cameras: azimuth relative to the input view, absolute elevation, field of view, all
// in degrees, in view order.
struct ViewPose {
  float azimuth_deg, elevation_deg, fov_deg;
};
std::array<ViewPose, kViewCount> view_poses();

struct DeviceSummary {
  std::string name, type, driver;
  uint64_t memory_bytes;
  bool coopmat;
};
// Devices the engine could run on (for --list-devices); throws NoDevice if Vulkan is missing.
std::vector<DeviceSummary> list_devices();

class Engine {
public:
  // Loads every network (weights converted to the device precision), computes the constant text
  // embedding of "" and the zero-image posterior. Errors: Io/Format/Model (the folder), NoDevice,
  // Unsupported, OutOfMemory.
  static std::unique_ptr<Engine> open(const std::filesystem::path& model_dir, const EngineOptions& options = {});
  ~Engine();

  GenerateResult generate(const Image& input, const GenerateOptions& options = {});

  std::string device_name() const;
  Precision precision() const; // F16 or F32
  bool low_memory() const;     // the memory layout chosen by EngineOptions::memory
  uint64_t weight_bytes() const;
  // Where the memory goes, as indented lines (weights per network and where they live, the
  // scratch pools, the step's caches, the allocator's device-local total and peak), for
  // --verbose and benches. Scratch pools are sized by the programs recorded so far. Waits for a
  // running generate(); from inside its on_step callback it throws InvalidArgument.
  std::string memory_report() const;
  double load_ms() const;
  const LoadReport& load_report() const;
  // Validation-layer errors seen so far (only with EngineOptions::validation; tests assert 0).
  uint32_t validation_errors() const;

private:
  struct Impl;
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace z123
