/* SPDX-License-Identifier: MIT */
/*
 * unwind: the structures of the unwinder shared by unwind.c (files, walks, the public
 * API) and cfi.c (.eh_frame's and .debug_frame's encoded values, CIEs and FDEs, CFA
 * programs run into rows).
 */
#ifndef SCORCH_UNWIND_PRIVATE_H
#define SCORCH_UNWIND_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind.h"

#define SECTION_MAX	(64u << 20) /* .eh_frame (and .debug_frame) bytes kept per file */
#define DBG_FDES_MAX	(1u << 20)  /* .debug_frame FDEs indexed per file */
#define CODE_SPANS	16	    /* executable segments where .debug_frame FDEs may lie */
#define STACK_PLAUSIBLE (8u << 20)  /* reads this far above sp are stack reads */
#define ROWS_NR		4096	    /* cached rows (a power of two) */
#define STATE_DEPTH	8	    /* DW_CFA_remember_state nesting */
#define EXPR_STACK	16	    /* DWARF expression stack */
#define EXPR_STEPS	256	    /* operations run per expression (branches loop) */
#define CFA_OPS_MAX	65536	    /* CFA instructions run per row (GCC's FDEs: tens) */

#define DW_EH_PE_omit	  0xff
#define DW_EH_PE_absptr	  0x00
#define DW_EH_PE_uleb128  0x01
#define DW_EH_PE_udata2	  0x02
#define DW_EH_PE_udata4	  0x03
#define DW_EH_PE_udata8	  0x04
#define DW_EH_PE_sleb128  0x09
#define DW_EH_PE_sdata2	  0x0a
#define DW_EH_PE_sdata4	  0x0b
#define DW_EH_PE_sdata8	  0x0c
#define DW_EH_PE_pcrel	  0x10
#define DW_EH_PE_datarel  0x30
#define DW_EH_PE_indirect 0x80

/* DWARF register numbers of the x86-64 psABI */
#define DWARF_RBP 6
#define DWARF_RSP 7
#define DWARF_RIP 16

/* One FDE of .debug_frame: it covers [start, end); @off: where it lies in the section. */
struct dbg_fde {
	uint64_t start, end, off;
};

/*
 * The unwind tables of one file, copied out of it (the file may go away): .eh_frame
 * with the search table of its .eh_frame_hdr, and .debug_frame (which has none: one is
 * built when it is read) for the code .eh_frame has no FDE for. Either may be absent.
 */
struct ufile {
	const void *id;
	bool loaded;	   /* false: not read, open failed (process gone) or dropped by trim */
	bool no_cfi;	   /* neither a usable .eh_frame nor a .debug_frame FDE */
	uint64_t last_use; /* unwinder tick of the last lookup */
	uint8_t *hdr;
	uint64_t hdr_vaddr, hdr_len;
	uint64_t fde_count, table_off; /* .eh_frame_hdr's table (fde_count 0: no .eh_frame) */
	/* one copy: .eh_frame in [0, eh_len), then .debug_frame in [eh_len, + dbg_len) */
	uint8_t *cfi;
	uint64_t eh_vaddr, eh_len, dbg_len;
	/* .debug_frame's FDEs by address: disjoint, none over code an .eh_frame FDE covers */
	struct dbg_fde *dbg_table;
	uint64_t dbg_count;
	uint64_t dbg_bad; /* .debug_frame entries not indexed: malformed, outside the code */
	uint8_t dbg_addr; /* the address size of .debug_frame (the ELF class's: 4 or 8) */
};

/* An executable PT_LOAD's addresses [lo, hi): what a .debug_frame FDE may cover. */
struct code_span {
	uint64_t lo, hi;
};

/* How one register of the caller is found (DWARF's register rules). */
enum rule_kind {
	RULE_SAME = 0,	 /* the callee did not change it (rbp's default) */
	RULE_UNDEF,	 /* not recoverable (ra: the outermost frame) */
	RULE_CFA,	 /* is the CFA (rsp's default) */
	RULE_OFFSET,	 /* saved at CFA + off */
	RULE_VAL_OFFSET, /* is CFA + off */
	RULE_REG,	 /* is register reg (+ off: the CFA's rule) */
	RULE_EXPR,	 /* saved at the address an expression computes from the CFA */
	RULE_VAL_EXPR, /* is what an expression computes (from the CFA; the CFA's: from nothing) */
};

struct rule {
	uint8_t kind;
	uint8_t reg;
	uint16_t len; /* expression bytes */
	int32_t off;  /* offset; the expression's offset in the file's CFI copy (ufile.cfi) */
};

/* The registers a walk follows: the CFA's rule, then rbp, rsp and the return address. */
enum { R_RBP, R_RSP, R_RA, R_NR };

struct row_state {
	struct rule cfa, r[R_NR];
};

/*
 * A cached row: how to find the caller's registers at one instruction of one process
 * image. kind: ROW_CFI (rules), ROW_FP (a file without CFI: the frame pointer),
 * ROW_TRAMP (a CPython perf trampoline: ops->trampoline).
 */
enum row_kind { ROW_EMPTY = 0, ROW_CFI, ROW_FP, ROW_TRAMP };

struct row {
	pid_t pid;
	uint8_t kind;
	bool signal; /* a signal frame (augmentation 'S'): the caller's ip is exact */
	uint64_t gen, pc;
	const struct ufile *file; /* holds the expressions */
	struct row_state st;
};

/*
 * Encoded values of .eh_frame, .debug_frame and DWARF expressions, read from *@p (advanced) up to
 * @end: LEB128, fixed-size little-endian (@n bytes), and DW_EH_PE_* encodings (@enc;
 * @vaddr: where *@p lies, for pcrel; @data: the base of datarel). Each returns false
 * when the value is truncated or not supported.
 */
bool eh__read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *out);
bool eh__read_sleb(const uint8_t **p, const uint8_t *end, int64_t *out);
bool eh__read_fixed(const uint8_t **p, const uint8_t *end, size_t n, uint64_t *out);
bool eh__read_int(const uint8_t **p, const uint8_t *end, size_t n, bool sign, uint64_t *out);
bool eh__read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t vaddr,
		      uint64_t data, uint64_t *out);

/*
 * The unwind row of @f at @pc: its FDE found through .eh_frame_hdr (else through the
 * index of .debug_frame), its CIE's and its own CFA instructions run up to @pc. 0,
 * -ENOENT (no FDE covers @pc), -EINVAL (malformed or not supported).
 */
int cfi__row(const struct ufile *f, uint64_t pc, struct row *row);

/*
 * Every row of every FDE of @f, .eh_frame's and .debug_frame's, by address: @fn gets
 * each row with the file address where it starts (@signal: the FDE is a signal frame's),
 * and @st NULL at each FDE's end. FDEs that cannot be read are skipped and counted in
 * *@nr_bad. Returns 0, or what @fn returned when not 0 (-ENOMEM, -E2BIG).
 */
typedef int (*cfi_row_fn)(void *ctx, uint64_t pc, const struct row_state *st, bool signal);
int cfi__rows(const struct ufile *f, cfi_row_fn fn, void *ctx, uint64_t *nr_bad);

/* One row of rules as the kernel walk follows it: INVALID when it cannot (ktable.c). */
struct kunwind_row ktable__krow(const struct ufile *f, const struct row_state *st, bool signal);

/*
 * Indexes the .debug_frame copied into @f (f->cfi + f->eh_len, f->dbg_len bytes; @f's
 * .eh_frame, if any, already read): every FDE that can be read, lies in one of the
 * @nr_code spans of @code and covers code no .eh_frame FDE covers goes into
 * f->dbg_table, sorted; FDEs overlapping one kept before them, and those past
 * DBG_FDES_MAX, are dropped. Malformed and misplaced ones are counted in f->dbg_bad.
 * Returns 0 or -ENOMEM.
 */
int cfi__index_debug(struct ufile *f, const struct code_span *code, size_t nr_code);

/*
 * .eh_frame_hdr and .eh_frame of @elf into @f, and its .debug_frame when it has one
 * (unwind.c): 0 when either gives FDEs, else -ENOENT (no CFI), -EINVAL, -ENOMEM.
 * ufile__clear() frees them.
 */
struct Elf;
int ufile__parse(struct ufile *f, struct Elf *elf);
void ufile__clear(struct ufile *f);
/* The bytes @f holds. */
uint64_t ufile__bytes(const struct ufile *f);

#endif /* SCORCH_UNWIND_PRIVATE_H */
