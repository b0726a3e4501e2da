#!/usr/bin/env bash
# One image (PNG or JPEG) in, one PNG of the six views out (2 columns x 3 rows).
#   pipelines/image-to-png.sh INPUT [OUTPUT.png]      (default output: views.png)
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/common.sh"
[ $# -ge 1 ] || { echo "usage: $0 INPUT [OUTPUT.png]" >&2; exit 2; }
in="$1"
out="${2:-views.png}"
gst-launch-1.0 -e filesrc location="$in" ! decodebin ! videoconvert ! "${Z123_ELEMENT[@]}" ! \
  videoconvert ! pngenc ! filesink location="$out"
echo "wrote $out"
