#!/usr/bin/env bash
# The GIMP 3 plug-in, driven the way a batch user drives it: gimp-console-3.0 runs Script-Fu that
# calls plug-in-zero123pp non-interactively (tests/gimp3/CMakeLists.txt registers both modes).
#
#   views:          loads the sample cube (zero123pp-sample-image), runs the plug-in with the tiny
#                   test model (1 step, seed 7, six layers), exports each layer to PNG and compares
#                   its pixels byte for byte with the views `zero123pp --views-dir` writes for the
#                   same input, seed and device, then again as a 2x3 grid, which must equal the
#                   CLI's grid file; the poses parasite must equal the CLI's
#                   <name>_views.json byte for byte, and the layers must be named as the core names
#                   them.
#   missing-model:  the plug-in with a model folder that does not exist must fail cleanly (GIMP
#                   reports the procedure's error, nothing crashed) with the words the command line
#                   prints for the same folder.
#
# GIMP runs with its own profile folder (GIMP3_DIRECTORY) under WORK, with the plug-in copied into
# its plug-ins/zero123pp/ (GIMP 3 runs plug-ins/<name>/<name>), so nothing of the user's GIMP is
# read or written. Z123_TEST_DEVICE picks the Vulkan device of both programs (default llvmpipe).
#
# Usage: test_gimp3.sh MODE GIMP_CONSOLE PLUGIN CLI SAMPLE_TOOL COMPARE_TOOL MODEL_DIR WORK
set -euo pipefail

if [ $# -ne 8 ]; then
  echo "usage: $0 views|missing-model GIMP_CONSOLE PLUGIN CLI SAMPLE_TOOL COMPARE_TOOL MODEL_DIR WORK" >&2
  exit 2
fi
mode=$1 gimp=$2 plugin=$3 cli=$4 sample=$5 compare=$6 model=$7 work_root=$8
device=${Z123_TEST_DEVICE:-llvmpipe}
seed=7
steps=1

work="$work_root/$mode"
rm -rf "$work"
mkdir -p "$work/home" "$work/cli" "$work/gimp"
# The pipeline cache is shared by the CLI and the plug-in (and kept between runs): the second
# program does not compile the kernels again.
export XDG_CACHE_HOME="$work_root/cache" HOME="$work/home" GIMP3_DIRECTORY="$work/gimp-profile"
mkdir -p "$GIMP3_DIRECTORY/plug-ins/zero123pp"
cp "$plugin" "$GIMP3_DIRECTORY/plug-ins/zero123pp/zero123pp"

log() { echo "test_gimp3[$mode]: $*"; }
fail() { echo "test_gimp3[$mode]: FAIL: $*"; exit 1; }
t0=$(date +%s)
elapsed() { echo "$(($(date +%s) - t0)) s"; }

"$sample" "$work/cube.png"
log "input: $work/cube.png (zero123pp-sample-image); GIMP: $("$gimp" --version); device $device"

# Runs Script-Fu ($1, a file) in gimp-console-3.0; its output goes to $2. Returns GIMP's status.
run_gimp() {
  local status=0
  # --no-interface: no display needed. (--no-data leaves GIMP without a context: criticals.)
  timeout 1500 "$gimp" --no-interface --batch-interpreter=plug-in-script-fu-eval \
    -b "$(cat "$1")" --quit > "$2" 2>&1 || status=$?
  return $status
}

case "$mode" in
views)
  t=$(date +%s)
  "$cli" --model "$model" --device "$device" --steps "$steps" --seed "$seed" --quiet \
    --views-dir "$work/cli" "$work/cube.png" "$work/cli/cube.png"
  log "CLI: wrote $(cd "$work/cli" && echo *) in $(($(date +%s) - t)) s"

  # GIMP 3.0's gimp-file-load leaves the image untitled (no imported file, unlike File > Open), and
  # the plug-in names the views in the poses after the image's file ("untitled" without one): the
  # image gets the file name a saved XCF would have, so the poses must be the CLI's to the byte.
  cat > "$work/run.scm" <<EOF
(let* ((img (car (gimp-file-load RUN-NONINTERACTIVE "$work/cube.png")))
       (named (gimp-image-set-file img "$work/cube.xcf"))
       (layer (vector-ref (car (gimp-image-get-layers img)) 0))
       (out (car (plug-in-zero123pp #:run-mode RUN-NONINTERACTIVE #:image img #:drawables (vector layer)
                                    #:model-dir "$model" #:steps $steps #:guidance 4.0 #:seed $seed
                                    #:output-mode "layers" #:device "$device")))
       (views (car (gimp-image-get-layers out)))
       (names (open-output-file "$work/gimp/layers.txt"))
       (i 0))
  (display (string-append "plug-in returned an image of " (number->string (vector-length views)) " layers"))
  (newline)
  (display (string-append "selected layer: "
                          (car (gimp-item-get-name (vector-ref (car (gimp-image-get-selected-layers out)) 0)))))
  (newline)
  (while (< i (vector-length views))
    (let* ((one (car (gimp-image-new 320 320 RGB)))
           (copy (car (gimp-layer-new-from-drawable (vector-ref views i) one))))
      (gimp-image-insert-layer one copy 0 0)
      (file-png-export #:run-mode RUN-NONINTERACTIVE #:image one
                       #:file (string-append "$work/gimp/cube_view" (number->string i) ".png")
                       #:save-transparent TRUE #:bkgd FALSE #:phys FALSE #:time FALSE
                       #:include-thumbnail FALSE #:compression 1)
      (display (car (gimp-item-get-name (vector-ref views i))) names)
      (newline names)
      (gimp-image-delete one))
    (set! i (+ i 1)))
  (close-output-port names)
  (let ((poses (open-output-file "$work/gimp/cube_views.json")))
    (display (caddr (car (gimp-image-get-parasite out "zero123pp-poses"))) poses)
    (close-output-port poses))
  (gimp-image-delete out)
  ; The grid form: one 640x960 layer, the CLI's grid file.
  (let ((grid (car (plug-in-zero123pp #:run-mode RUN-NONINTERACTIVE #:image img #:drawables (vector layer)
                                      #:model-dir "$model" #:steps $steps #:seed $seed
                                      #:output-mode "grid-2x3" #:device "$device"))))
    (display (string-append "grid: " (number->string (car (gimp-image-get-width grid))) "x"
                            (number->string (car (gimp-image-get-height grid))) ", "
                            (number->string (vector-length (car (gimp-image-get-layers grid)))) " layer"))
    (newline)
    (file-png-export #:run-mode RUN-NONINTERACTIVE #:image grid #:file "$work/gimp/cube.png"
                     #:save-transparent TRUE #:bkgd FALSE #:phys FALSE #:time FALSE
                     #:include-thumbnail FALSE #:compression 1)
    (gimp-image-delete grid))
  (gimp-image-delete img))
EOF
  t=$(date +%s)
  status=0
  run_gimp "$work/run.scm" "$work/gimp.log" || status=$?
  sed 's/^/  gimp| /' "$work/gimp.log"
  log "GIMP: exit $status in $(($(date +%s) - t)) s"
  [ "$status" -eq 0 ] || fail "gimp-console-3.0 exited with $status"
  grep -q "batch command executed successfully" "$work/gimp.log" || fail "the batch command did not succeed"
  grep -q "plug-in returned an image of 6 layers" "$work/gimp.log" || fail "the plug-in did not return six layers"
  grep -q "selected layer: View 1:" "$work/gimp.log" || fail "view 1 is not the selected layer"
  grep -q "grid: 640x960, 1 layer" "$work/gimp.log" || fail "the grid-2x3 output is not one 640x960 layer"

  for i in 0 1 2 3 4 5; do
    "$compare" "$work/gimp/cube_view$i.png" "$work/cli/cube_view$i.png" \
      || fail "view $i: the plug-in's pixels differ from the CLI's"
  done
  "$compare" "$work/gimp/cube.png" "$work/cli/cube.png" || fail "the grid-2x3 output differs from the CLI's grid"
  cmp "$work/gimp/cube_views.json" "$work/cli/cube_views.json" \
    || fail "the poses parasite differs from the CLI's cube_views.json"
  log "poses parasite zero123pp-poses = CLI's cube_views.json, byte for byte ($(wc -c < "$work/cli/cube_views.json") bytes)"
  log "layer names: $(paste -sd '|' "$work/gimp/layers.txt")"
  [ "$(wc -l < "$work/gimp/layers.txt")" -eq 6 ] || fail "expected six layer names"
  grep -q "azimuth 30" "$work/gimp/layers.txt" || fail "the first layer is not named by its azimuth"
  log "PASS: six layers byte-identical to zero123pp --views-dir and the 2x3 grid to its grid (seed $seed," \
      "$steps step), in $(elapsed)"
  ;;

missing-model)
  missing="$work/no-such-model"
  status=0
  "$cli" --model "$missing" --device "$device" --steps 1 --quiet "$work/cube.png" "$work/cli/out.png" \
    2> "$work/cli.err" || status=$?
  [ "$status" -eq 4 ] || fail "the CLI exited with $status, expected 4 (bad model): $(cat "$work/cli.err")"
  words=$(head -n1 "$work/cli.err" | sed 's/^zero123pp: //')
  log "CLI (exit 4): $(head -n1 "$work/cli.err")"

  cat > "$work/run.scm" <<EOF
(let* ((img (car (gimp-file-load RUN-NONINTERACTIVE "$work/cube.png")))
       (layer (vector-ref (car (gimp-image-get-layers img)) 0)))
  (plug-in-zero123pp #:run-mode RUN-NONINTERACTIVE #:image img #:drawables (vector layer)
                     #:model-dir "$missing" #:steps 1 #:seed $seed #:device "$device"))
EOF
  status=0
  run_gimp "$work/run.scm" "$work/gimp.log" || status=$?
  sed 's/^/  gimp| /' "$work/gimp.log"
  log "GIMP: exit $status"
  [ "$status" -ne 124 ] || fail "gimp-console-3.0 did not finish"
  grep -qiE "crash|segmentation|abort" "$work/gimp.log" && fail "the plug-in crashed"
  grep -q "batch command executed successfully" "$work/gimp.log" && fail "the call succeeded"
  grep -qF "Zero123++: $words" "$work/gimp.log" || fail "GIMP's output lacks the CLI's words: 'Zero123++: $words'"
  [ -z "$(ls -A "$work/cli")" ] || fail "the CLI left files"
  log "PASS: clean failure with the CLI's words ('$words'), in $(elapsed)"
  ;;

*)
  echo "test_gimp3: unknown mode $mode" >&2
  exit 2
  ;;
esac
