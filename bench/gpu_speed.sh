#!/usr/bin/env bash
# Speed run on the GPU machine (binaries in .gpu/bin.tar.xz, carried with .gl):
#   open cold/warm (bench/gpu_open.sh), end to end with the automatic tiles and with
#   Z123_GEMM_TILE=default, one profiled image, the kernel benchmark checked against that
#   profile, and the kernel tests of the GEMM family on the GPU. Outputs in $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/z123-out}; mkdir -p "$OUT"
bash bench/gpu_open.sh "${1:-speed}"
B=.gpu/bin
export LD_LIBRARY_PATH="$PWD/$B/lib" XDG_CACHE_HOME=/tmp/c-${1:-speed} __GL_SHADER_DISK_CACHE_PATH=/tmp/nv-${1:-speed}
IN=tests/data/golden/pipeline_input.png
stage() { echo "=== $1 ($(date +%T))"; }
stage "e2e, Z123_GEMM_TILE=default (128-wide tiles everywhere)"
Z123_GEMM_TILE=default timeout 120 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 3 2>&1 | grep -E "^image|peak" | tee "$OUT/e2e-tile-default.txt"
stage "e2e, automatic tiles"
timeout 120 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 3 2>&1 | grep -E "^image" | tee "$OUT/e2e-auto.txt"
stage "profile"
Z123_PROFILE=1 timeout 120 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 1 > "$OUT/profile.txt" 2>&1
head -45 "$OUT/profile.txt"
stage "kernel benchmark vs the profile"
timeout 240 $B/zero123pp-bench-kernels --profile "$OUT/profile.txt" --markdown "$OUT/kernels.md" > "$OUT/kernels.txt" 2>&1
echo "bench-kernels rc=$?"; grep -v "dispatch:" "$OUT/kernels.txt"
stage "kernel tests (GEMM family) on the GPU"
Z123_TEST_DEVICE=NVIDIA timeout 200 $B/test_kernels --gtest_filter='*Linear*:*Conv2d*:*Gemm*' > "$OUT/kernel-tests.txt" 2>&1
echo "test_kernels rc=$?"; grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED  \]" "$OUT/kernel-tests.txt" | head -20
