/* SPDX-License-Identifier: MIT */
/* capture: the .scorch capture file format (raw counts, mappings, symbols), writer and reader. */
#ifndef SCORCH_CAPTURE_H
#define SCORCH_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * A capture holds a recording before symbolization: counts with raw addresses, the
 * mappings of the processes they came from (with build-ids), and the kernel and JIT
 * symbols covering the addresses seen, so that `scorch report` can name the frames
 * later or on another machine. docs/capture-format.md is the byte-level specification.
 *
 * Layout: a 16-byte file header (magic "SCORCHCP", u16 major, u16 minor, u32 header
 * flags), then one zstd frame (content checksum on) whose content is a sequence of
 * records, each {u32 payload length, u16 type, u16 flags} followed by the payload. All
 * integers are little-endian and fixed-width; strings are u16 length + bytes (no NUL).
 * The last record is CAPTURE_END; a capture without it is truncated.
 *
 * Versioning: a reader accepts its own major version and any minor version. Record
 * types it does not know are skipped by length when the file's minor version is newer
 * than the reader's, and are an error otherwise. Records only ever grow at their end
 * within a major version: a reader ignores payload bytes past the fields it knows.
 */

#define CAPTURE_MAGIC	      "SCORCHCP"
#define CAPTURE_VERSION_MAJOR 1
#define CAPTURE_VERSION_MINOR 5
#define CAPTURE_HEADER_SIZE   16
#define CAPTURE_RECORD_HEADER 8

/* Sanity caps the reader enforces (a record beyond them is an error, never an allocation). */
#define CAPTURE_MAX_RECORD   (1u << 20) /* payload bytes of one record */
#define CAPTURE_MAX_DEPTH    127	/* kernel addresses of one count; meta max_depth */
#define CAPTURE_MAX_USER     1080	/* user addresses of one count (127 before 1.4) */
#define CAPTURE_MAX_STRING   4096	/* bytes of one string */
#define CAPTURE_MAX_BUILD_ID 64		/* bytes of one build-id */
#define CAPTURE_MAX_STATS    64		/* BPF counters in a stats record */
#define CAPTURE_MAX_LINETABLE 65536	/* bytes of one Python line table */
#define CAPTURE_MAX_INTERVALS 65536	/* intervals of one recording (count.interval below) */

enum capture_type {
	CAPTURE_META = 1,    /* once, first: how the recording was made */
	CAPTURE_PROC = 2,    /* a process image (pid, gen) */
	CAPTURE_MAPPING = 3, /* one executable mapping of a process image */
	CAPTURE_COUNT = 4,   /* one counted (key, value) with its raw stacks */
	CAPTURE_KSYM = 5,    /* a kernel symbol covering addresses seen */
	CAPTURE_JIT = 6,     /* the JIT resolver's answer for one address seen */
	CAPTURE_STATS = 7,   /* once, near the end: counters for the summary */
	CAPTURE_END = 8,     /* last record: the capture is complete */
	CAPTURE_PYCODE = 9,  /* a Python code object of the stacks, named (since 1.3) */
};
#define CAPTURE_TYPE_MAX CAPTURE_PYCODE

enum capture_mode {
	CAPTURE_MODE_CPU = 0,
	CAPTURE_MODE_OFFCPU = 1,
	CAPTURE_MODE_WALL = 2,
	CAPTURE_MODE_EVENT = 3, /* record --event (since 1.2): capture_meta.event says which */
};

/* capture_meta.flags */
#define CAPTURE_META_USER_ONLY	  (1u << 0)
#define CAPTURE_META_KERNEL_ONLY  (1u << 1)
#define CAPTURE_META_UNWIND_DWARF (1u << 2)

/* Strings in decoded records are NUL-terminated and borrowed: valid until the next
 * capture_reader__next() (reader) or owned by the caller (writer). */
struct capture_meta {
	uint32_t mode;	    /* enum capture_mode */
	uint32_t flags;	    /* CAPTURE_META_* */
	uint64_t freq;	    /* samples per second per CPU */
	uint64_t start_ns;  /* CLOCK_REALTIME at the start, ns (informational) */
	uint32_t max_depth; /* frames walked per stack (kernel.perf_event_max_stack) */
	/* since 1.4 (0 before): user frames the walks with tables kept (record --max-depth);
	 * user stacks cut at their walk's limit then carry KEY_USER_DEEP. Before, a user
	 * stack @max_depth deep was the cut one. */
	uint32_t user_depth;
	const char *host;    /* uname nodename */
	const char *kernel;  /* uname release */
	const char *version; /* scorch version that wrote it */
	const char *clock;   /* clock of the time fields: "monotonic" */
	/* CAPTURE_MODE_EVENT only (since 1.2, after clock; read as "" and 0 when absent):
	 * the --event specification, --weight's argument (0: none), CAPTURE_EVENT_*,
	 * --period */
	const char *event;
	uint32_t event_weight;
	uint32_t event_flags;
	uint64_t event_period;
	const char *event_weight_unit; /* since 1.3: --weight's unit ("": bytes) */
	/* since 1.4, after the event fields (written empty outside CAPTURE_MODE_EVENT; 0
	 * when absent): record --interval's length in ns; 0: the recording is one whole */
	uint64_t interval_ns;
	/* since 1.5, after interval_ns ("" when absent): what was recorded, as record says
	 * it ("PID 42 (app)", "all CPUs", "command: make -j8") */
	const char *target;
};

/* capture_meta.event_flags */
#define CAPTURE_EVENT_LATENCY (1u << 0) /* --latency: values are ns from entry to return */

/* capture_proc.flags */
#define CAPTURE_PROC_MISSING (1u << 0) /* gone before its mappings could be read */

#define CAPTURE_UID_UNKNOWN UINT32_MAX

struct capture_proc {
	uint32_t pid;
	uint32_t flags; /* CAPTURE_PROC_* */
	uint64_t gen;	/* process image: see bpf/profile.h scorch_event.gen */
	const char *comm;
	uint32_t uid; /* its user (the owner of /proc/PID), CAPTURE_UID_UNKNOWN: not known
			 (written since version 1.1, after comm) */
};

enum capture_map_kind {
	CAPTURE_MAP_FILE = 0,	/* a mapped file; @path absolute as the process saw it */
	CAPTURE_MAP_VDSO = 1,	/* the kernel's vDSO ("[vdso]") */
	CAPTURE_MAP_ANON = 2,	/* anonymous executable memory (JIT) */
	CAPTURE_MAP_PSEUDO = 3, /* another named mapping: @path is its frame name ("[heap]") */
};

struct capture_mapping {
	uint32_t pid;
	uint32_t kind; /* enum capture_map_kind */
	uint64_t gen;
	uint64_t start, end, pgoff;
	const uint8_t *build_id; /* NULL when build_id_len is 0 */
	size_t build_id_len;
	const char *path; /* "" for ANON */
};

/* capture_count.cflags */
#define CAPTURE_COUNT_OFFCPU (1u << 0) /* @value is ns off CPU, else samples */
#define CAPTURE_COUNT_USER   (1u << 1) /* has a user stack (nr_user may still be 0) */
#define CAPTURE_COUNT_KERNEL (1u << 2) /* has a kernel stack */
#define CAPTURE_COUNT_NOPROC (1u << 3) /* its process was unreadable: user frames [unknown] */

struct capture_count {
	uint32_t pid;
	uint32_t key_flags; /* KEY_* of bpf/profile.h */
	uint64_t gen;
	uint64_t value;
	char comm[16];	 /* as the kernel gave it; not necessarily NUL-terminated */
	uint32_t cflags; /* CAPTURE_COUNT_* */
	uint32_t nr_user, nr_kernel;
	const uint64_t *user;	/* leaf first, nr_user of them */
	const uint64_t *kernel; /* leaf first */
	/* since 1.4, after the addresses (0 when absent): the 0-based --interval the count
	 * was taken in, < CAPTURE_MAX_INTERVALS; always 0 when meta.interval_ns is 0 */
	uint32_t interval;
};

struct capture_ksym {
	uint64_t start, end; /* [start, end) */
	const char *name;    /* display name, "func" or "func [module]" */
	const char *module;  /* "" for the core kernel */
};

/* capture_jit.flags */
#define CAPTURE_JIT_FOUND (1u << 0) /* @name names the code; else it is a fallback label */

struct capture_jit {
	uint32_t pid;
	uint32_t flags;
	uint64_t addr;	 /* the address asked (return addresses: already minus 1) */
	uint64_t offset; /* from the symbol's start (FOUND) */
	const char *name;
};

/*
 * A Python code object named while its process lived: the two stack words of its
 * frames (bpf/profile.h PY_WORD) carry @addr and @guard.
 */
struct capture_pycode {
	uint32_t pid;
	uint32_t guard;
	uint64_t gen;
	uint64_t addr;
	int32_t firstlineno;
	uint32_t linetable_len; /* <= CAPTURE_MAX_LINETABLE; 0: none (recorded without --lines) */
	const char *qualname, *file;
	const uint8_t *linetable; /* co_linetable's bytes (3.10: PEP 626; 3.11+: PEP 657) */
	uint32_t pep657;	  /* 1: the 3.11+ location table */
};

/* Counters of the recording, for the same end-of-run summary. Fields may grow at the end. */
struct capture_stats {
	uint64_t elapsed_ns;
	uint32_t nr_cpus;
	uint32_t nr_bpf; /* entries of @bpf used (bpf/profile.h enum scorch_stat) */
	uint64_t drain_lost, drain_lost_ns;
	uint64_t procs_seen, procs_released, procs_held_max, procs_missing;
	uint64_t max_stacks; /* size of the kernel maps (for the hint) */
	uint64_t ring_bytes; /* --unwind dwarf sample ring, bytes */
	uint64_t bpf[CAPTURE_MAX_STATS];
	/* since 1.4, after the counters (0 when absent): the intervals of a recording with
	 * --interval, the last partial one and those without counts included */
	uint32_t nr_intervals;
};

struct capture_record {
	enum capture_type type;
	union {
		struct capture_meta meta;
		struct capture_proc proc;
		struct capture_mapping map;
		struct capture_count count;
		struct capture_ksym ksym;
		struct capture_jit jit;
		struct capture_stats stats;
		struct capture_pycode pycode;
	};
};

/* ---- writer ---- */

struct capture_writer;

/*
 * Starts a capture on @fp (not owned; written sequentially, never seeked): writes the
 * header and opens the zstd stream (@level: 0 default). Returns a writer or NULL with
 * errno set.
 */
struct capture_writer *capture_writer__new(FILE *fp, int level);
/*
 * Appends one record (@rec->type decides which member is read). Strings may be NULL
 * (written empty). Returns 0, -EINVAL for a record beyond the caps above (a string or
 * stack too long), -EIO when @fp fails, -ENOMEM.
 */
int capture_writer__add(struct capture_writer *w, const struct capture_record *rec);
/* Writes CAPTURE_END and ends the zstd frame; @fp is flushed. Returns 0 or -errno. */
int capture_writer__finish(struct capture_writer *w);
/* Bytes handed to @fp so far (compressed) and record bytes before compression. */
void capture_writer__sizes(const struct capture_writer *w, uint64_t *file, uint64_t *raw);
void capture_writer__free(struct capture_writer *w);

/* ---- reader ---- */

struct capture_reader;

/*
 * Reads the capture @data[0..len) (borrowed: must outlive the reader). The header is
 * checked here: returns NULL with errno EBADMSG (not a capture, bad magic or too short),
 * EPROTONOSUPPORT (another major version) or ENOMEM; capture_reader__open_error() then
 * describes it. Nothing is decompressed until the first capture_reader__next().
 */
struct capture_reader *capture_reader__new(const void *data, size_t len);
/* The message for capture_reader__new()'s failure of @data (a static string per errno). */
const char *capture_reader__open_error(int err);
/*
 * Decodes the next record into @rec. Returns 1, 0 after CAPTURE_END (the capture is
 * complete and nothing follows it), or a negative errno: -EBADMSG for anything malformed
 * (corrupt or truncated compressed data, a length beyond what remains or beyond the caps,
 * a count that disagrees with its length, an unknown record type of a minor version this
 * reader knows, a missing END record, bytes after it), -ENOMEM. After an error every call
 * returns it again; capture_reader__error() says what and where, in one line.
 * Pointers in @rec are valid until the next call.
 */
int capture_reader__next(struct capture_reader *r, struct capture_record *rec);
const char *capture_reader__error(const struct capture_reader *r);
/* The file's version, and how many records of unknown types (newer minor) were skipped. */
void capture_reader__version(const struct capture_reader *r, unsigned *major, unsigned *minor);
uint64_t capture_reader__skipped(const struct capture_reader *r);
void capture_reader__free(struct capture_reader *r);

#endif /* SCORCH_CAPTURE_H */
