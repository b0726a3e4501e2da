#!/usr/bin/env bash
# videotestsrc in, numbered PNGs out: the pipeline without any input file. LIVE=1 makes the test
# source live (frames dropped while busy, reported by -m as QoS messages).
#   pipelines/test-source.sh [FRAMES=2] [OUTDIR=test-views]
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/common.sh"
frames="${1:-2}"
outdir="${2:-test-views}"
live=false
[ "${LIVE:-0}" = 1 ] && live=true
mkdir -p "$outdir"
gst-launch-1.0 -e -m videotestsrc num-buffers="$frames" is-live="$live" pattern=ball ! \
  video/x-raw,width=320,height=320,framerate=5/1 ! videoconvert ! "${Z123_ELEMENT[@]}" ! videoconvert ! pngenc ! \
  multifilesink location="$outdir/test-%02d.png" |
  grep -E "zero123pp-progress|qos|ERROR|EOS" || true
echo "wrote $(find "$outdir" -name 'test-*.png' | wc -l) file(s) in $outdir"
