// SPDX-License-Identifier: MIT
/*
 * tests/record: --event specifications parsed, and resolved against a binary built with
 * known functions and a USDT probe (tests/workloads/events.c, its path in argv[1]):
 * offsets from the symbol table, globs, ambiguity and missing names refused, the USDT
 * note and its argument count. No privilege (profiler/event.c, symbolize/funcs.c).
 */
#include <errno.h>
#include <unistd.h>

#include "check.h"
#include "common.h"
#include "engine.h"
#include "event.h"
#include "symbolize.h"

static void test_parse(void)
{
	struct event_spec ev;

	CHECK(!event__parse("uprobe:/x/y:f+16", &ev) && ev.kind == EVENT_UPROBE);
	CHECK_STR(ev.file, "/x/y");
	CHECK_STR(ev.symbol, "f");
	CHECK(ev.add == 16);
	event__free(&ev);
	/* a C++ operator keeps its '+'; only digits after it are an offset */
	CHECK(!event__parse("uprobe:/x:operator+", &ev) && ev.add == 0);
	CHECK_STR(ev.symbol, "operator+");
	event__free(&ev);
	CHECK(!event__parse("uprobe:/x:ns::f", &ev));
	CHECK_STR(ev.symbol, "ns::f");
	event__free(&ev);
	CHECK(!event__parse("uretprobe:libc.so.6:malloc", &ev) && ev.kind == EVENT_URETPROBE);
	CHECK_STR(ev.file, "libc.so.6");
	event__free(&ev);
	CHECK(!event__parse("usdt:/usr/bin/python3.11:python:gc__start", &ev) &&
	      ev.kind == EVENT_USDT);
	CHECK_STR(ev.symbol, "python");
	CHECK_STR(ev.name, "gc__start");
	event__free(&ev);
	CHECK(!event__parse("tracepoint:sched:sched_switch", &ev) && ev.kind == EVENT_TRACEPOINT);
	CHECK_STR(ev.name, "sched_switch");
	event__free(&ev);
	CHECK(!event__parse("tracepoint:sched_switch", &ev) && ev.kind == EVENT_TRACEPOINT);
	CHECK_STR(ev.name, "sched_switch");
	event__free(&ev);
	CHECK(!event__parse("page-faults", &ev) && ev.kind == EVENT_SOFTWARE);
	event__free(&ev);
	CHECK(!event__parse("software:cs", &ev) && ev.kind == EVENT_SOFTWARE);
	event__free(&ev);
	/* refused, one line each */
	CHECK(event__parse("bogus", &ev) == -EINVAL);
	event__free(&ev);
	CHECK(event__parse("kprobe:do_exit:x", &ev) == -EINVAL);
	event__free(&ev);
	CHECK(event__parse("uprobe:/x", &ev) == -EINVAL);
	event__free(&ev);
	CHECK(event__parse("uprobe::f", &ev) == -EINVAL);
	event__free(&ev);
	CHECK(event__parse("usdt:/x:provider", &ev) == -EINVAL);
	event__free(&ev);
	CHECK(event__parse("tracepoint:a:b:c", &ev) == -EINVAL);
	event__free(&ev);
}

/* The file offset symbolize__functions() gives @name in @path. */
static uint64_t offset_of(const char *path, const char *name)
{
	struct strset *strs = strset__new();
	struct symbolize_func *fns = NULL;
	uint64_t off = 0;
	size_t nr = 0, i;

	CHECK(strs && !symbolize__functions(path, strs, &fns, &nr) && nr > 0);
	for (i = 0; i < nr; i++)
		if (!strcmp(fns[i].name, name))
			off = fns[i].offset;
	free(fns);
	strset__free(strs);
	CHECK(off);
	return off;
}

static int resolve(const char *spec, const char *path, unsigned int weight, uint64_t *offset)
{
	char buf[4096];
	struct event_spec ev;
	int err;

	snprintf(buf, sizeof(buf), spec, path);
	CHECK(!event__parse(buf, &ev));
	ev.weight_arg = weight;
	err = event__resolve(&ev, NULL, 0, NULL);
	if (!err && offset)
		*offset = ev.offset;
	if (!err && *path)
		CHECK_STR(ev.path, path);
	event__free(&ev);
	return err;
}

static void test_resolve(const char *events)
{
	uint64_t probed = offset_of(events, "probed"), deep = offset_of(events, "probed_deep"), off;

	CHECK(probed != deep);
	CHECK(!resolve("uprobe:%s:probed", events, 0, &off) && off == probed);
	CHECK(!resolve("uprobe:%s:probed+4", events, 0, &off) && off == probed + 4);
	CHECK(!resolve("uprobe:%s:*_deep", events, 0, &off) && off == deep);
	CHECK(!resolve("uretprobe:%s:probed_deep", events, 0, &off) && off == deep);
	/* two functions match: refused with both listed */
	CHECK(resolve("uprobe:%s:probed*", events, 0, NULL) == -EINVAL);
	CHECK(resolve("uprobe:%s:no_such_function", events, 0, NULL) == -ENOENT);
	/* past the function's end */
	CHECK(resolve("uprobe:%s:probed+100000", events, 0, NULL) == -EINVAL);
	CHECK(resolve("uprobe:/no/such/file:f", "", 0, NULL) == -ENOENT);
	CHECK(!resolve("usdt:%s:scorch:tick", events, 1, NULL));
	CHECK(resolve("usdt:%s:scorch:tick", events, 2, NULL) == -EINVAL);
	CHECK(resolve("usdt:%s:scorch:nope", events, 0, NULL) == -ENOENT);
	/* a tracepoint is found in the kernel's BTF, with its argument count */
	if (!access("/sys/kernel/btf/vmlinux", R_OK)) {
		CHECK(!resolve("tracepoint:sched:sched_process_fork", "", 2, NULL));
		CHECK(resolve("tracepoint:sched:sched_process_fork", "", 3, NULL) == -EINVAL);
		CHECK(resolve("tracepoint:sched:no_such_tracepoint", "", 0, NULL) == -ENOENT);
	}
}

/* C++ names, demangled: overloads are told apart by their parameters or mangled names */
static void test_cxx(void)
{
	static const char *lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	static const char *append = "std::__cxx11::basic_string<char, std::char_traits<char>, "
				    "std::allocator<char> >::append";
	char spec[1024];
	uint64_t a, b;

	if (access(lib, R_OK))
		return; /* not x86_64 Debian: the C++ names below are its libstdc++'s */
	snprintf(spec, sizeof(spec), "uprobe:%%s:%s", append);
	CHECK(resolve(spec, lib, 0, NULL) == -EINVAL); /* six overloads */
	snprintf(spec, sizeof(spec), "uprobe:%%s:%s(char const*)", append);
	CHECK(!resolve(spec, lib, 0, &a));
	CHECK(!resolve("uprobe:%s:_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc",
		       lib, 0, &b) &&
	      a == b);
	/* the end of a qualified name */
	CHECK(!resolve("uprobe:%s:basic_string<char, std::char_traits<char>, std::allocator<char> "
		       ">::_M_append",
		       lib, 0, NULL));
}

static void test_usdt_notes(const char *events)
{
	struct strset *strs = strset__new();
	struct symbolize_usdt *v = NULL;
	size_t nr = 0;

	CHECK(strs && !symbolize__usdt_notes(events, strs, &v, &nr));
	CHECK(nr == 1);
	CHECK_STR(v[0].provider, "scorch");
	CHECK_STR(v[0].name, "tick");
	CHECK(v[0].args && !strncmp(v[0].args, "8@%", 3) && v[0].pc);
	free(v);
	CHECK(symbolize__usdt_notes("/proc/self/status", strs, &v, &nr) == -ENOEXEC && !v);
	strset__free(strs);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_event PATH_OF_tests/workloads/events\n");
		return 2;
	}
	test_parse();
	test_resolve(argv[1]);
	test_cxx();
	test_usdt_notes(argv[1]);
	printf("test_event: ok\n");
	return 0;
}
