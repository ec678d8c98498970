// SPDX-License-Identifier: MIT
/*
 * tests/symbolize: fixture program (built PIE and non-PIE, see CMakeLists.txt). Prints
 * "name 0xaddr" lines for known functions, "ret 0xaddr" for a return address that is
 * just past its function's last instruction (a call), then "ready", and blocks on stdin.
 */
#include <stdio.h>
#include <unistd.h>

void symfix_lib_addrs(void **func, void **local, void **before_gap, void **after_gap);

int symfix_exe_func(int x)
{
	return x * 5;
}

static int symfix_exe_local(int x)
{
	return x + 11;
}

__attribute__((noinline, noreturn)) static void symfix_park(void)
{
	char c;

	printf("ret %p\n", __builtin_return_address(0));
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	_exit(0);
}

/* its last instruction is the call: the return address is outside the function */
__attribute__((noinline)) void symfix_ends_with_call(void)
{
	symfix_park();
}

int symfix_after_call(int x)
{
	return x + 1;
}

int main(void)
{
	void *func, *local, *before_gap, *after_gap;

	symfix_lib_addrs(&func, &local, &before_gap, &after_gap);
	printf("exe_func %p\n", (void *)symfix_exe_func);
	printf("exe_local %p\n", (void *)symfix_exe_local);
	printf("ends_with_call %p\n", (void *)symfix_ends_with_call);
	printf("after_call %p\n", (void *)symfix_after_call);
	printf("lib_func %p\n", func);
	printf("lib_local %p\n", local);
	printf("lib_before_gap %p\n", before_gap);
	printf("lib_after_gap %p\n", after_gap);
	symfix_ends_with_call();
}
