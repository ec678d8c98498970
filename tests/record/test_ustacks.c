// SPDX-License-Identifier: MIT
/*
 * tests/record: the user-space stack table of --unwind dwarf (profiler/ustacks.c).
 * Equal (key, stacks) samples add up into one count; a missing user stack, an empty
 * one, another key or the off-CPU flag are other counts; take() passes the counts a
 * selector picks with their stacks intact, removes them and leaves the others.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "ustacks.h"
#include "sampler.h"

struct seen {
	int calls;
	uint64_t total;
	uint32_t pids[8];
};

static int collect(void *ctx, bool offcpu, const struct count_key *key, uint64_t value,
		   const struct stack *user, const struct stack *kernel)
{
	struct seen *s = ctx;

	(void)offcpu;
	if (key->pid == 1) {
		/* the stacks of pid 1 were added as {10, 20, 30} and {99} */
		CHECK(user && user->nr == 3 && user->ips[0] == 10 && user->ips[2] == 30);
		CHECK(kernel && kernel->nr == 1 && kernel->ips[0] == 99);
	}
	if (s->calls < 8)
		s->pids[s->calls] = key->pid;
	s->calls++;
	s->total += value;
	return 0;
}

static bool pid_two(void *ctx, const struct count_key *key)
{
	(void)ctx;
	return key->pid == 2;
}

int main(void)
{
	static struct stack user, kernel, empty, ubuf, kbuf, big;
	struct ustacks *t = ustacks__new();
	struct count_key k1 = {.pid = 1, .gen = 5}, k2 = {.pid = 2, .gen = 6};
	struct seen s = {0};

	CHECK(t);
	memcpy(k1.comm, "one", 4);
	memcpy(k2.comm, "two", 4);
	user.nr = 3;
	user.ips[0] = 10;
	user.ips[1] = 20;
	user.ips[2] = 30;
	kernel.nr = 1;
	kernel.ips[0] = 99;

	CHECK(!ustacks__add(t, false, &k1, 1, &user, &kernel));
	CHECK(!ustacks__add(t, false, &k1, 2, &user, &kernel));
	CHECK(ustacks__nr(t) == 1);
	CHECK(!ustacks__add(t, true, &k1, 7, &user, &kernel)); /* off CPU: another count */
	CHECK(!ustacks__add(t, false, &k2, 1, NULL, &kernel));
	CHECK(!ustacks__add(t, false, &k2, 1, &empty, &kernel)); /* empty != missing */
	user.ips[2] = 31;
	CHECK(!ustacks__add(t, false, &k2, 1, &user, NULL));
	CHECK(ustacks__nr(t) == 5);
	big.nr = SCORCH_STACK_WORDS + 1;
	CHECK(ustacks__add(t, false, &k1, 1, &big, NULL) == -EINVAL);

	/* many distinct stacks: the table grows and keeps every count */
	for (int i = 0; i < 5000; i++) {
		struct count_key k = {.pid = 3, .gen = (uint64_t)i};

		CHECK(!ustacks__add(t, false, &k, 1, &user, NULL));
	}
	CHECK(ustacks__nr(t) == 5005);

	CHECK(!ustacks__take(t, pid_two, collect, &s, &ubuf, &kbuf));
	CHECK(s.calls == 3 && s.total == 3);
	CHECK(s.pids[0] == 2 && s.pids[1] == 2 && s.pids[2] == 2);
	CHECK(ustacks__nr(t) == 5002);

	memset(&s, 0, sizeof(s));
	CHECK(!ustacks__take(t, NULL, collect, &s, &ubuf, &kbuf));
	CHECK(s.calls == 5002 && s.total == 3 + 7 + 5000);
	CHECK(ustacks__nr(t) == 0);

	/* the bound: full at USTACKS_MAX_HELD distinct stacks, not before; empty again after */
	for (int i = 0; i < USTACKS_MAX_HELD; i++) {
		struct count_key k = {.pid = 4, .gen = (uint64_t)i};

		CHECK(!ustacks__full(t));
		CHECK(!ustacks__add(t, false, &k, 1, &user, &kernel));
	}
	CHECK(ustacks__full(t));
	memset(&s, 0, sizeof(s));
	CHECK(!ustacks__take(t, NULL, collect, &s, &ubuf, &kbuf));
	CHECK(s.calls == USTACKS_MAX_HELD && !ustacks__full(t));
	ustacks__free(t);
	printf("PASS\n");
	return 0;
}
