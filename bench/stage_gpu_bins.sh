#!/usr/bin/env bash
# Packs the programs the GPU-machine scripts (bench/gpu_*.sh) run into .gpu/bin.tar.xz: this
# build's benchmarks, kernel and runtime tests, the CLI and the device lister, each one
# stripped, with the two image libraries the GPU machine lacks (libpng16, libjpeg) in lib/.
# The tree travels with each run, 64 MiB at most: xz shrinks the SPIR-V-heavy binaries ~20x.
# The build must embed the bench-only shader variants that the sweeps pick (docs/tuning.md):
#   Z123_BUILD_DIR=build-test scripts/build.sh -DZ123_BUILD_TESTS=ON -DZ123_BENCH_VARIANTS=ON
#   Z123_BUILD_DIR=build-test bench/stage_gpu_bins.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${Z123_BUILD_DIR:-build-test}
bench/require_bench_variants.sh "$BUILD"
rm -rf .gpu/bin && mkdir -p .gpu/bin/lib
for f in bench/zero123pp-bench-e2e bench/zero123pp-bench-make-model bench/zero123pp-bench-kernels \
         bench/zero123pp-bench-soak bench/zero123pp-bench-nets bench/zero123pp-bench-mma-ceiling bench/zero123pp-bench-attn-ceiling \
         tests/kernels/test_kernels tests/vk/test_vk_runtime tools/zero123pp tools/zero123pp-devices; do
  strip -o ".gpu/bin/$(basename "$f")" "$BUILD/$f"
done
for lib in libpng16.so.16 libjpeg.so.62; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" .gpu/bin/lib/
done
tar cJf .gpu/bin.tar.xz -C .gpu bin
rm -rf .gpu/bin
ls -l .gpu/bin.tar.xz
