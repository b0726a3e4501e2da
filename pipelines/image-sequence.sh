#!/usr/bin/env bash
# A numbered image sequence in, numbered PNGs of six views out, one per input image; every image
# is processed (a file source is not live, so nothing is dropped). The model loads once.
#   pipelines/image-sequence.sh 'frames/%04d.png' OUTDIR [START_INDEX]
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/common.sh"
[ $# -ge 2 ] || { echo "usage: $0 INPUT_PATTERN OUTDIR [START_INDEX]   (pattern like frames/%04d.png)" >&2; exit 2; }
pattern="$1"
outdir="$2"
start="${3:-0}"
case "${pattern,,}" in
*.jpg | *.jpeg) caps="image/jpeg,framerate=1/1" ;;
*) caps="image/png,framerate=1/1" ;;
esac
mkdir -p "$outdir"
gst-launch-1.0 -e multifilesrc location="$pattern" index="$start" caps="$caps" ! decodebin ! videoconvert ! \
  "${Z123_ELEMENT[@]}" ! videoconvert ! pngenc ! multifilesink location="$outdir/views-%04d.png" index="$start"
echo "wrote $outdir/views-*.png"
