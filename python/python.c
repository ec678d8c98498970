// SPDX-License-Identifier: MIT
/*
 * python: CPython. Which file of a process is the interpreter (the object that
 * defines _PyRuntime: the python executable, or libpython), its version and struct
 * layout (a table of offsets per minor version, checked against the running process),
 * and the names of the code objects its stacks hold, read from the process's memory
 * (process_vm_readv) while it lives and cached by (process, address, guard).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "common.h"
#include "python.h"

#define PY_MAX_DYNSYMS	  (16u << 20) /* .dynsym entries looked at (symbolize/'s bound) */
#define PY_MAX_NAME	  1024	      /* code points of a name or file kept */
#define PY_MAX_LINETABLE  (64u << 10) /* bytes of a line table read (CPython's own bound) */
#define PY_MAX_CODES	  (1u << 20)  /* code objects cached, all processes */
#define PY_GLIBC_SPECIFIC 0x310	      /* glibc 2.x x86-64: struct pthread's specific_1stblock */

/*
 * The layouts of CPython 3.10-3.13 on x86-64 (GIL builds), offsets in bytes, read from
 * the DWARF of each version's libpython (gdb ptype /o) and checked on Debian's stripped
 * python3.11 through the accessors it exports. Data, not code: a version is a row,
 * its fields grouped by struct (clang-format leaves the table as it is written).
 */
/* clang-format off */
static const struct python_layout layouts[] = {
	{
		.minor = 10,
		.rt_interp_head = 32, .rt_tss_key = 584 + 4, .in_threads = 8,
		.ts_next = 8, .ts_interp = 16, .ts_thread_id = 176, .ts_native_tid = PY_NONE,
		.ts_cframe = 48, .ts_frame = 24, .cf_frame = PY_NONE, .cf_prev = 8,
		.fr_code = 32, .fr_prev = 24, .fr_instr = 96, .fr_flag = PY_NONE,
		.run = PY_RUN_ONE,
		.co_code = PY_NONE, .co_guard = 40, .co_filename = 104, .co_name = 112,
		.co_linetable = 120, .co_firstlineno = 40,
		.str_ascii = 48, .str_compact = 72, .pep657 = false,
	},
	{
		.minor = 11,
		.rt_interp_head = 40, .rt_tss_key = 592 + 4, .in_threads = 16,
		.ts_next = 8, .ts_interp = 16, .ts_thread_id = 152, .ts_native_tid = 160,
		.ts_cframe = 56, .ts_frame = PY_NONE, .cf_frame = 8, .cf_prev = 16,
		.fr_code = 32, .fr_prev = 48, .fr_instr = 56, .fr_flag = 68,
		.run = PY_RUN_ENTRY,
		.co_code = 184, .co_guard = 72, .co_filename = 112, .co_name = 128,
		.co_linetable = 136, .co_firstlineno = 72,
		.str_ascii = 48, .str_compact = 72, .pep657 = true,
	},
	{
		.minor = 12,
		.rt_interp_head = 40, .rt_tss_key = 1544 + 4, .in_threads = 72,
		.ts_next = 8, .ts_interp = 16, .ts_thread_id = 136, .ts_native_tid = 144,
		.ts_cframe = 56, .ts_frame = PY_NONE, .cf_frame = 0, .cf_prev = 8,
		.fr_code = 0, .fr_prev = 8, .fr_instr = 56, .fr_flag = 70,
		.run = PY_RUN_SHIM,
		.co_code = 192, .co_guard = 88, .co_filename = 112, .co_name = 128,
		.co_linetable = 136, .co_firstlineno = 68,
		.str_ascii = 40, .str_compact = 56, .pep657 = true,
	},
	{
		.minor = 13,
		.rt_interp_head = 632, .rt_tss_key = 2160 + 4, .in_threads = 7344,
		.ts_next = 8, .ts_interp = 16, .ts_thread_id = 152, .ts_native_tid = 160,
		.ts_cframe = PY_NONE, .ts_frame = 72, .cf_frame = PY_NONE, .cf_prev = PY_NONE,
		.fr_code = 0, .fr_prev = 8, .fr_instr = 56, .fr_flag = 70,
		.run = PY_RUN_SHIM,
		.co_code = 200, .co_guard = 88, .co_filename = 112, .co_name = 128,
		.co_linetable = 136, .co_firstlineno = 68,
		.str_ascii = 40, .str_compact = 56, .pep657 = true,
	},
};
/* clang-format on */

const struct python_layout *python__layout(unsigned int minor)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(layouts); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

uint32_t python__glibc_specific(void)
{
	return PY_GLIBC_SPECIFIC;
}

/* 3.10 has no Py_Version: the minor version from the file's name (python3.10, libpython3.10.so). */
static unsigned int minor_from_path(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL, *p;

	base = base ? base + 1 : path;
	if (!base || !(p = strstr(base, "python3.")))
		return 0;
	return (unsigned int)strtoul(p + strlen("python3."), NULL, 10);
}

int python__file(int fd, const char *path, struct python_file *out)
{
	uint64_t off, rt = 0, version = 0, code_type = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint32_t hex;
	Elf *elf;
	int err = -ENOENT;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	/* .dynsym: stripped interpreters (Debian's) export all three */
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i, count;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		count = data ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; i < count && i < PY_MAX_DYNSYMS; i++) {
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || (name[0] != '_' && name[0] != 'P'))
				continue;
			if (!strcmp(name, "_PyRuntime"))
				rt = sym.st_value;
			else if (!strcmp(name, "Py_Version"))
				version = sym.st_value;
			else if (!strcmp(name, "PyCode_Type"))
				code_type = sym.st_value;
		}
	}
	if (!rt)
		goto cleanup;
	out->runtime = rt;
	out->code_type = code_type;
	if (version && !symbolize__vaddr_offset(elf, version, 4, false, &off) &&
	    pread(fd, &hex, 4, (off_t)off) == 4) {
		out->hexversion = hex;
		out->minor = (hex >> 16) & 0xff;
		err = (hex >> 24) == 3 ? 0 : -EPROTONOSUPPORT;
	} else {
		out->minor = minor_from_path(path);
		err = out->minor ? 0 : -EPROTONOSUPPORT;
	}
	if (!err && !python__layout(out->minor))
		err = -EPROTONOSUPPORT;
cleanup:
	elf_end(elf);
	return err;
}

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EFAULT;
}

static int read_u64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return read_mem(pid, addr, v, 8);
}

int python__check(pid_t pid, const struct python_layout *l, uint64_t runtime, uint32_t specific)
{
	uint64_t interp, ts, back, thread_id, slot;
	uint32_t key;
	int err, i;

	err = read_u64(pid, runtime + l->rt_interp_head, &interp);
	if (err)
		return err;
	if (!interp)
		return -EAGAIN; /* not initialized yet */
	if ((err = read_u64(pid, interp + l->in_threads, &ts)))
		return err;
	if (!ts)
		return -EAGAIN;
	if ((err = read_mem(pid, runtime + l->rt_tss_key, &key, 4)))
		return err;
	/* every thread state of the interpreter points back to it, and the first whose
	 * pthread (thread_id) is readable must hold itself in its key's slot */
	for (i = 0; ts && i < 64; i++) {
		if ((err = read_u64(pid, ts + l->ts_interp, &back)))
			return err;
		if (back != interp)
			return -EPROTO;
		if (read_u64(pid, ts + l->ts_thread_id, &thread_id) || !thread_id || key >= 32)
			return 0;
		if (!read_u64(pid, thread_id + specific + 16ull * key + 8, &slot))
			return slot == ts ? 0 : -EPROTO;
		if (read_u64(pid, ts + l->ts_next, &ts))
			break;
	}
	return 0;
}

/* ---- code objects ---- */

struct pyproc {
	pid_t pid;
	struct pycode *codes; /* its code objects read, all images (pycode.next) */
	const struct python_layout *l;
	uint64_t runtime;   /* runtime address of _PyRuntime */
	uint64_t code_type; /* runtime address of PyCode_Type, 0: unknown */
};

struct pycode {
	pid_t pid;
	uint32_t guard;
	uint64_t gen, addr;
	const char *name;	     /* "qualname (file.py)", interned; NULL: could not be read */
	const char *qualname, *file; /* interned */
	int32_t firstlineno;
	bool pep657;
	uint32_t linetable_len;
	uint8_t *linetable;  /* with --lines only */
	struct pycode *next; /* of the same process (struct pyproc.codes) */
};

struct pycodes {
	bool lines;
	struct strset *names;
	struct hashmap procs; /* pid -> struct pyproc * */
	struct hashmap codes; /* (pid, gen, addr, guard) -> struct pycode * */
	struct pycodes_stats st;
};

struct pycodes *pycodes__new(bool lines)
{
	struct pycodes *pc = calloc(1, sizeof(*pc));

	if (!pc)
		return NULL;
	pc->lines = lines;
	pc->names = strset__new();
	if (!pc->names) {
		free(pc);
		return NULL;
	}
	return pc;
}

void pycodes__free(struct pycodes *pc)
{
	struct hashmap_iter it;
	uint64_t val;

	if (!pc)
		return;
	for (hashmap__iter_init(&pc->codes, &it); hashmap__iter_next(&pc->codes, &it, &val);) {
		struct pycode *c = (struct pycode *)(uintptr_t)val;

		free(c->linetable);
		free(c);
	}
	for (hashmap__iter_init(&pc->procs, &it); hashmap__iter_next(&pc->procs, &it, &val);)
		free((void *)(uintptr_t)val);
	hashmap__free(&pc->codes);
	hashmap__free(&pc->procs);
	strset__free(pc->names);
	free(pc);
}

static bool proc_eq(uint64_t val, const void *ctx)
{
	return ((const struct pyproc *)(uintptr_t)val)->pid == *(const pid_t *)ctx;
}

/* By PID: a process's code objects are announced before the process itself is. */
static struct pyproc *proc_find(const struct pycodes *pc, pid_t pid)
{
	return (struct pyproc *)(uintptr_t)hashmap__find(&pc->procs, hash__u64((uint64_t)pid),
							 proc_eq, &pid);
}

int pycodes__add_process(struct pycodes *pc, pid_t pid, const struct python_layout *l,
			 uint64_t runtime, uint64_t code_type)
{
	struct pyproc *p = proc_find(pc, pid);

	if (p) {
		p->l = l;
		p->runtime = runtime;
		p->code_type = code_type;
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	*p = (struct pyproc){.pid = pid, .l = l, .runtime = runtime, .code_type = code_type};
	if (hashmap__insert(&pc->procs, hash__u64((uint64_t)pid), (uintptr_t)p)) {
		free(p);
		return -ENOMEM;
	}
	pc->st.processes++;
	return 0;
}

struct code_key {
	pid_t pid;
	uint32_t guard;
	uint64_t gen, addr;
};

static uint64_t code_hash(const struct code_key *k)
{
	return hash__u64(hash__u64((uint64_t)k->pid) ^ hash__u64(k->gen) ^ hash__u64(k->addr) ^
			 k->guard);
}

static bool code_eq(uint64_t val, const void *ctx)
{
	const struct pycode *c = (const struct pycode *)(uintptr_t)val;
	const struct code_key *k = ctx;

	return c->pid == k->pid && c->gen == k->gen && c->addr == k->addr && c->guard == k->guard;
}

/* Appends code point @cp to @out as UTF-8 (a control character or a surrogate as '?'). */
static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x20 || cp == 0x7f || (cp >= 0xd800 && cp < 0xe000) || cp > 0x10ffff)
		cp = '?';
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * The str object at @addr as UTF-8, interned: compact strings only (those of code
 * objects are), stored as ASCII, latin-1, UCS-2 or UCS-4. NULL when unreadable.
 */
static const char *read_str(struct pycodes *pc, pid_t pid, const struct python_layout *l,
			    uint64_t addr)
{
	uint8_t hdr[40], raw[PY_MAX_NAME * 4];
	char out[PY_MAX_NAME * 4 + 1];
	unsigned int kind, state;
	int64_t length;
	size_t i, n, o = 0;
	uint64_t data;

	if (!addr || read_mem(pid, addr, hdr, sizeof(hdr)))
		return NULL;
	memcpy(&length, hdr + 16, 8);
	state = hdr[32]; /* a bitfield in the low byte; the rest is padding */
	kind = state >> 2 & 7;
	if (length < 0 || !(state & 0x20) || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	n = (size_t)length < PY_MAX_NAME ? (size_t)length : PY_MAX_NAME;
	data = addr + ((state & 0x40) ? l->str_ascii : l->str_compact);
	if (n && read_mem(pid, data, raw, n * kind))
		return NULL;
	for (i = 0; i < n; i++) {
		uint32_t cp;

		if (kind == 1) {
			cp = raw[i];
		} else if (kind == 2) {
			uint16_t u;

			memcpy(&u, raw + 2 * i, 2);
			cp = u;
		} else {
			memcpy(&cp, raw + 4 * i, 4);
		}
		o += put_utf8(out + o, cp);
	}
	return strset__intern_len(pc->names, out, o);
}

/* A file's short form: its base name, with its directory for a package's __init__.py. */
static const char *short_file(const char *path)
{
	const char *base = strrchr(path, '/'), *p;

	if (!base)
		return path;
	if (strcmp(base + 1, "__init__.py") && strcmp(base + 1, "__main__.py"))
		return base + 1;
	for (p = base - 1; p > path && *p != '/'; p--)
		;
	return *p == '/' ? p + 1 : path;
}

static uint32_t fold_guard(uint64_t g)
{
	return (uint32_t)g ^ (uint32_t)(g >> 32);
}

/* Reads code object @k into @c. 0, or -errno (gone, not a code object, changed). */
static int code_read(struct pycodes *pc, const struct pyproc *p, const struct code_key *k,
		     struct pycode *c)
{
	const struct python_layout *l = p->l;
	uint64_t type, g, fname, qname, table;
	char buf[PY_MAX_NAME * 8 + 8];
	int32_t first;
	int err;

	if ((err = read_u64(k->pid, k->addr + 8, &type)) ||
	    (err = read_u64(k->pid, k->addr + l->co_guard, &g)))
		return err;
	if ((p->code_type && type != p->code_type) || fold_guard(g) != k->guard)
		return -ESTALE;
	if ((err = read_u64(k->pid, k->addr + l->co_filename, &fname)) ||
	    (err = read_u64(k->pid, k->addr + l->co_name, &qname)) ||
	    (err = read_mem(k->pid, k->addr + l->co_firstlineno, &first, 4)))
		return err;
	c->qualname = read_str(pc, k->pid, l, qname);
	c->file = read_str(pc, k->pid, l, fname);
	if (!c->qualname || !c->file)
		return -EFAULT;
	c->firstlineno = first;
	c->pep657 = l->pep657;
	snprintf(buf, sizeof(buf), "%s (%s)", c->qualname, short_file(c->file));
	c->name = strset__intern(pc->names, buf);
	if (!c->name)
		return -ENOMEM;
	if (pc->lines && !read_u64(k->pid, k->addr + l->co_linetable, &table) && table) {
		int64_t len;

		/* a bytes object: ob_size at 16, the bytes at 32 */
		if (!read_mem(k->pid, table + 16, &len, 8) && len > 0 &&
		    (uint64_t)len <= PY_MAX_LINETABLE && (c->linetable = malloc((size_t)len))) {
			if (read_mem(k->pid, table + 32, c->linetable, (size_t)len)) {
				free(c->linetable);
				c->linetable = NULL;
			} else {
				c->linetable_len = (uint32_t)len;
			}
		}
	}
	return 0;
}

static struct pycode *code_find(const struct pycodes *pc, const struct code_key *k)
{
	return (struct pycode *)(uintptr_t)hashmap__find(&pc->codes, code_hash(k), code_eq, k);
}

/* The code object of @k, read now if not cached; NULL: not a Python process, or full. */
static struct pycode *code_get(struct pycodes *pc, const struct code_key *k)
{
	struct pycode *c = code_find(pc, k);
	struct pyproc *p;

	if (c)
		return c;
	p = proc_find(pc, k->pid);
	/* the code objects held now (those of released images are gone) */
	if (!p || pc->codes.nr >= PY_MAX_CODES)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pid = k->pid;
	c->gen = k->gen;
	c->addr = k->addr;
	c->guard = k->guard;
	c->next = p->codes;
	p->codes = c;
	if (code_read(pc, p, k, c)) {
		/* kept, unnamed: not read again for every stack that holds it */
		free(c->linetable);
		c->linetable = NULL;
		c->linetable_len = 0;
		c->name = NULL;
		pc->st.unreadable++;
	}
	if (hashmap__insert(&pc->codes, code_hash(k), (uintptr_t)c)) {
		p->codes = c->next;
		free(c->linetable);
		free(c);
		return NULL;
	}
	pc->st.codes++;
	return c;
}

static bool code_is(uint64_t val, const void *ctx)
{
	return (const void *)(uintptr_t)val == ctx;
}

/* Passes each named code object of @c's list of image @gen to @fn (any image: @all). */
static int each_named(const struct pycode *c, uint64_t gen, bool all, pycodes_fn fn, void *ctx);

int pycodes__release(struct pycodes *pc, pid_t pid, uint64_t gen, pycodes_fn fn, void *ctx)
{
	struct pyproc *p = pc ? proc_find(pc, pid) : NULL;
	struct pycode **link, *c;
	int err;

	if (!p)
		return 0;
	err = fn ? each_named(p->codes, gen, false, fn, ctx) : 0;
	if (err)
		return err;
	for (link = &p->codes; (c = *link);) {
		if (c->gen != gen) {
			link = &c->next;
			continue;
		}
		*link = c->next;
		hashmap__remove(
			&pc->codes,
			code_hash(&(struct code_key){
				.pid = c->pid, .guard = c->guard, .gen = c->gen, .addr = c->addr}),
			code_is, c);
		free(c->linetable);
		free(c);
		pc->st.released++;
	}
	if (!p->codes) {
		/* (a later image of the PID, if it runs CPython, is added again) */
		hashmap__remove(&pc->procs, hash__u64((uint64_t)pid), code_is, p);
		free(p);
	}
	return 0;
}

int pycodes__note(struct pycodes *pc, pid_t pid, uint64_t gen, uint64_t addr, uint32_t guard)
{
	struct code_key k = {.pid = pid, .guard = guard, .gen = gen, .addr = addr};

	return code_get(pc, &k) ? 0 : -ENOENT;
}

/* PEP 657 varints: 6-bit chunks, least significant first, bit 6 set when more follow. */
static bool read_varint(const uint8_t *t, uint32_t len, uint32_t *i, uint32_t *out)
{
	uint32_t v = 0, shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 28)
			return false;
		b = t[(*i)++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*out = v;
	return true;
}

static bool read_svarint(const uint8_t *t, uint32_t len, uint32_t *i, int32_t *out)
{
	uint32_t v;

	if (!read_varint(t, len, i, &v))
		return false;
	*out = (v & 1) ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
	return true;
}

/* The line of code unit @lasti by the location table (3.11+). 0: none. */
static int32_t line_pep657(const struct pycode *c, uint32_t lasti)
{
	const uint8_t *t = c->linetable;
	uint32_t i = 0, unit = 0, v;
	int32_t line = c->firstlineno, d;

	while (i < c->linetable_len) {
		uint8_t first = t[i++];
		unsigned int code = first >> 3 & 15, units = (first & 7) + 1;
		int32_t here = line;
		bool none = false;

		if (!(first & 0x80))
			return 0; /* out of step: not an entry's first byte */
		if (code == 15) {
			none = true;
		} else if (code == 14) {
			if (!read_svarint(t, c->linetable_len, &i, &d))
				return 0;
			line += d;
			here = line;
			/* end line, start and end columns */
			if (!read_varint(t, c->linetable_len, &i, &v) ||
			    !read_varint(t, c->linetable_len, &i, &v) ||
			    !read_varint(t, c->linetable_len, &i, &v))
				return 0;
		} else if (code == 13) {
			if (!read_svarint(t, c->linetable_len, &i, &d))
				return 0;
			line += d;
			here = line;
		} else if (code >= 10) {
			line += (int32_t)code - 10;
			here = line;
			i += 2;
		} else {
			i += 1;
		}
		if (lasti < unit + units)
			return none ? 0 : here;
		unit += units;
	}
	return 0;
}

/* The line of code unit @lasti by the 3.10 line table (PEP 626). 0: none. */
static int32_t line_pep626(const struct pycode *c, uint32_t lasti)
{
	uint32_t addr = 0, off = lasti * 2, i;
	int32_t line = c->firstlineno;

	for (i = 0; i + 1 < c->linetable_len; i += 2) {
		uint8_t sdelta = c->linetable[i];
		int8_t ldelta = (int8_t)c->linetable[i + 1];
		bool none = ldelta == -128;

		if (!none)
			line += ldelta;
		if (off < addr + sdelta)
			return none ? 0 : line;
		addr += sdelta;
	}
	return 0;
}

int pycodes__frame(struct pycodes *pc, pid_t pid, uint64_t gen, uint64_t code_word,
		   uint64_t pos_word, struct frame *out)
{
	struct code_key k = {.pid = pid, .gen = gen};
	struct pycode *c;
	uint32_t lasti = (uint32_t)(pos_word >> 32) & PY_LASTI_NONE;
	int32_t line = 0;
	char buf[PY_MAX_NAME * 8 + 32];

	k.addr = code_word & ~(PY_WORD | PY_WORD_POS);
	k.guard = (uint32_t)pos_word;
	memset(out, 0, sizeof(*out));
	out->kind = FRAME_SYMBOL;
	c = code_get(pc, &k);
	pc->st.frames++;
	if (!c || !c->name) {
		pc->st.unnamed++;
		out->name = "[unknown python]";
		out->kind = FRAME_UNKNOWN;
		return 0;
	}
	out->name = c->name;
	out->module = c->file;
	if (!pc->lines)
		return 0;
	out->file = c->file;
	if (c->linetable)
		line = lasti == PY_LASTI_NONE ? c->firstlineno
		       : c->pep657	      ? line_pep657(c, lasti)
					      : line_pep626(c, lasti);
	if (line <= 0)
		return 0;
	out->line = (uint32_t)line;
	snprintf(buf, sizeof(buf), "%s (%s:%d)", c->qualname, short_file(c->file), line);
	out->name = strset__intern(pc->names, buf);
	if (!out->name)
		return -ENOMEM;
	return 0;
}

int pycodes__function(const struct pycodes *pc, pid_t pid, uint64_t gen, uint64_t code_word,
		      uint64_t pos_word, const char **qualname, const char **file)
{
	struct code_key k = {.pid = pid, .gen = gen, .guard = (uint32_t)pos_word};
	const struct pycode *c;

	k.addr = code_word & ~(PY_WORD | PY_WORD_POS);
	c = code_find(pc, &k);
	if (!c || !c->name)
		return -ENOENT;
	*qualname = c->qualname;
	*file = c->file;
	return 0;
}

void pycodes__stats(const struct pycodes *pc, struct pycodes_stats *st)
{
	if (pc)
		*st = pc->st;
	else
		memset(st, 0, sizeof(*st));
}

static void code_info(const struct pycode *c, struct pycode_info *info)
{
	*info = (struct pycode_info){
		.pid = c->pid,
		.guard = c->guard,
		.gen = c->gen,
		.addr = c->addr,
		.qualname = c->qualname,
		.file = c->file,
		.firstlineno = c->firstlineno,
		.pep657 = c->pep657,
		.linetable_len = c->linetable_len,
		.linetable = c->linetable,
	};
}

static int each_named(const struct pycode *c, uint64_t gen, bool all, pycodes_fn fn, void *ctx)
{
	struct pycode_info info;
	int err;

	for (; c; c = c->next) {
		if (!c->name || (!all && c->gen != gen))
			continue;
		code_info(c, &info);
		err = fn(ctx, &info);
		if (err)
			return err;
	}
	return 0;
}

int pycodes__foreach(const struct pycodes *pc, pycodes_fn fn, void *ctx)
{
	struct hashmap_iter it;
	uint64_t val;
	int err;

	if (!pc)
		return 0;
	for (hashmap__iter_init(&pc->codes, &it); hashmap__iter_next(&pc->codes, &it, &val);) {
		const struct pycode *c = (const struct pycode *)(uintptr_t)val;
		struct pycode_info info;

		if (!c->name)
			continue;
		code_info(c, &info);
		err = fn(ctx, &info);
		if (err)
			return err;
	}
	return 0;
}

int pycodes__import(struct pycodes *pc, const struct pycode_info *info)
{
	struct code_key k = {
		.pid = info->pid, .guard = info->guard, .gen = info->gen, .addr = info->addr};
	char buf[PY_MAX_NAME * 8 + 8];
	struct pycode *c;

	if (code_find(pc, &k))
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->pid = k.pid;
	c->gen = k.gen;
	c->addr = k.addr;
	c->guard = k.guard;
	c->qualname = strset__intern(pc->names, info->qualname ? info->qualname : "?");
	c->file = strset__intern(pc->names, info->file ? info->file : "?");
	c->firstlineno = info->firstlineno;
	c->pep657 = info->pep657;
	if (c->qualname && c->file) {
		snprintf(buf, sizeof(buf), "%s (%s)", c->qualname, short_file(c->file));
		c->name = strset__intern(pc->names, buf);
	}
	if (pc->lines && info->linetable_len && info->linetable &&
	    info->linetable_len <= PY_MAX_LINETABLE &&
	    (c->linetable = malloc(info->linetable_len))) {
		memcpy(c->linetable, info->linetable, info->linetable_len);
		c->linetable_len = info->linetable_len;
	}
	if (!c->name || hashmap__insert(&pc->codes, code_hash(&k), (uintptr_t)c)) {
		free(c->linetable);
		free(c);
		return -ENOMEM;
	}
	pc->st.codes++;
	return 0;
}

/* ---- a blocked thread's chain, read from user space ---- */

/* The PyThreadState of thread @tid of @p (3.11+: native_thread_id). 0 or -errno. */
static int thread_state(const struct pyproc *p, pid_t tid, uint64_t *out)
{
	const struct python_layout *l = p->l;
	uint64_t interp, ts, id;
	int err, i;

	if (l->ts_native_tid == PY_NONE)
		return -EOPNOTSUPP;
	if ((err = read_u64(p->pid, p->runtime + l->rt_interp_head, &interp)))
		return err;
	for (; interp;) {
		if ((err = read_u64(p->pid, interp + l->in_threads, &ts)))
			return err;
		for (i = 0; ts && i < 4096; i++) {
			if ((err = read_u64(p->pid, ts + l->ts_native_tid, &id)))
				return err;
			if (id == (uint64_t)tid) {
				*out = ts;
				return 0;
			}
			if ((err = read_u64(p->pid, ts + l->ts_next, &ts)))
				return err;
		}
		/* subinterpreters: the interpreter's next, its first field */
		if (read_u64(p->pid, interp, &interp))
			break;
	}
	return -ENOENT;
}

/*
 * The chain of thread @tid's interpreter frames, as the BPF walk collects it
 * (bpf/kunwind.bpf.h py_collect_frame(): the same words and run markers).
 */
int pycodes__thread_chain(struct pycodes *pc, pid_t pid, uint64_t gen, pid_t tid,
			  struct python_chain *out)
{
	const struct python_layout *l;
	uint64_t ts, cframe = 0, frame = 0;
	struct pyproc *p = proc_find(pc, pid);
	size_t run_start = 0, i;
	int err;

	out->nr = 0;
	if (!p)
		return -ENOENT;
	l = p->l;
	if ((err = thread_state(p, tid, &ts)))
		return err;
	if (l->ts_cframe != PY_NONE && (err = read_u64(pid, ts + l->ts_cframe, &cframe)))
		return err;
	if (l->cf_frame != PY_NONE)
		err = cframe ? read_u64(pid, cframe + l->cf_frame, &frame) : -ENOENT;
	else
		err = read_u64(pid, ts + l->ts_frame, &frame);
	if (err)
		return err;
	for (i = 0; frame && out->nr < PY_MAX_FRAMES && i < 2 * PY_MAX_FRAMES; i++) {
		uint8_t chunk[104];
		uint64_t code = 0, prev = 0, instr = 0, g = 0;
		uint32_t lasti, guard;
		uint8_t flag = 0;
		size_t k;

		if (read_mem(pid, frame, chunk, sizeof(chunk)))
			break;
		memcpy(&code, chunk + l->fr_code, 8);
		memcpy(&prev, chunk + l->fr_prev, 8);
		memcpy(&instr, chunk + l->fr_instr, 8);
		if (l->fr_flag != PY_NONE)
			flag = chunk[l->fr_flag];
		if (l->run == PY_RUN_SHIM && flag == PY_CSTACK) {
			for (k = run_start; k < out->nr; k++)
				out->marker[k] = frame;
			run_start = out->nr;
			frame = prev == frame ? 0 : prev;
			continue;
		}
		if (!code || code >= 0x800000000000ULL)
			break;
		if (l->co_code == PY_NONE) {
			lasti = (uint32_t)instr;
		} else {
			uint64_t base = code + l->co_code;

			lasti = instr >= base && instr - base < 2ull * PY_LASTI_NONE
					? (uint32_t)((instr - base) / 2)
					: PY_LASTI_NONE;
		}
		if (lasti > PY_LASTI_NONE)
			lasti = PY_LASTI_NONE;
		read_u64(pid, code + l->co_guard, &g);
		guard = fold_guard(g);
		k = out->nr++;
		out->code[k] = PY_WORD | code;
		out->pos[k] = PY_WORD | PY_WORD_POS | (uint64_t)lasti << 32 | guard;
		out->marker[k] = l->run == PY_RUN_SHIM ? 0 : cframe;
		pycodes__note(pc, pid, gen, code, guard);
		if ((l->run == PY_RUN_ENTRY && flag) || l->run == PY_RUN_ONE) {
			uint64_t up = 0;

			if (cframe)
				read_u64(pid, cframe + l->cf_prev, &up);
			cframe = up;
		}
		frame = prev == frame ? 0 : prev;
	}
	return 0;
}

/* Puts Python frame @j of @py in @out at *@o (two words); false when it does not fit. */
static bool put_frame(const struct python_chain *py, size_t j, uint64_t *out, size_t cap, size_t *o)
{
	if (*o + 2 > cap)
		return false;
	out[(*o)++] = py->code[j];
	out[(*o)++] = py->pos[j];
	return true;
}

/* Puts the run of @py from *@j (the frames of marker @m) in @out; false when it is full. */
static bool put_run(const struct python_chain *py, size_t *j, uint64_t m, uint64_t *out, size_t cap,
		    size_t *o)
{
	for (; *j < py->nr && py->marker[*j] == m; (*j)++)
		if (!put_frame(py, *j, out, cap, o))
			return false;
	return true;
}

size_t python__splice(const uint64_t *ips, const uint64_t *sps, size_t n,
		      const struct python_chain *py, uint64_t *out, size_t cap, size_t *unmatched)
{
	size_t i, j = 0, o = 0;
	uint64_t m;

	/* as the BPF walk (bpf/kunwind.bpf.h kunwind_step()): a frame that does not fit
	 * ends the stack, which is then as deep as it can be */
	*unmatched = 0;
	for (i = 0; i < n; i++) {
		/* a run whose activation was passed unseen: before this frame */
		while (j < py->nr && (m = py->marker[j]) && m < sps[i]) {
			(*unmatched)++;
			if (!put_run(py, &j, m, out, cap, &o))
				return o;
		}
		m = j < py->nr ? py->marker[j] : 0;
		if (m && i + 1 < n && m >= sps[i] && m < sps[i + 1]) {
			/* this activation ran that run: the run takes its place */
			if (!put_run(py, &j, m, out, cap, &o))
				return o;
			continue;
		}
		if (o == cap)
			return o;
		out[o++] = ips[i];
	}
	if (j < py->nr)
		(*unmatched)++;
	for (; j < py->nr; j++)
		if (!put_frame(py, j, out, cap, &o))
			break;
	return o;
}
