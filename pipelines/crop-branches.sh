# shellcheck shell=bash
# Sourced by split-views.sh and scripts/run.sh.

# z123_crop_branches TEE OUTDIR VIEW_SIZE: appends to the array z123_branches one gst-launch
# branch per view, `TEE. ! queue ! videocrop ! videoconvert ! pngenc ! filesink
# location=OUTDIR/view<i>.png`, cutting the views out of a 2x3 frame of VIEW_SIZE-pixel views
# (view i sits at column i % 2, row i / 2).
z123_crop_branches() {
  local tee="$1" outdir="$2" v="$3" i col row
  local w=$((2 * v)) h=$((3 * v))
  for i in 0 1 2 3 4 5; do
    col=$((i % 2))
    row=$((i / 2))
    z123_branches+=("$tee". ! queue ! videocrop left=$((col * v)) right=$((w - (col + 1) * v)) top=$((row * v))
      bottom=$((h - (row + 1) * v)) ! videoconvert ! pngenc ! filesink location="$outdir/view$i.png")
  done
}
