// SPDX-License-Identifier: MIT
/*
 * A workload that moves the outermost frame of its main thread: first it runs on a
 * coroutine stack (makecontext) kept inside main()'s own frame, whose walks end at
 * co_entry (its CFI marks the return address undefined, as a thread's clone3 does), a
 * few KiB below the real stack's outermost frame; then on the real stack, below that
 * coroutine area, whose walks need main() and _start above it. A stack
 * top learned in the first phase bounds the copies of the second too short: the profiler
 * must notice (the walks end truncated) and learn the new top, not keep cutting stacks.
 * usage: stacktop SECONDS     prints "stacktop: done" after SECONDS on each stack
 * Built by tests/unwind/CMakeLists.txt: cc -O2 -fomit-frame-pointer -g stacktop.c -o stacktop
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

static double seconds;
static ucontext_t main_ctx, co_ctx;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn(void)
{
	double end = now() + seconds;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			sink = sink * 6364136223846793005UL + 1;
}

__attribute__((noinline, used)) static void on_coroutine(void)
{
	burn();
	sink++;
}

/* The coroutine's first frame: the outermost of its walks (rsp realigned for the call). */
void co_entry(void);
__asm__(".text\n"
	".type co_entry, @function\n"
	"co_entry:\n"
	".cfi_startproc\n"
	".cfi_undefined rip\n"
	"	sub $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	call on_coroutine\n"
	"	add $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size co_entry, .-co_entry\n");

__attribute__((noinline)) static void on_stack(void)
{
	burn();
	sink++;
}

int main(int argc, char **argv)
{
	char co_stack[8192] __attribute__((aligned(16)));

	seconds = argc == 2 ? strtod(argv[1], NULL) : 0;
	if (!(seconds > 0)) {
		fprintf(stderr, "usage: stacktop SECONDS\n");
		return 2;
	}
	if (getcontext(&co_ctx)) {
		perror("stacktop: getcontext");
		return 1;
	}
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = sizeof(co_stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co_entry, 0);
	if (swapcontext(&main_ctx, &co_ctx)) {
		perror("stacktop: swapcontext");
		return 1;
	}
	on_stack();
	printf("stacktop: done\n");
	return (int)(sink & 0);
}
