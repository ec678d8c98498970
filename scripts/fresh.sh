#!/bin/bash
# SPDX-License-Identifier: MIT
# Rehearses a freshly booted machine, then runs the test suite (scripts/test.sh, with
# the arguments given). What a machine that has run a while hides:
#   - kernel.perf_event_max_sample_rate back at the kernel's default, 100000 (the
#     kernel lowers it after slow sample interrupts, and never raises it again);
#   - cold caches: dirty pages written, the page cache, dentries and inodes dropped;
#   - no debug-section cache of scorch's (SCORCH_CACHE_DIR: an empty folder).
# The sysctl is restored afterwards. Run as root, as the suite is.
set -eu
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
	echo "fresh: rehearsing a fresh machine writes sysctls and drops caches" >&2
	echo "hint: run it as root" >&2
	exit 1
fi
rate=/proc/sys/kernel/perf_event_max_sample_rate
pct=/proc/sys/kernel/perf_cpu_time_max_percent
old_rate=$(cat "$rate")
cache=$(mktemp -d)
restore() {
	echo "$old_rate" >"$rate" || true
	rm -rf "$cache"
}
trap restore EXIT
# the kernel refuses a new rate while its throttling is off (0 or 100 %)
case "$(cat "$pct")" in 0 | 100) echo 25 >"$pct" ;; esac
echo 100000 >"$rate"
sync
echo 3 >/proc/sys/vm/drop_caches
echo "fresh: perf_event_max_sample_rate 100000 (was $old_rate), caches dropped," \
	"scorch's debug cache empty; uptime $(cut -d' ' -f1 /proc/uptime) s"
SCORCH_CACHE_DIR=$cache scripts/test.sh "$@"
