// zero123pp: the command-line filter. One image in, one 640×960 image of six novel views out
// (2 columns × 3 rows); several inputs with an output folder share one model load. See --help.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cli/fd_io.hpp"
#include "cli/interrupt.hpp"
#include "cli/numbers.hpp"
#include "z123/engine.hpp"
#include "z123/image/codec.hpp"
#include "z123/image/preprocess.hpp"
#include "z123/views.hpp"

namespace fs = std::filesystem;
using namespace z123;
using z123cli::Interrupt;
using z123cli::Interrupted;

namespace {

enum Exit {
  kOk = 0,
  kEngineFailure = 1,
  kUsage = 2,
  kBadInput = 3,
  kModelError = 4,
  kCancelled = z123cli::kInterruptedExit
};

const char* kHelp = R"(NAME
    zero123pp - six novel views of an object from one image (Zero123++ v1.2 on Vulkan)

SYNOPSIS
    zero123pp [OPTIONS] INPUT OUTPUT
    zero123pp [OPTIONS] INPUT... OUTPUT_DIR
    zero123pp --list-devices

DESCRIPTION
    Reads INPUT (PNG or JPEG; RGBA is composited on gray as the model expects; '-' reads standard
    input) and writes OUTPUT: a 640x960 image of six 320x320 views in 2 columns x 3 rows (azimuth
    30, 90, 150, 210, 270, 330 degrees; elevation 20, -10 alternating; field of view 30). The
    format follows OUTPUT's extension (.png, .jpg, .jpeg); '-' writes PNG to standard output.
    With several inputs, or when OUTPUT is an existing directory, each result is written to
    OUTPUT_DIR/<input name>.png and the model is loaded once.

OPTIONS
    --model DIR        model folder (diffusers layout of sudo-ai/zero123plus-v1.2);
                       default $Z123_MODEL_DIR, else models/zero123plus-v1.2
    --steps N          denoising steps, 1..200 (default 28; 75 for more detail)
    --guidance G       classifier-free guidance scale, 0..100 (default 4.0; <= 1 disables it)
    --seed S           random seed, 0..2^64-1 (default 0); the same seed gives the same image on
                       every device
    --sampler NAME     euler_a (default, as the official pipeline) or euler (deterministic)
    --spacing NAME     trailing (default, as the official examples), linspace or leading
    --device SEL       Vulkan device: index or name substring (default: the best one)
    --precision P      auto (default), f16 or f32
    --vision-in-vram   keep the CLIP vision weights (1.2 GiB) in GPU memory; by default a
                       discrete GPU reads them from host memory (~25 ms more per image)
    --memory MODE      auto (default), normal or low. low: the UNet's weights share GPU memory
                       with the conditioning and decoding work and are copied back from host
                       memory for each image (~1 GiB less GPU memory, same output, 1.6 GB of
                       host memory and one copy over the bus per image); auto picks low on
                       discrete GPUs with less than 6 GiB
    --size WxH         output size (default 640x960; multiples of 64 up to 4096, the height also
                       of 3 for the three rows of views, e.g. 128x192; the model was trained
                       at 640x960, other sizes are for quick tests)
    --views-dir DIR    also write the six views as DIR/<name>_view<i>.png and DIR/<name>_views.json
                       (camera poses: azimuth, elevation, field of view in degrees)
    --quiet            no progress output
    --verbose          also print where loading the model spent its time and where the
                       memory goes
    --list-devices     list Vulkan devices and exit
    -h, --help         this text

EXIT STATUS
    0 success; 1 engine or device failure; 2 usage error; 3 bad input or unwritable output;
    4 missing or invalid model folder; 130 interrupted by SIGINT (Ctrl-C) or SIGTERM: any wait
    (reading input, loading the model, a denoising step, writing) ends within about 2 s, and no
    partial output file is left (outputs are written under temporary names, then renamed)
)";

const auto g_start = std::chrono::steady_clock::now();
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Args {
  std::vector<std::string> positional;
  std::string model, device, views_dir;
  Precision precision = Precision::Auto;
  MemoryLayout memory = MemoryLayout::Auto;
  GenerateOptions gen;
  bool quiet = false, verbose = false, list = false, vision_in_vram = false;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "zero123pp: %s\nTry 'zero123pp --help'.\n", msg.c_str());
  std::exit(kUsage);
}

// The value of option `opt` as a T; what it must look like is said in the error.
template <typename T>
T parse_number(const std::string& opt, const std::string& v) {
  T out{};
  std::string problem;
  const char* expected;
  if constexpr (std::is_same_v<T, float>) {
    problem = z123cli::parse_float(v, out);
    expected = "a number";
  } else if constexpr (std::is_same_v<T, int>) {
    problem = z123cli::parse_int(v, out);
    expected = "a whole number";
  } else {
    problem = z123cli::parse_uint64(v, out);
    expected = "a whole number from 0 to 18446744073709551615";
  }
  if (!problem.empty()) usage_error(opt + " expects " + expected + ", got " + problem);
  return out;
}

// Paths and names given as "" are mistakes (an unset shell variable), not "the default".
std::string non_empty(const std::string& opt, const std::string& v, const char* what) {
  if (v.empty()) usage_error(opt + " needs " + what + ", got an empty string");
  return v;
}

// An enumerated option, spelled as the engine names it; a bad name is a usage error in the
// engine's words (one list of accepted names, the engine's).
template <typename T>
T parse_choice(const std::string& opt, const std::string& v) {
  try {
    return parse_option<T>(opt, v);
  } catch (const Error& e) {
    usage_error(e.what());
  }
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(s + " needs a value");
      return argv[++i];
    };
    if (s == "-h" || s == "--help") {
      std::fputs(kHelp, stdout);
      std::exit(kOk);
    } else if (s == "--model")
      a.model = non_empty(s, value(), "a model folder");
    else if (s == "--steps")
      a.gen.steps = parse_number<int>(s, value());
    else if (s == "--guidance")
      a.gen.guidance_scale = parse_number<float>(s, value());
    else if (s == "--seed")
      a.gen.seed = parse_number<uint64_t>(s, value());
    else if (s == "--sampler")
      a.gen.sampler = parse_choice<Sampler>(s, value());
    else if (s == "--spacing")
      a.gen.spacing = parse_choice<Spacing>(s, value());
    else if (s == "--device") {
      a.device = non_empty(s, value(), "a device index or name");
      // The engine reads an all-digit selector as an index; one too long for that is no device.
      if (std::all_of(a.device.begin(), a.device.end(), [](unsigned char c) { return std::isdigit(c); }) &&
          a.device.size() > 9)
        usage_error("--device index " + a.device + " is out of range (zero123pp --list-devices lists them)");
    } else if (s == "--precision")
      a.precision = parse_choice<Precision>(s, value());
    else if (s == "--memory")
      a.memory = parse_choice<MemoryLayout>(s, value());
    else if (s == "--views-dir")
      a.views_dir = non_empty(s, value(), "a folder");
    else if (s == "--size") {
      std::string v = value();
      size_t x = v.find('x');
      if (x == std::string::npos || v.find_first_not_of("0123456789x") != std::string::npos || x == 0 ||
          x + 1 == v.size() || v.find('x', x + 1) != std::string::npos)
        usage_error("--size expects WxH, e.g. 640x960, got '" + v + "'");
      a.gen.width = parse_number<int>(s, v.substr(0, x));
      a.gen.height = parse_number<int>(s, v.substr(x + 1));
      if (a.gen.width % 64 || a.gen.height % 64) usage_error("--size must be multiples of 64, got " + v);
    } else if (s == "--vision-in-vram")
      a.vision_in_vram = true;
    else if (s == "--quiet")
      a.quiet = true;
    else if (s == "--verbose")
      a.verbose = true;
    else if (s == "--list-devices")
      a.list = true;
    else if (s == "--") // the rest are file names, even those starting with '-'
      a.positional.insert(a.positional.end(), argv + i + 1, argv + argc), i = argc;
    else if (s.size() > 1 && s[0] == '-')
      usage_error("unknown option " + s);
    else
      a.positional.push_back(s);
  }
  if (a.list) return a;
  if (a.positional.size() < 2) usage_error("need an INPUT and an OUTPUT");
  for (size_t i = 0; i < a.positional.size(); ++i)
    if (a.positional[i].empty())
      usage_error(i + 1 == a.positional.size() ? "the OUTPUT path is empty" : "an INPUT path is empty");
  // The engine's own checks, before anything is read or loaded.
  try {
    check_generate_options(a.gen);
  } catch (const Error& e) {
    usage_error(e.what());
  }
  return a;
}

// The name an input's results get in an output or views directory.
std::string output_name(const std::string& input) { return input == "-" ? "stdin" : fs::path(input).stem().string(); }

// "" if a file can be created in `dir` (a probe file, removed at once), else why not: catches
// read-only folders and pseudo file systems such as /proc before the model loads.
std::string cannot_create_files_in(const fs::path& dir) {
  std::string probe = (dir / ".zero123pp-probe-XXXXXX").string();
  int fd = ::mkstemp(probe.data());
  if (fd < 0) return std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

// An input read as a stream, interruptible (cli/fd_io.hpp): a FIFO or a stalled pipe ends on a signal.
// An image the engine cannot take (too small) is refused here, before the model loads.
Image read_input(const std::string& path) {
  const std::string name = path == "-" ? "<stdin>" : path;
  Image image = decode_image(z123cli::read_input_bytes(path), name);
  check_input_image(image, name);
  return image;
}

// The grid as the file format OUTPUT's extension asks for (checked before the model loaded).
std::vector<uint8_t> encode_output(const std::string& path, const Image& img) {
  std::string ext = fs::path(path).extension().string();
  for (auto& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (ext == ".jpg" || ext == ".jpeg") return encode_jpeg(to_rgb(img), 95); // JPEG has no alpha (it is 255)
  if (ext == ".png" || path == "-") return encode_png(img);
  throw invalid_argument("output '" + path + "': unknown extension (use .png, .jpg or .jpeg)");
}

// Stages the six views and their poses (written with the grid by one commit).
void stage_views(z123cli::StagedFiles& files, const std::string& dir, const std::string& name, const Image& grid) {
  fs::create_directories(dir);
  for (int i = 0; i < kViewCount; ++i)
    files.add(fs::path(dir) / view_file_name(name, i), encode_png(view_image(grid, i)));
  const std::string json = views_json(name);
  files.add(fs::path(dir) / (name + "_views.json"), std::vector<uint8_t>(json.begin(), json.end()));
}

int run(Args& a) {
  if (a.list) {
    Interrupt::Phase phase("listing the devices");
    for (const auto& d : list_devices())
      std::printf("%s (%s), %llu MiB, %s%s\n", d.name.c_str(), d.type.c_str(),
                  static_cast<unsigned long long>(d.memory_bytes >> 20), d.driver.c_str(),
                  d.coopmat ? ", cooperative matrix" : "");
    return kOk;
  }
  std::string out = a.positional.back();
  std::vector<std::string> inputs(a.positional.begin(), a.positional.end() - 1);
  bool to_dir = inputs.size() > 1 || fs::is_directory(out);
  if (to_dir && out == "-") usage_error("several inputs need an output directory, not '-'");
  if (std::count(inputs.begin(), inputs.end(), "-") > 1) usage_error("standard input can be read only once");
  bool progress = !a.quiet && isatty(STDERR_FILENO);

  // Two inputs with one name (c1/x.png and c2/x.png, or x.png and x.jpg) would write one file.
  if (to_dir || !a.views_dir.empty()) {
    std::map<std::string, std::string> by_name;
    for (const auto& in : inputs) {
      auto [it, fresh] = by_name.emplace(output_name(in), in);
      if (!fresh)
        usage_error("inputs '" + it->second + "' and '" + in + "' would both be written as '" + it->first + "' into " +
                    (to_dir ? out : a.views_dir) + "; rename one, or run them separately");
    }
  }

  // Read every input first: a bad file fails before the model loads (seconds saved).
  std::vector<Image> images;
  for (const auto& in : inputs) {
    try {
      Interrupt::Cooperative phase("reading the input");
      images.push_back(read_input(in));
    } catch (const Error& e) {
      std::fprintf(stderr, "zero123pp: %s\n", e.what());
      return kBadInput;
    }
  }
  // Every output is checked before the model loads: a result that cannot be written fails now,
  // not after minutes of work.
  auto usable_dir = [](const fs::path& dir, const char* what) {
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
      std::fprintf(stderr, "zero123pp: %s '%s' exists and is not a directory\n", what, dir.string().c_str());
      return false;
    }
    fs::create_directories(dir, ec);
    std::string why = ec ? ec.message() : cannot_create_files_in(dir);
    if (!why.empty()) {
      std::fprintf(stderr, "zero123pp: cannot write into %s '%s': %s\n", what, dir.string().c_str(), why.c_str());
      return false;
    }
    return true;
  };
  if (!a.views_dir.empty() && !usable_dir(a.views_dir, "views directory")) return kBadInput;
  if (to_dir) {
    if (!usable_dir(out, "output directory")) return kBadInput;
  } else if (out != "-") {
    fs::path parent = fs::path(out).parent_path();
    if (!parent.empty() && !fs::is_directory(parent)) {
      std::fprintf(stderr, "zero123pp: output directory '%s' does not exist\n", parent.string().c_str());
      return kBadInput;
    }
    if (std::string why = cannot_create_files_in(parent.empty() ? fs::path(".") : parent); !why.empty()) {
      std::fprintf(stderr, "zero123pp: cannot write '%s': %s\n", out.c_str(), why.c_str());
      return kBadInput;
    }
    std::string ext = fs::path(out).extension().string();
    for (auto& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (ext != ".png" && ext != ".jpg" && ext != ".jpeg") {
      std::fprintf(stderr, "zero123pp: output '%s': unknown extension (use .png, .jpg or .jpeg)\n", out.c_str());
      return kBadInput;
    }
  }

  std::string model = a.model;
  if (model.empty()) {
    const char* env = std::getenv("Z123_MODEL_DIR");
    model = env && *env ? env : "models/zero123plus-v1.2";
  }
  std::unique_ptr<Engine> engine;
  try {
    EngineOptions eo;
    eo.device = a.device;
    eo.precision = a.precision;
    eo.vision_weights_in_host_memory = !a.vision_in_vram;
    eo.memory = a.memory;
    if (progress) {
      // One line, rewritten as each loading stage begins; cleared when the model is ready.
      eo.on_progress = [](const LoadProgress& p) {
        std::fprintf(stderr, "\r\033[Kloading the model: %s (%d/%d)", p.stage.c_str(), p.index, p.count);
      };
    }
    if (a.gen.guidance_scale > 1.0f) { // the programs prepared are the guided ones
      eo.prepare_width = a.gen.width;
      eo.prepare_height = a.gen.height;
    }
    // Engine::open has no cancellation point: a signal now ends the process (cli/interrupt.hpp).
    Interrupt::Phase phase("loading the model");
    if (Interrupt::requested()) throw Interrupted{};
    engine = Engine::open(model, eo);
  } catch (const Error& e) {
    if (progress) std::fputs("\r\033[K", stderr);
    std::fprintf(stderr, "zero123pp: %s\n", e.what());
    return classify_failure(e.kind(), FailureStage::Opening) == FailureClass::BadModel ? kModelError : kEngineFailure;
  }
  if (progress) std::fputs("\r\033[K", stderr);
  if (!a.quiet)
    std::fprintf(stderr, "zero123pp: %s on %s (%s%s), loaded in %.1f s\n", model.c_str(), engine->device_name().c_str(),
                 option_name(engine->precision()), engine->low_memory() ? ", low-memory mode" : "",
                 engine->load_ms() / 1000.0);
  if (a.verbose) std::fputs(format_load_report(engine->load_report()).c_str(), stderr);

  a.gen.cancel = &Interrupt::cancel_flag();
  std::thread closer;
  double close_ms = 0;
  // Every return below waits for the closing thread first (it holds a reference to `engine`).
  auto join_closer = [&] {
    if (closer.joinable()) closer.join();
  };
  struct JoinAtExit {
    std::function<void()> join;
    ~JoinAtExit() { join(); }
  } join_at_exit{join_closer};
  for (size_t i = 0; i < images.size(); ++i) {
    std::string name = output_name(inputs[i]);
    std::string target = to_dir ? (fs::path(out) / (name + ".png")).string() : out;
    if (progress) {
      a.gen.on_step = [&](int s, int n) {
        int filled = 30 * s / n;
        std::fprintf(stderr, "\r%s [%.*s%*s] %d/%d", name.c_str(), filled, "##############################",
                     30 - filled, "", s, n);
        if (s == n) std::fputc('\n', stderr);
      };
    }
    try {
      // Cooperative: the engine checks the flag before every step; the watcher gives the step in
      // flight, the VAE decode and closing the engine a grace period, then ends the process.
      Interrupt::Cooperative phase("generating the views");
      GenerateResult r = engine->generate(images[i], a.gen);
      if (a.verbose && i == 0) std::fputs(engine->memory_report().c_str(), stderr);
      // After the last image the engine is closed (freeing gigabytes of device and pinned host
      // memory takes a few hundred ms) while the output is being encoded and written.
      if (i + 1 == images.size()) {
        closer = std::thread([&engine, &close_ms] {
          auto t0 = std::chrono::steady_clock::now();
          engine.reset();
          close_ms = ms_since(t0);
        });
      }
      auto t_write = std::chrono::steady_clock::now();
      Interrupt::Cooperative writing("writing the output");
      // The grid and the views go into place together, only once all of them are complete.
      z123cli::StagedFiles files;
      std::vector<uint8_t> encoded = encode_output(target, r.image);
      const bool stream = target == "-" || z123cli::is_stream_target(target);
      if (!stream) files.add(target, encoded);
      if (!a.views_dir.empty()) stage_views(files, a.views_dir, name, r.image);
      if (target == "-")
        z123cli::write_all(STDOUT_FILENO, encoded, "<stdout>");
      else if (stream)
        z123cli::write_stream(target, encoded);
      files.commit();
      if (a.verbose) std::fprintf(stderr, "zero123pp: wrote %s in %.0f ms\n", target.c_str(), ms_since(t_write));
      if (!a.quiet)
        std::fprintf(stderr,
                     "zero123pp: %s -> %s in %.2f s (preprocess %.0f ms, condition %.0f ms, %d steps %.0f ms, "
                     "decode %.0f ms; peak device memory %.0f MiB)\n",
                     inputs[i].c_str(), target.c_str(), r.timings.total_ms / 1000.0, r.timings.preprocess_ms,
                     r.timings.condition_ms, static_cast<int>(r.timings.step_ms.size()), r.timings.sampling_ms,
                     r.timings.decode_ms, r.peak_device_bytes / 1048576.0);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Cancelled) return Interrupt::report();
      std::fprintf(stderr, "\nzero123pp: %s: %s\n", inputs[i].c_str(), e.what());
      return classify_failure(e.kind(), FailureStage::Generating) == FailureClass::BadInput ? kBadInput
                                                                                            : kEngineFailure;
    }
  }
  join_closer();
  if (a.verbose)
    std::fprintf(stderr, "zero123pp: closed the engine in %.0f ms (beside writing); %.2f s since the program started\n",
                 close_ms, ms_since(g_start) / 1000.0);
  return kOk;
}

} // namespace

int main(int argc, char** argv) {
  Interrupt::install(); // first: the threads started later inherit its signal mask
  Args a = parse_args(argc, argv);
  try {
    return run(a);
  } catch (const Interrupted&) {
    return Interrupt::report();
  } catch (const Error& e) {
    std::fprintf(stderr, "zero123pp: %s\n", e.what());
    return e.kind() == ErrorKind::NoDevice ? kEngineFailure : kBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zero123pp: unexpected error: %s\n", e.what());
    return kEngineFailure;
  }
}
