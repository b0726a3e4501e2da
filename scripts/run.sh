#!/usr/bin/env bash
# The main job: installs what is missing, builds (tools and the GStreamer plugin), lists the
# Vulkan devices, inspects the model folder ($Z123_MODEL_DIR, else models/zero123plus-v1.2, else
# the bundled tiny test model), renders a sample input (a lit cube) and turns it into a frame of
# six views through the real GStreamer pipeline of pipelines/image-to-png.sh (filesrc ! decodebin !
# videoconvert ! zero123pp ! videoconvert ! pngenc ! filesink): output/sample_views.png, 640x960
# with the real weights. The six views are also cut out of that frame into output/views/.
# Z123_DEVICE picks the Vulkan device (index or name substring).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export Z123_BUILD_DIR=${Z123_BUILD_DIR:-build}
scripts/build.sh -DZ123_BUILD_TESTS=OFF -DZ123_BUILD_GST=ON
bin="$Z123_BUILD_DIR/tools"
# This build's plugin first, whatever else GST_PLUGIN_PATH holds.
GST_PLUGIN_PATH="$(cd "$Z123_BUILD_DIR" && pwd)/gst-plugin${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
export GST_PLUGIN_PATH
echo "== Vulkan devices"
"$bin/zero123pp-devices"

model=${Z123_MODEL_DIR:-models/zero123plus-v1.2}
if [ -f "$model/model_index.json" ]; then
  what="640x960, six 320x320 views, 28 steps"
else
  echo "== No real weights at $model (scripts/download-weights.sh fetches them; Z123_MODEL_DIR points elsewhere):"
  model="tests/data/golden/tiny-model"
  what="640x960, six 320x320 views, 1 step"
  echo "   using the bundled TINY TEST MODEL (random weights: the views are noise; one step, for a quick"
  echo "   check of the whole pipeline at the real output size) at $model"
  # The pipeline scripts default to view-size 64 for the tiny model; the main job keeps the
  # product's 640x960 frame (a few minutes on a CPU device).
  export Z123_GST_OPTS="view-size=320 ${Z123_GST_OPTS:-}"
fi
echo "== Model folder $model"
"$bin/zero123pp-inspect" "$model"

rm -rf output/views # views of an earlier run would otherwise mix with this run's
mkdir -p output/views
echo "== Sample input: output/sample_input.png (a lit cube on a transparent background, zero123pp-sample-image)"
"$bin/zero123pp-sample-image" --size 512 output/sample_input.png
echo "== Six views through GStreamer (pipelines/image-to-png.sh; $what)"
# The pipeline scripts pick the model the same way (real weights, else the tiny model).
pipelines/image-to-png.sh output/sample_input.png output/sample_views.png

echo "== The six views cut out of output/sample_views.png into output/views/ (no second generation)"
# shellcheck source=pipelines/crop-branches.sh
source pipelines/crop-branches.sh
# The view size is half the frame's width (PNG header: width at byte 16, 4 bytes big-endian).
width=$(od -An -tu1 -j16 -N4 output/sample_views.png | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
z123_branches=()
z123_crop_branches t output/views $((width / 2))
gst-launch-1.0 -q filesrc location=output/sample_views.png ! pngdec ! videoconvert ! tee name=t "${z123_branches[@]}"
echo "== Wrote output/sample_input.png, output/sample_views.png ($what) and output/views/view0..5.png"
echo "   (view i: azimuth 30 + 60*i degrees from the input, elevation 20 / -10 degrees alternating)"
