/* zero123pp: the GIMP 2.10 plug-in. Filters > Render > Zero123++ Novel Views... turns the active
 * layer into six novel views of the object it shows (Zero123++ v1.2), as a new image: six
 * 320x320 layers, one per view, or the views tiled in one layer. The engine runs in this process
 * (gimp-plugin/core, the C API shared with the GIMP 3 plug-in); GIMP starts a plug-in process per
 * call, so the model is opened on every call.
 *
 * PDB procedure plug-in-zero123pp (Script-Fu, batch mode):
 *   run-mode, image, drawable, model-dir (string), steps (1..200), guidance (0..100),
 *   seed (0..2^31-1; -1 = a random one), output-mode (0 = six layers, 1 = grid 2x3, 2 = grid 3x2,
 *   3 = grid 6x1, 4 = grid 1x6)  ->  new-image
 * The Vulkan device is the dialog's choice when interactive; otherwise $Z123_DEVICE when set
 * (index or name substring, as zero123pp --device), else the best device.
 *
 * Cancelling: GIMP 2.10 has no cancel notification for plug-ins. Its progress bar's cancel button
 * makes GIMP close the plug-in with kill_it = TRUE (app/plug-in/gimpplugin-progress.c,
 * gimp_plug_in_close): it writes GP_QUIT to the plug-in's pipe, waits 10 ms, then SIGKILLs the
 * process. So a cancelled run ends at once, whatever step it is in; and because the new image is
 * created only after the views are complete, no half-made image is ever left in GIMP. If the
 * GP_QUIT is read first (libgimp reads the pipe during our next progress call), libgimp calls
 * quit_proc below before exit(): while the engine is open (loading, or running on its worker
 * thread) we _exit() there instead, so no destructor runs under its threads' feet. */
#include <libgimp/gimp.h>
#include <libgimp/gimpui.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gimp_progress.h"
#include "zero123pp_plugin.h"

#define PLUG_IN_PROC "plug-in-zero123pp"
#define PLUG_IN_BINARY "zero123pp"
#define PLUG_IN_ROLE "zero123pp"
/* The parasite on the new image: the camera poses, the JSON `zero123pp --views-dir` writes. */
#define POSES_PARASITE "zero123pp-poses"

enum { OUTPUT_LAYERS = 0, OUTPUT_GRID_FIRST = 1, OUTPUT_MODES = 1 + Z123P_TILING_COUNT };

/* The last values (gimp_set_data: kept for the GIMP session, used by "Repeat" / RUN-WITH-LAST-VALS).
 * `version` guards against a struct stored by another build of the plug-in. */
#define VALUES_VERSION 1
typedef struct {
  gint32 version;
  gchar model_dir[4096];
  gchar device[512]; /* "" = the best device */
  gint32 steps;
  gdouble guidance;
  gint32 seed;
  gint32 random_seed;
  gint32 output_mode;
} Values;

static void query(void);
static void run(const gchar* name, gint nparams, const GimpParam* param, gint* nreturn_vals, GimpParam** return_vals);
static void quit(void);

const GimpPlugInInfo PLUG_IN_INFO = {NULL, quit, query, run};

MAIN()

/* Set while the engine is open (loading on this thread with its compiler threads, or generating
 * on its worker): see the comment at the top. */
static volatile gint engine_busy = 0;

static void quit(void) {
  if (engine_busy) _exit(0);
}

static void query(void) {
  static const GimpParamDef args[] = {
      {GIMP_PDB_INT32, "run-mode", "The run mode { RUN-INTERACTIVE (0), RUN-NONINTERACTIVE (1) }"},
      {GIMP_PDB_IMAGE, "image", "Input image"},
      {GIMP_PDB_DRAWABLE, "drawable", "Input drawable (the object to turn; transparency is composited on gray)"},
      {GIMP_PDB_STRING, "model-dir", "Model folder (diffusers layout of sudo-ai/zero123plus-v1.2)"},
      {GIMP_PDB_INT32, "steps", "Denoising steps (1..200; 28 is the default, 75 for more detail)"},
      {GIMP_PDB_FLOAT, "guidance", "Classifier-free guidance scale (0..100; 4 is the default, <= 1 turns it off)"},
      {GIMP_PDB_INT32, "seed", "Random seed (0..2147483647; -1 = a random one); the same seed gives the same views"},
      {GIMP_PDB_INT32, "output-mode",
       "Output { SIX-LAYERS (0), GRID-2X3 (1), GRID-3X2 (2), GRID-6X1 (3), GRID-1X6 (4) }"},
  };
  static const GimpParamDef return_vals[] = {
      {GIMP_PDB_IMAGE, "new-image", "The new image with the six views"},
  };
  gimp_install_procedure(
      PLUG_IN_PROC, "Six novel views of an object from one image (Zero123++ v1.2 on Vulkan)",
      "Renders six 320x320 views of the object in the layer, seen from azimuths 30, 90, 150, 210, 270 and 330 "
      "degrees (relative to the input) at elevations 20 and -10 degrees alternating, into a new image: six layers "
      "(view 1 on top, each named with its azimuth and elevation, the camera poses in the image parasite "
      "'" POSES_PARASITE
      "' as JSON), or one layer with the views tiled 2x3, 3x2, 6x1 or 1x6. The Vulkan device is $Z123_DEVICE when "
      "set (non-interactive), else the best one. The model folder is opened on every call.",
      "zero123pp-vk authors", "zero123pp-vk authors", "2026", "Zero123++ _Novel Views...", "RGB*, GRAY*", GIMP_PLUGIN,
      G_N_ELEMENTS(args), G_N_ELEMENTS(return_vals), args, return_vals);
  gimp_plugin_menu_register(PLUG_IN_PROC, "<Image>/Filters/Render");
}

/* ---- values ---- */

static void values_defaults(Values* v) {
  memset(v, 0, sizeof *v);
  v->version = VALUES_VERSION;
  const gchar* env = g_getenv("Z123_MODEL_DIR");
  if (env) g_strlcpy(v->model_dir, env, sizeof v->model_dir);
  v->steps = Z123P_STEPS_DEFAULT;
  v->guidance = Z123P_GUIDANCE_DEFAULT;
  v->seed = 0;
  v->random_seed = FALSE;
  v->output_mode = OUTPUT_LAYERS;
}

static gboolean values_load(Values* v) {
  Values stored;
  if (gimp_get_data_size(PLUG_IN_PROC) != (gint)sizeof stored) return FALSE;
  if (!gimp_get_data(PLUG_IN_PROC, &stored) || stored.version != VALUES_VERSION) return FALSE;
  stored.model_dir[sizeof stored.model_dir - 1] = '\0';
  stored.device[sizeof stored.device - 1] = '\0';
  *v = stored;
  return TRUE;
}

/* ---- the dialog ---- */

typedef struct {
  GtkWidget* folder;
  GtkWidget* device;
  GtkWidget* steps;
  GtkWidget* guidance;
  GtkWidget* seed;
  GtkWidget* random_seed;
  GtkWidget* output;
  char** devices; /* NULL-terminated; combo entry i + 1 is devices[i] */
} Dialog;

static void random_toggled(GtkToggleButton* button, gpointer seed_spin) {
  gtk_widget_set_sensitive(GTK_WIDGET(seed_spin), !gtk_toggle_button_get_active(button));
}

static gboolean run_dialog(Values* v) {
  Dialog d = {0};
  gimp_ui_init(PLUG_IN_BINARY, FALSE);
  GtkWidget* dialog = gimp_dialog_new("Zero123++ Novel Views", PLUG_IN_ROLE, NULL, 0, gimp_standard_help_func,
                                      PLUG_IN_PROC, "_Cancel", GTK_RESPONSE_CANCEL, "_OK", GTK_RESPONSE_OK, NULL);
  gtk_dialog_set_alternative_button_order(GTK_DIALOG(dialog), GTK_RESPONSE_OK, GTK_RESPONSE_CANCEL, -1);
  gtk_dialog_set_default_response(GTK_DIALOG(dialog), GTK_RESPONSE_OK);
  gimp_window_set_transient(GTK_WINDOW(dialog));

  GtkWidget* table = gtk_table_new(7, 3, FALSE);
  gtk_table_set_col_spacings(GTK_TABLE(table), 6);
  gtk_table_set_row_spacings(GTK_TABLE(table), 6);
  gtk_container_set_border_width(GTK_CONTAINER(table), 12);
  gtk_box_pack_start(GTK_BOX(gtk_dialog_get_content_area(GTK_DIALOG(dialog))), table, TRUE, TRUE, 0);

  int row = 0;
  d.folder = gtk_file_chooser_button_new("Zero123++ model folder", GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER);
  if (v->model_dir[0]) gtk_file_chooser_set_filename(GTK_FILE_CHOOSER(d.folder), v->model_dir);
  gtk_widget_set_size_request(d.folder, 280, -1);
  gimp_table_attach_aligned(GTK_TABLE(table), 0, row++, "_Model folder:", 0.0, 0.5, d.folder, 2, FALSE);

  /* Entry 0 is the engine's own choice; the others are the devices Vulkan lists, by name. */
  d.device = gtk_combo_box_text_new();
  gtk_combo_box_text_append_text(GTK_COMBO_BOX_TEXT(d.device), "Best device (automatic)");
  int active_device = 0;
  char* list_message = NULL;
  if (z123p_list_devices(&d.devices, &list_message) == Z123P_OK) {
    for (int i = 0; d.devices[i]; ++i) {
      gtk_combo_box_text_append_text(GTK_COMBO_BOX_TEXT(d.device), d.devices[i]);
      if (v->device[0] && strcmp(v->device, d.devices[i]) == 0) active_device = i + 1;
    }
  }
  z123p_free(list_message); /* no Vulkan: the run says so, in the engine's words */
  gtk_combo_box_set_active(GTK_COMBO_BOX(d.device), active_device);
  gimp_table_attach_aligned(GTK_TABLE(table), 0, row++, "_Vulkan device:", 0.0, 0.5, d.device, 2, FALSE);

  d.steps = gtk_spin_button_new_with_range(Z123P_STEPS_MIN, Z123P_STEPS_MAX, 1);
  gtk_spin_button_set_value(GTK_SPIN_BUTTON(d.steps), v->steps);
  gimp_table_attach_aligned(GTK_TABLE(table), 0, row++, "_Steps:", 0.0, 0.5, d.steps, 1, TRUE);

  d.guidance = gtk_spin_button_new_with_range(0.0, 100.0, 0.5);
  gtk_spin_button_set_digits(GTK_SPIN_BUTTON(d.guidance), 1);
  gtk_spin_button_set_value(GTK_SPIN_BUTTON(d.guidance), v->guidance);
  gimp_table_attach_aligned(GTK_TABLE(table), 0, row++, "_Guidance:", 0.0, 0.5, d.guidance, 1, TRUE);

  d.seed = gtk_spin_button_new_with_range(0, G_MAXINT32, 1);
  gtk_spin_button_set_value(GTK_SPIN_BUTTON(d.seed), v->seed);
  gimp_table_attach_aligned(GTK_TABLE(table), 0, row, "S_eed:", 0.0, 0.5, d.seed, 1, TRUE);
  d.random_seed = gtk_check_button_new_with_mnemonic("_Random");
  gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(d.random_seed), v->random_seed);
  gtk_widget_set_sensitive(d.seed, !v->random_seed);
  g_signal_connect(d.random_seed, "toggled", G_CALLBACK(random_toggled), d.seed);
  gtk_table_attach(GTK_TABLE(table), d.random_seed, 2, 3, row, row + 1, GTK_FILL, GTK_FILL, 0, 0);
  gtk_widget_show(d.random_seed);
  ++row;

  d.output = gimp_int_combo_box_new("Six layers, one per view (320 x 320)", OUTPUT_LAYERS,
                                    "Grid of 2 x 3 views (640 x 960)", OUTPUT_GRID_FIRST + Z123P_TILING_2X3,
                                    "Grid of 3 x 2 views (960 x 640)", OUTPUT_GRID_FIRST + Z123P_TILING_3X2,
                                    "Grid of 6 x 1 views (1920 x 320)", OUTPUT_GRID_FIRST + Z123P_TILING_6X1,
                                    "Grid of 1 x 6 views (320 x 1920)", OUTPUT_GRID_FIRST + Z123P_TILING_1X6, NULL);
  gimp_int_combo_box_set_active(GIMP_INT_COMBO_BOX(d.output), v->output_mode);
  gimp_table_attach_aligned(GTK_TABLE(table), 0, row++, "_Output:", 0.0, 0.5, d.output, 2, FALSE);

  GtkWidget* note = gtk_label_new("The model is loaded on every run (seconds on a GPU, minutes on a CPU).");
  gtk_misc_set_alignment(GTK_MISC(note), 0.0, 0.5);
  gtk_table_attach(GTK_TABLE(table), note, 0, 3, row, row + 1, GTK_FILL, GTK_FILL, 0, 0);
  gtk_widget_show(note);

  gtk_widget_show(table);
  gtk_widget_show(dialog);
  const gboolean ok = gimp_dialog_run(GIMP_DIALOG(dialog)) == GTK_RESPONSE_OK;
  if (ok) {
    gchar* folder = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(d.folder));
    g_strlcpy(v->model_dir, folder ? folder : "", sizeof v->model_dir);
    g_free(folder);
    const int device = gtk_combo_box_get_active(GTK_COMBO_BOX(d.device));
    g_strlcpy(v->device, device > 0 && d.devices ? d.devices[device - 1] : "", sizeof v->device);
    v->steps = gtk_spin_button_get_value_as_int(GTK_SPIN_BUTTON(d.steps));
    v->guidance = gtk_spin_button_get_value(GTK_SPIN_BUTTON(d.guidance));
    v->seed = gtk_spin_button_get_value_as_int(GTK_SPIN_BUTTON(d.seed));
    v->random_seed = gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(d.random_seed));
    gint mode = OUTPUT_LAYERS;
    gimp_int_combo_box_get_active(GIMP_INT_COMBO_BOX(d.output), &mode);
    v->output_mode = mode;
  }
  gtk_widget_destroy(dialog);
  z123p_free_list(d.devices);
  return ok;
}

/* A malloc'ed copy, freed with z123p_free like the core's messages. */
static char* copy_message(const char* text) {
  const size_t n = strlen(text) + 1;
  char* p = malloc(n);
  if (p) memcpy(p, text, n);
  return p;
}

/* ---- the new image ---- */

/* The name the poses JSON gives the files: the stem of the source image's file, as the command
 * line names its outputs after the input file ("cube.png" -> "cube"), else "untitled". */
static gchar* source_name(gint32 image) {
  gchar* filename = gimp_image_get_filename(image);
  gchar* stem = NULL;
  if (filename) {
    gchar* base = g_path_get_basename(filename);
    gchar* dot = strrchr(base, '.');
    if (dot && dot != base) *dot = '\0';
    stem = base;
  }
  g_free(filename);
  return stem ? stem : g_strdup("untitled");
}

static gint32 add_layer(gint32 image, const gchar* name, const guint8* rgba, int width, int height, int position) {
  gint32 layer =
      gimp_layer_new(image, name, width, height, GIMP_RGBA_IMAGE, 100.0, gimp_image_get_default_new_layer_mode(image));
  if (layer < 0 || !gimp_image_insert_layer(image, layer, 0, position)) return -1;
  GeglBuffer* buffer = gimp_drawable_get_buffer(layer);
  gegl_buffer_set(buffer, GEGL_RECTANGLE(0, 0, width, height), 0, babl_format("R'G'B'A u8"), rgba, GEGL_AUTO_ROWSTRIDE);
  g_object_unref(buffer); /* flushes the pixels to GIMP */
  return layer;
}

/* Six layers: all 320x320 at offset 0 of a 320x320 image, view 1 on top of the stack, so the
 * canvas shows view 1 and the Layers dialog lists the views in order from the top; each layer is a
 * whole frame, ready for export one by one or as animation frames. Grid: one layer, tiled. The
 * poses go on as a persistent parasite (XCF keeps it) in both the six-layer and the 2x3 form, whose
 * rows and columns the JSON describes; the other tilings' cells are in view order, row by row. */
static gint32 make_image(gint32 source, const guint8* grid, int mode, gchar** error) {
  gint32 image = -1;
  if (mode == OUTPUT_LAYERS) {
    image = gimp_image_new(Z123P_VIEW_SIZE, Z123P_VIEW_SIZE, GIMP_RGB);
    gimp_image_undo_disable(image);
    guint8* view = g_malloc((gsize)Z123P_VIEW_SIZE * Z123P_VIEW_SIZE * 4);
    for (int i = 0; i < Z123P_VIEW_COUNT; ++i) {
      int x, y, w, h;
      z123p_view_rect(i, Z123P_GRID_WIDTH, Z123P_GRID_HEIGHT, &x, &y, &w, &h);
      for (int r = 0; r < h; ++r)
        memcpy(view + (gsize)r * w * 4, grid + ((gsize)(y + r) * Z123P_GRID_WIDTH + x) * 4, (gsize)w * 4);
      char* label = z123p_view_label(i);
      const gint32 layer = add_layer(image, label ? label : "View", view, w, h, i);
      z123p_free(label);
      if (layer < 0) {
        g_free(view);
        gimp_image_delete(image);
        *error = g_strdup("cannot add a layer to the new image");
        return -1;
      }
    }
    g_free(view);
    /* The last layer added (view 6) would be the active one: make it view 1, the one on top. */
    gint n_layers = 0;
    gint* layers = gimp_image_get_layers(image, &n_layers);
    if (n_layers > 0) gimp_image_set_active_layer(image, layers[0]);
    g_free(layers);
  } else {
    const int tiling = mode - OUTPUT_GRID_FIRST;
    int w = 0, h = 0;
    guint8* tiled = z123p_tile(grid, Z123P_GRID_WIDTH, Z123P_GRID_HEIGHT, tiling, &w, &h);
    if (!tiled) {
      *error = g_strdup("cannot tile the views");
      return -1;
    }
    image = gimp_image_new(w, h, GIMP_RGB);
    gimp_image_undo_disable(image);
    gchar* name = g_strdup_printf("Zero123++ views (%s)", z123p_tiling_name(tiling));
    const gint32 layer = add_layer(image, name, tiled, w, h, 0);
    g_free(name);
    z123p_free(tiled);
    if (layer < 0) {
      gimp_image_delete(image);
      *error = g_strdup("cannot add a layer to the new image");
      return -1;
    }
  }
  if (mode == OUTPUT_LAYERS || mode == OUTPUT_GRID_FIRST + Z123P_TILING_2X3) {
    gchar* name = source_name(source);
    char* json = z123p_views_json(name);
    g_free(name);
    if (json) {
      GimpParasite* parasite = gimp_parasite_new(POSES_PARASITE, GIMP_PARASITE_PERSISTENT, strlen(json), json);
      gimp_image_attach_parasite(image, parasite);
      gimp_parasite_free(parasite);
      z123p_free(json);
    }
  }
  gimp_image_undo_enable(image);
  gimp_image_clean_all(image);
  return image;
}

/* ---- running ---- */

/* Reads the layer's pixels as 8-bit sRGB-encoded values (straight alpha), the bytes the command
 * line decodes from the same 8-bit PNG; the engine composites the alpha on gray itself. */
static guint8* read_layer(gint32 drawable, int* width, int* height, int* channels) {
  *width = gimp_drawable_width(drawable);
  *height = gimp_drawable_height(drawable);
  *channels = gimp_drawable_has_alpha(drawable) ? 4 : 3;
  const Babl* format = babl_format(*channels == 4 ? "R'G'B'A u8" : "R'G'B' u8");
  guint8* pixels = g_try_malloc((gsize)*width * *height * *channels);
  if (!pixels) return NULL;
  GeglBuffer* buffer = gimp_drawable_get_buffer(drawable);
  gegl_buffer_get(buffer, GEGL_RECTANGLE(0, 0, *width, *height), 1.0, format, pixels, GEGL_AUTO_ROWSTRIDE,
                  GEGL_ABYSS_NONE);
  g_object_unref(buffer);
  return pixels;
}

/* The work of one call; on failure returns -1 with *error set ("Zero123++: " + the engine's words)
 * and *status the PDB status. */
static gint32 generate(gint32 image, gint32 drawable, const Values* v, GimpRunMode mode, GimpPDBStatusType* status,
                       gchar** error) {
  *status = GIMP_PDB_EXECUTION_ERROR;
  if (v->output_mode < 0 || v->output_mode >= OUTPUT_MODES) {
    *status = GIMP_PDB_CALLING_ERROR;
    *error = g_strdup_printf("Zero123++: output-mode %d, expected 0 (six layers) to 4 (grid 1x6)", v->output_mode);
    return -1;
  }
  z123p_generate_options options;
  z123p_generate_options_init(&options);
  options.steps = v->steps;
  options.guidance = v->guidance;
  options.seed = (guint64)(v->seed < 0 ? g_random_int_range(0, G_MAXINT32) : v->seed);
  options.on_step = z123gimp_on_step;

  gchar* layer_name = gimp_item_get_name(drawable);
  gchar* what = g_strdup_printf("layer '%s'", layer_name ? layer_name : "");
  g_free(layer_name);
  char* message = NULL;
  /* Size and options first: a bad call fails before the model loads. */
  z123p_status s = z123p_check(gimp_drawable_width(drawable), gimp_drawable_height(drawable), &options, what, &message);
  if (s == Z123P_OK && !v->model_dir[0]) {
    s = Z123P_BAD_MODEL;
    message = copy_message("no model folder was given (the model-dir argument, or the dialog's model folder)");
  }
  z123p_model* model = NULL;
  if (s == Z123P_OK) {
    const char* device = v->device;
    if (mode == GIMP_RUN_NONINTERACTIVE) device = g_getenv("Z123_DEVICE") ? g_getenv("Z123_DEVICE") : "";
    gimp_progress_init("Loading model...");
    g_atomic_int_set(&engine_busy, 1);
    s = z123p_open(v->model_dir, device, z123gimp_on_load, NULL, &model, &message);
  }
  guint8* grid = NULL;
  if (s == Z123P_OK) {
    /* Short texts: GIMP's progress dialog (batch-started runs) is narrow. */
    gimp_progress_init("Generating views...");
    gimp_progress_update(0.0);
    int width, height, channels;
    guint8* pixels = read_layer(drawable, &width, &height, &channels);
    if (!pixels) {
      s = Z123P_ERROR;
      message = copy_message("out of memory reading the layer");
    } else {
      s = z123p_generate(model, pixels, width, height, width * channels, channels, what, &options, &grid, &message);
      g_free(pixels);
    }
    z123p_close(model);
  }
  g_atomic_int_set(&engine_busy, 0);
  g_free(what);
  if (s != Z123P_OK) {
    *error = g_strdup_printf("Zero123++: %s", message ? message : z123p_status_name(s));
    z123p_free(message);
    if (s == Z123P_CANCELLED) *status = GIMP_PDB_CANCEL;
    return -1;
  }
  gimp_progress_update(1.0);
  gint32 out = make_image(image, grid, v->output_mode, error);
  z123p_free(grid);
  if (out < 0) return -1;
  *status = GIMP_PDB_SUCCESS;
  return out;
}

static void run(const gchar* name, gint nparams, const GimpParam* param, gint* nreturn_vals, GimpParam** return_vals) {
  static GimpParam values[2];
  static gchar* error_text = NULL;
  (void)name;
  *nreturn_vals = 1;
  *return_vals = values;
  values[0].type = GIMP_PDB_STATUS;
  values[0].data.d_status = GIMP_PDB_CALLING_ERROR;
  if (nparams < 3) return;

  gegl_init(NULL, NULL);
  const GimpRunMode mode = (GimpRunMode)param[0].data.d_int32;
  const gint32 image = param[1].data.d_image, drawable = param[2].data.d_drawable;
  Values v;
  values_defaults(&v);
  switch (mode) {
  case GIMP_RUN_INTERACTIVE:
    values_load(&v);
    /* From the menu GIMP passes the arguments empty; a script that runs the dialog with a model
     * folder gives its starting values. */
    if (nparams == 8 && param[3].data.d_string && param[3].data.d_string[0]) {
      g_strlcpy(v.model_dir, param[3].data.d_string, sizeof v.model_dir);
      v.steps = CLAMP(param[4].data.d_int32, Z123P_STEPS_MIN, Z123P_STEPS_MAX);
      v.guidance = CLAMP(param[5].data.d_float, 0.0, 100.0);
      v.random_seed = param[6].data.d_int32 < 0;
      v.seed = MAX(param[6].data.d_int32, 0);
      v.output_mode = CLAMP(param[7].data.d_int32, 0, OUTPUT_MODES - 1);
    }
    if (!run_dialog(&v)) {
      values[0].data.d_status = GIMP_PDB_CANCEL;
      return;
    }
    /* A random seed is drawn now and kept with the values, so the dialog shows the last one used. */
    if (v.random_seed) v.seed = g_random_int_range(0, G_MAXINT32);
    gimp_set_data(PLUG_IN_PROC, &v, sizeof v);
    break;
  case GIMP_RUN_NONINTERACTIVE:
    if (nparams != 8) return;
    g_strlcpy(v.model_dir, param[3].data.d_string ? param[3].data.d_string : "", sizeof v.model_dir);
    v.steps = param[4].data.d_int32;
    v.guidance = param[5].data.d_float;
    v.seed = param[6].data.d_int32;
    v.output_mode = param[7].data.d_int32;
    break;
  case GIMP_RUN_WITH_LAST_VALS:
    values_load(&v);
    if (v.random_seed) {
      v.seed = g_random_int_range(0, G_MAXINT32);
      gimp_set_data(PLUG_IN_PROC, &v, sizeof v);
    }
    break;
  }

  GimpPDBStatusType status;
  gchar* error = NULL;
  const gint32 out = generate(image, drawable, &v, mode, &status, &error);
  values[0].data.d_status = status;
  if (out >= 0) {
    *nreturn_vals = 2;
    values[1].type = GIMP_PDB_IMAGE;
    values[1].data.d_image = out;
    if (mode != GIMP_RUN_NONINTERACTIVE) gimp_display_new(out);
    gimp_progress_end();
    return;
  }
  /* The error goes back as the call's error message: GIMP shows it in an error dialog when the
   * filter was run from the menu, and Script-Fu / batch mode print it. gimp_message as well in
   * non-interactive runs, so the console shows the words even if the caller drops the error. */
  g_free(error_text);
  error_text = error;
  if (status != GIMP_PDB_CANCEL) {
    if (mode == GIMP_RUN_NONINTERACTIVE) gimp_message(error_text);
    *nreturn_vals = 2;
    values[1].type = GIMP_PDB_STRING;
    values[1].data.d_string = error_text;
  }
}
