#!/usr/bin/env bash
# Kernel-configuration sweeps on the GPU machine (bench/NOTES.md session 4). Each argument is
# NAME[,VAR=VALUE...]: for each, the warm end-to-end time (3 images) and a per-kernel profile of
# one image with those environment variables set, then the GEMM/conv kernel tests of the paths
# in $TEST_PATHS (default "khrcoopmat nvcoopmat2") under each configuration, against the float64
# references, with Debian 13's Vulkan validation layer (.gl-val). Carry .gl, .gl-val and .gpu
# (bin.tar.xz: zero123pp-bench-e2e, zero123pp-bench-make-model, test_kernels and lib/).
# Everything lands in $OUT/sweep.tar.xz (the device tool returns few files).
#   bench/gpu_sweep.sh default tile-n160,Z123_GEMM_TILE=n160 cm2,Z123_KERNEL_PATH=nv2:khr
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
R=/tmp/z123-sweep; rm -rf $R; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
make_model
for cfg in "$@"; do
  name=${cfg%%,*}
  rest=${cfg#"$name"}; IFS=, read -ra vars <<< "${rest#,}"
  stage "$name: end to end (${vars[*]:-})"
  env "${vars[@]}" timeout 120 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 3 > "$R/e2e-$name.txt" 2>&1
  grep -E "^image|rror" "$R/e2e-$name.txt" | cut -c1-200
  env "${vars[@]}" Z123_PROFILE=1 timeout 60 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 1 > "$R/profile-$name.txt" 2>&1
done
if [ -z "${SKIP_TESTS:-}" ]; then
  mkdir -p /tmp/vl && for f in .gl-val/*.deb; do dpkg -x "$f" /tmp/vl; done
  for cfg in "$@"; do
    name=${cfg%%,*}
    rest=${cfg#"$name"}; IFS=, read -ra vars <<< "${rest#,}"
    for path in ${TEST_PATHS:-khrcoopmat nvcoopmat2}; do
      stage "$name: GEMM and conv kernel tests, $path"
      env "${vars[@]}" VK_ADD_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d \
        LD_LIBRARY_PATH="/tmp/vl/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH" Z123_TEST_DEVICE=NVIDIA \
        timeout 90 $B/test_kernels --gtest_filter="Gemm/*$path*" > "$R/tests-$name-$path.txt" 2>&1
      grep -E "^\[  (PASSED|FAILED) |tests ran" "$R/tests-$name-$path.txt" | head -6
      grep -m3 -B2 -A6 "Failure\|rror" "$R/tests-$name-$path.txt" | head -20
    done
  done
fi
tar cJf "$OUT/sweep.tar.xz" -C /tmp z123-sweep
