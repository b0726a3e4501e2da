#!/usr/bin/env bash
# Runs the GPU-machine measurements in one go (see bench/NOTES.md). Usage on the device machine,
# from the repository root with .gl, .ref and .gpu carried (binaries built here and copied to
# .gpu/bin by `bench/gpu_run.sh --stage-binaries`):
#   bench/gpu_run.sh kernels   # PyTorch ceilings, kernel benchmark, kernel tests on the GPU
#   bench/gpu_run.sh e2e       # bench/gpu_final.sh check: end-to-end parity (injected noise),
#                              # kernel benchmark vs profile, kernel tests with validation
#   bench/gpu_run.sh profile   # random full-size v1.2 folder; our engine's timing, then one image
#                              # with Z123_PROFILE=1 (per-kernel GPU time table)
# Outputs go to $OUT (default /tmp/z123-out).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--stage-binaries" ]; then
  bash bench/require_bench_variants.sh "${Z123_BUILD_DIR:-build}" || exit 1
  mkdir -p .gpu/bin
  for b in bench/zero123pp-bench-kernels bench/zero123pp-bench-e2e bench/zero123pp-bench-nets \
           tests/kernels/test_kernels tools/zero123pp-devices; do
    strip -o ".gpu/bin/$(basename "$b")" "${Z123_BUILD_DIR:-build}/$b"
  done
  du -sh .gpu/bin
  exit 0
fi
OUT=${OUT:-/tmp/z123-out}
mkdir -p "$OUT"
source .gl/vulkan-env.sh >/dev/null 2>&1
# libpng/libjpeg of the build machine travel with the binaries (the GPU machine lacks them).
export LD_LIBRARY_PATH="$PWD/.gpu/bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1 PYTHONPATH=.ref/src:.ref/diffusers-support:tests/reference:.ref
export XDG_CACHE_HOME=/tmp/z123-cache
stage() { echo "=== $1 ($(date +%T))"; }
case "${1:-}" in
kernels)
  stage devices; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; .gpu/bin/zero123pp-devices
  stage "pytorch ceilings"; timeout 120 python3 bench/torch_ceilings.py "$OUT/ceilings.json" > "$OUT/ceilings.log" 2>&1
  tail -3 "$OUT/ceilings.log"
  stage "kernel benchmark"
  timeout 150 .gpu/bin/zero123pp-bench-kernels --ceilings "$OUT/ceilings.json" --markdown "$OUT/kernels.md" --reps 10
  stage "kernel tests on the GPU"
  Z123_TEST_DEVICE=NVIDIA timeout 200 .gpu/bin/test_kernels > "$OUT/kernel_tests.txt" 2>&1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" "$OUT/kernel_tests.txt" | head -20
  ;;
e2e) # the official pipeline's timing and the end-to-end parity: bench/gpu_final.sh
  exec bash bench/gpu_final.sh check
  ;;
profile)
  stage "random full-size v1.2 folder"
  timeout 200 python3 -c "
import full_size_parity as f, pathlib
f.make_model(pathlib.Path('/tmp/v12'), 0)" 2>&1 | grep -E "wrote|params|Error" | tail -6
  stage "our engine: timing (fp16)"
  timeout 150 .gpu/bin/zero123pp-bench-e2e /tmp/v12 tests/data/golden/pipeline_input.png --runs 4 | tee "$OUT/ours_f16.txt"
  stage "our engine: one image with Z123_PROFILE=1"
  Z123_PROFILE=1 timeout 150 .gpu/bin/zero123pp-bench-e2e /tmp/v12 tests/data/golden/pipeline_input.png --runs 1 \
      > "$OUT/profile.txt" 2>&1
  head -60 "$OUT/profile.txt"
  ;;
*) echo "usage: bench/gpu_run.sh kernels|e2e|profile|--stage-binaries"; exit 2 ;;
esac
