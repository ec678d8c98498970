/* SPDX-License-Identifier: MIT */
/* engine: copies.c: --unwind dwarf off CPU, stacks waiting for their interval */
#ifndef SCORCH_ENGINE_COPIES_H
#define SCORCH_ENGINE_COPIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "engine.h"

/*
 * A thread's stacks, copied at switch-out and unwound, until the record with the
 * interval's length (same tid and switch-out time @ts) arrives. The user stack is
 * ips[0..user_nr), the kernel stack ips[user_nr..user_nr + kernel_nr), leaf first.
 */
struct pending_copy {
	uint32_t tid;
	uint32_t user_nr, kernel_nr;
	uint64_t ts;
	struct count_key key;
	__u64 ips[];
};

/* At most one pending copy per thread (a thread is off CPU once at a time). */
struct copytab;
struct copytab *copytab__new(void);
void copytab__free(struct copytab *t);
/*
 * Stores a copy of the stacks for (@tid, @ts). A copy of @tid still waiting is
 * replaced and *@replaced set: its interval never came (lost). Returns 0, -EINVAL
 * (more than SCORCH_MAX_STACK_DEPTH frames), -ENOMEM.
 */
int copytab__put(struct copytab *t, uint32_t tid, uint64_t ts, const struct count_key *key,
		 const __u64 *user, uint32_t user_nr, const __u64 *kernel, uint32_t kernel_nr,
		 bool *replaced);
/* The copy of (@tid, @ts), left in the table, or NULL (none, or another interval's). */
struct pending_copy *copytab__find(struct copytab *t, uint32_t tid, uint64_t ts);
/* Takes out the copy of (@tid, @ts), or NULL (none, or another interval's). Caller frees. */
struct pending_copy *copytab__take(struct copytab *t, uint32_t tid, uint64_t ts);
/* Takes out any copy (NULL when empty). Caller frees. */
struct pending_copy *copytab__pop(struct copytab *t);
size_t copytab__nr(const struct copytab *t);

#endif /* SCORCH_ENGINE_COPIES_H */
