# SPDX-License-Identifier: MIT
# bench: helpers shared by the bench scripts (sourced). Each script exits 1 with a one-line reason and a hint when it cannot run.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
name=$(basename "$0" .sh)

die() { # message [hint]
	echo "$name: $1" >&2
	[ -z "${2:-}" ] || echo "hint: $2" >&2
	exit 1
}

need_root() { [ "$(id -u)" = 0 ] || die "must run as root" "sudo $0 $*"; }

need_scorch() { # sets $scorch from SCORCH (default build/profiler/scorch)
	scorch=${SCORCH:-$root/build/profiler/scorch}
	[ -x "$scorch" ] || die "no scorch binary at $scorch" "run scripts/build.sh first, or set SCORCH"
}

need_tool() { # command package
	command -v "$1" >/dev/null || die "$1 is not installed" "apt-get install $2 (scripts/setup.sh --test installs it)"
}

need_flamegraph() { # sets $fgdir from FLAMEGRAPH_DIR
	fgdir=${FLAMEGRAPH_DIR:-}
	[ -n "$fgdir" ] && [ -f "$fgdir/flamegraph.pl" ] && [ -f "$fgdir/stackcollapse-perf.pl" ] ||
		die "FLAMEGRAPH_DIR does not point to a FlameGraph checkout (flamegraph.pl, stackcollapse-perf.pl)" \
			"git clone https://github.com/brendangregg/FlameGraph /tmp/FlameGraph; export FLAMEGRAPH_DIR=/tmp/FlameGraph"
	need_tool perl perl
}

rounds_arg() { # [ROUNDS]: sets $rounds (default 5), a positive count
	rounds=${1:-5}
	[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "invalid ROUNDS '$rounds'" "e.g. $0 5"
}

# what the script leaves behind it undone at exit: its work directory (unless
# BENCH_KEEP=1), and tracefs if need_tracefs mounted it
work=
tracefs_mounted=0
lg_pid=
bench_cleanup() {
	[ -z "$lg_pid" ] || kill "$lg_pid" 2>/dev/null || true
	[ "$tracefs_mounted" = 0 ] || umount /sys/kernel/tracing 2>/dev/null || true
	[ -z "$work" ] || [ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap bench_cleanup EXIT

make_work() { # sets $work, removed at exit unless BENCH_KEEP=1
	work=$(mktemp -d /tmp/scorch-bench.XXXXXX)
	[ "${BENCH_KEEP:-0}" = 0 ] || echo "$name: keeping $work" >&2
}

need_tracefs() { # bpftrace's tracepoints need tracefs: mounted for the run if it is not
	[ -e /sys/kernel/tracing/events ] && return
	mount -t tracefs nodev /sys/kernel/tracing ||
		die "tracefs is not mounted and cannot be mounted at /sys/kernel/tracing" \
			"mount -t tracefs nodev /sys/kernel/tracing (CONFIG_TRACING)"
	tracefs_mounted=1
}

build_cpujob() { # the fixed CPU job, with frame pointers so every profiler walks it
	need_tool cc gcc
	cc -O2 -fno-omit-frame-pointer -pthread -o "$work/cpujob" "$here/cpujob.c" ||
		die "cannot build bench/cpujob.c"
}

pin_job() { # PIN (default 1): the job's threads one per CPU (bench/cpujob.c, CPUJOB_PIN)
	case "${PIN:-1}" in
	0 | 1) export CPUJOB_PIN="${PIN:-1}" ;;
	*) die "invalid PIN '$PIN'" "PIN=1 pins the job's threads one per CPU, PIN=0 leaves them to the scheduler" ;;
	esac
}

bench_py() { python3 "$here/bench.py" "$@" --work "$work" --scorch "$scorch"; }

# figure TOOL FIGURE FILE [ARG]: a figure of what scorch, perf or bpftrace printed, read
# by bench/summary.py (the one reader of them; its usage lists the figures). When it is
# not there, it fails naming the line it looked for: x=$(figure ...) stops the script.
figure() { python3 "$here/summary.py" "$@"; }

# The load of load-bench.sh and longrun-memory.sh: processes started and exiting, and
# thread pairs ping-ponging (bench/loadgen.c, built into $work by build_loadgen).
build_loadgen() {
	need_tool cc gcc
	cc -O1 -fno-omit-frame-pointer -pthread -Wall -o "$work/loadgen" "$here/loadgen.c" ||
		die "cannot build bench/loadgen.c"
}
load_start() { # RATE PAIRS SECONDS LOG: starts it, waits for its "ready" line (a FIFO, no sleep)
	rm -f "$work/ready"
	mkfifo "$work/ready"
	"$work/loadgen" -r "$1" -p "$2" -d "$3" >"$work/ready" 2>"$4" &
	lg_pid=$!
	read -r _ <"$work/ready"
}
load_end() { # LOG: waits for its end
	wait "$lg_pid" || die "loadgen failed: $(tail -n 1 "$1")"
	lg_pid=
}
