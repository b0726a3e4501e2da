#!/usr/bin/env bash
# The main job: installs what is missing, builds, lists the Vulkan devices, inspects the model
# folder ($Z123_MODEL_DIR, else models/zero123plus-v1.2, else the bundled tiny test model) and
# turns a sample image into a 640x960 frame of six views: output/sample_views.png (plus the six
# views and their camera poses in output/views/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export Z123_BUILD_DIR=${Z123_BUILD_DIR:-build}
scripts/build.sh -DZ123_BUILD_TESTS=OFF
bin="$Z123_BUILD_DIR/tools"
echo "== Vulkan devices"
"$bin/zero123pp-devices"
model=${Z123_MODEL_DIR:-models/zero123plus-v1.2}
steps=28
if [ ! -f "$model/model_index.json" ]; then
  model="tests/data/golden/tiny-model"
  steps=1
  echo "== No real weights at \${Z123_MODEL_DIR:-models/zero123plus-v1.2}:"
  echo "   using the bundled TINY TEST MODEL (random weights: the views are noise; one step, for a"
  echo "   quick check of the whole pipeline) at $model"
fi
echo "== Model folder $model"
"$bin/zero123pp-inspect" "$model"
echo "== Six views of tests/data/golden/pipeline_input.png ($steps steps)"
mkdir -p output
"$bin/zero123pp" --model "$model" --steps "$steps" --views-dir output/views \
  tests/data/golden/pipeline_input.png output/sample_views.png
echo "== Wrote output/sample_views.png (640x960) and output/views/"
