#!/usr/bin/env bash
# A camera (v4l2src) in, a window of six views out. The camera is live: while a frame generates,
# newer frames replace the waiting one (drop-policy=keep-newest) and each drop is reported as a
# QoS message; the sink does not sync, since each result is seconds behind its capture time.
#   pipelines/webcam.sh [/dev/video0]
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/common.sh"
device="${1:-/dev/video0}"
gst-launch-1.0 v4l2src device="$device" ! videoconvert ! "${Z123_ELEMENT[@]}" ! videoconvert ! \
  autovideosink sync=false
