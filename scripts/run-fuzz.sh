#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang + ASan/UBSan in a separate build dir and
# runs each for a short while, starting from the seed corpora in tests/fuzz/corpus/<target>/. Fails
# (non-zero exit) if a target crashes, leaks, trips a sanitizer or allocates absurdly (over
# libFuzzer's default 2 GB malloc / RSS limits); the crashing input is left in
# $BUILD_DIR/fuzz-artifacts/.
#
# Usage: scripts/run-fuzz.sh   (env: FUZZ_SECONDS=15 per target, BUILD_DIR=<repo>/build-fuzz,
#                               FUZZ_JOBS=<cores> build jobs)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-15}

mkdir -p "$build"
# The toolchain first: clang must link libFuzzer and the sanitizer runtimes, which Debian and
# Ubuntu ship in libclang-rt-dev (clang only recommends it).
probe="$build/fuzz-probe"
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
  'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' > "$probe.c"
if ! clang -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" > "$probe.log" 2>&1; then
  echo "run-fuzz: ERROR: clang cannot link a libFuzzer target with ASan/UBSan:" >&2
  sed 's/^/  /' "$probe.log" | tail -n 8 >&2
  echo "run-fuzz: install the runtimes with scripts/install-deps.sh (package libclang-rt-dev)" >&2
  exit 1
fi
# Configure quietly, but show the whole output if it fails.
if ! CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZ123_BUILD_FUZZ=ON -DZ123_BUILD_GST=OFF > "$build/configure.log" 2>&1; then
  cat "$build/configure.log" >&2
  echo "run-fuzz: ERROR: configuring the fuzz build failed (above; also in $build/configure.log)" >&2
  exit 1
fi
# One entry per tests/fuzz/fuzz_<target>.cpp, each seeded from tests/fuzz/corpus/<target>/.
targets=(safetensors configs model_index preprocessor image)
cmake --build "$build" --parallel "${FUZZ_JOBS:-$(nproc)}" --target "${targets[@]/#/fuzz_}"

mkdir -p "$build/fuzz-artifacts"
for target in "${targets[@]}"; do
  # New inputs go to a scratch corpus in the build dir; the checked-in seeds stay untouched.
  work="$build/fuzz-corpus/$target"
  mkdir -p "$work"
  echo "run-fuzz: fuzz_$target for ${seconds}s"
  "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/$target-" "$work" "$root/tests/fuzz/corpus/$target"
done
echo "run-fuzz: no crashes"
