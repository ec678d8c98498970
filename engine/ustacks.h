/* SPDX-License-Identifier: MIT */
/* engine: ustacks.c: --unwind dwarf stacks counted in user space */
#ifndef SCORCH_ENGINE_USTACKS_H
#define SCORCH_ENGINE_USTACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "engine.h"
#include "sampler.h"

struct ustacks;
struct ustacks *ustacks__new(void);
void ustacks__free(struct ustacks *t);
/*
 * Adds @value to the count of (@offcpu, @key, @user, @kernel); a NULL stack differs from
 * an empty one. Returns 0, -EINVAL (more than SCORCH_MAX_STACK_DEPTH frames), -ENOMEM.
 */
int ustacks__add(struct ustacks *t, bool offcpu, const struct count_key *key, uint64_t value,
		 const struct stack *user, const struct stack *kernel);
/*
 * Passes the counts @select picks (all with NULL) to @cb, as sampler__drain() does, and
 * removes them; @ubuf and @kbuf hold the stacks during each call. Stops at the first
 * error of @cb (the counts passed so far are removed) and returns it.
 */
int ustacks__take(struct ustacks *t, sampler_select_fn select, sampler_drain_fn cb, void *ctx,
		  struct stack *ubuf, struct stack *kbuf);
size_t ustacks__nr(const struct ustacks *t);
/*
 * Distinct stacks held before record names them all (ustacks__full()), those of live
 * processes too: raw stacks of long-lived threads (a distinct pair of user and kernel
 * addresses each, up to 2 KiB) would otherwise grow until the end. About 30 MiB.
 */
#define USTACKS_MAX_HELD (64 * 1024)
bool ustacks__full(const struct ustacks *t);

#endif /* SCORCH_ENGINE_USTACKS_H */
