#!/bin/bash
# SPDX-License-Identifier: MIT
# Installs what scorch needs to build, test and benchmark on Debian 12, and only
# what is missing. Run as root.
set -eu

pkgs=(
	build-essential cmake pkg-config clang llvm
	libbpf-dev libelf-dev libdw-dev libzstd-dev zlib1g-dev bpftool
	libxml2-utils perl python3 chromium bpftrace gzip zstd
	libiberty-dev binutils elfutils gdc libc6-dbg libstdc++6-12-dbg time bc
	linux-perf nodejs openjdk-17-jdk-headless # JIT runtimes for tests/perfmap (perf samples them)
	libprotobuf-c-dev protobuf-c-compiler golang-go # pprof output (export/), go tool pprof in tests
	libclang-rt-14-dev # libFuzzer and clang's sanitizer runtimes (scripts/fuzz.sh; a recommends of clang)
	groff-base man-db # tests/man renders the manual pages
)

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
	echo "hint: run this script as root (sudo $0)" >&2
	exit 1
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
