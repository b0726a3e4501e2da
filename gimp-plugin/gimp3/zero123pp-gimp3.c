/* zero123pp: the GIMP 3 plug-in. Filters > Render > Zero123++ Novel Views... turns the active
 * layer into six novel views of the object it shows (Zero123++ v1.2), as a new image: six
 * 320x320 layers, one per view, or the views tiled in one layer. The same feature as the GIMP 2.10
 * plug-in (gimp-plugin/gimp2), through GIMP 3's object API (GimpPlugIn, GimpImageProcedure,
 * GimpProcedureConfig, GimpProcedureDialog); everything that is not GIMP (devices, the engine,
 * view names and poses, tilings, messages) comes from the shared C API, gimp-plugin/core. GIMP
 * starts a plug-in process per call, so the model is opened on every call.
 *
 * PDB procedure plug-in-zero123pp (Script-Fu, batch mode; GIMP 3 names every argument):
 *   run-mode, image, drawables (exactly one), model-dir (a path), steps (1..200), guidance (0..100), seed (0..2^31-1;
 * -1 = a random one), output-mode ("layers", "grid-2x3", "grid-3x2", "grid-6x1", "grid-1x6"), device ("" = the best
 *   one, else an index or a name substring as zero123pp --device; "" also honours $Z123_DEVICE)
 *   -> new-image
 * Script-Fu: (plug-in-zero123pp #:run-mode RUN-NONINTERACTIVE #:image img #:drawables (vector l)
 *             #:model-dir "/models/zero123plus-v1.2" #:steps 28 #:seed 7 #:output-mode "layers")
 * (arguments left out take their defaults). The dialog also has "Random seed" (an auxiliary
 * argument: it draws a seed on each interactive run and stores it, so the dialog shows the seed
 * used last); GIMP 3 remembers every value of the dialog between runs, the model folder included.
 *
 * Cancelling: as in GIMP 2.10, the progress bar's cancel button makes GIMP close the plug-in with
 * kill_it = TRUE (app/plug-in/gimpplugin-progress.c): GP_QUIT on the pipe, then SIGKILL 10 ms
 * later. A cancelled run therefore ends at once, in whatever step it is; the new image is created
 * only after the views are complete, so no half-made image is ever left in GIMP. If libgimp reads
 * the GP_QUIT first (during our next progress call) it calls the quit method below before exit():
 * while the engine is open (loading, with its compiler threads, or generating on its worker
 * thread) we _exit() there, so no destructor runs under its threads' feet. */
#include <libgimp/gimp.h>
#include <libgimp/gimpui.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gimp_progress.h"
#include "zero123pp_plugin.h"

#define PLUG_IN_PROC "plug-in-zero123pp"
#define PLUG_IN_BINARY "zero123pp"
/* The parasite on the new image: the camera poses, the JSON `zero123pp --views-dir` writes (the
 * same name as the GIMP 2.10 plug-in's, so scripts read either). */
#define POSES_PARASITE "zero123pp-poses"

/* output-mode: the choice's ids are the GIMP 2.10 plug-in's output-mode numbers. */
enum { OUTPUT_LAYERS = 0, OUTPUT_GRID_FIRST = 1 };

#define ZERO123PP_TYPE_PLUG_IN (zero123pp_plug_in_get_type())
G_DECLARE_FINAL_TYPE(Zero123ppPlugIn, zero123pp_plug_in, ZERO123PP, PLUG_IN, GimpPlugIn)

struct _Zero123ppPlugIn {
  GimpPlugIn parent_instance;
};

G_DEFINE_TYPE(Zero123ppPlugIn, zero123pp_plug_in, GIMP_TYPE_PLUG_IN)

GIMP_MAIN(ZERO123PP_TYPE_PLUG_IN)

/* Set while the engine is open: see the comment at the top. */
static volatile gint engine_busy = 0;

static void plug_in_quit(GimpPlugIn* plug_in) {
  (void)plug_in;
  if (g_atomic_int_get(&engine_busy)) _exit(0);
}

static GList* query_procedures(GimpPlugIn* plug_in) {
  (void)plug_in;
  return g_list_append(NULL, g_strdup(PLUG_IN_PROC));
}

static GimpValueArray* run(GimpProcedure* procedure, GimpRunMode run_mode, GimpImage* image, GimpDrawable** drawables,
                           GimpProcedureConfig* config, gpointer run_data);

/* output-mode's values: Script-Fu passes the nick ("grid-2x3"), C callers may use the id. */
static GimpChoice* output_choice(void) {
  static const struct {
    const char *nick, *label;
    int id;
  } modes[] = {
      {"layers", "Six layers, one per view (320 x 320)", OUTPUT_LAYERS},
      {"grid-2x3", "Grid of 2 x 3 views (640 x 960)", OUTPUT_GRID_FIRST + Z123P_TILING_2X3},
      {"grid-3x2", "Grid of 3 x 2 views (960 x 640)", OUTPUT_GRID_FIRST + Z123P_TILING_3X2},
      {"grid-6x1", "Grid of 6 x 1 views (1920 x 320)", OUTPUT_GRID_FIRST + Z123P_TILING_6X1},
      {"grid-1x6", "Grid of 1 x 6 views (320 x 1920)", OUTPUT_GRID_FIRST + Z123P_TILING_1X6},
  };
  GimpChoice* choice = gimp_choice_new();
  for (size_t i = 0; i < G_N_ELEMENTS(modes); ++i)
    gimp_choice_add(choice, modes[i].nick, modes[i].id, modes[i].label, NULL);
  return choice;
}

static GimpProcedure* create_procedure(GimpPlugIn* plug_in, const gchar* name) {
  if (strcmp(name, PLUG_IN_PROC) != 0) return NULL;
  GimpProcedure* procedure = gimp_image_procedure_new(plug_in, name, GIMP_PDB_PROC_TYPE_PLUGIN, run, NULL, NULL);
  gimp_procedure_set_image_types(procedure, "RGB*, GRAY*");
  gimp_procedure_set_sensitivity_mask(procedure, GIMP_PROCEDURE_SENSITIVE_DRAWABLE);
  gimp_procedure_set_menu_label(procedure, "Zero123++ _Novel Views...");
  gimp_procedure_add_menu_path(procedure, "<Image>/Filters/Render");
  gimp_procedure_set_documentation(
      procedure, "Six novel views of an object from one image (Zero123++ v1.2 on Vulkan)",
      "Renders six 320x320 views of the object in the layer, seen from azimuths 30, 90, 150, 210, 270 and 330 "
      "degrees (relative to the input) at elevations 20 and -10 degrees alternating, into a new image: six layers "
      "(view 1 on top, each named with its azimuth and elevation, the camera poses in the image parasite "
      "'" POSES_PARASITE
      "' as JSON), or one layer with the views tiled 2x3, 3x2, 6x1 or 1x6. Transparency is composited on gray as "
      "the zero123pp command line does. The model folder is opened on every call.",
      name);
  gimp_procedure_set_attribution(procedure, "zero123pp-vk authors", "zero123pp-vk authors", "2026");

  /* A path string, not a GFile folder argument: GIMP itself refuses a GFile folder that does not
   * exist ("out of range"), and the plug-in must answer any folder with the command line's words
   * (the dialog has a folder chooser for it all the same). Also what the 2.10 plug-in takes. */
  gimp_procedure_add_string_argument(procedure, "model-dir", "_Model folder",
                                     "Model folder (diffusers layout of sudo-ai/zero123plus-v1.2)", "",
                                     G_PARAM_READWRITE);
  gimp_procedure_add_int_argument(procedure, "steps", "Ste_ps",
                                  "Denoising steps (28 is the default, 75 for more detail)", Z123P_STEPS_MIN,
                                  Z123P_STEPS_MAX, Z123P_STEPS_DEFAULT, G_PARAM_READWRITE);
  gimp_procedure_add_double_argument(procedure, "guidance", "_Guidance",
                                     "Classifier-free guidance scale (4 is the default, <= 1 turns it off)", 0.0, 100.0,
                                     Z123P_GUIDANCE_DEFAULT, G_PARAM_READWRITE);
  gimp_procedure_add_int_argument(procedure, "seed", "S_eed",
                                  "Random seed (-1 = a random one); the same seed gives the same views", -1, G_MAXINT32,
                                  0, G_PARAM_READWRITE);
  gimp_procedure_add_choice_argument(procedure, "output-mode", "O_utput",
                                     "Six layers, or one layer with the views tiled", output_choice(), "layers",
                                     G_PARAM_READWRITE);
  gimp_procedure_add_string_argument(procedure, "device", "_Vulkan device",
                                     "Vulkan device: \"\" for the best one (or $Z123_DEVICE when set), else an "
                                     "index or a name substring (zero123pp --list-devices)",
                                     "", G_PARAM_READWRITE);
  gimp_procedure_add_boolean_aux_argument(procedure, "random-seed", "Ra_ndom seed",
                                          "Draw a new seed on every run (the dialog then shows the seed used)", FALSE,
                                          G_PARAM_READWRITE);
  gimp_procedure_add_image_return_value(procedure, "new-image", "New image", "The new image with the six views", FALSE,
                                        G_PARAM_READWRITE);
  return procedure;
}

static void zero123pp_plug_in_class_init(Zero123ppPlugInClass* klass) {
  GimpPlugInClass* plug_in_class = GIMP_PLUG_IN_CLASS(klass);
  plug_in_class->query_procedures = query_procedures;
  plug_in_class->create_procedure = create_procedure;
  plug_in_class->quit = plug_in_quit;
  plug_in_class->set_i18n = NULL; /* English only; no message catalogs */
}

static void zero123pp_plug_in_init(Zero123ppPlugIn* plug_in) { (void)plug_in; }

/* ---- the dialog ---- */

/* The devices Vulkan lists, for the device combo: id "" is the engine's own choice, the others
 * are device names (a name is a valid selector: zero123pp --device takes a substring). */
static GtkListStore* device_store(void) {
  GtkListStore* store = gtk_list_store_new(2, G_TYPE_STRING, G_TYPE_STRING);
  gtk_list_store_insert_with_values(store, NULL, -1, 0, "", 1, "Best device (automatic)", -1);
  char** names = NULL;
  char* message = NULL;
  if (z123p_list_devices(&names, &message) == Z123P_OK) {
    for (int i = 0; names[i]; ++i) gtk_list_store_insert_with_values(store, NULL, -1, 0, names[i], 1, names[i], -1);
  }
  z123p_free_list(names);
  z123p_free(message); /* no Vulkan: the run says so, in the engine's words */
  return store;
}

static void folder_changed(GtkFileChooser* chooser, gpointer config) {
  gchar* folder = gtk_file_chooser_get_filename(chooser);
  if (folder) g_object_set(config, "model-dir", folder, NULL);
  g_free(folder);
}

/* A label and a widget in row `row` of `grid`. */
static void attach_row(GtkWidget* grid, int row, const char* mnemonic, GtkWidget* widget) {
  GtkWidget* label = gtk_label_new_with_mnemonic(mnemonic);
  gtk_label_set_xalign(GTK_LABEL(label), 0.0);
  gtk_label_set_mnemonic_widget(GTK_LABEL(label), widget);
  gtk_widget_set_hexpand(widget, TRUE);
  gtk_grid_attach(GTK_GRID(grid), label, 0, row, 1, 1);
  gtk_grid_attach(GTK_GRID(grid), widget, 1, row, 1, 1);
}

static gboolean run_dialog(GimpProcedure* procedure, GimpProcedureConfig* config) {
  gimp_ui_init(PLUG_IN_BINARY);
  /* The first run starts from $Z123_MODEL_DIR, as the command line and the element do; later runs
   * from the folder GIMP stored with the last values. */
  gchar* folder = NULL;
  g_object_get(config, "model-dir", &folder, NULL);
  if ((!folder || !folder[0]) && g_getenv("Z123_MODEL_DIR")) {
    g_free(folder);
    folder = g_strdup(g_getenv("Z123_MODEL_DIR"));
    g_object_set(config, "model-dir", folder, NULL);
  }

  GtkWidget* dialog = gimp_procedure_dialog_new(procedure, config, "Zero123++ Novel Views");
  gimp_procedure_dialog_set_sensitive(GIMP_PROCEDURE_DIALOG(dialog), "seed", TRUE, G_OBJECT(config), "random-seed",
                                      TRUE);
  gimp_procedure_dialog_get_label(GIMP_PROCEDURE_DIALOG(dialog), "load-note",
                                  "The model is loaded on every run (seconds on a GPU, minutes on a CPU).", FALSE,
                                  FALSE);
  gimp_procedure_dialog_fill(GIMP_PROCEDURE_DIALOG(dialog), "steps", "guidance", "seed", "random-seed", "output-mode",
                             "load-note", NULL);

  /* The procedure dialog would make text entries for the two string arguments: the folder is
   * picked with a folder chooser and the device from the devices Vulkan lists, both writing the
   * same properties (so GIMP stores them with the other values), above the generated rows. */
  GtkWidget* grid = gtk_grid_new();
  gtk_grid_set_row_spacing(GTK_GRID(grid), 6);
  gtk_grid_set_column_spacing(GTK_GRID(grid), 6);
  GtkWidget* chooser = gtk_file_chooser_button_new("Zero123++ model folder", GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER);
  if (folder && folder[0]) gtk_file_chooser_set_filename(GTK_FILE_CHOOSER(chooser), folder);
  g_free(folder);
  g_signal_connect(chooser, "selection-changed", G_CALLBACK(folder_changed), config);
  attach_row(grid, 0, "_Model folder:", chooser);
  GtkListStore* store = device_store();
  attach_row(grid, 1, "_Vulkan device:",
             gimp_prop_string_combo_box_new(G_OBJECT(config), "device", GTK_TREE_MODEL(store), 0, 1));
  g_object_unref(store);
  gtk_widget_show_all(grid);
  GtkWidget* content = gtk_dialog_get_content_area(GTK_DIALOG(dialog));
  gtk_box_pack_start(GTK_BOX(content), grid, FALSE, FALSE, 0);
  gtk_box_reorder_child(GTK_BOX(content), grid, 0);

  const gboolean ok = gimp_procedure_dialog_run(GIMP_PROCEDURE_DIALOG(dialog));
  gtk_widget_destroy(dialog);
  return ok;
}

/* ---- the new image ---- */

/* The name the poses JSON gives the files: the stem of the source image's file, as the command
 * line names its outputs after the input file ("cube.png" -> "cube"), else "untitled". */
static gchar* source_name(GimpImage* image) {
  /* The file it was opened from: an imported PNG has no XCF file (gimp_image_get_file). */
  GFile* file = gimp_image_get_imported_file(image);
  if (!file) file = gimp_image_get_file(image);
  gchar* stem = NULL;
  if (file) {
    stem = g_file_get_basename(file);
    gchar* dot = stem ? strrchr(stem, '.') : NULL;
    if (dot && dot != stem) *dot = '\0';
    g_object_unref(file);
  }
  return stem ? stem : g_strdup("untitled");
}

/* A new layer at stack position `position`, its pixels from `rgba` (rows `rowstride` bytes apart:
 * a view is read straight out of the grid, no copy). NULL when GIMP refused it. */
static GimpLayer* add_layer(GimpImage* image, const gchar* name, const guint8* rgba, int width, int height,
                            int rowstride, int position) {
  GimpLayer* layer =
      gimp_layer_new(image, name, width, height, GIMP_RGBA_IMAGE, 100.0, gimp_image_get_default_new_layer_mode(image));
  if (!layer || !gimp_image_insert_layer(image, layer, NULL, position)) return NULL;
  GeglBuffer* buffer = gimp_drawable_get_buffer(GIMP_DRAWABLE(layer));
  gegl_buffer_set(buffer, GEGL_RECTANGLE(0, 0, width, height), 0, babl_format("R'G'B'A u8"), rgba, rowstride);
  g_object_unref(buffer); /* flushes the pixels to GIMP */
  return layer;
}

/* Six layers: all 320x320 at offset 0 of a 320x320 image, view 1 on top of the stack (as the GIMP
 * 2.10 plug-in). Grid: one layer, tiled by the core. The poses go on as a persistent parasite in
 * the six-layer and the 2x3 form, whose rows and columns the JSON describes. */
static GimpImage* make_image(GimpImage* source, const guint8* grid, int mode, gchar** error) {
  GimpImage* image = NULL;
  if (mode == OUTPUT_LAYERS) {
    image = gimp_image_new(Z123P_VIEW_SIZE, Z123P_VIEW_SIZE, GIMP_RGB);
    gimp_image_undo_disable(image);
    GimpLayer* first = NULL;
    for (int i = 0; i < Z123P_VIEW_COUNT; ++i) {
      int x = 0, y = 0, w = 0, h = 0;
      z123p_view_rect(i, Z123P_GRID_WIDTH, Z123P_GRID_HEIGHT, &x, &y, &w, &h);
      char* label = z123p_view_label(i);
      GimpLayer* layer = add_layer(image, label ? label : "View", grid + ((gsize)y * Z123P_GRID_WIDTH + x) * 4, w, h,
                                   Z123P_GRID_WIDTH * 4, i);
      z123p_free(label);
      if (i == 0) first = layer;
      if (!layer) {
        gimp_image_delete(image);
        *error = g_strdup("Zero123++: cannot add a layer to the new image");
        return NULL;
      }
    }
    /* The last layer added (view 6) would be the selected one: select view 1, the one on top. */
    const GimpLayer* selected[] = {first, NULL};
    gimp_image_set_selected_layers(image, selected);
  } else {
    const int tiling = mode - OUTPUT_GRID_FIRST;
    int w = 0, h = 0;
    guint8* tiled = z123p_tile(grid, Z123P_GRID_WIDTH, Z123P_GRID_HEIGHT, tiling, &w, &h);
    if (!tiled) {
      *error = g_strdup("Zero123++: cannot tile the views");
      return NULL;
    }
    image = gimp_image_new(w, h, GIMP_RGB);
    gimp_image_undo_disable(image);
    gchar* name = g_strdup_printf("Zero123++ views (%s)", z123p_tiling_name(tiling));
    const gboolean ok = add_layer(image, name, tiled, w, h, w * 4, 0) != NULL;
    g_free(name);
    z123p_free(tiled);
    if (!ok) {
      gimp_image_delete(image);
      *error = g_strdup("Zero123++: cannot add a layer to the new image");
      return NULL;
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

/* The layer's pixels as 8-bit sRGB-encoded values (straight alpha): the bytes the command line
 * decodes from the same 8-bit PNG; the engine composites the alpha on gray itself. */
static guint8* read_drawable(GimpDrawable* drawable, int* width, int* height, int* channels) {
  *width = gimp_drawable_get_width(drawable);
  *height = gimp_drawable_get_height(drawable);
  *channels = gimp_drawable_has_alpha(drawable) ? 4 : 3;
  guint8* pixels = g_try_malloc((gsize)*width * *height * *channels);
  if (!pixels) return NULL;
  GeglBuffer* buffer = gimp_drawable_get_buffer(drawable);
  gegl_buffer_get(buffer, GEGL_RECTANGLE(0, 0, *width, *height), 1.0,
                  babl_format(*channels == 4 ? "R'G'B'A u8" : "R'G'B' u8"), pixels, GEGL_AUTO_ROWSTRIDE,
                  GEGL_ABYSS_NONE);
  g_object_unref(buffer);
  return pixels;
}

static GimpValueArray* fail(GimpProcedure* procedure, GimpPDBStatusType status, GimpRunMode run_mode,
                            gchar* message /* taken */) {
  /* The error goes back as the call's error: GIMP shows it in a message box when the filter ran
   * from the menu, and Script-Fu / batch mode print it. gimp_message as well in non-interactive
   * runs, so the console shows the words even if the caller drops the error. */
  if (run_mode == GIMP_RUN_NONINTERACTIVE && status != GIMP_PDB_CANCEL) gimp_message(message);
  GError* error = g_error_new_literal(GIMP_PLUG_IN_ERROR, 0, message);
  g_free(message);
  return gimp_procedure_new_return_values(procedure, status, error);
}

static GimpValueArray* run(GimpProcedure* procedure, GimpRunMode run_mode, GimpImage* image, GimpDrawable** drawables,
                           GimpProcedureConfig* config, gpointer run_data) {
  (void)run_data;
  const int n_drawables = drawables ? (int)gimp_core_object_array_get_length((GObject**)drawables) : 0;
  if (n_drawables != 1)
    return fail(procedure, GIMP_PDB_CALLING_ERROR, run_mode,
                g_strdup_printf("Zero123++: works on one layer; %d are selected", n_drawables));
  GimpDrawable* drawable = drawables[0];

  if (run_mode == GIMP_RUN_INTERACTIVE && !run_dialog(procedure, config))
    return gimp_procedure_new_return_values(procedure, GIMP_PDB_CANCEL, NULL);

  gchar* model_dir = NULL;
  gchar* device = NULL;
  gint steps = 0, seed = 0, mode = 0;
  gdouble guidance = 0.0;
  gboolean random_seed = FALSE;
  g_object_get(config, "model-dir", &model_dir, "steps", &steps, "guidance", &guidance, "seed", &seed, "device",
               &device, "random-seed", &random_seed, NULL);
  mode = gimp_procedure_config_get_choice_id(config, "output-mode");
  /* A random seed is drawn now and stored with the values, so the dialog shows the last one used;
   * -1 (Script-Fu's "random") is drawn here too. */
  if (seed < 0 || (run_mode != GIMP_RUN_NONINTERACTIVE && random_seed)) {
    seed = g_random_int_range(0, G_MAXINT32);
    if (run_mode != GIMP_RUN_NONINTERACTIVE) g_object_set(config, "seed", seed, NULL);
  }
  if (device && !device[0] && g_getenv("Z123_DEVICE")) {
    g_free(device);
    device = g_strdup(g_getenv("Z123_DEVICE"));
  }

  z123p_generate_options options;
  z123p_generate_options_init(&options);
  options.steps = steps;
  options.guidance = guidance;
  options.seed = (guint64)seed;
  options.on_step = z123gimp_on_step;

  gchar* layer_name = gimp_item_get_name(GIMP_ITEM(drawable));
  gchar* what = g_strdup_printf("layer '%s'", layer_name ? layer_name : "");
  g_free(layer_name);
  char* message = NULL;         /* the core's words, when it gave some */
  const char* own_words = NULL; /* else ours */
  /* Size and options first: a bad call fails before the model loads. */
  z123p_status s =
      z123p_check(gimp_drawable_get_width(drawable), gimp_drawable_get_height(drawable), &options, what, &message);
  if (s == Z123P_OK && (!model_dir || !model_dir[0])) {
    s = Z123P_BAD_MODEL;
    own_words = "no model folder was given (the model-dir argument, or the dialog's model folder)";
  }
  guint8* grid = NULL;
  if (s == Z123P_OK) {
    z123p_model* model = NULL;
    gimp_progress_init("Loading model...");
    g_atomic_int_set(&engine_busy, 1);
    s = z123p_open(model_dir, device, z123gimp_on_load, NULL, &model, &message);
    if (s == Z123P_OK) {
      /* Short texts: GIMP's progress dialog (batch-started runs) is narrow. */
      gimp_progress_init("Generating views...");
      gimp_progress_update(0.0);
      int width = 0, height = 0, channels = 0;
      guint8* pixels = read_drawable(drawable, &width, &height, &channels);
      if (!pixels) {
        s = Z123P_ERROR;
        own_words = "out of memory reading the layer";
      } else {
        s = z123p_generate(model, pixels, width, height, width * channels, channels, what, &options, &grid, &message);
        g_free(pixels);
      }
      z123p_close(model);
    }
    g_atomic_int_set(&engine_busy, 0);
  }
  g_free(what);
  g_free(model_dir);
  g_free(device);
  if (s != Z123P_OK) {
    gchar* text = g_strdup_printf("Zero123++: %s", message ? message : own_words ? own_words : z123p_status_name(s));
    z123p_free(message);
    return fail(procedure,
                s == Z123P_CANCELLED   ? GIMP_PDB_CANCEL
                : s == Z123P_BAD_INPUT ? GIMP_PDB_CALLING_ERROR
                                       : GIMP_PDB_EXECUTION_ERROR,
                run_mode, text);
  }
  gimp_progress_update(1.0);
  gchar* error = NULL;
  GimpImage* out = make_image(image, grid, mode, &error);
  z123p_free(grid);
  if (!out) return fail(procedure, GIMP_PDB_EXECUTION_ERROR, run_mode, error);
  if (run_mode != GIMP_RUN_NONINTERACTIVE) gimp_display_new(out);
  gimp_progress_end();
  GimpValueArray* ret = gimp_procedure_new_return_values(procedure, GIMP_PDB_SUCCESS, NULL);
  GIMP_VALUES_SET_IMAGE(ret, 1, out);
  return ret;
}
