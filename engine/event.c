// SPDX-License-Identifier: MIT
/* profiler: record --event: the event named, its file and function found, its unit. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "common.h"
#include "engine.h"
#include "event.h"
#include "flamegraph.h"
#include "symbolize.h"

#define MAX_CANDIDATES_SHOWN 12

/* Where a library named without a path is looked for when no target process maps it. */
static const char *const lib_dirs[] = {
	"/lib/x86_64-linux-gnu",
	"/usr/lib/x86_64-linux-gnu",
	"/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu",
	"/lib64",
	"/usr/lib64",
	"/lib",
	"/usr/lib",
	"/usr/local/lib",
};

static const struct {
	const char *name;
	uint32_t config;
} sw_events[] = {
	{"page-faults", PERF_COUNT_SW_PAGE_FAULTS},
	{"faults", PERF_COUNT_SW_PAGE_FAULTS},
	{"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cs", PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
	{"migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
	{"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN},
	{"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
};

void event__free(struct event_spec *ev)
{
	free(ev->copy);
	free(ev->path);
	memset(ev, 0, sizeof(*ev));
}

static int bad_spec(const char *arg, const char *why)
{
	pr_err("invalid --event '%s': %s\n", arg, why);
	pr_hint("give uprobe:FILE:SYMBOL, uretprobe:FILE:SYMBOL, usdt:FILE:PROVIDER:NAME, "
		"tracepoint:CATEGORY:NAME or page-faults ('scorch list-events' lists them)\n");
	return -EINVAL;
}

int event__parse(const char *arg, struct event_spec *ev)
{
	char *colon, *plus;
	size_t i;

	memset(ev, 0, sizeof(*ev));
	ev->spec = arg;
	for (i = 0; i < ARRAY_SIZE(sw_events); i++) {
		if (!strcmp(arg, sw_events[i].name) ||
		    (!strncmp(arg, "software:", 9) && !strcmp(arg + 9, sw_events[i].name))) {
			ev->kind = EVENT_SOFTWARE;
			ev->sw_config = sw_events[i].config;
			ev->name = sw_events[i].name;
			return 0;
		}
	}
	ev->copy = strdup(arg);
	if (!ev->copy)
		return -ENOMEM;
	colon = strchr(ev->copy, ':');
	if (!colon)
		return bad_spec(arg, "no such event");
	*colon = '\0';
	if (!strcmp(ev->copy, "uprobe") || !strcmp(ev->copy, "u"))
		ev->kind = EVENT_UPROBE;
	else if (!strcmp(ev->copy, "uretprobe") || !strcmp(ev->copy, "ur"))
		ev->kind = EVENT_URETPROBE;
	else if (!strcmp(ev->copy, "usdt"))
		ev->kind = EVENT_USDT;
	else if (!strcmp(ev->copy, "tracepoint") || !strcmp(ev->copy, "t") ||
		 !strcmp(ev->copy, "rawtracepoint"))
		ev->kind = EVENT_TRACEPOINT;
	else
		return bad_spec(arg, "unknown kind of event");
	ev->file = colon + 1;
	if (ev->kind == EVENT_TRACEPOINT && !strchr(ev->file, ':')) {
		/* tracepoint:NAME (as list-events prints it): the category is not needed */
		ev->name = ev->file;
		ev->file = NULL;
		return *ev->name ? 0 : bad_spec(arg, "tracepoint:CATEGORY:NAME");
	}
	/* FILE:SYMBOL: the last ':' before the symbol (a path has none; C++ names do) */
	colon = strchr(ev->file, ':');
	if (!colon || !colon[1] || colon == ev->file)
		return bad_spec(arg, "FILE and a name after it are needed");
	*colon = '\0';
	ev->symbol = colon + 1;
	if (ev->kind == EVENT_TRACEPOINT) {
		/* CATEGORY:NAME; the raw tracepoint is NAME */
		ev->name = ev->symbol;
		ev->symbol = NULL;
		return strchr(ev->name, ':') ? bad_spec(arg, "tracepoint:CATEGORY:NAME") : 0;
	}
	if (ev->kind == EVENT_USDT) {
		colon = strchr(ev->symbol, ':');
		if (!colon || !colon[1] || colon == ev->symbol)
			return bad_spec(arg, "usdt:FILE:PROVIDER:NAME");
		*colon = '\0';
		ev->name = colon + 1;
		return 0;
	}
	/* SYMBOL+OFF; a C++ name may hold "operator+": the offset is digits only */
	plus = strrchr(ev->symbol, '+');
	if (plus && plus != ev->symbol && plus[1]) {
		uint64_t off;

		if (!parse__u64(plus + 1, 0, &off)) {
			*plus = '\0';
			ev->add = off;
		}
	}
	return 0;
}

/* Does the file name @base name the library @want: equal, or @want followed by '.' or '-'
 * (libc -> libc.so.6, libgdruntime.so -> libgdruntime.so.3)? */
static bool lib_matches(const char *base, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(base, want, n) && (!base[n] || base[n] == '.' || base[n] == '-');
}

/* Adds @path to @c[0..*nr) unless it is a file there already (same device and inode). */
static int candidate_add(char **c, dev_t *devs, ino_t *inos, size_t *nr, size_t cap,
			 const char *path)
{
	struct stat st;
	size_t i;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	for (i = 0; i < *nr; i++)
		if (devs[i] == st.st_dev && inos[i] == st.st_ino)
			return 0;
	if (*nr == cap)
		return 0;
	c[*nr] = strdup(path);
	if (!c[*nr])
		return -ENOMEM;
	devs[*nr] = st.st_dev;
	inos[(*nr)++] = st.st_ino;
	return 0;
}

#define MAX_FILE_CANDIDATES 16

/* The files @want names among the executable mappings of @pid. */
static int from_maps(pid_t pid, const char *want, char **c, dev_t *devs, ino_t *inos, size_t *nr)
{
	char path[64], *text = NULL, *line, *save = NULL, *file, *base, root[PATH_MAX + 64];
	size_t len;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	err = file__read_bounded(AT_FDCWD, path, 64u << 20, &text, &len);
	if (err)
		return err == -ENOMEM ? err : 0;
	for (line = strtok_r(text, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		char perms[8];

		if (sscanf(line, "%*s %7s", perms) != 1 || perms[2] != 'x')
			continue;
		file = strchr(line, '/');
		if (!file)
			continue;
		base = strrchr(file, '/') + 1;
		if (!lib_matches(base, want))
			continue;
		/* inside the process's root: a container's files under its paths */
		snprintf(root, sizeof(root), "/proc/%d/root%s", pid, file);
		err = candidate_add(c, devs, inos, nr, MAX_FILE_CANDIDATES,
				    access(file, R_OK) ? root : file);
	}
	free(text);
	return err;
}

/* The files @want names in the library directories. */
static int from_dirs(const char *want, char **c, dev_t *devs, ino_t *inos, size_t *nr)
{
	char path[PATH_MAX];
	struct dirent *de;
	size_t i;
	int err = 0;

	for (i = 0; i < ARRAY_SIZE(lib_dirs) && !err; i++) {
		DIR *d = opendir(lib_dirs[i]);

		while (d && !err && (de = readdir(d))) {
			if (!lib_matches(de->d_name, want) ||
			    (size_t)snprintf(path, sizeof(path), "%s/%s", lib_dirs[i],
					     de->d_name) >= sizeof(path))
				continue;
			err = candidate_add(c, devs, inos, nr, MAX_FILE_CANDIDATES, path);
		}
		if (d)
			closedir(d);
	}
	return err;
}

/* @name looked up in $PATH as a shell would (a command's executable). */
static char *which(const char *name)
{
	const char *p = getenv("PATH");
	char path[PATH_MAX];

	if (strchr(name, '/'))
		return strdup(name);
	while (p && *p) {
		size_t n = strcspn(p, ":");

		if (n &&
		    (size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)n, p, name) <
			    sizeof(path) &&
		    !access(path, X_OK))
			return strdup(path);
		p += n + (p[n] == ':');
	}
	return NULL;
}

/*
 * The file of a uprobe or USDT probe: a path as it is, else a library or executable
 * named by its file name (libc, libc.so.6), looked for among the mappings of the target
 * processes, the command's executable, then the library directories.
 */
static int resolve_file(struct event_spec *ev, const pid_t *pids, size_t nr_pids, char **cmd)
{
	char *c[MAX_FILE_CANDIDATES] = {};
	dev_t devs[MAX_FILE_CANDIDATES];
	ino_t inos[MAX_FILE_CANDIDATES];
	size_t nr = 0, i;
	int err = 0;

	if (strchr(ev->file, '/')) {
		if (access(ev->file, R_OK)) {
			err = -errno;
			pr_err("cannot read %s for --event %s: %s\n", ev->file, ev->spec,
			       strerror(-err));
			pr_hint("give the path of an executable or library, or its file name "
				"(e.g. libc.so.6)\n");
			return err;
		}
		ev->path = strdup(ev->file);
		return ev->path ? 0 : -ENOMEM;
	}
	for (i = 0; i < nr_pids && !err; i++)
		err = from_maps(pids[i], ev->file, c, devs, inos, &nr);
	if (!err && !nr && cmd) {
		char *exe = which(cmd[0]);
		const char *base = exe ? strrchr(exe, '/') : NULL;

		if (base && lib_matches(base + 1, ev->file))
			err = candidate_add(c, devs, inos, &nr, MAX_FILE_CANDIDATES, exe);
		free(exe);
	}
	if (!err && !nr)
		err = from_dirs(ev->file, c, devs, inos, &nr);
	if (err)
		goto cleanup;
	if (!nr) {
		pr_err("no file named %s for --event %s%s\n", ev->file, ev->spec,
		       nr_pids ? " in the target's mappings or the library directories"
			       : " in the library directories");
		pr_hint("give the file's path, e.g. "
			"uprobe:/usr/lib/x86_64-linux-gnu/libc.so.6:malloc\n");
		err = -ENOENT;
		goto cleanup;
	}
	if (nr > 1) {
		pr_err("%s names %zu files for --event %s:\n", ev->file, nr, ev->spec);
		for (i = 0; i < nr; i++)
			pr_err("  %s\n", c[i]);
		pr_hint("give one of them by its path\n");
		err = -EINVAL;
		goto cleanup;
	}
	ev->path = c[0];
	c[0] = NULL;
cleanup:
	for (i = 0; i < nr; i++)
		free(c[i]);
	return err;
}

/* How well @fn matches @want: 3 the name or the demangled name, 2 a qualified name
 * ending in it ("Gcx.fullcollect", "ns::f"), 1 a glob match, 0 none. */
static int match_rank(const struct symbolize_func *fn, const char *want)
{
	const char *dm = fn->short_name;
	size_t n = strlen(want), l;

	if (!strcmp(fn->name, want) || (fn->demangled && !strcmp(fn->demangled, want)) ||
	    (dm && !strcmp(dm, want)))
		return 3;
	if (dm && (l = strlen(dm)) > n + 1 && !strcmp(dm + l - n, want) &&
	    (dm[l - n - 1] == '.' || (dm[l - n - 1] == ':' && dm[l - n - 2] == ':')))
		return 2;
	if (strpbrk(want, "*?[") && (!fnmatch(want, fn->name, 0) || (dm && !fnmatch(want, dm, 0))))
		return 1;
	return 0;
}

/* The function SYMBOL names in the file: exactly one address, or an error listing all. */
static int resolve_symbol(struct event_spec *ev)
{
	struct symbolize_func *fns = NULL;
	struct strset *strs = strset__new();
	size_t nr = 0, i, nr_best = 0, shown = 0, len = 0;
	const struct symbolize_func *best = NULL;
	uint64_t last = 0;
	int err, *ranks = NULL, top = 0;
	char line[1024];

	if (!strs)
		return -ENOMEM;
	err = symbolize__functions(ev->path, strs, &fns, &nr);
	if (err) {
		pr_err("cannot read the functions of %s for --event %s: %s\n", ev->path, ev->spec,
		       err == -ENOEXEC ? "not an ELF file" : strerror(-err));
		pr_hint("give an executable or a shared library\n");
		goto cleanup;
	}
	ranks = calloc(nr + 1, sizeof(*ranks));
	if (!ranks) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < nr; i++) {
		ranks[i] = match_rank(&fns[i], ev->symbol);
		top = MAX(top, ranks[i]);
	}
	/* the best matches, by address (the functions are sorted so): aliases are one */
	for (i = 0; top && i < nr; i++) {
		if (ranks[i] != top || (best && fns[i].addr == last))
			continue;
		last = fns[i].addr;
		nr_best++;
		best = best ? best : &fns[i];
	}
	if (!best) {
		pr_err("no function %s in %s (--event %s)\n", ev->symbol, ev->path, ev->spec);
		pr_hint("'scorch list-events %s' lists its functions; a D or C++ name may be given "
			"demangled, qualified or with * wildcards\n",
			ev->path);
		err = -ENOENT;
		goto cleanup;
	}
	if (nr_best > 1) {
		pr_err("%s names %zu functions in %s (--event %s):\n", ev->symbol, nr_best,
		       ev->path, ev->spec);
		/* one line per address, its aliases joined by " = " */
		for (i = 0; i < nr; i++) {
			if (ranks[i] != top)
				continue;
			if (len && fns[i].addr == last) {
				len += snprintf(line + len, sizeof(line) - len, " = %s",
						fns[i].demangled ? fns[i].demangled : fns[i].name);
				len = MIN(len, sizeof(line) - 1);
				continue;
			}
			if (len && shown++ < MAX_CANDIDATES_SHOWN)
				pr_err("  %s\n", line);
			last = fns[i].addr;
			len = snprintf(line, sizeof(line), "%s",
				       fns[i].demangled ? fns[i].demangled : fns[i].name);
			len = MIN(len, sizeof(line) - 1);
		}
		if (len && shown++ < MAX_CANDIDATES_SHOWN)
			pr_err("  %s\n", line);
		if (shown > MAX_CANDIDATES_SHOWN)
			pr_err("  ... and %zu more\n", shown - MAX_CANDIDATES_SHOWN);
		pr_hint("name one of them exactly (its mangled name is always unique)\n");
		err = -EINVAL;
		goto cleanup;
	}
	if (best->size && ev->add >= best->size) {
		pr_err("offset +%" PRIu64 " is past the end of %s (%" PRIu64
		       " bytes) in --event %s\n",
		       ev->add, best->name, best->size, ev->spec);
		pr_hint("give an offset inside the function\n");
		err = -EINVAL;
		goto cleanup;
	}
	ev->offset = best->offset + ev->add;
	ev->func_size = best->size;
	pr_debug("event: %s is %s at file offset 0x%" PRIx64 " of %s\n", ev->spec, best->name,
		 ev->offset, ev->path);
cleanup:
	free(ranks);
	free(fns);
	strset__free(strs);
	return err;
}

/* The USDT probe PROVIDER:NAME in the file, with the argument --weight reads. */
static int resolve_usdt(struct event_spec *ev)
{
	struct strset *strs = strset__new();
	struct symbolize_usdt *notes = NULL;
	size_t nr = 0, i, found = 0;
	int err, nr_args = -1;

	if (!strs)
		return -ENOMEM;
	err = symbolize__usdt_notes(ev->path, strs, &notes, &nr);
	if (err) {
		pr_err("cannot read the USDT notes of %s for --event %s: %s\n", ev->path, ev->spec,
		       err == -ENOEXEC ? "not an ELF file" : strerror(-err));
		pr_hint("give an executable or a shared library\n");
		goto cleanup;
	}
	for (i = 0; i < nr; i++) {
		const char *a = notes[i].args;
		int n = 0;

		if (strcmp(notes[i].provider, ev->symbol) || strcmp(notes[i].name, ev->name))
			continue;
		found++;
		/* "8@%rdi -4@%esi": arguments separated by spaces */
		while (a && *a) {
			a += strspn(a, " ");
			if (!*a)
				break;
			n++;
			a += strcspn(a, " ");
		}
		nr_args = nr_args < 0 ? n : MIN(nr_args, n);
	}
	if (!found) {
		pr_err("no USDT probe %s:%s in %s (--event %s)\n", ev->symbol, ev->name, ev->path,
		       ev->spec);
		pr_hint("'scorch list-events %s' lists its probes\n", ev->path);
		err = -ENOENT;
	} else if (ev->weight_arg > (unsigned int)nr_args) {
		pr_err("--weight ARG%u: USDT probe %s:%s has %d argument%s\n", ev->weight_arg,
		       ev->symbol, ev->name, nr_args, nr_args == 1 ? "" : "s");
		if (nr_args)
			pr_hint("give ARG1..ARG%d\n", nr_args);
		else
			pr_hint("count its hits: drop --weight\n");
		err = -EINVAL;
	}
cleanup:
	free(notes);
	strset__free(strs);
	return err;
}

/* The raw tracepoint @name (its BTF typedef btf_trace_NAME): its argument count. */
static int tracepoint_args(const char *name, int *nr_args)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t = NULL;
	char tname[256];
	int id;

	if (!btf)
		return -errno;
	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	id = btf__find_by_name_kind(btf, tname, BTF_KIND_TYPEDEF);
	if (id > 0)
		t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	*nr_args = t && btf_is_func_proto(t) ? btf_vlen(t) - 1 : -1; /* the first: void *ctx */
	btf__free(btf);
	return *nr_args >= 0 ? 0 : -ENOENT;
}

/* Does process @pid map the file @st executable? -1: its maps are unreadable. */
static int maps_file(pid_t pid, const struct stat *st)
{
	char path[64], *text = NULL, *line, *save = NULL;
	unsigned int maj, min;
	unsigned long long ino;
	size_t len;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (file__read_bounded(AT_FDCWD, path, 64u << 20, &text, &len))
		return -1;
	for (line = strtok_r(text, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		char perms[8];

		if (sscanf(line, "%*s %7s %*s %x:%x %llu", perms, &maj, &min, &ino) == 4 &&
		    perms[2] == 'x' && ino == (unsigned long long)st->st_ino &&
		    makedev(maj, min) == st->st_dev)
			found = 1;
	}
	free(text);
	return found;
}

/* -p: a probe in a file no target maps counts nothing; said now, not after the run. */
static void check_mapped(const struct event_spec *ev, const pid_t *pids, size_t nr_pids)
{
	struct stat st;
	size_t i;

	if (!nr_pids || stat(ev->path, &st))
		return;
	for (i = 0; i < nr_pids; i++)
		if (maps_file(pids[i], &st))
			return; /* mapped, or unreadable: the recording will tell */
	pr_warn("%s is mapped by no target process: --event %s counts only what loads it later\n",
		ev->path, ev->spec);
	pr_hint("check the file with 'scorch list-events -p %d'\n", pids[0]);
}

int event__resolve(struct event_spec *ev, const pid_t *pids, size_t nr_pids, char **cmd)
{
	int err, nr_args;

	switch (ev->kind) {
	case EVENT_UPROBE:
	case EVENT_URETPROBE:
		err = resolve_file(ev, pids, nr_pids, cmd);
		if (!err)
			err = resolve_symbol(ev);
		if (!err)
			check_mapped(ev, pids, nr_pids);
		return err;
	case EVENT_USDT:
		err = resolve_file(ev, pids, nr_pids, cmd);
		if (!err)
			err = resolve_usdt(ev);
		if (!err)
			check_mapped(ev, pids, nr_pids);
		return err;
	case EVENT_TRACEPOINT:
		err = tracepoint_args(ev->name, &nr_args);
		if (err == -ENOENT) {
			pr_err("no tracepoint %s in the kernel (--event %s)\n", ev->name, ev->spec);
			if (!strncmp(ev->name, "sys_enter_", 10) || !strncmp(ev->name, "sys_exit_", 9))
				/* syscalls:sys_enter_NAME are ftrace's events, not tracepoints */
				pr_hint("one syscall's events are not raw tracepoints: count every "
					"syscall at tracepoint:raw_syscalls:%s, or probe its libc "
					"function (uprobe:libc.so.6:%s)\n",
					ev->name[4] == 'e' ? "sys_enter" : "sys_exit",
					strchr(ev->name + 4, '_') + 1);
			else
				pr_hint("'scorch list-events' lists the kernel's tracepoints\n");
			return err;
		}
		if (err) {
			pr_err("cannot read the kernel's BTF for --event %s: %s\n", ev->spec,
			       strerror(-err));
			pr_hint("tracepoints are found by BTF (/sys/kernel/btf/vmlinux)\n");
			return err;
		}
		if (ev->weight_arg > (unsigned int)nr_args) {
			pr_err("--weight ARG%u: tracepoint %s has %d argument%s\n", ev->weight_arg,
			       ev->name, nr_args, nr_args == 1 ? "" : "s");
			pr_hint("give ARG1..ARG%d\n", nr_args);
			return -EINVAL;
		}
		return 0;
	default:
		return 0;
	}
}

void event__unit(const struct event_spec *ev, const char **type, const char **unit,
		 const char **countname)
{
	if (ev->latency) {
		*type = "latency";
		*unit = "microseconds";
		*countname = "us";
	} else if (ev->weight_arg) {
		/* what the argument counts: bytes (malloc's size) unless --weight ARGn:UNIT */
		*type = ev->weight_unit[0] ? ev->weight_unit : "bytes";
		*unit = *type;
		*countname = *type;
	} else if (ev->kind == EVENT_UPROBE || ev->kind == EVENT_URETPROBE ||
		   ev->kind == EVENT_USDT) {
		*type = "calls";
		*unit = "count";
		*countname = "calls";
	} else {
		*type = "events";
		*unit = "count";
		*countname = "events";
	}
}

const char *event__describe(struct event_spec *ev)
{
	if (ev->period > 1)
		snprintf(ev->subtitle, sizeof(ev->subtitle), "%s%s: 1 in %" PRIu64 " counted",
			 ev->spec, ev->weight_arg ? ", weighed by its argument" : "", ev->period);
	else
		snprintf(ev->subtitle, sizeof(ev->subtitle), "%s%s", ev->spec,
			 ev->latency	  ? ": time from entry to return, by the stack at entry"
			 : ev->weight_arg ? ", weighed by its argument"
					  : "");
	return ev->subtitle;
}

void event__svg_defaults(struct event_spec *ev, struct flamegraph_opts *fg)
{
	struct flamegraph_opts dflt;
	const char *type, *unit, *countname;

	flamegraph_opts__init(&dflt);
	event__unit(ev, &type, &unit, &countname);
	if (!fg->title)
		fg->title = ev->latency ? "Latency Flame Graph" : "Event Flame Graph";
	if (!fg->subtitle)
		fg->subtitle = event__describe(ev);
	if (fg->countname == dflt.countname || !strcmp(fg->countname, dflt.countname))
		fg->countname = countname;
	if (fg->colors == dflt.colors && ev->weight_arg)
		fg->colors = FG_PAL_MEM;
}
