// The plug-ins' C API over z123::Engine (zero123pp_plugin.h). Every entry catches everything: a
// z123::Error becomes its status (z123::classify_failure, as the command line's exit codes) with
// its message, anything else Z123P_ERROR; nothing unwinds into C.
#include "zero123pp_plugin.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>

#include "z123/engine.hpp"
#include "z123/views.hpp"

static_assert(Z123P_VIEW_COUNT == z123::kViewCount);
static_assert(Z123P_GRID_WIDTH == z123::kViewColumns * Z123P_VIEW_SIZE);
static_assert(Z123P_GRID_HEIGHT == z123::kViewRows * Z123P_VIEW_SIZE);
static_assert(Z123P_MIN_INPUT_SIDE == z123::kMinInputSide);
static_assert(Z123P_TILING_3X2 == static_cast<int>(z123::Tiling::k3x2) &&
              Z123P_TILING_1X6 == static_cast<int>(z123::Tiling::k1x6) && Z123P_TILING_COUNT == z123::kTilingCount);

struct z123p_model {
  std::unique_ptr<z123::Engine> engine;
  std::string device_name;
};

namespace {

// malloc'ed copies, so that C callers free them with z123p_free (free()).
char* dup_string(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p) std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

void set_message(char** message, const std::string& text) {
  if (message) *message = dup_string(text);
}

z123p_status status_of(z123::FailureClass c) {
  switch (c) {
  case z123::FailureClass::Cancelled: return Z123P_CANCELLED;
  case z123::FailureClass::BadInput: return Z123P_BAD_INPUT;
  case z123::FailureClass::BadModel: return Z123P_BAD_MODEL;
  case z123::FailureClass::NoDevice: return Z123P_NO_DEVICE;
  case z123::FailureClass::EngineFailure: break;
  }
  return Z123P_ERROR;
}

// Runs fn, turning whatever it throws into a status and a message.
template <class Fn>
z123p_status guarded(z123::FailureStage stage, char** message, Fn&& fn) {
  try {
    fn();
    return Z123P_OK;
  } catch (const z123::Error& e) {
    set_message(message, e.what());
    return status_of(z123::classify_failure(e.kind(), stage));
  } catch (const std::bad_alloc&) {
    set_message(message, "out of host memory");
  } catch (const std::exception& e) {
    set_message(message, std::string("unexpected error: ") + e.what());
  } catch (...) {
    set_message(message, "unexpected error");
  }
  return Z123P_ERROR;
}

z123::GenerateOptions engine_options(const z123p_generate_options* o) {
  z123::GenerateOptions g;
  if (o) {
    g.steps = o->steps;
    g.guidance_scale = static_cast<float>(o->guidance);
    g.seed = o->seed;
    if (o->width || o->height) g.width = o->width, g.height = o->height;
  }
  return g;
}

} // namespace

extern "C" {

const char* z123p_status_name(z123p_status status) {
  switch (status) {
  case Z123P_OK: return "ok";
  case Z123P_CANCELLED: return "cancelled";
  case Z123P_BAD_INPUT: return "bad input";
  case Z123P_BAD_MODEL: return "bad model";
  case Z123P_NO_DEVICE: return "no device";
  case Z123P_ERROR: break;
  }
  return "engine failure";
}

const char* z123p_tiling_name(int tiling) {
  if (tiling < 0 || tiling >= Z123P_TILING_COUNT) return nullptr;
  return z123::tiling_name(static_cast<z123::Tiling>(tiling));
}

int z123p_tiling_layout(int tiling, int* columns, int* rows) {
  if (tiling < 0 || tiling >= Z123P_TILING_COUNT) return 0;
  const z123::TileLayout l = z123::tiling_layout(static_cast<z123::Tiling>(tiling));
  if (columns) *columns = l.columns;
  if (rows) *rows = l.rows;
  return 1;
}

void z123p_free(void* p) { std::free(p); }

z123p_status z123p_list_devices(char*** names, char** message) {
  if (message) *message = nullptr;
  if (!names) return Z123P_BAD_INPUT;
  *names = nullptr;
  std::vector<z123::DeviceSummary> devices;
  const z123p_status s = guarded(z123::FailureStage::Opening, message, [&] { devices = z123::list_devices(); });
  if (s != Z123P_OK) return s;
  char** list = static_cast<char**>(std::calloc(devices.size() + 1, sizeof(char*)));
  if (!list) return set_message(message, "out of host memory"), Z123P_ERROR;
  for (size_t i = 0; i < devices.size(); ++i) list[i] = dup_string(devices[i].name);
  *names = list;
  return Z123P_OK;
}

void z123p_free_list(char** list) {
  if (!list) return;
  for (char** p = list; *p; ++p) std::free(*p);
  std::free(list);
}

z123p_status z123p_open(const char* model_dir, const char* device, z123p_load_progress_fn progress, void* user,
                        z123p_model** model, char** message) {
  if (message) *message = nullptr;
  if (!model) return Z123P_BAD_INPUT;
  *model = nullptr;
  if (!model_dir || !*model_dir) {
    set_message(message, "no model folder given");
    return Z123P_BAD_MODEL;
  }
  std::unique_ptr<z123p_model> m;
  const z123p_status s = guarded(z123::FailureStage::Opening, message, [&] {
    z123::EngineOptions eo;
    eo.device = device ? device : "";
    if (progress)
      eo.on_progress = [progress, user](const z123::LoadProgress& p) {
        progress(p.stage.c_str(), p.index, p.count, user);
      };
    // The programs of the default grid with guidance are made while loading, as the CLI does.
    eo.prepare_width = Z123P_GRID_WIDTH;
    eo.prepare_height = Z123P_GRID_HEIGHT;
    m = std::make_unique<z123p_model>();
    m->engine = z123::Engine::open(model_dir, eo);
    m->device_name = m->engine->device_name();
  });
  if (s == Z123P_OK) *model = m.release();
  return s;
}

void z123p_close(z123p_model* model) {
  try {
    delete model;
  } catch (...) { // a destructor that throws would end the process; keep it in here
  }
}

const char* z123p_device_name(const z123p_model* model) { return model ? model->device_name.c_str() : ""; }

void z123p_generate_options_init(z123p_generate_options* options) {
  if (!options) return;
  *options = z123p_generate_options{};
  options->steps = Z123P_STEPS_DEFAULT;
  options->guidance = Z123P_GUIDANCE_DEFAULT;
}

z123p_status z123p_check(int width, int height, const z123p_generate_options* options, const char* what,
                         char** message) {
  if (message) *message = nullptr;
  return guarded(z123::FailureStage::Generating, message, [&] {
    const std::string name = what ? what : "input image";
    if (width < z123::kMinInputSide || height < z123::kMinInputSide) {
      // check_input_image's words, without allocating pixels for a check of the size.
      z123::Image probe{width > 0 ? width : 0, height > 0 ? height : 0, 4, {}};
      probe.pixels.resize(probe.size_bytes());
      z123::check_input_image(probe, name);
    }
    z123::check_generate_options(engine_options(options));
  });
}

z123p_status z123p_generate(z123p_model* model, const uint8_t* pixels, int width, int height, int rowstride,
                            int channels, const char* what, const z123p_generate_options* options, uint8_t** rgba,
                            char** message) {
  if (message) *message = nullptr;
  if (!rgba) return Z123P_BAD_INPUT;
  *rgba = nullptr;
  if (!model || !model->engine || !pixels) {
    set_message(message, "z123p_generate: no model or no pixels");
    return Z123P_BAD_INPUT;
  }
  const std::string name = what ? what : "input image";
  z123::Image input;
  z123::GenerateOptions go = engine_options(options);
  z123p_status s = guarded(z123::FailureStage::Generating, message, [&] {
    if (channels != 1 && channels != 3 && channels != 4)
      throw z123::invalid_argument(name + ": " + std::to_string(channels) + " channels, expected 1, 3 or 4");
    if (width <= 0 || height <= 0 || rowstride < width * channels)
      throw z123::invalid_argument(name + ": bad size " + std::to_string(width) + "x" + std::to_string(height) +
                                   " or row stride " + std::to_string(rowstride));
    input = z123::Image::blank(width, height, channels);
    for (int y = 0; y < height; ++y)
      std::memcpy(input.row(y), pixels + static_cast<size_t>(y) * static_cast<size_t>(rowstride), input.row_bytes());
    z123::check_input_image(input, name);
    z123::check_generate_options(go);
  });
  if (s != Z123P_OK) return s;

  // The engine blocks for the whole call: it runs on a worker thread while this thread delivers
  // the step callbacks and polls for cancellation, so that the caller's callbacks (GIMP's progress
  // calls over its pipe) only ever run on the caller's thread.
  std::mutex mutex;
  std::condition_variable wake;
  int steps_done = 0, steps_total = go.steps;
  bool finished = false;
  std::atomic<bool> cancel{false};
  std::optional<z123::GenerateResult> result;
  char* worker_message = nullptr;
  z123p_status worker_status = Z123P_OK;
  go.cancel = &cancel;
  go.on_step = [&](int step, int total) {
    std::lock_guard<std::mutex> lock(mutex);
    steps_done = step;
    steps_total = total;
    wake.notify_all();
  };
  std::thread worker;
  try {
    worker = std::thread([&] {
      z123p_status ws = guarded(z123::FailureStage::Generating, &worker_message,
                                [&] { result.emplace(model->engine->generate(input, go)); });
      std::lock_guard<std::mutex> lock(mutex);
      worker_status = ws;
      finished = true;
      wake.notify_all();
    });
  } catch (const std::exception& e) { // no thread could be started
    set_message(message, std::string("cannot start a worker thread: ") + e.what());
    return Z123P_ERROR;
  }
  int reported = 0;
  for (;;) {
    int done, total;
    bool over;
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait_for(lock, std::chrono::milliseconds(50), [&] { return finished || steps_done != reported; });
      done = steps_done, total = steps_total, over = finished;
    }
    // Callbacks run without the lock: the worker keeps going meanwhile.
    if (done != reported && options && options->on_step) options->on_step(done, total, options->user);
    reported = done;
    if (over) break;
    if (options && options->poll && !cancel.load() && options->poll(options->user)) cancel.store(true);
  }
  worker.join();
  if (worker_status != Z123P_OK) {
    if (message)
      *message = worker_message;
    else
      std::free(worker_message);
    return worker_status;
  }
  const z123::Image& grid = result->image;
  uint8_t* out = static_cast<uint8_t*>(std::malloc(grid.pixels.size()));
  if (!out) {
    set_message(message, "out of host memory");
    return Z123P_ERROR;
  }
  std::memcpy(out, grid.pixels.data(), grid.pixels.size());
  *rgba = out;
  return Z123P_OK;
}

int z123p_view_rect(int index, int grid_width, int grid_height, int* x, int* y, int* width, int* height) {
  if (index < 0 || index >= z123::kViewCount) return 0;
  const z123::ViewRect r = z123::view_rect(index, grid_width, grid_height);
  if (x) *x = r.x;
  if (y) *y = r.y;
  if (width) *width = r.width;
  if (height) *height = r.height;
  return 1;
}

char* z123p_view_label(int index) {
  if (index < 0 || index >= z123::kViewCount) return nullptr;
  try {
    return dup_string(z123::view_label(index));
  } catch (...) {
    return nullptr;
  }
}

int z123p_view_pose(int index, double* azimuth_deg, double* elevation_deg, double* fov_deg) {
  if (index < 0 || index >= z123::kViewCount) return 0;
  const z123::ViewPose p = z123::view_poses()[static_cast<size_t>(index)];
  if (azimuth_deg) *azimuth_deg = p.azimuth_deg;
  if (elevation_deg) *elevation_deg = p.elevation_deg;
  if (fov_deg) *fov_deg = p.fov_deg;
  return 1;
}

char* z123p_views_json(const char* name) {
  try {
    return dup_string(z123::views_json(name ? name : "views"));
  } catch (...) {
    return nullptr;
  }
}

uint8_t* z123p_tile(const uint8_t* grid_rgba, int grid_width, int grid_height, int tiling, int* width, int* height) {
  if (!grid_rgba || tiling < 0 || tiling >= Z123P_TILING_COUNT || grid_width <= 0 || grid_height <= 0) return nullptr;
  try {
    z123::Image grid = z123::Image::blank(grid_width, grid_height, 4);
    std::memcpy(grid.pixels.data(), grid_rgba, grid.pixels.size());
    const z123::Image t = z123::tiled(grid, static_cast<z123::Tiling>(tiling));
    uint8_t* out = static_cast<uint8_t*>(std::malloc(t.pixels.size()));
    if (!out) return nullptr;
    std::memcpy(out, t.pixels.data(), t.pixels.size());
    if (width) *width = t.width;
    if (height) *height = t.height;
    return out;
  } catch (...) {
    return nullptr;
  }
}

} // extern "C"
