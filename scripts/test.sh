#!/usr/bin/env bash
# The test command: installs what is missing (apt), builds with warnings as errors, checks the
# code format, runs every test under CTest on the CPU Vulkan device (lavapipe) with validation
# layers on, then fuzzes the file parsers briefly.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export Z123_BUILD_DIR=${Z123_BUILD_DIR:-build-test}
scripts/build.sh -DZ123_WERROR=ON -DZ123_BUILD_TESTS=ON
scripts/check-format.sh
# Tests use their own pipeline-cache folder and a CPU device even where a GPU exists.
export Z123_TEST_DEVICE=${Z123_TEST_DEVICE:-llvmpipe}
ctest --test-dir "$Z123_BUILD_DIR" --output-on-failure -j"$(nproc)" --timeout 900
if [ -x scripts/run-fuzz.sh ]; then
  scripts/run-fuzz.sh
fi
