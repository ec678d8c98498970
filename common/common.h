/* SPDX-License-Identifier: MIT */
/* common: logging, interning, hash tables and bounded I/O shared by every scorch module. */
#ifndef SCORCH_COMMON_H
#define SCORCH_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Logging. One process-wide sink; modules call pr_*() and never read the level.
 * Messages are git-style: lowercase, no final period, "subsystem: what failed: why".
 * Remedies go on their own line through pr_hint(), printed as "hint: ...".
 */
enum log_level {
	LOG_ERROR = 0,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
};

typedef void (*log_fn_t)(enum log_level level, const char *fmt, va_list ap);

/* Messages above @level are dropped. Default LOG_INFO. */
void log__set_level(enum log_level level);
/* True when a message at @level would be printed (to skip expensive formatting). */
bool log__enabled(enum log_level level);
/* Replace the sink (default: vfprintf to stderr). NULL restores the default. */
void log__set_fn(log_fn_t fn);
void log__print(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Names the subcommand that is running (a static string, NULL: none): error and
 * warning messages "scorch: X" are then printed "scorch: @cmd: X" (once, when X
 * already starts with "@cmd: "), also those of the libraries it calls.
 */
void log__set_command(const char *cmd);

/*
 * The hint: line for a file @path that could not be opened (-errno @err) to read it
 * (@write false) or to create a file in its directory (@write true), when the error has
 * a remedy of its own: EACCES and EPERM name the file or directory and the user that
 * may not read or write it, EROFS the read-only file system, ENOENT (writing) the
 * missing directory. Returns true when it logged one; false when the caller's own hint
 * (a name to check) fits better.
 */
bool log__hint_open(const char *path, int err, bool write);

#define pr_err(fmt, ...)   log__print(LOG_ERROR, "scorch: " fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...)  log__print(LOG_WARN, "scorch: " fmt, ##__VA_ARGS__)
#define pr_hint(fmt, ...)  log__print(LOG_ERROR, "hint: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)  log__print(LOG_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) log__print(LOG_DEBUG, "debug: " fmt, ##__VA_ARGS__)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)     ((a) < (b) ? (a) : (b))
#define MAX(a, b)     ((a) > (b) ? (a) : (b))

/*
 * The one array grower. Makes room in *@p, an array of *@cap elements of @elem bytes
 * (@elem > 0; NULL and 0 before the first call), for @need elements: when @need > *@cap, the
 * array is reallocated to *@cap doubled (64 when 0) until it holds @need, its contents
 * kept, and *@cap set to the new size. Returns 0 (nothing done when @need <= *@cap),
 * or -ENOMEM when realloc() fails or the size would overflow size_t; *@p and *@cap are
 * unchanged then, and *@p stays the caller's to free. Callers that append one element
 * at a time pass nr + 1 and check nr + more for overflow themselves.
 */
int array__grow(void **p, size_t *cap, size_t need, size_t elem);

/*
 * String interning. strset__intern() returns a pointer that stays valid until
 * strset__free(); equal strings give equal pointers, so callers may compare
 * interned strings by pointer. Memory comes from an arena: no per-string malloc.
 */
struct strset;

struct strset *strset__new(void);
void strset__free(struct strset *set);
/* Returns the interned copy of @str[0..len) (NUL-terminated), or NULL (errno=ENOMEM). */
const char *strset__intern_len(struct strset *set, const char *str, size_t len);
const char *strset__intern(struct strset *set, const char *str);
/* Number of distinct strings held. */
size_t strset__count(const struct strset *set);

/* 64-bit FNV-1a style hash with a final mix; stable across runs. */
uint64_t hash__bytes(const void *data, size_t len, uint64_t seed);
/*
 * A 64-bit mix of @x that is a bijection: two keys of at most 64 bits (an integer, a
 * pointer) are equal exactly when their hash__u64() are, so a hash table needs no
 * equality test for them (hashmap_eq_fn NULL). Stable across runs.
 */
uint64_t hash__u64(uint64_t x);

/*
 * Hash table of (hash, value) pairs: open addressing with linear probing in a power of
 * two of slots, at most 3/4 full, grown by doubling. The caller owns the entries: a
 * value names one (a pointer, an index + 1 into the caller's array, or the datum
 * itself) and is never 0. The caller hashes its keys (hash__bytes(), hash__u64()) and
 * tells keys of one hash apart with an @eq callback, called with the @ctx it passed and
 * each value stored under the same 64-bit hash; NULL @eq: keys are equal when their
 * hashes are (a key hashed by hash__u64()).
 * A zeroed struct hashmap is an empty table; nothing is allocated before the first
 * insert. Not thread-safe. Values move between slots: keep values, not slot addresses.
 */
struct hashmap_slot {
	uint64_t hash;
	uint64_t val; /* 0: empty */
};

struct hashmap {
	struct hashmap_slot *slots;
	size_t nr;	 /* values held */
	size_t nr_slots; /* 0 or a power of two */
};

typedef bool (*hashmap_eq_fn)(uint64_t val, const void *ctx);

/* The value of the key @ctx describes (hashed to @hash), or 0 when it is absent. */
uint64_t hashmap__find(const struct hashmap *hm, uint64_t hash, hashmap_eq_fn eq, const void *ctx);
/*
 * The same without a callback, for the innermost loops (folded parsing): returns the
 * values stored under @hash one by one, then 0; *@probe starts at 0.
 *	size_t probe = 0;
 *	while ((val = hashmap__match(hm, hash, &probe)))
 *		if (key_is(val, key))
 *			return val;
 */
static inline uint64_t hashmap__match(const struct hashmap *hm, uint64_t hash, size_t *probe)
{
	size_t mask = hm->nr_slots - 1;
	const struct hashmap_slot *s;

	if (!hm->nr)
		return 0;
	for (; (s = &hm->slots[(hash + *probe) & mask])->val; (*probe)++) {
		if (s->hash == hash) {
			(*probe)++;
			return s->val;
		}
	}
	return 0;
}

/*
 * Adds @val under @hash, without looking for an equal key (find it first: a key
 * inserted twice is held twice). Returns 0; -EINVAL for a value 0; -ENOMEM; -EOVERFLOW
 * when its slots would take more than SIZE_MAX / 2 bytes. Unchanged on failure.
 */
int hashmap__insert(struct hashmap *hm, uint64_t hash, uint64_t val);
/* Makes room for @more values beyond those held: 0, -ENOMEM or -EOVERFLOW. */
int hashmap__reserve(struct hashmap *hm, size_t more);
/* Removes the key @ctx describes and returns its value (the entry is the caller's), or 0. */
uint64_t hashmap__remove(struct hashmap *hm, uint64_t hash, hashmap_eq_fn eq, const void *ctx);
/* Removes every value, keeping the slots for the next ones. */
void hashmap__clear(struct hashmap *hm);
/* Frees the slots (not the entries) and leaves an empty table. NULL is ignored. */
void hashmap__free(struct hashmap *hm);

/*
 * Iteration over every value once, in slot order (fixed by the hashes and the order of
 * insertion; not sorted):
 *	struct hashmap_iter it;
 *	uint64_t val;
 *	for (hashmap__iter_init(hm, &it); hashmap__iter_next(hm, &it, &val);)
 *		if (done_with(val))
 *			hashmap__iter_remove(hm, &it);
 * hashmap__iter_remove() removes the value last returned; the iteration still visits
 * every other value once. Nothing may be inserted until the iteration ends.
 */
struct hashmap_iter {
	size_t pos, left, cur;
};

void hashmap__iter_init(const struct hashmap *hm, struct hashmap_iter *it);
bool hashmap__iter_next(const struct hashmap *hm, struct hashmap_iter *it, uint64_t *val);
void hashmap__iter_remove(struct hashmap *hm, struct hashmap_iter *it);

/*
 * Bounded reads of files other users control. Opens with O_NOFOLLOW|O_CLOEXEC
 * relative to @dirfd (AT_FDCWD for a plain path), refuses anything that is not a
 * regular file (procfs files are regular), reads at most @max bytes.
 * On success *buf is a malloc'ed, NUL-terminated buffer owned by the caller,
 * *len its length; returns 0. Returns -errno on failure, -EFBIG if the file holds
 * more than @max bytes (nothing is returned then).
 */
int file__read_bounded(int dirfd, const char *path, size_t max, char **buf, size_t *len);

/*
 * Bounded line reading. A line reader returns the lines of @in one at a time
 * without ever holding more than about @max + 64 KiB of one line: a line longer
 * than @max bytes (newline excluded) is read through to its newline without being
 * kept, counted in ->skipped and not returned. A last line without its newline is
 * returned. Input is read in chunks with fread(), so a line is returned once its
 * chunk has arrived (not for interactive use).
 */
#define LINE_MAX_FOLDED (1u << 20) /* folded and perf script lines: 1 MiB */

struct line_reader {
	FILE *in;
	char *buf;
	size_t cap, have, pos, max;
	size_t skipped; /* lines over @max, read through and dropped */
	bool skipping, eof;
	bool by_line; /* line_reader__init_interactive() */
};

/* Prepares @lr to read @in with lines of at most @max bytes. Never fails. */
void line_reader__init(struct line_reader *lr, FILE *in, size_t max);
/* The same for input typed or piped a line at a time: each line is returned as soon as
 * it is complete (reads stop at a newline instead of filling 64 KiB). */
void line_reader__init_interactive(struct line_reader *lr, FILE *in, size_t max);
/*
 * Returns 1 and the next line in *line (writable, NUL-terminated, its newline removed,
 * borrowed until the next call) and its length in *len (NULs inside count); 0 at the
 * end of the input; -ENOMEM, or -errno (-EIO when errno is unset) on a read error.
 */
int line_reader__next(struct line_reader *lr, char **line, size_t *len);
/* Frees the buffer; @lr may be read again only after line_reader__init(). */
void line_reader__free(struct line_reader *lr);
/*
 * Warns once, when lines were skipped: "scorch: @what: @name: N lines over X skipped",
 * with a hint naming the limit. Does nothing when ->skipped is 0.
 */
void line_reader__report(const struct line_reader *lr, const char *what, const char *name);

/*
 * Command lines. A subcommand's getopt_long() table is its own options followed by the
 * groups it shares with others (symbolize.h's names, flamegraph.h's flame graph
 * options), joined by cli__options(). getopt_long() runs with opterr = 0 and ':' first
 * in the optstring; its '?' and ':' go to cli__bad_option(). --help exits 0, a usage
 * error 2 (cmds.h).
 */
struct option;
/* Joins @nr tables, each ended by a zero entry, into one malloc'ed table so ended;
 * NULL when out of memory. */
struct option *cli__options(const struct option *const tables[], size_t nr);
/*
 * Reports getopt_long()'s @c, '?' (an unknown option) or ':' (a value missing), for
 * `scorch @cmd`: "scorch: @cmd: unknown option '--x'" and a hint naming --help.
 * Returns -EINVAL.
 */
int cli__bad_option(const char *cmd, int c, char *const argv[]);

/*
 * Number parsing with full validation (no trailing garbage, range checked).
 * Return 0 or -EINVAL / -ERANGE.
 */
int parse__u64(const char *s, int base, uint64_t *out);
int parse__long(const char *s, long min, long max, long *out);
int parse__double(const char *s, double min, double max, double *out);

/*
 * Is the last component of @path (@len bytes, no NUL needed) "jit-<digits>.dump", the
 * name perf gives a runtime's jitdump? Runtimes map that file executable for perf to
 * find: a marker, not code.
 */
bool path__is_jitdump(const char *path, size_t len);

/*
 * /proc/@pid/stat, the fields scorch uses: the state letter ('R', 'S', 'Z' for a
 * zombie, ...), the flags (PF_KTHREAD 0x00200000 marks a kernel thread) and the start
 * time (clock ticks after boot). Returns 0, or -errno of the read, -EINVAL if malformed.
 */
struct proc_stat {
	char state;
	uint64_t flags;
	uint64_t start_time;
};
#define PROC_PF_KTHREAD 0x00200000
int proc__read_stat(int pid, struct proc_stat *st);

/* Parses a CPU list file such as /sys/devices/system/cpu/online ("0-3,5") into
 * @online[0..nr) (set to true; CPUs >= @nr ignored). Returns 0, -EINVAL (malformed),
 * -errno of the read. */
int cpu_list__parse(const char *path, bool *online, int nr);

/*
 * Atomic output: out__open() returns a stream for @path ("-" or NULL: stdout; "" is
 * refused). An existing device or FIFO (/dev/null) is written in place. For a regular
 * file, data goes to a temporary "@path.tmp.PID.XXXXXX" in the same directory, and
 * out__close(.., commit=true) flushes, fsyncs and renames it over @path, so an
 * interrupted run never leaves half a file; commit=false removes it. Temporaries of
 * @path that a killed run left (ours, their PID gone) are removed at open.
 * Modes: a new file gets 0666 & ~umask; a file replaced keeps its mode and its owner
 * and group, or is refused when they cannot be kept. A symbolic link at @path is
 * followed only when root or we own it (the file it names is replaced); one another
 * user owns is refused (-ELOOP).
 * Both return 0 or -errno and log a one-line error naming the file.
 *
 * out__fail() reports that writing @out failed with @err (-errno, e.g. the -EIO of a
 * stream's error flag) as the first write error the file met (-ENOSPC), once per file
 * (out__close() does not report it again), and returns that error.
 */
struct out_sink;
struct out_file {
	FILE *fp;
	char *path; /* NULL for stdout or a device written in place */
	char *tmp_path;
	struct out_sink *sink; /* the temporary's descriptor and first write error */
	bool direct;	       /* fp is a device or FIFO opened in place */
	bool reported;	       /* a write error was reported */
};
int out__open(struct out_file *out, const char *path);
int out__fail(struct out_file *out, int err);
int out__close(struct out_file *out, bool commit);

#endif /* SCORCH_COMMON_H */
