#!/usr/bin/env bash
# Fails unless the build folder $1 embeds the bench-only shader variants that the GPU sweeps pick
# (Z123_GEMM_TILE, Z123_ATTN_CM2_ROWS; docs/tuning.md). Called by the scripts that pack binaries
# for the GPU machine, so a sweep does not find out there.
set -euo pipefail
build=$1
if ! grep -q '^Z123_BENCH_VARIANTS:BOOL=ON$' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "$build leaves out the bench-only shader variants the GPU sweeps pick;" \
       "reconfigure it with: cmake $build -DZ123_BENCH_VARIANTS=ON (then build)" >&2
  exit 1
fi
