// SPDX-License-Identifier: MIT
/* tests/symbolize: shared library fixture; the exact build command is in CMakeLists.txt. */

int symfix_lib_func(int x)
{
	return x * 3 + 1;
}

/* local: in .symtab only, so a stripped copy cannot name it */
static int symfix_lib_local(int x)
{
	return x ^ 0x55;
}

int symfix_lib_call_local(int x)
{
	return symfix_lib_local(x) + 1;
}

/* small and sized: the padding before the aligned function below belongs to no symbol */
int symfix_lib_before_gap(int x)
{
	return x + 7;
}

__attribute__((aligned(256))) int symfix_lib_after_gap(int x)
{
	return x - 7;
}

/*
 * Addresses as the library itself sees them, through hidden aliases: a non-PIE
 * executable taking &symfix_lib_func would get its own canonical PLT entry instead.
 * The aliases are local symbols at the same address: the global name must win.
 */
extern int symfix_lib_func_alias(int)
	__attribute__((alias("symfix_lib_func"), visibility("hidden")));
extern int symfix_lib_after_gap_alias(int)
	__attribute__((alias("symfix_lib_after_gap"), visibility("hidden")));
extern int symfix_lib_before_gap_alias(int)
	__attribute__((alias("symfix_lib_before_gap"), visibility("hidden")));

void symfix_lib_addrs(void **func, void **local, void **before_gap, void **after_gap)
{
	*func = (void *)symfix_lib_func_alias;
	*local = (void *)symfix_lib_local;
	*before_gap = (void *)symfix_lib_before_gap_alias;
	*after_gap = (void *)symfix_lib_after_gap_alias;
}
