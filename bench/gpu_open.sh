#!/usr/bin/env bash
# Model-open timing on the GPU machine: cold (page cache dropped, empty pipeline and driver
# shader caches) and warm, with the load breakdown; then the CLI's wall time for one image.
# Binaries: .gpu/bin.tar.xz (zero123pp-bench-e2e, zero123pp-bench-make-model, zero123pp and
# their libpng/libjpeg), carried with .gl. Outputs in $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/z123-out}; mkdir -p "$OUT"
source .gl/vulkan-env.sh >/dev/null 2>&1
tar xJf .gpu/bin.tar.xz -C .gpu
B=.gpu/bin
export LD_LIBRARY_PATH="$PWD/$B/lib"
stage() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[ -f /tmp/v12/model_index.json ] || { stage make-model; $B/zero123pp-bench-make-model /tmp/v12 tests/data/v1.2-configs; }
drop() { sync; if echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; then echo "(page cache dropped)"; else echo "(cannot drop the page cache)"; fi; }
run() { # name xdg nvcache args...
  local name=$1 xdg=$2 nv=$3; shift 3
  stage "$name"
  XDG_CACHE_HOME=$xdg __GL_SHADER_DISK_CACHE_PATH=$nv "$@" 2>&1 | tee "$OUT/$name.txt"
}
IN=tests/data/golden/pipeline_input.png
tag=${1:-new}
rm -rf /tmp/c-$tag /tmp/nv-$tag; mkdir -p /tmp/c-$tag /tmp/nv-$tag
drop; run $tag-cold /tmp/c-$tag /tmp/nv-$tag timeout 240 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 2
run $tag-warm /tmp/c-$tag /tmp/nv-$tag timeout 120 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 3
stage cli-warm
( time XDG_CACHE_HOME=/tmp/c-$tag __GL_SHADER_DISK_CACHE_PATH=/tmp/nv-$tag $B/zero123pp --model /tmp/v12 --verbose $IN /tmp/cli.png ) 2>&1 | tee "$OUT/$tag-cli-warm.txt"
