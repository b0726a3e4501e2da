#!/usr/bin/env bash
# Takes the README's GIMP pictures from a real GIMP 2.10 window on a virtual X display (Xvfb):
# docs/images/gimp-dialog.png (the plug-in's dialog) and docs/images/gimp-result.png (the image
# it made: six layers). GIMP runs with a user folder of its own (GIMP2_DIRECTORY, a temporary
# folder holding only this build's plug-in), opens the sample cube, and a Script-Fu batch command
# starts plug-in-zero123pp in RUN-INTERACTIVE mode, which shows the dialog; the script presses OK.
# The model is $Z123_MODEL_DIR, else the bundled tiny test model (random weights: the views are
# noise, as the caption says; one step keeps it to a few minutes on a CPU).
# Not part of CI: it installs what it needs (Xvfb, xdpyinfo, ImageMagick, xdotool) with apt-get if missing.
# Usage: scripts/gimp-screenshots.sh [BUILD_DIR]     (default build/, or $Z123_BUILD_DIR)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${Z123_BUILD_DIR:-build}}
case "$build" in /*) ;; *) build=$repo/$build ;; esac
plugin=$build/gimp-plugin/gimp2/plug-ins/zero123pp/zero123pp
[ -x "$plugin" ] || { echo "gimp-screenshots: no plug-in at $plugin (build with libgimp2.0-dev installed)" >&2; exit 1; }
model=${Z123_MODEL_DIR:-$repo/tests/data/golden/tiny-model}
steps=${Z123_SCREENSHOT_STEPS:-1}

# gtk2-engines-pixbuf: the "pixmap" engine GIMP 2.10's theme draws its widgets with.
source "$repo/scripts/lib/virtual-display.sh"
install_missing gimp-screenshots xvfb x11-utils imagemagick xdotool gtk2-engines-pixbuf
mkdir -p "$work/gimp2/plug-ins/zero123pp" "$repo/docs/images"
ln -s "$plugin" "$work/gimp2/plug-ins/zero123pp/zero123pp"
"$build/tools/zero123pp-sample-image" --size 320 "$work/cube.png"

start_xvfb 90
no_window() {
  echo "gimp-screenshots: no window named '$1' after $2 s; GIMP said:" >&2
  cat "$work/gimp.log" >&2
  exit 1
}

# The dialog opens on the cube's image, starting from the script's values (model folder, steps,
# guidance 4, seed 7, six layers).
script="(let* ((image (aref (cadr (gimp-image-list)) 0)))
  (plug-in-zero123pp RUN-INTERACTIVE image (car (gimp-image-get-active-drawable image)) \"$model\" $steps 4.0 7 0))"
GIMP2_DIRECTORY=$work/gimp2 Z123_MODEL_DIR=$model gimp-2.10 -n -s -d -f "$work/cube.png" -b "$script" \
  > "$work/gimp.log" 2>&1 &
pids+=($!)


dialog=$(wait_window "Zero123\+\+ Novel Views" 180) || no_window "Zero123++ Novel Views" 180
sleep 2 # let it draw
import -window "$dialog" "$work/dialog.png"
convert "$work/dialog.png" -strip -colors 256 PNG8:"$repo/docs/images/gimp-dialog.png"
echo "gimp-screenshots: docs/images/gimp-dialog.png ($(du -h "$repo/docs/images/gimp-dialog.png" | cut -f1))"

# OK: the model loads and the views are generated; then GIMP displays the new image.
# No window manager, so no keyboard focus for the dialog: click its OK button (bottom right).
eval "$(xdotool getwindowgeometry --shell "$dialog")"
xdotool mousemove --window "$dialog" $((WIDTH - 55)) $((HEIGHT - 27)) click 1
result=$(wait_window "6 layers" 3600) || no_window "6 layers" 3600
sleep 3
import -window "$result" "$work/result.png"
# A GIMP image window is large; scaled so the README shows it whole and the file stays small.
convert "$work/result.png" -strip -resize '900x900>' -colors 256 PNG8:"$repo/docs/images/gimp-result.png"
echo "gimp-screenshots: docs/images/gimp-result.png ($(du -h "$repo/docs/images/gimp-result.png" | cut -f1))"
