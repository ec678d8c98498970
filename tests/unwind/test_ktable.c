// SPDX-License-Identifier: MIT
/*
 * unwind_ktable__build() against the unwinder's own row lookup (cfi__row(), which runs
 * an FDE's CFA program up to one address): for every 7th byte of the code the FDEs of
 * real files cover, the compiled row found by binary search must give the rule the
 * program gives there, and addresses no FDE covers must find an INVALID row.
 * Files: Debian's libc and, when present, python3.11 and ld.so; and the same code built
 * three times (argv[1..3]: dbgframe_code.c with its CFI in .eh_frame, in .debug_frame
 * only, and in a compressed .debug_frame, -gz), whose rules must be the same, function
 * by function, from each.
 * A .debug_frame written here byte by byte checks its index: FDEs out of order, in the
 * 64-bit format with a version 4 CIE, overlapping, at the linkers' address 0, outside
 * the code, pointing at an FDE for their CIE, and a truncated entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "unwind-private.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* The row in force at @pc: the last one starting at or before it, or NULL. */
static const struct kunwind_row *find(const struct kunwind_row *rows, size_t nr, uint64_t pc)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &rows[lo - 1] : NULL;
}

/*
 * Checks the kernel rows of @path against cfi__row() at every @step-th address; at least
 * @min_fdes FDEs and @min_checked addresses with rules.
 */
static void check_file(const char *path, bool required, uint64_t step, uint64_t min_fdes,
		       size_t min_checked)
{
	struct unwind_ktable_stats st;
	struct kunwind_row *rows = NULL;
	struct ufile f = {};
	size_t nr = 0, checked = 0, uncovered = 0, i;
	uint64_t pc;
	Elf *elf;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		CHECK(!required, "cannot open %s", path);
		return;
	}
	err = unwind_ktable__build(fd, 1u << 24, &rows, &nr, &st);
	CHECK(!err, "%s: build: %s", path, strerror(-err));
	CHECK(nr > min_fdes && st.fdes >= min_fdes, "%s: %zu rows of %llu FDEs", path, nr,
	      (unsigned long long)st.fdes);
	for (i = 1; i < nr; i++)
		CHECK(rows[i - 1].pc < rows[i].pc, "%s: rows not sorted at %zu", path, i);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(elf && !ufile__parse(&f, elf), "%s: cannot parse", path);
	for (pc = nr ? rows[0].pc : 0; nr && pc < rows[nr - 1].pc; pc += step) {
		const struct kunwind_row *k = find(rows, nr, pc);
		struct kunwind_row want;
		struct row r;

		err = cfi__row(&f, pc, &r);
		if (err) {
			/* no FDE (a gap) or one that cannot be read: nothing to follow */
			CHECK(k && k->cfa == KROW_INVALID, "%s: pc %#llx outside FDEs has rule %d",
			      path, (unsigned long long)pc, k ? k->cfa : -1);
			uncovered++;
			continue;
		}
		want = ktable__krow(&f, &r.st, r.signal);
		CHECK(k && k->cfa == want.cfa && k->cfa_off == want.cfa_off && k->rbp == want.rbp &&
			      k->rbp_off == want.rbp_off,
		      "%s: pc %#llx: row at %#x (cfa %d%+d rbp %d%+d), the FDE says cfa %d%+d rbp "
		      "%d%+d",
		      path, (unsigned long long)pc, k ? k->pc : 0, k ? k->cfa : -1,
		      k ? k->cfa_off : 0, k ? k->rbp : -1, k ? k->rbp_off : 0, want.cfa,
		      want.cfa_off, want.rbp, want.rbp_off);
		checked++;
		if (failures > 20)
			break;
	}
	printf("%s: %zu rows from %llu FDEs (%llu unreadable), %llu rules the kernel walk cannot "
	       "follow; %zu addresses checked, %zu outside FDEs\n",
	       path, nr, (unsigned long long)st.fdes, (unsigned long long)st.fdes_bad,
	       (unsigned long long)st.invalid, checked, uncovered);
	CHECK(checked >= min_checked, "%s: only %zu addresses checked", path, checked);
	ufile__clear(&f);
	if (elf)
		elf_end(elf);
	free(rows);
	close(fd);
}

/* The rows of one file's CFI: each FDE's, from its first address, and where each ends. */
struct rows {
	const struct ufile *f;
	size_t nr, cap;
	struct {
		uint64_t pc;
		bool end, signal;
		struct row_state st;
	} * r;
};

static int collect(void *ctx, uint64_t pc, const struct row_state *st, bool signal)
{
	struct rows *rs = ctx;

	if (array__grow((void **)&rs->r, &rs->cap, rs->nr + 1, sizeof(*rs->r)))
		return -ENOMEM;
	rs->r[rs->nr].pc = pc;
	rs->r[rs->nr].end = !st;
	rs->r[rs->nr].signal = signal;
	memset(&rs->r[rs->nr].st, 0, sizeof(rs->r[rs->nr].st));
	if (st)
		rs->r[rs->nr].st = *st;
	rs->nr++;
	return 0;
}

/* Rules @a of @fa and @b of @fb are the same (an expression: the same bytes). */
static bool same_rule(const struct ufile *fa, const struct rule *a, const struct ufile *fb,
		      const struct rule *b)
{
	if (a->kind != b->kind || a->reg != b->reg)
		return false;
	if (a->kind != RULE_EXPR && a->kind != RULE_VAL_EXPR)
		return a->off == b->off;
	return a->len == b->len && !memcmp(fa->cfi + a->off, fb->cfi + b->off, a->len);
}

/* Parses @path into @f and its rows into @rs: @debug says where its FDEs must be. */
static void rows_of(const char *path, bool debug, struct ufile *f, struct rows *rs)
{
	uint64_t bad = 1;
	Elf *elf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0, "cannot open %s", path);
	if (fd >= 0)
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(elf && !ufile__parse(f, elf), "%s: cannot parse", path);
	if (debug)
		CHECK(!f->fde_count && f->dbg_count >= 4 && !f->dbg_bad,
		      "%s: %llu .eh_frame FDEs, %llu .debug_frame ones (%llu bad)", path,
		      (unsigned long long)f->fde_count, (unsigned long long)f->dbg_count,
		      (unsigned long long)f->dbg_bad);
	else
		CHECK(f->fde_count >= 4 && !f->dbg_count,
		      "%s: %llu .eh_frame FDEs, %llu .debug_frame", path,
		      (unsigned long long)f->fde_count, (unsigned long long)f->dbg_count);
	rs->f = f;
	CHECK(!cfi__rows(f, collect, rs, &bad) && !bad, "%s: rows: %llu FDEs bad", path,
	      (unsigned long long)bad);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

/* The row of @rs where the FDE starting at @start begins, or rs->nr. */
static size_t fde_rows(const struct rows *rs, uint64_t start)
{
	for (size_t i = 0; i < rs->nr; i++)
		if (rs->r[i].pc == start && !rs->r[i].end && (!i || rs->r[i - 1].end))
			return i;
	return rs->nr;
}

/*
 * The same code with its CFI in .eh_frame (@eh) and in .debug_frame only (@dbg), linked
 * alike (the same addresses): each FDE of .debug_frame has the rows of the .eh_frame FDE
 * at its address, with the same rules; and every FDE of @eh over the code (not the
 * linker's, for .plt and .plt.got) is one of them.
 */
static void check_same_code(const char *eh, const char *dbg)
{
	struct ufile fe = {}, fd = {};
	struct rows re = {}, rd = {};
	size_t fdes = 0, rows = 0, eh_fdes = 0;

	rows_of(eh, false, &fe, &re);
	rows_of(dbg, true, &fd, &rd);
	for (uint64_t k = 0; k < fd.dbg_count && failures < 20; k++) {
		uint64_t start = fd.dbg_table[k].start;
		size_t i = fde_rows(&re, start), j = fde_rows(&rd, start);

		CHECK(i < re.nr && j < rd.nr, "no FDE at %#llx in %s", (unsigned long long)start,
		      i < re.nr ? dbg : eh);
		for (; i < re.nr && j < rd.nr; i++, j++) {
			CHECK(re.r[i].end == rd.r[j].end && re.r[i].pc == rd.r[j].pc &&
				      re.r[i].signal == rd.r[j].signal,
			      "FDE %#llx: %s at %#llx, %s at %#llx", (unsigned long long)start,
			      re.r[i].end ? "end" : "rules", (unsigned long long)re.r[i].pc,
			      rd.r[j].end ? "end" : "rules", (unsigned long long)rd.r[j].pc);
			if (re.r[i].end || rd.r[j].end)
				break;
			CHECK(same_rule(&fe, &re.r[i].st.cfa, &fd, &rd.r[j].st.cfa),
			      "%#llx: CFA rules differ", (unsigned long long)re.r[i].pc);
			for (int r = 0; r < R_NR; r++)
				CHECK(same_rule(&fe, &re.r[i].st.r[r], &fd, &rd.r[j].st.r[r]),
				      "%#llx: rules of register %d differ",
				      (unsigned long long)re.r[i].pc, r);
			rows++;
		}
		fdes++;
	}
	/* @eh's other FDEs are the linker's, for .plt and .plt.got: before the code */
	for (size_t i = 0; i < re.nr; i++)
		if (!re.r[i].end && (!i || re.r[i - 1].end) && fd.dbg_count &&
		    re.r[i].pc >= fd.dbg_table[0].start)
			eh_fdes++;
	printf("%s and %s: %zu rows of %zu FDEs compared\n", eh, dbg, rows, fdes);
	CHECK(fdes >= 4 && fdes == eh_fdes,
	      "%zu FDEs compared, %zu in .eh_frame of %s over the same code", fdes, eh_fdes, eh);
	CHECK(rows > fdes, "only %zu rows compared", rows);
	free(re.r);
	free(rd.r);
	ufile__clear(&fe);
	ufile__clear(&fd);
}

/* A .debug_frame being written: little-endian fields, LEB128 of small values. */
struct dbuf {
	uint8_t b[1024];
	size_t n;
};

static void put(struct dbuf *d, uint64_t v, size_t size)
{
	for (size_t i = 0; i < size && d->n < sizeof(d->b); i++)
		d->b[d->n++] = (uint8_t)(v >> (8 * i));
}

static void put_bytes(struct dbuf *d, const char *bytes, size_t len)
{
	for (size_t i = 0; i < len; i++)
		put(d, (uint8_t)bytes[i], 1);
}

/* Starts an entry (its length patched by entry_end()); returns where it starts. */
static size_t entry_start(struct dbuf *d, bool is64)
{
	size_t at = d->n;

	if (is64)
		put(d, 0xffffffff, 4);
	put(d, 0, is64 ? 8 : 4);
	return at;
}

static void entry_end(struct dbuf *d, size_t at, bool is64)
{
	size_t len_at = at + (is64 ? 4 : 0), body = len_at + (is64 ? 8 : 4);
	uint64_t len = d->n - body;

	for (size_t i = 0; i < (is64 ? 8u : 4u); i++)
		d->b[len_at + i] = (uint8_t)(len >> (8 * i));
}

/* A CIE: CFA = rsp + 8, return address at CFA - 8 (version 4: address sizes too). */
static size_t put_cie(struct dbuf *d, bool is64, int version)
{
	size_t at = entry_start(d, is64);

	put(d, is64 ? UINT64_MAX : 0xffffffff, is64 ? 8 : 4);
	put(d, version, 1);
	put(d, 0, 1); /* augmentation "" */
	if (version == 4)
		put_bytes(d, "\x08\x00", 2);	 /* address_size 8, segment_selector_size 0 */
	put_bytes(d, "\x01\x78", 2);		 /* code_align 1, data_align -8 */
	put(d, 16, 1);				 /* return address: rip (ULEB from version 3) */
	put_bytes(d, "\x0c\x07\x08\x90\x01", 5); /* def_cfa rsp 8; offset rip cfa-8 */
	entry_end(d, at, is64);
	return at;
}

/* An FDE of [@start, + @range) of the CIE at @cie: after one byte, CFA = rsp + 16. */
static void put_fde(struct dbuf *d, bool is64, uint64_t cie, uint64_t start, uint64_t range)
{
	size_t at = entry_start(d, is64);

	put(d, cie, is64 ? 8 : 4);
	put(d, start, 8);
	put(d, range, 8);
	put_bytes(d, "\x41\x0e\x10", 3); /* advance_loc 1; def_cfa_offset 16 */
	entry_end(d, at, is64);
}

static void check_debug_index(void)
{
	static const struct code_span code[] = {{0x1000, 0x3000}};
	struct ufile f = {.dbg_addr = 8};
	struct dbuf d = {};
	struct row r;
	size_t cie1, cie4, fde_a;
	uint64_t bad = 1;
	struct rows rs = {.f = &f};

	cie1 = put_cie(&d, false, 1);
	cie4 = put_cie(&d, true, 4);
	fde_a = d.n;
	put_fde(&d, false, cie1, 0x1000, 0x10);	    /* kept */
	put_fde(&d, false, cie1, 0x1008, 0x18);	    /* overlaps the one before */
	put_fde(&d, true, cie4, 0x2000, 0x40);	    /* kept: 64-bit, version 4 CIE */
	put_fde(&d, false, cie1, 0, 0x10);	    /* code the linker dropped */
	put_fde(&d, false, cie1, 0x90000000, 0x10); /* outside the code */
	put_fde(&d, false, fde_a, 0x2800, 0x10);    /* its "CIE" is an FDE */
	put_fde(&d, false, cie1, 0x1800, 0x10);	    /* kept: sorted before 0x2000 */
	put(&d, 100, 4);			    /* an entry longer than what is left */
	put(&d, 0, 4);
	f.cfi = malloc(d.n);
	CHECK(f.cfi, "no memory");
	if (!f.cfi)
		return;
	memcpy(f.cfi, d.b, d.n);
	f.dbg_len = d.n;
	CHECK(!cfi__index_debug(&f, code, 1), "index");
	CHECK(f.dbg_count == 3 && f.dbg_bad == 5, "%llu FDEs indexed, %llu bad (want 3, 5)",
	      (unsigned long long)f.dbg_count, (unsigned long long)f.dbg_bad);
	for (uint64_t i = 0; i < f.dbg_count && f.dbg_count == 3; i++) {
		static const uint64_t want[] = {0x1000, 0x1800, 0x2000};

		CHECK(f.dbg_table[i].start == want[i], "FDE %llu at %#llx, want %#llx",
		      (unsigned long long)i, (unsigned long long)f.dbg_table[i].start,
		      (unsigned long long)want[i]);
	}
	CHECK(!cfi__row(&f, 0x1000, &r) && r.st.cfa.kind == RULE_REG && r.st.cfa.reg == DWARF_RSP &&
		      r.st.cfa.off == 8 && r.st.r[R_RA].kind == RULE_OFFSET &&
		      r.st.r[R_RA].off == -8,
	      "row at 0x1000");
	CHECK(!cfi__row(&f, 0x100f, &r) && r.st.cfa.off == 16, "row at 0x100f");
	CHECK(!cfi__row(&f, 0x203f, &r) && r.st.cfa.off == 16, "row at 0x203f (64-bit FDE)");
	CHECK(!cfi__row(&f, 0x1800, &r) && r.st.cfa.off == 8, "row at 0x1800");
	CHECK(cfi__row(&f, 0x1010, &r) == -ENOENT, "0x1010: the overlapping FDE was dropped");
	CHECK(cfi__row(&f, 0x2800, &r) == -ENOENT, "0x2800: an FDE without a CIE");
	CHECK(cfi__row(&f, 0x0fff, &r) == -ENOENT && cfi__row(&f, 0x2040, &r) == -ENOENT,
	      "outside the FDEs");
	CHECK(!cfi__rows(&f, collect, &rs, &bad) && !bad && rs.nr == 9,
	      "%zu rows (want 3 FDEs of 2 and an end), %llu bad", rs.nr, (unsigned long long)bad);
	for (size_t i = 1; i < rs.nr; i++)
		CHECK(rs.r[i - 1].pc < rs.r[i].pc, "rows not sorted at %zu", i);
	printf("hand-written .debug_frame: %llu FDEs indexed, %llu refused\n",
	       (unsigned long long)f.dbg_count, (unsigned long long)f.dbg_bad);
	free(rs.r);
	ufile__clear(&f);
}

int main(int argc, char **argv)
{
	elf_version(EV_CURRENT);
	check_file("/usr/lib/x86_64-linux-gnu/libc.so.6", true, 7, 100, 1000);
	check_file("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", true, 7, 100, 1000);
	check_file("/usr/bin/python3.11", false, 7, 100, 1000);
	check_debug_index();
	CHECK(argc == 4, "usage: test_ktable EH.so DEBUG_FRAME.so COMPRESSED_DEBUG_FRAME.so");
	if (argc == 4) {
		check_same_code(argv[1], argv[2]);
		check_same_code(argv[1], argv[3]);
		/* the kernel's rows from .debug_frame: every address of the code */
		check_file(argv[2], true, 1, 4, 100);
	}
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
