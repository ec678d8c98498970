// SPDX-License-Identifier: MIT
/*
 * tests/unwind: code built twice by CMakeLists.txt with the same flags (-O2
 * -fomit-frame-pointer -fno-optimize-sibling-calls -g) but for where its CFI goes:
 * .eh_frame in libdbgframe_eh.so, .debug_frame only (-fno-asynchronous-unwind-tables)
 * in libdbgframe_dbg.so. test_ktable compares the rules both give; test_unwind_oracle
 * walks its own stack through the second. Its frames keep the CFA in rsp (locals, saved
 * registers) and in rbp (alloca). dbg_chain() calls @fn through them; each frame, @fn's
 * included, appends its return address to dbg_ras (outermost first) as it is entered.
 */
#include <alloca.h>

#define DBG_RAS 16

void *dbg_ras[DBG_RAS];
int dbg_nr;
static volatile int sink;

void dbg_chain(void (*fn)(void *), void *arg);

static inline void __attribute__((always_inline)) note(void *ra)
{
	if (dbg_nr < DBG_RAS)
		dbg_ras[dbg_nr++] = ra;
}

__attribute__((noinline)) static void dbg_leaf(void (*fn)(void *), void *arg)
{
	note(__builtin_return_address(0));
	fn(arg);
	sink++;
}

__attribute__((noinline)) static void dbg_alloca(void (*fn)(void *), void *arg, int n)
{
	volatile char *buf = alloca(n);

	note(__builtin_return_address(0));
	buf[0] = (char)n;
	dbg_leaf(fn, arg);
	sink += buf[0];
}

__attribute__((noinline)) static void dbg_recurse(void (*fn)(void *), void *arg, int depth)
{
	volatile long pad[4] = {depth, depth * 3};

	note(__builtin_return_address(0));
	if (depth)
		dbg_recurse(fn, arg, depth - 1);
	else
		dbg_alloca(fn, arg, 100 + depth);
	sink += (int)(pad[0] + pad[1]);
}

void dbg_chain(void (*fn)(void *), void *arg)
{
	dbg_nr = 0;
	note(__builtin_return_address(0));
	dbg_recurse(fn, arg, 2);
	sink++;
}
