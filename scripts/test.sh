#!/bin/bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds with warnings as errors, and runs the whole
# test suite with ctest. BPF tests need root; under CI=true they may not skip.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir build --output-on-failure --no-tests=error "$@"
