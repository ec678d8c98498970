#!/bin/bash
# SPDX-License-Identifier: MIT
# Processes that come and go: short-lived processes recorded
# system-wide keep their names, an exec shows each binary under its own comm,
# and a long recording with many exited processes holds only the live ones.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

# Starts a system-wide recording "$@" in the background with -v and waits until it
# samples (its "sampling" line on stderr, read from a FIFO: no sleep). Its stderr is
# read on meanwhile (-v writes much: a full FIFO would stall the recording). Not
# governed: the counts are checked sample by sample (a storm of new processes makes a
# sample cost more, and the governor would weigh them).
start_recording() {
	mkfifo "$TMP/rec.fifo"
	"$SCORCH" record -v --unwind fp --max-overhead 0 "$@" 2>"$TMP/rec.fifo" &
	REC=$!
	exec 8<"$TMP/rec.fifo"
	# -v's debug lines come first
	while read -r -t 30 line <&8; do
		case "$line" in
		"scorch: sampling"*)
			cat <&8 >"$TMP/err" &
			CAT=$!
			return
			;;
		esac
	done
	fail "the recording did not start"
}
# Stops it (SIGINT) and collects its stderr in $TMP/err.
stop_recording() {
	local rc=0
	kill -INT "$REC"
	wait "$REC" || rc=$?
	wait "$CAT"
	[ "$rc" = 0 ] || fail "the recording failed ($rc): $(grep -v '^debug: \|^libbpf: ' "$TMP/err")"
	exec 8<&-
	rm -f "$TMP/rec.fifo"
}

# 1. 40 processes, each burning 60 ms in burst_burn, one after the other, while
#    the whole system is recorded: >= 85 % of their samples name burst_burn.
start_recording -F 499 -o "$TMP/burst.folded"
for i in $(seq 40); do "$BURST" 60; done
stop_recording
check_folded "$TMP/burst.folded"
all=$(comm_total "$TMP/burst.folded" burst)
named=$(frame_total "$TMP/burst.folded" burst burst_burn)
echo "short-lived: $named of $all samples of burst name burst_burn"
grep -E '^scorch: (processes|unresolved)' "$TMP/err" || true
[ "$all" -ge 400 ] || fail "too few samples of the 40 processes: $all"
awk -v n="$named" -v a="$all" 'BEGIN { exit !(n >= 0.85 * a) }' ||
	fail "only $named of $all samples of short-lived processes name burst_burn"

# 2. exec under one PID (record -- cmd): each image's function under its own comm.
"$SCORCH" record -v --unwind fp -F 499 -o "$TMP/exec.folded" -- "$PHASE_ONE" 300 "$PHASE_TWO" 2>"$TMP/err" ||
	fail "record of an exec'ing command failed: $(cat "$TMP/err")"
check_folded "$TMP/exec.folded"
one=$(comm_total "$TMP/exec.folded" phase_one)
two=$(comm_total "$TMP/exec.folded" phase_two)
one_ok=$(frame_total "$TMP/exec.folded" phase_one first_phase_burn)
two_ok=$(frame_total "$TMP/exec.folded" phase_two second_phase_burn)
echo "exec: phase_one $one_ok of $one samples in first_phase_burn," \
	"phase_two $two_ok of $two in second_phase_burn"
[ "$(frame_total "$TMP/exec.folded" phase_one second_phase_burn)" -eq 0 ] ||
	fail "exec: phase_one's samples named with phase_two's function"
[ "$(frame_total "$TMP/exec.folded" phase_two first_phase_burn)" -eq 0 ] ||
	fail "exec: phase_two's samples named with phase_one's function"
awk -v a="$one" -v b="$one_ok" -v c="$two" -v d="$two_ok" \
	'BEGIN { exit !(a >= 50 && c >= 50 && b >= 0.9 * a && d >= 0.9 * c) }' ||
	fail "exec: the phases are not resolved (see the counts above)"

# The summary's processes line: "seen released held" into $seen $released $held.
read_processes() {
	line=$(grep '^scorch: processes:' "$TMP/err") || fail "no processes line: $(cat "$TMP/err")"
	echo "$1: $line"
	grep '^scorch: reaps of' "$TMP/err" || true
	read -r seen released held <<<"$(echo "$line" |
		sed 's/.*processes: \([0-9]*\) seen, \([0-9]*\) exited and released.*at most \([0-9]*\) held.*/\1 \2 \3/')"
}

# 3. 2,400 short processes during one system-wide recording (2 x 1,200 in a row, which
#    keep the CPUs busy): exited ones are released by reaps during the recording, on
#    idle CPUs or, put off while the CPUs are busy, once 1,024 exited images are held
#    (REAP_HELD in engine/record-reap.c): what is held at once is what lives plus at most
#    that, not all 2,400 (about 2,800 images with the forks' copies).
start_recording -F 999 -o "$TMP/many.folded"
storm=()
for l in 1 2; do
	(for i in $(seq 1200); do "$BURST" 2; done) &
	storm+=($!)
done
wait "${storm[@]}"
stop_recording
read_processes many
[ "$released" -ge 1000 ] || fail "only $released processes released during the recording"
[ "$held" -le 1300 ] || fail "$held processes held at once: memory follows every process seen"
# every count taken once: by a reap (exited processes, deleted in one batch) or by the
# final drain, never both, never neither: "$1" names the output
check_counted() {
	counted=$(figure counted "$TMP/err")
	lost=$(figure lost "$TMP/err")
	lost=${lost% *}
	written=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/$1.folded")
	echo "$1: $written samples written, $counted counted, ${lost:-?} lost"
	[ -n "$counted" ] && [ "$written" -le "$counted" ] &&
		[ "$written" -ge "$((counted - ${lost:-0}))" ] ||
		fail "$1: $written samples written of $counted counted (${lost:-?} lost): counted twice or dropped"
}
check_counted many
# each burst is forked and exec'd during the recording: known from the kernel's mmap
# records, read after it exited (its announcement wakes no one); about 1,100 of the
# 1,200 are sampled at all (2 ms of CPU at 999 Hz)
sband=$(echo "$line" | sed -n 's/.*maps of \([0-9]*\) from the kernel.s mmap records.*/\1/p')
[ "${sband:-0}" -ge 1200 ] || fail "many: ${sband:-no} images from the kernel's mmap records, want most of 2,400"
many=$(comm_total "$TMP/many.folded" burst)
named=$(frame_total "$TMP/many.folded" burst burst_burn)
inmain=$(frame_total "$TMP/many.folded" burst main)
echo "many: $named of $many samples of burst name burst_burn, $inmain reach main"
# 2 ms of work after exec and the dynamic loader: how much of a process's life is
# start-up (ld.so, FP-less, slow with cold caches) or exec is the machine's, not
# scorch's. What holds on any machine: a sample that reached burst's main was named
# with burst's own image, so it is in burst_burn (main calls nothing else); and a
# share of them reach main at all (none would if the images went unnamed).
awk -v n="$named" -v m="$inmain" -v a="$many" \
	'BEGIN { exit !(a > 0 && m >= 0.1 * a && n >= 0.95 * m) }' ||
	fail "many: $inmain of $many samples reach main, $named of them in burst_burn"

# 3b. The same while split's two threads keep both CPUs busy, so that no reap is due on
#     idle CPUs, with count and stack maps of 4,096 entries: a reap is forced once keys
#     were added to an eighth of them (512; each sampled process adds at least one),
#     before 1,024 images are held, so that exited processes' keys never fill the map;
#     and it deletes the user stacks only their keys used (each process's own under
#     ASLR), which filled the stack map before (35 % of the samples lost).
start_ready "$SPLIT" --threads 2 --seconds 120
start_recording -F 999 --max-stacks 4096 -o "$TMP/keys.folded"
storm=()
for l in 1 2; do
	(for i in $(seq 1200); do "$BURST" 2; done) &
	storm+=($!)
done
wait "${storm[@]}"
stop_recording
kill "$BG_PID"
wait "$BG_PID" 2>/dev/null || true
BG_PID=
read_processes keys
reaps=$(sed -n 's/^scorch: reaps of .*forced then by the images held: \([0-9]*\), by the count keys added: \([0-9]*\),.*/\1 \2/p' "$TMP/err")
read -r by_held by_keys <<<"$reaps"
[ -n "$by_keys" ] || fail "keys: no reaps line (were the CPUs idle?): $(cat "$TMP/err")"
[ "$by_keys" -ge 1 ] && [ "$by_held" -eq 0 ] ||
	fail "keys: reaps forced $by_keys times by count keys, $by_held by images held"
[ "$held" -le 700 ] || fail "keys: $held processes held at once, want about 512 at most"
read -r sfull cfull <<<"$(sed -n 's/^scorch: lost: \([0-9]*\) stack map full, \([0-9]*\) count map full,.*/\1 \2/p' "$TMP/err")"
[ "${cfull:-0}" -eq 0 ] || fail "keys: $cfull samples lost with the count map full"
[ "${sfull:-0}" -eq 0 ] || fail "keys: $sfull samples lost with the stack map full"
check_counted keys

# 4. forked children (record -- cmd follows them): 3 children keep the parent's image
#    for 100 ms (child_burn), then exec burst (burst_burn). Every image (forks, the
#    children before and after their exec) begins during the recording: its mappings
#    come from the kernel's fork/exec/mmap records, none is read from /proc (the summary
#    counts them): each function under its own comm, never the other's.
"$SCORCH" record -v --unwind fp -F 499 -o "$TMP/forks.folded" -- "$FORKS" 3 100 "$BURST" 100 \
	2>"$TMP/err" || fail "record of a forking command failed: $(cat "$TMP/err")"
check_folded "$TMP/forks.folded"
line=$(grep '^scorch: processes:' "$TMP/err") || fail "no processes line: $(cat "$TMP/err")"
echo "forks: $line"
# every image began during the recording: none is read from /proc (the kernel's mmap
# records, or a copy of the parent's)
read -r sband copied procread <<<"$(echo "$line" | sed -n \
	's/.*maps of \([0-9]*\) from the kernel.s mmap records, \([0-9]*\) copied from the parent.*, \([0-9]*\) read from \/proc.*/\1 \2 \3/p')"
[ -n "$procread" ] || fail "forks: no maps clause in: $line"
[ "$((sband + copied))" -ge 7 ] ||
	fail "forks: $sband + $copied images from records or the parent, want the 7 of forks and its children"
# the one allowed: the launched child between its fork from scorch (whose image is not
# on record: it began before) and its exec, if a sample caught it there
[ "$procread" -le 1 ] || fail "forks: $procread images read from /proc, want none but the launched child before its exec"

child=$(frame_total "$TMP/forks.folded" forks child_burn)
parent=$(frame_total "$TMP/forks.folded" forks parent_burn)
after=$(comm_total "$TMP/forks.folded" burst)
after_ok=$(frame_total "$TMP/forks.folded" burst burst_burn)
echo "forks: $parent samples in parent_burn, $child in child_burn, $after_ok of $after" \
	"after the exec in burst_burn"
[ "$(frame_total "$TMP/forks.folded" burst child_burn)" -eq 0 ] ||
	fail "forks: samples after the exec named with the parent's function"
[ "$(frame_total "$TMP/forks.folded" forks burst_burn)" -eq 0 ] ||
	fail "forks: samples before the exec named with burst's function"
# 3 x 100 ms at 499 Hz: ~150 samples each side
awk -v p="$parent" -v c="$child" -v a="$after" -v b="$after_ok" \
	'BEGIN { exit !(p >= 25 && c >= 75 && a >= 75 && b >= 0.9 * a) }' ||
	fail "forks: the children's functions are not resolved (see the counts above)"

# 5. an exec's window: from the moment an exec puts the new image's memory in place to
#    its first instruction (mapping the program and ld.so: most of an exec), a thread's
#    user registers are still the replaced image's, at its execve call. perf names that
#    leaf from the maps it keeps; scorch names it in the replaced image (sh's libc),
#    never in the new one. 1,000 /bin/true from sh, recorded by scorch, then by
#    perf record -a -g (per-CPU sampling, as scorch's: perf's per-task timers start a
#    period late in each child and miss most of its exec): of true's samples in execve,
#    the share whose user leaf is named, beside perf's.
loop='for i in $(seq 1000); do /bin/true; done'
"$SCORCH" record -v -F 999 -o "$TMP/exec.folded" -- sh -c "$loop" 2>"$TMP/err" ||
	fail "record of an exec loop failed: $(cat "$TMP/err")"
check_folded "$TMP/exec.folded"
grep '^scorch: exec:' "$TMP/err" || fail "exec: -v counts no sample in an exec's window"
perf record -q -a -g -F 999 -o "$TMP/exec.data" -- sh -c "$loop" 2>"$TMP/perf.err" ||
	fail "perf record failed: $(cat "$TMP/perf.err")"
perf script -i "$TMP/exec.data" 2>/dev/null | "$SCORCH" collapse -o "$TMP/perf-exec.folded" - ||
	fail "perf script | scorch collapse failed"
python3 - "$TMP/exec.folded" "$TMP/perf-exec.folded" <<'PY' || fail "exec: leaves unnamed (see above)"
import sys

def execve_leaves(path):
    """true's samples in execve, and those whose user leaf (the frame before the
    kernel's syscall entry) has a name, not [unknown] or [module]."""
    total = named = 0
    for line in open(path):
        stack, n = line.rsplit(" ", 1)
        f = stack.split(";")
        if f[0] != "true" or not any(x.startswith("__x64_sys_execve") for x in f):
            continue
        k = next((i for i, x in enumerate(f) if x.startswith("entry_SYSCALL_64")), 0)
        total += int(n)
        named += int(n) if k >= 2 and not f[k - 1].startswith("[") else 0
    return total, named

(st, sn), (pt, pn) = execve_leaves(sys.argv[1]), execve_leaves(sys.argv[2])
print(f"exec: true's samples in execve with a named user leaf: scorch {sn} of {st}, "
      f"perf {pn} of {pt} (weighted by period)")
assert st >= 50 and pt > 0, "too few samples in execve to judge"
ours, perfs = 100 * sn / st, 100 * pn / pt
assert ours >= 90 and ours >= perfs - 5, f"scorch names {ours:.1f} %, perf {perfs:.1f} %"
PY
echo PASS
