/* SPDX-License-Identifier: MIT */
/*
 * tests/perfmap: builds jitdump files byte for byte as writers lay them out, from
 * linux tools/perf/Documentation/jitdump-specification.txt. Julia writes its jitdump
 * through LLVM's PerfJITEventListener: a 40-byte header (magic "JiTD" = 0x4A695444,
 * version 1, total_size 40, e_machine of /proc/self/exe, pad 0, pid, CLOCK_MONOTONIC
 * timestamp, flags 0), then for every function a JIT_CODE_DEBUG_INFO record (when it has
 * line info; entry addresses are the code address + 0x40) *before* its JIT_CODE_LOAD
 * record, whose vma is 0, code_addr the address, code_index counts from 1, followed by the
 * NUL-terminated name and the code bytes. Host byte order; @swap writes the other one.
 */
#ifndef SCORCH_TEST_JITDUMP_WRITER_H
#define SCORCH_TEST_JITDUMP_WRITER_H

#include <byteswap.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

struct jd_buf {
	uint8_t *data;
	size_t len, cap;
	bool swap;
};

static inline void jd_put(struct jd_buf *b, const void *p, size_t n)
{
	if (array__grow((void **)&b->data, &b->cap, b->len + n, 1))
		abort();
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static inline void jd_u32(struct jd_buf *b, uint32_t v)
{
	if (b->swap)
		v = bswap_32(v);
	jd_put(b, &v, 4);
}

static inline void jd_u64(struct jd_buf *b, uint64_t v)
{
	if (b->swap)
		v = bswap_64(v);
	jd_put(b, &v, 8);
}

static inline void jd_header(struct jd_buf *b, uint32_t pid, uint64_t ts)
{
	jd_u32(b, 0x4A695444); /* "JiTD" */
	jd_u32(b, 1);	       /* version */
	jd_u32(b, 40);	       /* total_size */
	jd_u32(b, 62);	       /* EM_X86_64 */
	jd_u32(b, 0);	       /* pad1 */
	jd_u32(b, pid);
	jd_u64(b, ts);
	jd_u64(b, 0); /* flags */
}

/* JIT_CODE_LOAD as LLVM's NotifyCode() writes it: vma 0, then name and code. */
static inline void jd_load(struct jd_buf *b, uint64_t ts, uint32_t pid, uint32_t tid, uint64_t addr,
			   uint64_t size, uint64_t index, const char *name)
{
	size_t nl = strlen(name) + 1, i;

	jd_u32(b, 0);
	jd_u32(b, (uint32_t)(16 + 40 + nl + size));
	jd_u64(b, ts);
	jd_u32(b, pid);
	jd_u32(b, tid);
	jd_u64(b, 0); /* vma */
	jd_u64(b, addr);
	jd_u64(b, size);
	jd_u64(b, index);
	jd_put(b, name, nl);
	for (i = 0; i < size; i++)
		jd_put(b, &(uint8_t){0xc3}, 1); /* code bytes: ret */
}

/* JIT_CODE_DEBUG_INFO with @nr entries all in @file, lines 1.., as NotifyDebug() does. */
static inline void jd_debug(struct jd_buf *b, uint64_t ts, uint64_t addr, unsigned nr,
			    const char *file)
{
	size_t fl = strlen(file) + 1;
	unsigned i;

	jd_u32(b, 2);
	jd_u32(b, (uint32_t)(16 + 16 + nr * (16 + fl)));
	jd_u64(b, ts);
	jd_u64(b, addr);
	jd_u64(b, nr);
	for (i = 0; i < nr; i++) {
		jd_u64(b, addr + 0x40 + 4 * i);
		jd_u32(b, 1 + i); /* line */
		jd_u32(b, 0);	  /* discriminator */
		jd_put(b, file, fl);
	}
}

/* JIT_CODE_MOVE (not written by LLVM; V8 and .NET do). */
static inline void jd_move(struct jd_buf *b, uint64_t ts, uint64_t old_addr, uint64_t new_addr,
			   uint64_t size, uint64_t index)
{
	jd_u32(b, 1);
	jd_u32(b, 16 + 48);
	jd_u64(b, ts);
	jd_u32(b, 1);
	jd_u32(b, 1);
	jd_u64(b, new_addr); /* vma */
	jd_u64(b, old_addr);
	jd_u64(b, new_addr);
	jd_u64(b, size);
	jd_u64(b, index);
}

static inline void jd_close(struct jd_buf *b, uint64_t ts)
{
	jd_u32(b, 3);
	jd_u32(b, 16);
	jd_u64(b, ts);
}

/* The Julia-style fixture the tests share: fib and its jfptr wrapper, then a recompile. */
#define JULIA_FIB_ADDR	 0x7f3a2c001000ull
#define JULIA_FIB_SIZE	 0x90
#define JULIA_JFPTR_ADDR 0x7f3a2c001100ull
#define JULIA_JFPTR_SIZE 0x30
static inline void jd_julia_fixture(struct jd_buf *b, uint32_t pid)
{
	jd_header(b, pid, 1000);
	jd_debug(b, 1100, JULIA_FIB_ADDR, 3, "/home/user/fib.jl");
	jd_load(b, 1101, pid, pid, JULIA_FIB_ADDR, JULIA_FIB_SIZE, 1, "julia_fib_17");
	jd_load(b, 1102, pid, pid, JULIA_JFPTR_ADDR, JULIA_JFPTR_SIZE, 2, "jfptr_fib_18");
	/* a later specialization reuses fib's first 0x40 bytes (freed and re-JITted) */
	jd_debug(b, 2000, JULIA_FIB_ADDR, 1, "/home/user/fib.jl");
	jd_load(b, 2001, pid, pid, JULIA_FIB_ADDR, 0x40, 3, "julia_fib_42");
}

#endif /* SCORCH_TEST_JITDUMP_WRITER_H */
