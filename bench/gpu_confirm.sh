set -uo pipefail
OUT=${OUT:-/tmp/z123-out}; mkdir -p $OUT
source .gl/vulkan-env.sh >/dev/null 2>&1; tar xJf .gpu/bin.tar.xz -C .gpu; B=.gpu/bin
export LD_LIBRARY_PATH="$PWD/$B/lib" XDG_CACHE_HOME=/tmp/zc __GL_SHADER_DISK_CACHE_PATH=/tmp/znv
$B/zero123pp-bench-make-model /tmp/v12 tests/data/v1.2-configs >/dev/null
IN=tests/data/golden/pipeline_input.png
timeout 120 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 4 2>&1 | grep -E "^engine|^image" | tee $OUT/ours.txt
Z123_PROFILE=1 timeout 120 $B/zero123pp-bench-e2e /tmp/v12 $IN --runs 1 > $OUT/profile.txt 2>&1
for i in 1 2; do timeout 200 $B/zero123pp-bench-kernels --profile $OUT/profile.txt --markdown $OUT/kernels$i.md > $OUT/kernels$i.txt 2>&1; echo "bench $i rc=$?"; grep -E "MISMATCH|vae mid|profile check" $OUT/kernels$i.txt; done
( time $B/zero123pp --model /tmp/v12 --verbose $IN /tmp/cli.png ) 2>&1 | grep -E "^open|->|wrote|closed|real" | tee $OUT/cli.txt
