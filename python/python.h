/* SPDX-License-Identifier: MIT */
/* python: CPython's frames: the interpreter, its struct layout, its code objects' names. */
#ifndef SCORCH_PYTHON_H
#define SCORCH_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h" /* PY_WORD, PY_NONE, PY_MAX_FRAMES, enum py_runs: shared with BPF */
#include "symbolize.h"

/*
 * CPython 3.10-3.13, x86-64, glibc, GIL builds. The BPF walk (bpf/kunwind.bpf.h) reads a
 * thread's interpreter frames with the offsets of a struct python_layout and puts each
 * frame in a stack as two words (bpf/profile.h: PY_WORD). This module finds the
 * interpreter among a process's files, gives and checks its layout, and names those
 * words from the code objects, read from the process's memory (process_vm_readv) while
 * it lives or imported from a capture. A thread blocked since before a recording has its
 * chain read here, from user space, and spliced into its native stack. No locking:
 * callers serialize the calls on one struct pycodes.
 */

/* The struct offsets of one CPython version, in bytes; PY_NONE: no such field there. */
struct python_layout {
	unsigned int minor;
	/* _PyRuntimeState, PyInterpreterState, PyThreadState: found and checked in user space */
	uint16_t rt_interp_head, rt_tss_key, in_threads, ts_next, ts_interp, ts_thread_id;
	uint16_t ts_native_tid; /* PY_NONE: 3.10 keeps no thread id of the kernel's */
	/* walked in BPF (struct kunwind_python) */
	uint16_t ts_cframe, ts_frame, cf_frame, cf_prev;
	uint16_t fr_code, fr_prev, fr_instr, fr_flag;
	enum py_runs run;
	uint16_t co_code, co_guard;
	/* names, read in user space */
	uint16_t co_filename, co_name, co_linetable, co_firstlineno;
	uint16_t str_ascii, str_compact; /* where a compact str's characters begin */
	bool pep657;			 /* 3.11+ location table, else PEP 626's */
};

struct python_file {
	uint64_t runtime;    /* ELF virtual address of _PyRuntime */
	uint64_t code_type;  /* ... of PyCode_Type, 0: not found */
	uint32_t hexversion; /* Py_Version, 0: none (3.10) */
	unsigned int minor;
};

/*
 * Whether the ELF file open on @fd (at @path, which gives 3.10's version) is a CPython
 * interpreter: it defines _PyRuntime in .dynsym (the python executable when built
 * statically, as Debian's, else libpython). Fills @out (zeroed first) with the ELF
 * virtual addresses of _PyRuntime and PyCode_Type and the version. @fd stays the
 * caller's. Returns 0, -ENOENT (not CPython), -EPROTONOSUPPORT (a version without a
 * layout here: @out->minor says which), -ENOEXEC (not ELF), -EINVAL (libelf unusable).
 */
int python__file(int fd, const char *path, struct python_file *out);

/* The layout of CPython 3.@minor, or NULL when there is none. Static: never freed. */
const struct python_layout *python__layout(unsigned int minor);

/*
 * The offset of specific_1stblock in glibc's struct pthread (glibc 2.x, x86-64): where
 * a thread's pthread key slots begin, for python__check() and the BPF walk.
 */
uint32_t python__glibc_specific(void);

/*
 * Whether process @pid, whose _PyRuntime is at @runtime (a runtime address), has layout
 * @l: its thread states point back to their interpreter and the pthread key's slot
 * (@specific: python__glibc_specific()) of a thread holds its state. Reads the process's
 * memory. Returns 0, -EAGAIN (the interpreter is not initialized yet), -EPROTO (another
 * layout), -errno (unreadable: gone, or not ours to read).
 */
int python__check(pid_t pid, const struct python_layout *l, uint64_t runtime, uint32_t specific);

/*
 * pycodes: the names of the code objects in a recording's Python frames, read from the
 * processes' memory and cached by (pid, gen, address, guard): a freed code object's
 * address used again by another gets another entry. At most 2^20 code objects read from
 * processes are held at once (those of released images are not); a frame whose code
 * object finds no room is "[unknown python]".
 */
struct pycodes;

/* Counters for the end-of-run summary. */
struct pycodes_stats {
	uint64_t processes;  /* CPython processes seen */
	uint64_t codes;	     /* code objects read */
	uint64_t unreadable; /* ... of which could not be read (gone, changed) */
	uint64_t frames;     /* Python frames named */
	uint64_t unnamed;    /* ... of which "[unknown python]" */
	uint64_t released;   /* code objects forgotten with their process image */
};

/*
 * An empty cache; @lines: frames named with their line (--lines), line tables kept.
 * Returns NULL when out of memory.
 */
struct pycodes *pycodes__new(bool lines);
/* Frees @pc and every name it gave. NULL is accepted. */
void pycodes__free(struct pycodes *pc);

/*
 * Process @pid runs CPython with layout @l (borrowed: python__layout()'s), its
 * _PyRuntime at runtime address @runtime and PyCode_Type at @code_type (0: unknown, the
 * type is then not checked). Again for the same PID replaces them. Returns 0 or -ENOMEM.
 */
int pycodes__add_process(struct pycodes *pc, pid_t pid, const struct python_layout *l,
			 uint64_t runtime, uint64_t code_type);

/*
 * Reads the code object at @addr with guard @guard of image (@pid, @gen) now, while the
 * process lives, unless it is cached: a short-lived process's frames are named from what
 * was read. One that cannot be read is cached unnamed (and counted). Returns 0, or
 * -ENOENT when it could not be cached (@pid not added, the cache full, out of memory).
 */
int pycodes__note(struct pycodes *pc, pid_t pid, uint64_t gen, uint64_t addr, uint32_t guard);

/*
 * Names the Python frame of image (@pid, @gen) from its two stack words (bpf/profile.h:
 * PY_WORD), reading its code object now if not cached: @out->name "qualname (file.py)"
 * (a package's "pkg/__init__.py"), with lines on "qualname (file.py:LINE)" with
 * @out->file and @out->line set; @out->module the file. A code object that could not be
 * read gives "[unknown python]" (FRAME_UNKNOWN), counted. Strings are borrowed until
 * pycodes__free(). Returns 0 or -ENOMEM.
 */
int pycodes__frame(struct pycodes *pc, pid_t pid, uint64_t gen, uint64_t code_word,
		   uint64_t pos_word, struct frame *out);

/*
 * The function of the Python frame pycodes__frame() named from the same words, as a
 * profile models one (pprof's Function: a name and a source file): *@qualname the code
 * object's qualified name alone ("<module>", "Sleeper.nap"), *@file its co_filename as
 * the interpreter gave it. Reads nothing: call it after pycodes__frame(). Borrowed until
 * pycodes__free(). Returns 0, or -ENOENT when the frame has no name ("[unknown python]").
 */
int pycodes__function(const struct pycodes *pc, pid_t pid, uint64_t gen, uint64_t code_word,
		      uint64_t pos_word, const char **qualname, const char **file);

/* Copies @pc's counters to @st (all 0 for a NULL @pc). */
void pycodes__stats(const struct pycodes *pc, struct pycodes_stats *st);

/*
 * A named code object, as pycodes__foreach() and pycodes__release() pass it (those that
 * could not be read are not passed; borrowed for the call) and pycodes__import() takes
 * it back (scorch report, from a capture): frames of (pid, gen, addr, guard) are then
 * named from it. @linetable: NULL without --lines.
 */
struct pycode_info {
	pid_t pid;
	uint32_t guard;
	uint64_t gen, addr;
	const char *qualname, *file;
	int32_t firstlineno;
	bool pep657;
	uint32_t linetable_len;
	const uint8_t *linetable;
};
typedef int (*pycodes_fn)(void *ctx, const struct pycode_info *info);

/* Passes every named code object to @fn. 0, or @fn's first nonzero return. */
int pycodes__foreach(const struct pycodes *pc, pycodes_fn fn, void *ctx);

/*
 * The image (@pid, @gen) is released (its stacks are named): its code objects are passed
 * to @fn (if not NULL; a capture writes them) and forgotten, so that memory follows the
 * processes alive, not all those seen. 0, or @fn's first nonzero return.
 */
int pycodes__release(struct pycodes *pc, pid_t pid, uint64_t gen, pycodes_fn fn, void *ctx);

/*
 * Enters @info unless its (pid, gen, addr, guard) is known. Strings and bytes are
 * copied (the line table only with lines on). Returns 0 or -ENOMEM.
 */
int pycodes__import(struct pycodes *pc, const struct pycode_info *info);

/*
 * A thread's Python frames read from user space (a thread blocked when the recording
 * begins: the BPF walk never saw it switch out), innermost first, as two stack words
 * each (bpf/profile.h: PY_WORD) with the C-stack marker of each run, as the BPF walk
 * collects them: at most PY_MAX_FRAMES.
 */
struct python_chain {
	size_t nr;
	uint64_t code[PY_MAX_FRAMES], pos[PY_MAX_FRAMES], marker[PY_MAX_FRAMES];
};

/*
 * Reads into @out the chain of thread @tid of process @pid (3.11+; image @gen, whose
 * code objects are read now, as by pycodes__note()). Returns 0, -ENOENT (@pid not added,
 * no thread state for @tid, or no frame), -EOPNOTSUPP (3.10), -errno (unreadable).
 */
int pycodes__thread_chain(struct pycodes *pc, pid_t pid, uint64_t gen, pid_t tid,
			  struct python_chain *out);

/*
 * Splices @py into the native stack @ips[0..n), whose frame i's stack is
 * [@sps[i], @sps[i + 1]): each run in place of the native frame whose stack holds its
 * marker; runs held by no frame go where the walk passed them, or at the root end
 * (counted in *@unmatched). Whole frames only: a frame that does not fit ends the stack.
 * Returns the words written to @out, at most @cap.
 */
size_t python__splice(const uint64_t *ips, const uint64_t *sps, size_t n,
		      const struct python_chain *py, uint64_t *out, size_t cap, size_t *unmatched);

#endif /* SCORCH_PYTHON_H */
