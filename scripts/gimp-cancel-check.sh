#!/usr/bin/env bash
# Checks cancelling the GIMP 2.10 plug-in from GIMP's own progress UI, in a real GIMP on a virtual
# X display (Xvfb): a batch command runs plug-in-zero123pp with many steps, GIMP shows its progress
# dialog (a batch-started run has no image window of its own) with a Cancel button; once the
# plug-in is generating, the script clicks Cancel and checks that
#   - the plug-in process is gone within 2 s (GIMP 2.10 closes a cancelled plug-in: GP_QUIT, then
#     SIGKILL after 10 ms; gimp_plug_in_close),
#   - GIMP itself keeps running and runs the next batch command, which reports the number of open
#     images: still 1 (the input), so no half-made image was left,
#   - GIMP's log has no crash report.
# Not part of CI (it needs a display). Installs Xvfb, xdotool and xdpyinfo with apt-get if missing.
# Usage: scripts/gimp-cancel-check.sh [BUILD_DIR]     (default build/, or $Z123_BUILD_DIR)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${Z123_BUILD_DIR:-build}}
case "$build" in /*) ;; *) build=$repo/$build ;; esac
plugin=$build/gimp-plugin/gimp2/plug-ins/zero123pp/zero123pp
[ -x "$plugin" ] || { echo "gimp-cancel-check: no plug-in at $plugin" >&2; exit 1; }
model=${Z123_MODEL_DIR:-$repo/tests/data/golden/tiny-model}

source "$repo/scripts/lib/virtual-display.sh"
install_missing gimp-cancel-check xvfb x11-utils xdotool gtk2-engines-pixbuf
mkdir -p "$work/gimp2/plug-ins/zero123pp"
for data in brushes gradients patterns palettes tool-presets; do mkdir -p "$work/gimp2/$data"; done
ln -s "$plugin" "$work/gimp2/plug-ins/zero123pp/zero123pp"
"$build/tools/zero123pp-sample-image" "$work/cube.png"

start_xvfb 80

# 200 steps: far longer than the check takes. -c: messages to the console (the log).
GIMP2_DIRECTORY=$work/gimp2 gimp-2.10 --verbose -c -n -s -d -f "$work/cube.png" \
  -b "(let* ((image (aref (cadr (gimp-image-list)) 0)))
        (plug-in-zero123pp RUN-NONINTERACTIVE image (car (gimp-image-get-active-drawable image)) \"$model\" 200 4.0 7 0))" \
  -b '(gimp-message (string-append "images after the cancel: " (number->string (car (gimp-image-list)))))' \
  > "$work/gimp.log" 2>&1 &
gimp_pid=$!
pids+=($gimp_pid)
fail() { echo "gimp-cancel-check: FAIL: $*" >&2; cat "$work/gimp.log" >&2; exit 1; }

progress=""
for _ in $(seq 240); do
  progress=$(xdotool search --onlyvisible --name '^Progress$' 2> /dev/null | tail -n1) && [ -n "$progress" ] && break
  sleep 0.5
done
[ -n "$progress" ] || fail "no progress dialog after 120 s"
plugin_pid=$(pgrep -f "$work/gimp2/plug-ins/zero123pp/zero123pp" | head -n1) || fail "no plug-in process"
# Into the generation: past loading the model (the tiny model loads in about a second).
sleep "${Z123_CANCEL_AFTER_S:-15}"
kill -0 "$plugin_pid" 2> /dev/null || fail "the plug-in ended before the cancel"
eval "$(xdotool getwindowgeometry --shell "$progress")"
xdotool mousemove --window "$progress" $((WIDTH - 55)) $((HEIGHT - 27)) click 1
start=$(date +%s%N)
while kill -0 "$plugin_pid" 2> /dev/null && [ $(($(date +%s%N) - start)) -lt 10000000000 ]; do sleep 0.05; done
gone_ms=$((($(date +%s%N) - start) / 1000000))
kill -0 "$plugin_pid" 2> /dev/null && fail "the plug-in still runs 10 s after Cancel"
[ "$gone_ms" -le 2000 ] || fail "the plug-in took $gone_ms ms to stop"
echo "gimp-cancel-check: the plug-in (pid $plugin_pid) was gone $gone_ms ms after Cancel"
for _ in $(seq 60); do grep -q "images after the cancel" "$work/gimp.log" && break; sleep 0.5; done
kill -0 "$gimp_pid" 2> /dev/null || fail "GIMP is not running any more"
grep -q "images after the cancel: 1" "$work/gimp.log" || fail "a cancelled run left an image (or GIMP did not go on)"
! grep -Eq "crashed|Segmentation|core dumped|wire_read" "$work/gimp.log" || fail "GIMP's log reports a crash"
grep -E "Terminating plug-in|images after the cancel" "$work/gimp.log" | sed 's/^/  gimp: /'
echo "gimp-cancel-check: PASS"
