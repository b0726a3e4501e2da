# Sourced (from the repository root) by the bench/gpu_*.sh scripts on the GPU machine: the
# Vulkan loader of .gl, the binaries of .gpu/bin.tar.xz (bench/stage_gpu_bins.sh) in $B with
# their libraries, the official pipeline's Python path (.ref), cache folders, the output folder
# $OUT, the input image $IN, and helpers (stage, make_model, make_golden, with_validation).
OUT=${OUT:-/tmp/z123-out}; mkdir -p "$OUT"
source .gl/vulkan-env.sh >/dev/null 2>&1
[ -d .gpu/bin ] || tar xJf .gpu/bin.tar.xz -C .gpu
B=.gpu/bin
export LD_LIBRARY_PATH="$PWD/$B/lib" PYTHONUNBUFFERED=1 PYTHONPATH=.ref/src:.ref/diffusers-support:tests/reference:.ref
export XDG_CACHE_HOME=/tmp/z123-cache __GL_SHADER_DISK_CACHE_PATH=/tmp/z123-nvcache
IN=tests/data/golden/pipeline_input.png
stage() { echo "=== $1 ($(date +%T))"; }
# The random full-size v1.2 folder the speed runs use, made once per machine.
make_model() { [ -f /tmp/v12/model_index.json ] || $B/zero123pp-bench-make-model /tmp/v12 tests/data/v1.2-configs > /dev/null; }
# The official pipeline's run with recorded noise on a random full-size folder of PyTorch modules
# (/tmp/v12py): the golden (/tmp/e2e) the parity runs compare against (fp32, 28 steps, 640x960).
make_golden() {
  timeout 200 python3 -c "
import full_size_parity as f, pathlib
f.make_model(pathlib.Path('/tmp/v12py'), 0)" 2>&1 | grep -E "wrote|params|Error" | tail -6
  timeout 200 python3 tests/reference/make_pipeline_golden.py /tmp/e2e --model /tmp/v12py --steps 28 \
      --width 640 --height 960 --device cuda --no-cross-check > "$OUT/golden.log" 2>&1
  tail -3 "$OUT/golden.log"
}
# Runs "$@" with Debian 13's Vulkan validation layer (carried in .gl-val) enabled.
with_validation() {
  [ -d /tmp/vl/usr ] || { mkdir -p /tmp/vl && for f in .gl-val/*.deb; do dpkg -x "$f" /tmp/vl; done; }
  VK_ADD_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d \
    LD_LIBRARY_PATH="/tmp/vl/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH" "$@"
}
