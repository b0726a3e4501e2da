#!/usr/bin/env bash
# Checks the GIMP 3 plug-in's interactive side in a real GIMP 3 on a virtual X display (Xvfb):
#   - a Script-Fu batch command starts plug-in-zero123pp in RUN-INTERACTIVE mode on the sample
#     cube: its dialog must open (taken as docs/images/gimp3-dialog.png) with the model folder from
#     $Z123_MODEL_DIR and the devices Vulkan lists;
#   - the script clicks OK: the model loads and the views are generated (28 steps by default, far
#     longer than the check), and GIMP shows the run's progress with a Cancel button in the image
#     window's status bar (docs/images/gimp3-progress.png);
#   - once the plug-in is generating, the script clicks Cancel and checks that the plug-in process
#     is gone within 2 s (GIMP 3 closes a cancelled plug-in: GP_QUIT, SIGKILL after 10 ms), that
#     GIMP keeps running and runs the next batch command, which counts the open images: still 1
#     (the input), so no half-made image was left; and that GIMP's log has no crash report.
# Debian 12 has no GIMP 3: run it in the Debian 13 chroot of scripts/gimp3-env.sh, which builds
# the plug-in first:
#   scripts/gimp3-env.sh --no-test --run 'scripts/gimp3-ui-check.sh build-trixie'
# Not part of CI (a display, and a minute of clicking). Installs Xvfb, xdotool, xdpyinfo and
# ImageMagick with apt-get where missing.
# Usage: scripts/gimp3-ui-check.sh [BUILD_DIR]      (default build-trixie)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build-trixie}
case "$build" in /*) ;; *) build=$repo/$build ;; esac
plugin=$build/gimp-plugin/gimp3/plug-ins/zero123pp/zero123pp
[ -x "$plugin" ] || { echo "gimp3-ui-check: no plug-in at $plugin" >&2; exit 1; }
model=${Z123_MODEL_DIR:-$repo/tests/data/golden/tiny-model}

source "$repo/scripts/lib/virtual-display.sh"
install_missing gimp3-ui-check xvfb x11-utils xdotool imagemagick
profile=$work/gimp3
mkdir -p "$profile/plug-ins/zero123pp" "$repo/docs/images"
cp "$plugin" "$profile/plug-ins/zero123pp/zero123pp"
# Multi-window mode: the image window is a window of its own, its status bar (where GIMP 3 shows
# the plug-in's progress and its Cancel button) along its bottom edge.
echo '(single-window-mode no)' > "$profile/sessionrc"
"$build/tools/zero123pp-sample-image" --size 320 "$work/cube.png"

start_xvfb 70

export GIMP3_DIRECTORY=$profile Z123_MODEL_DIR=$model HOME=$work XDG_CACHE_HOME=$build/tests/gimp3/work/cache
gimp-3.0 --no-splash --console-messages "$work/cube.png" --batch-interpreter=plug-in-script-fu-eval \
  -b "(let* ((image (vector-ref (car (gimp-get-images)) 0))
             (layer (vector-ref (car (gimp-image-get-layers image)) 0)))
        (plug-in-zero123pp #:run-mode RUN-INTERACTIVE #:image image #:drawables (vector layer)))" \
  -b '(gimp-message (string-append "images after the cancel: " (number->string (vector-length (car (gimp-get-images))))))' \
  > "$work/gimp.log" 2>&1 &
gimp_pid=$!
pids+=("$gimp_pid")
fail() {
  echo "gimp3-ui-check: FAIL: $*" >&2
  import -window root "$build/gimp3-ui-check-failed.png" 2> /dev/null || true
  echo "gimp3-ui-check: windows: $(xdotool search --onlyvisible --name . getwindowname %@ 2> /dev/null | tr '\n' '|')" >&2
  cat "$work/gimp.log" >&2
  exit 1
}


dialog=$(wait_window "Zero123\+\+ Novel Views" 240) || fail "no plug-in dialog after 240 s"
# GIMP 3 greets a new profile with its welcome dialog; out of the way.
welcome=$(xdotool search --onlyvisible --name "^Welcome to GIMP" 2> /dev/null | head -n1) || true
[ -z "$welcome" ] || xdotool windowunmap "$welcome"
sleep 2 # let it draw
import -window "$dialog" "$work/dialog.png"
convert "$work/dialog.png" -strip -colors 256 PNG8:"$repo/docs/images/gimp3-dialog.png"
echo "gimp3-ui-check: the dialog opened: docs/images/gimp3-dialog.png"

# No window manager, so no keyboard focus for the dialog: click its OK button (bottom right).
eval "$(xdotool getwindowgeometry --shell "$dialog")"
xdotool mousemove --window "$dialog" $((WIDTH - 50)) $((HEIGHT - 25)) click 1
plugin_pid=""
for _ in $(seq 60); do
  plugin_pid=$(pgrep -f "$profile/plug-ins/zero123pp/zero123pp" | head -n1) && [ -n "$plugin_pid" ] && break
  sleep 0.5
done
[ -n "$plugin_pid" ] || fail "no plug-in process after OK"
xdotool search --onlyvisible --name "Zero123\+\+ Novel Views" > /dev/null 2>&1 && fail "the dialog is still open after OK"
# Into the generation: past loading the model (the tiny model loads in seconds).
sleep "${Z123_CANCEL_AFTER_S:-20}"
kill -0 "$plugin_pid" 2> /dev/null || fail "the plug-in ended before the cancel"
image_window=$(wait_window '^\[cube\]' 30) || fail "no image window"
import -window "$image_window" "$work/progress.png"
convert "$work/progress.png" -strip -colors 256 PNG8:"$repo/docs/images/gimp3-progress.png"
eval "$(xdotool getwindowgeometry --shell "$image_window")"
xdotool mousemove --window "$image_window" $((WIDTH - 50)) $((HEIGHT - 16)) click 1
start=$(date +%s%N)
while kill -0 "$plugin_pid" 2> /dev/null && [ $(($(date +%s%N) - start)) -lt 10000000000 ]; do sleep 0.05; done
gone_ms=$((($(date +%s%N) - start) / 1000000))
kill -0 "$plugin_pid" 2> /dev/null && fail "the plug-in still runs 10 s after Cancel"
[ "$gone_ms" -le 2000 ] || fail "the plug-in took $gone_ms ms to stop"
echo "gimp3-ui-check: the plug-in (pid $plugin_pid) was gone $gone_ms ms after Cancel"
for _ in $(seq 60); do grep -q "images after the cancel" "$work/gimp.log" && break; sleep 0.5; done
kill -0 "$gimp_pid" 2> /dev/null || fail "GIMP is not running any more"
grep -q "images after the cancel: 1" "$work/gimp.log" || fail "a cancelled run left an image (or GIMP did not go on)"
! grep -Eq "crashed|Segmentation|core dumped" "$work/gimp.log" || fail "GIMP's log reports a crash"
grep -E "plug-in|images after the cancel" "$work/gimp.log" | sed 's/^/  gimp: /' || true
echo "gimp3-ui-check: PASS"
