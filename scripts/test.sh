#!/bin/bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds with warnings as errors, and runs the whole
# test suite with ctest. BPF tests need root; under CI=true they may not skip.
# Then the same suite again built with ASan + UBSan (build-asan/, -DSCORCH_SANITIZE=ON),
# and every libFuzzer target for FUZZ_SECONDS each (default 15, scripts/fuzz.sh).
# SCORCH_TEST_ASAN=0 / SCORCH_TEST_FUZZ=0 leave those out (local iterations only).
# Arguments go to every ctest run (e.g. -R symbolize).
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh --test
scripts/build.sh
ctest --test-dir build --output-on-failure --no-tests=error "$@"

if [ "${SCORCH_TEST_ASAN:-1}" != 0 ]; then
	echo "test.sh: the suite again with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)"
	cmake -S . -B build-asan -DSCORCH_SANITIZE=ON -DSCORCH_WERROR=ON >/dev/null
	cmake --build build-asan -j "$(nproc)"
	# leaks inside third-party libraries only (tests/lsan.supp); any other report fails
	LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
		UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
		ctest --test-dir build-asan --output-on-failure --no-tests=error "$@"
fi
if [ "${SCORCH_TEST_FUZZ:-1}" != 0 ]; then
	echo "test.sh: fuzzing each target for ${FUZZ_SECONDS:-15} s (build-fuzz/)"
	scripts/fuzz.sh "${FUZZ_SECONDS:-15}"
fi
