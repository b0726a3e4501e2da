/* zero123pp_plugin.h: the engine for image-editor plug-ins (GIMP 2.10, GIMP 3), as a small C API.
 *
 * The plug-ins are C programs linked with their GIMP library; this layer (C++ inside, over
 * z123::Engine) gives them everything that is not GIMP: the device list, opening a model with a
 * progress callback, generating the six views from a layer's pixels with a per-step callback and
 * cancellation, the views' rectangles, names and poses JSON, the tiled grids, and errors as status
 * codes with the engine's own message (the words the zero123pp command line prints). No C++
 * exception crosses this boundary; every function is safe to call with the arguments documented.
 *
 * Threading: z123p_generate() runs the engine on a worker thread of its own and calls the
 * caller's callbacks (step, poll) on the CALLING thread only, so a plug-in may talk to GIMP from
 * them (libgimp is not thread-safe). z123p_open() calls its progress callback on the calling thread.
 *
 * Strings returned through `char**` are allocated here: free them with z123p_free(). */
#ifndef ZERO123PP_PLUGIN_H
#define ZERO123PP_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a call's failure means to the user (z123::classify_failure: the command line's exit codes
 * follow the same classes: BAD_INPUT 3, BAD_MODEL 4, NO_DEVICE and ERROR 1, CANCELLED 130). */
typedef enum z123p_status {
  Z123P_OK = 0,
  Z123P_CANCELLED = 1, /* the poll callback asked to stop; nothing was produced */
  Z123P_BAD_INPUT = 2, /* the image or an option: too small, steps out of range, ... */
  Z123P_BAD_MODEL = 3, /* the model folder is missing, unreadable or not a Zero123++ v1.2 model */
  Z123P_NO_DEVICE = 4, /* no Vulkan, or no device matches the selector */
  Z123P_ERROR = 5      /* any other engine or device failure (out of memory, device lost, ...) */
} z123p_status;

/* Short English name of a status ("cancelled", "bad input", ...). Never NULL. */
const char* z123p_status_name(z123p_status status);

/* Must match z123::kViewCount and friends; checked at compile time in the implementation. */
#define Z123P_VIEW_COUNT 6
#define Z123P_VIEW_SIZE 320    /* each view of the default output, pixels */
#define Z123P_GRID_WIDTH 640   /* the model's grid: 2 columns */
#define Z123P_GRID_HEIGHT 960  /* x 3 rows of views */
#define Z123P_MIN_INPUT_SIDE 8 /* z123::kMinInputSide */
#define Z123P_STEPS_MIN 1
#define Z123P_STEPS_MAX 200
#define Z123P_STEPS_DEFAULT 28
#define Z123P_GUIDANCE_DEFAULT 4.0

/* Tilings of the six views in one image (z123::Tiling; the element's `tiling` property). */
typedef enum z123p_tiling {
  Z123P_TILING_2X3 = 0, /* 2 columns x 3 rows: the model's own grid, 640x960 */
  Z123P_TILING_3X2 = 1, /* 960x640 */
  Z123P_TILING_6X1 = 2, /* 1920x320, side by side */
  Z123P_TILING_1X6 = 3  /* 320x1920, stacked */
} z123p_tiling;
#define Z123P_TILING_COUNT 4
/* "2x3", "3x2", "6x1", "1x6"; NULL for a value out of range. */
const char* z123p_tiling_name(int tiling);
/* Columns and rows of a tiling; 0 for a value out of range. */
int z123p_tiling_layout(int tiling, int* columns, int* rows);

/* Frees anything this API allocated (strings, string lists, pixel buffers). NULL is fine. */
void z123p_free(void* p);

/* The Vulkan devices the engine could run on, in the order Vulkan lists them (the order of their
 * indices for the device selector; not best first). On success *names is a NULL-terminated array
 * of device names, each usable as z123p_open's `device`, freed with z123p_free_list(). On failure
 * (no Vulkan at all: Z123P_NO_DEVICE) *names is NULL and *message says why (free with z123p_free). */
z123p_status z123p_list_devices(char*** names, char** message);
void z123p_free_list(char** list);

/* ---- a model ---- */
typedef struct z123p_model z123p_model;

/* Called as each loading stage begins ("UNet weights", stage index of count). */
typedef void (*z123p_load_progress_fn)(const char* stage, int index, int count, void* user);

/* Opens the model folder (diffusers layout of sudo-ai/zero123plus-v1.2) on a device: `device` is
 * "" or NULL for the best one, a number for an index, else a substring of the name (the CLI's
 * --device). Takes seconds to minutes. On failure returns the status, *model is NULL and
 * *message has the engine's message (the words `zero123pp` prints after "zero123pp: "). */
z123p_status z123p_open(const char* model_dir, const char* device, z123p_load_progress_fn progress, void* user,
                        z123p_model** model, char** message);
void z123p_close(z123p_model* model);
/* The device the model runs on (owned by the model). */
const char* z123p_device_name(const z123p_model* model);

/* ---- generating ---- */
/* Called on the calling thread after each denoising step (1..total). */
typedef void (*z123p_step_fn)(int step, int total, void* user);
/* Called on the calling thread about every 50 ms while generating; nonzero asks the engine to stop
 * (it does before the next step, so within one step). NULL: never. */
typedef int (*z123p_poll_fn)(void* user);

typedef struct z123p_generate_options {
  int steps;         /* 1..200 (Z123P_STEPS_DEFAULT) */
  double guidance;   /* 0..100; <= 1 turns classifier-free guidance off (Z123P_GUIDANCE_DEFAULT) */
  uint64_t seed;     /* the same seed gives the same views on every device */
  int width, height; /* the grid's size: 0 x 0 = Z123P_GRID_WIDTH x Z123P_GRID_HEIGHT; else as the
                        CLI's --size (multiples of 64; tests use small grids) */
  z123p_step_fn on_step;
  z123p_poll_fn poll;
  void* user; /* passed to on_step and poll */
} z123p_generate_options;
/* Fills *options with the defaults (28 steps, guidance 4, seed 0, no callbacks). */
void z123p_generate_options_init(z123p_generate_options* options);

/* Checks an input image's size (>= Z123P_MIN_INPUT_SIDE on each side) and the options, without a
 * model: front ends call it before loading. `what` names the image in the message (a layer name). */
z123p_status z123p_check(int width, int height, const z123p_generate_options* options, const char* what,
                         char** message);

/* Generates the model's grid (options->width x height RGBA, by default Z123P_GRID_WIDTH x
 * Z123P_GRID_HEIGHT: 2 columns x 3 rows of views) from 8-bit pixels: `channels` 1 (gray), 3 (RGB) or 4 (RGBA, straight
 * alpha: composited on gray 127 by the engine exactly as the CLI does), rows `rowstride` bytes apart. `what` names the
 * image in messages ("layer 'Background'"). On success *rgba is a new buffer of
 * width * height * 4 bytes (free with z123p_free). On failure *rgba is NULL
 * and *message says why; Z123P_CANCELLED when poll asked to stop. */
z123p_status z123p_generate(z123p_model* model, const uint8_t* pixels, int width, int height, int rowstride,
                            int channels, const char* what, const z123p_generate_options* options, uint8_t** rgba,
                            char** message);

/* ---- the views of a grid ---- */
/* Where view `index` (0..5) lies in a grid of grid_width x grid_height. 0 for a bad index. */
int z123p_view_rect(int index, int grid_width, int grid_height, int* x, int* y, int* width, int* height);
/* "View 1: azimuth 30°, elevation 20°" (UTF-8), to free with z123p_free; NULL for a bad index. */
char* z123p_view_label(int index);
/* Azimuth (relative to the input), elevation and field of view of view `index`, in degrees. */
int z123p_view_pose(int index, double* azimuth_deg, double* elevation_deg, double* fov_deg);
/* The camera poses as the JSON `zero123pp --views-dir` writes to <name>_views.json, byte for byte
 * (file names <name>.png and <name>_view<i>.png). Free with z123p_free. */
char* z123p_views_json(const char* name);
/* The grid re-arranged as `tiling` (the element's layouts): a new RGBA buffer of
 * columns*view x rows*view pixels (view = grid_width / 2), size in *width / *height; free with
 * z123p_free. NULL for a bad tiling or a grid that is not 2 x 3 square views. */
uint8_t* z123p_tile(const uint8_t* grid_rgba, int grid_width, int grid_height, int tiling, int* width, int* height);

#ifdef __cplusplus
}
#endif

#endif /* ZERO123PP_PLUGIN_H */
