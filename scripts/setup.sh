#!/bin/bash
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages scorch needs, and only those missing. Run as root.
#
#   scripts/setup.sh          what building scorch and recording need
#   scripts/setup.sh --test   that, and what the test suite and benchmarks run beside
#                             scorch (runtimes, reference tools, a browser, sanitizers)
set -eu

build_pkgs=(
	build-essential cmake pkg-config clang llvm bpftool
	libbpf-dev libelf-dev libdw-dev libzstd-dev liblzma-dev zlib1g-dev libiberty-dev
	libprotobuf-c-dev protobuf-c-compiler # pprof output (export/)
)
test_pkgs=(
	libxml2-utils perl python3 gzip zstd time bc binutils elfutils
	chromium                                  # the flame graph browser test
	firefox-esr                               # the HTML page's test in Firefox
	bpftrace linux-perf                       # reference tools beside scorch
	gdc libc6-dbg libstdc++6-12-dbg           # symbolization fixtures (D, debug files)
	nodejs openjdk-17-jdk-headless            # JIT runtimes for tests/perfmap
	golang-go                                 # go tool pprof reads the pprof output
	libclang-rt-14-dev                        # libFuzzer and the sanitizers' runtimes
	groff-base man-db                         # tests/man renders the manual pages
	tmux                                      # tests/record/top.sh drives scorch top's screen
)

pkgs=("${build_pkgs[@]}")
case "${1:-}" in
'') ;;
--test) pkgs+=("${test_pkgs[@]}") ;;
*)
	echo "setup: unknown option '$1'" >&2
	echo "hint: scripts/setup.sh [--test]" >&2
	exit 2
	;;
esac

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
	echo "setup: all packages present"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "setup: missing packages: ${missing[*]}" >&2
	echo "hint: run this script as root (or with sudo)" >&2
	exit 1
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
