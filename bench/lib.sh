# SPDX-License-Identifier: MIT
# bench: helpers shared by overhead.sh, time-to-result.sh, footprint.sh and accuracy.sh
# (sourced). Each script exits 1 with a one-line reason and a hint when it cannot run.
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
	command -v "$1" >/dev/null || die "$1 is not installed" "apt-get install $2 (scripts/setup.sh installs it)"
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

make_work() { # sets $work, removed at exit unless BENCH_KEEP=1
	work=$(mktemp -d /tmp/scorch-bench.XXXXXX)
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		echo "$name: keeping $work" >&2
	else
		trap 'rm -rf "$work"' EXIT
	fi
}

build_cpujob() { # the fixed CPU job, with frame pointers so every profiler walks it
	need_tool cc gcc
	cc -O2 -fno-omit-frame-pointer -pthread -o "$work/cpujob" "$here/cpujob.c" ||
		die "cannot build bench/cpujob.c"
}

bench_py() { python3 "$here/bench.py" "$@" --work "$work" --scorch "$scorch"; }
