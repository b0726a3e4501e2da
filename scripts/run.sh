#!/usr/bin/env bash
# The main job: installs what is missing, builds, lists the Vulkan devices and inspects a model
# folder: $Z123_MODEL_DIR, else models/zero123plus-v1.2, else a tiny synthetic model generated here.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export Z123_BUILD_DIR=${Z123_BUILD_DIR:-build}
scripts/build.sh -DZ123_BUILD_TESTS=OFF
bin="$Z123_BUILD_DIR/tools"
echo "== Vulkan devices"
"$bin/zero123pp-devices"
model=${Z123_MODEL_DIR:-models/zero123plus-v1.2}
if [ ! -f "$model/model_index.json" ]; then
  model="tests/data/golden/tiny-model"
  echo "== No real weights at \${Z123_MODEL_DIR:-models/zero123plus-v1.2}:"
  echo "   using the bundled TINY TEST MODEL (random weights, for testing only) at $model"
fi
echo "== Model folder $model"
"$bin/zero123pp-inspect" "$model"
