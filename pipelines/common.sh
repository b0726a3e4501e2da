# shellcheck shell=bash
# Sourced by the pipeline scripts: points GStreamer at this tree's plugin, picks the model (the
# real v1.2 weights when present, else the bundled tiny test model, announced as such) and the
# element options. Environment:
#   Z123_BUILD_DIR   build folder holding gst-plugin/ (default: build)
#   Z123_MODEL_DIR   model folder (default: models/zero123plus-v1.2)
#   Z123_DEVICE      Vulkan device: index or name substring (default: the best one)
#   Z123_GST_OPTS    extra element properties, e.g. "steps=15 seed=3 tiling=3x2"
set -euo pipefail
Z123_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
Z123_BUILD_DIR="${Z123_BUILD_DIR:-$Z123_ROOT/build}"
export GST_PLUGIN_PATH="${GST_PLUGIN_PATH:-$Z123_BUILD_DIR/gst-plugin}"

if ! gst-inspect-1.0 zero123pp >/dev/null 2>&1; then
  echo "error: the zero123pp element was not found in GST_PLUGIN_PATH=$GST_PLUGIN_PATH;" >&2
  echo "       build it first (scripts/build.sh) or set Z123_BUILD_DIR." >&2
  exit 1
fi

Z123_MODEL="${Z123_MODEL_DIR:-$Z123_ROOT/models/zero123plus-v1.2}"
Z123_VIEW_SIZE=320
z123_extra=()
if [ ! -f "$Z123_MODEL/model_index.json" ]; then
  echo "NOTE: no Zero123++ v1.2 weights at $Z123_MODEL;" >&2
  echo "      using the bundled TINY TEST MODEL (random weights: the views are noise, for plumbing only)." >&2
  Z123_MODEL="$Z123_ROOT/tests/data/golden/tiny-model"
  # Small views and one step keep it to seconds per frame even on a CPU device.
  Z123_VIEW_SIZE=64
  z123_extra=(steps=1)
fi
# Options after the defaults win (gst-launch applies properties in order).
Z123_ELEMENT=(zero123pp "model=$Z123_MODEL" "view-size=$Z123_VIEW_SIZE" "${z123_extra[@]}")
[ -n "${Z123_DEVICE:-}" ] && Z123_ELEMENT+=("device=$Z123_DEVICE")
# shellcheck disable=SC2206 # Z123_GST_OPTS is a list of key=value words on purpose
Z123_ELEMENT+=(${Z123_GST_OPTS:-})
# The view size actually used (Z123_GST_OPTS may change it), for scripts that crop the views.
for z123_opt in ${Z123_GST_OPTS:-}; do
  case "$z123_opt" in view-size=*) Z123_VIEW_SIZE="${z123_opt#view-size=}" ;; esac
done

# shellcheck source=pipelines/crop-branches.sh
source "$Z123_ROOT/pipelines/crop-branches.sh"
