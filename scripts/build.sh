#!/bin/bash
# SPDX-License-Identifier: MIT
# Configures and builds scorch in ./build (warnings are errors).
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DSCORCH_WERROR=ON >/dev/null
cmake --build build -j "$(nproc)"
