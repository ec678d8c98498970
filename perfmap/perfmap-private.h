/* SPDX-License-Identifier: MIT */
/* perfmap: internals shared by the parsers, the index, the tests and the fuzz target. */
#ifndef SCORCH_PERFMAP_PRIVATE_H
#define SCORCH_PERFMAP_PRIVATE_H

#include "common.h"
#include "perfmap.h"

/* Longest perf-map line kept; longer lines are skipped up to their newline and counted. */
#define PM_MAX_LINE (64 * 1024)
/* jitdump records up to this size are parsed whole; the fixed part and name of a larger
 * one must fit in it, the rest (code bytes) is skipped without being read. */
#define PM_JD_MAX_INBUF (1024 * 1024)

#define JITDUMP_MAGIC	      0x4A695444u
#define JITDUMP_MAGIC_SWAPPED 0x4454694Au
#define JITDUMP_HEADER_SIZE   40
#define JITDUMP_REC_HDR_SIZE  16
#define JITDUMP_FLAGS_ARCH_TS 1ull
enum jitdump_rec {
	JIT_CODE_LOAD = 0,
	JIT_CODE_MOVE = 1,
	JIT_CODE_DEBUG_INFO = 2,
	JIT_CODE_CLOSE = 3,
	JIT_CODE_UNWINDING_INFO = 4,
};
/* Fixed payload sizes after the 16-byte record header. */
#define JITDUMP_LOAD_FIXED  40 /* pid, tid, vma, code_addr, code_size, code_index */
#define JITDUMP_MOVE_FIXED  48 /* pid, tid, vma, old_code_addr, new_code_addr, size, index */
#define JITDUMP_DEBUG_FIXED 16 /* code_addr, nr_entry */
#define JITDUMP_DEBUG_ENTRY 16 /* code_addr, line, discrim; then a NUL-terminated name */

struct pm_entry {
	uint64_t start;
	uint64_t end;	  /* exclusive; start < end */
	uint64_t ts;	  /* jitdump record time (CLOCK_MONOTONIC ns); 0: perf map or unknown */
	const char *name; /* interned */
};

/* A non-overlapping piece of the address space and the entry that wins there. */
struct pm_seg {
	uint64_t start, end;
	uint32_t ent;
};

/* Entries in the order they were read (a later one wins), and the lookup index. */
struct pm_index {
	struct pm_entry *ents;
	size_t nr, cap;
	struct pm_seg *segs; /* sorted by start, disjoint; valid when !dirty */
	size_t nr_segs;
	bool dirty;
	size_t max;	  /* entries kept at most (0: no limit); later ones are dropped */
	uint64_t dropped; /* entries not added: over max */
};

/* Appends an entry (the newest so far), or counts it in dropped past max. 0 or -ENOMEM. */
int pm_index__add(struct pm_index *ix, uint64_t start, uint64_t end, uint64_t ts, const char *name);
/* Builds segs from ents (later-wins), O(n log n). Returns 0 or -ENOMEM. */
int pm_index__build(struct pm_index *ix);
/* Binary search; the index must be built. NULL if no entry covers @ip. */
const struct pm_entry *pm_index__find(const struct pm_index *ix, uint64_t ip);
/* Newest entry covering @ip with ts <= @ts (linear scan). */
const struct pm_entry *pm_index__find_at(const struct pm_index *ix, uint64_t ip, uint64_t ts);
void pm_index__free(struct pm_index *ix);

/* Where parsed entries and counters go. */
struct pm_sink {
	struct pm_index *ix;
	struct strset *strs;
	struct perfmaps_stats *st;
};

/* perf-map text parser state across reads. */
struct pm_text_state {
	bool skipping; /* inside a line longer than PM_MAX_LINE: drop bytes to its newline */
};

/*
 * Parses the perf-map text in buf[0..len): each complete line "START SIZE name" (hex,
 * optional 0x/0X, blanks between the numbers, one blank before the name, which runs to
 * the newline and keeps every byte but NUL, turned into '?'). Returns the bytes consumed;
 * an unterminated last line is left for the next call unless @final. Bad lines are counted
 * in st->lines_bad and skipped. *err is 0 or -ENOMEM (then parsing stopped).
 */
size_t pm_text__parse(struct pm_text_state *ts, const char *buf, size_t len, bool final,
		      struct pm_sink *sink, int *err);

/* Parses one line without its newline; adds it or counts it bad. 0 or -ENOMEM. */
int pm_text__line(const char *line, size_t len, struct pm_sink *sink);

struct pm_jd_state {
	bool have_header;
	bool swap;	      /* file written with the other byte order */
	bool arch_ts;	      /* timestamps are not CLOCK_MONOTONIC: stored as 0 */
	bool closed;	      /* JIT_CODE_CLOSE seen: nothing after it is read */
	bool broken;	      /* unrecoverable (bad magic, record size < 16): nothing more read */
	struct hashmap codes; /* code_index (hash__u64) -> entry name, for JIT_CODE_MOVE */
};

/*
 * Parses jitdump bytes: buf[0..len) holds the file from the current offset, and @avail
 * bytes exist in the file from there (avail >= len). Returns the bytes consumed, which
 * may exceed len when the unread tail of a large record (its code) is skipped. *need is
 * set to the number of bytes the next call's buf must hold (from the first unconsumed
 * byte) to make progress; 0 when the file holds nothing more to parse. *err is 0 or
 * -ENOMEM.
 */
uint64_t pm_jd__parse(struct pm_jd_state *js, const uint8_t *buf, size_t len, uint64_t avail,
		      size_t *need, struct pm_sink *sink, int *err);
void pm_jd__reset(struct pm_jd_state *js);

#endif /* SCORCH_PERFMAP_PRIVATE_H */
