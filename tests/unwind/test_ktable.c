// SPDX-License-Identifier: MIT
/*
 * unwind_ktable__build() against the unwinder's own row lookup (cfi__row(), which runs
 * an FDE's CFA program up to one address): for every 7th byte of the code the FDEs of
 * real files cover, the compiled row found by binary search must give the rule the
 * program gives there, and addresses no FDE covers must find an INVALID row.
 * Files: Debian's libc and, when present, python3.11 and ld.so.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
static const struct unwind_krow *find(const struct unwind_krow *rows, size_t nr, uint64_t pc)
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

static void check_file(const char *path, bool required)
{
	struct unwind_ktable_stats st;
	struct unwind_krow *rows = NULL;
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
	CHECK(nr > 100 && st.fdes > 100, "%s: %zu rows of %llu FDEs", path, nr,
	      (unsigned long long)st.fdes);
	for (i = 1; i < nr; i++)
		CHECK(rows[i - 1].pc < rows[i].pc, "%s: rows not sorted at %zu", path, i);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(elf && !ufile__parse(&f, elf), "%s: cannot parse", path);
	for (pc = nr ? rows[0].pc : 0; nr && pc < rows[nr - 1].pc; pc += 7) {
		const struct unwind_krow *k = find(rows, nr, pc);
		struct unwind_krow want;
		struct row r;

		err = cfi__row(&f, pc, &r);
		if (err) {
			/* no FDE (a gap) or one that cannot be read: nothing to follow */
			CHECK(k && k->cfa == UNWIND_KROW_INVALID,
			      "%s: pc %#llx outside FDEs has rule %d", path, (unsigned long long)pc,
			      k ? k->cfa : -1);
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
	CHECK(checked > 1000, "%s: only %zu addresses checked", path, checked);
	ufile__clear(&f);
	if (elf)
		elf_end(elf);
	free(rows);
	close(fd);
}

int main(void)
{
	elf_version(EV_CURRENT);
	check_file("/usr/lib/x86_64-linux-gnu/libc.so.6", true);
	check_file("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", true);
	check_file("/usr/bin/python3.11", false);
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
