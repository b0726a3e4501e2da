/* gimp_progress.h: the progress callbacks both GIMP plug-ins hand to the core (z123p_open's load
 * progress, z123p_generate's per-step callback). GIMP 2.10 and GIMP 3 spell these progress calls
 * the same, so one definition serves both: include it after <libgimp/gimp.h> of either. The core
 * calls them on the plug-in's own thread (zero123pp_plugin.h), where libgimp may be used. */
#ifndef Z123_GIMP_PROGRESS_H
#define Z123_GIMP_PROGRESS_H

/* "Loading model... UNet weights (4/7)", the bar at the stages done so far. */
static void z123gimp_on_load(const char* stage, int index, int count, void* user) {
  (void)user;
  gimp_progress_set_text_printf("Loading model... %s (%d/%d)", stage, index, count);
  gimp_progress_update(count > 0 ? (double)(index - 1) / count : 0.0);
}

/* Short texts: a progress dialog opened by a batch call is narrow. */
static void z123gimp_on_step(int step, int total, void* user) {
  (void)user;
  gimp_progress_set_text_printf("Generating views: step %d of %d", step, total);
  gimp_progress_update(total > 0 ? (double)step / total : 1.0);
}

#endif /* Z123_GIMP_PROGRESS_H */
