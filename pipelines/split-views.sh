#!/usr/bin/env bash
# One image in, the six views as six PNG files out, split with standard elements: a tee with one
# videocrop branch per view (view i sits at column i % 2, row i / 2 of the 2x3 frame).
#   pipelines/split-views.sh INPUT [OUTDIR=views]      -> OUTDIR/view0.png .. view5.png
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/common.sh"
[ $# -ge 1 ] || { echo "usage: $0 INPUT [OUTDIR]" >&2; exit 2; }
in="$1"
outdir="${2:-views}"
mkdir -p "$outdir"
z123_branches=()
z123_crop_branches t "$outdir" "$Z123_VIEW_SIZE"
gst-launch-1.0 -e filesrc location="$in" ! decodebin ! videoconvert ! "${Z123_ELEMENT[@]}" tiling=2x3 ! \
  tee name=t "${z123_branches[@]}"
echo "wrote $outdir/view0.png .. view5.png"
