// SPDX-License-Identifier: MIT
/*
 * CPython support without a process (python/python.c):
 * - python__splice() on stacks built by construction: runs replace the native frame whose
 *   stack holds their marker, runs passed unseen go before the next frame, runs no frame
 *   held go at the root end, and the stack is cut at its capacity;
 * - names and lines of imported code objects: qualname (file.py), a package's
 *   __init__.py with its directory, and each code unit's line from the line table
 *   against what the interpreter itself says (co_positions(), co_lines()) for every
 *   code object of a few standard modules, with Debian's python3 and, where pyenv holds
 *   it, CPython 3.10 (the older table).
 * Usage: test_python LINETABLES_PY
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "python.h"

#define W(x)		(PY_WORD | (x))
#define P(lasti, guard) (PY_WORD | PY_WORD_POS | (uint64_t)(lasti) << 32 | (guard))

static void test_splice(void)
{
	/* native: leaf, eval(A), call, eval(B), main; frame i's stack [sps[i], sps[i+1]) */
	uint64_t ips[] = {0x1000, 0x2000, 0x3000, 0x4000, 0x5000};
	uint64_t sps[] = {100, 200, 300, 400, 500};
	struct python_chain py = {.nr = 3};
	uint64_t out[32];
	size_t n, unmatched;

	/* run A (two frames) marked inside frame 1, run B inside frame 3 */
	py.code[0] = W(0xa0), py.pos[0] = P(1, 7), py.marker[0] = 250;
	py.code[1] = W(0xa1), py.pos[1] = P(2, 7), py.marker[1] = 250;
	py.code[2] = W(0xb0), py.pos[2] = P(3, 7), py.marker[2] = 420;
	/* frame 1 is [200, 300): holds 250; frame 3 is [400, 500): holds 420 */
	n = python__splice(ips, sps, 5, &py, out, 32, &unmatched);
	{
		uint64_t want[] = {0x1000, W(0xa0), P(1, 7), W(0xa1), P(2, 7),
				   0x3000, W(0xb0), P(3, 7), 0x5000};

		CHECK(n == 9 && unmatched == 0);
		CHECK(!memcmp(out, want, sizeof(want)));
	}
	/* B's marker below frame 2's stack (its activation passed unseen): before frame 2 */
	py.marker[2] = 150;
	n = python__splice(ips, sps, 5, &py, out, 32, &unmatched);
	{
		uint64_t want[] = {0x1000,  W(0xa0), P(1, 7), W(0xa1), P(2, 7),
				   W(0xb0), P(3, 7), 0x3000,  0x4000,  0x5000};

		CHECK(n == 10 && unmatched == 1);
		CHECK(!memcmp(out, want, sizeof(want)));
	}
	/* a run held by no frame (the native walk ended short): at the root end */
	py.marker[2] = 9999;
	n = python__splice(ips, sps, 5, &py, out, 32, &unmatched);
	CHECK(unmatched == 1 && n == 10 && out[7] == 0x5000 && out[8] == W(0xb0));
	/* capacity: whole frames only, and nothing after a frame that did not fit */
	n = python__splice(ips, sps, 5, &py, out, 4, &unmatched);
	CHECK(n == 3 && out[0] == 0x1000 && out[1] == W(0xa0) && out[2] == P(1, 7));
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Checks every code object @f (linetables.py's output) describes; returns how many. */
static int check_lines(FILE *f, const char *what)
{
	static char line[1 << 22], hex[2 * 65536 + 1];
	struct pycodes *pc = pycodes__new(true);
	uint8_t *table = malloc(1 << 20);
	uint64_t addr = 0x10000;
	int codes = 0, units = 0;

	CHECK(pc && table);
	while (fgets(line, sizeof(line), f)) {
		struct pycode_info info = {.pid = 1,
					   .gen = 1,
					   .guard = 5,
					   .qualname = "fn",
					   .file = "/usr/lib/python3/x/__init__.py"};
		char *p;
		int first, pep657;
		size_t i, len;
		struct frame fr;

		hex[0] = '\0';
		CHECK(sscanf(line, "code %d %d %131072s", &first, &pep657, hex) >= 2);
		len = strlen(hex) / 2;
		for (i = 0; i < len; i++)
			table[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
		info.addr = addr += 0x100;
		info.firstlineno = first;
		info.pep657 = pep657;
		info.linetable = table;
		info.linetable_len = (uint32_t)len;
		CHECK(!pycodes__import(pc, &info));
		CHECK(fgets(line, sizeof(line), f));
		for (p = line; *p && *p != '\n';) {
			long lasti = strtol(p, &p, 10), want = strtol(p, &p, 10);
			char name[256];

			CHECK(!pycodes__frame(pc, 1, 1, W(info.addr), P(lasti, 5), &fr));
			if (want) {
				snprintf(name, sizeof(name), "fn (x/__init__.py:%ld)", want);
				if ((long)fr.line != want)
					fprintf(stderr,
						"%s: code at line %d, unit %ld: line %u, want "
						"%ld\n",
						what, first, lasti, fr.line, want);
				CHECK((long)fr.line == want);
				CHECK_STR(fr.name, name);
			} else {
				CHECK(fr.line == 0);
				CHECK_STR(fr.name, "fn (x/__init__.py)");
			}
			units++;
			while (*p == ' ')
				p++;
		}
		codes++;
	}
	printf("%s: %d code objects, %d code units: lines as the interpreter's\n", what, codes,
	       units);
	pycodes__free(pc);
	free(table);
	return codes;
}

static void test_lines(const char *script)
{
	const char *pythons[] = {"/usr/bin/python3", NULL};
	char cmd[4096];
	size_t i;
	FILE *f;

	for (i = 0; pythons[i]; i++) {
		snprintf(cmd, sizeof(cmd), "'%s' '%s'", pythons[i], script);
		f = popen(cmd, "r");
		CHECK(f);
		CHECK(check_lines(f, pythons[i]) >= 100);
		CHECK(pclose(f) == 0);
	}
	/* the 3.10 table (PEP 626), where pyenv holds 3.10 */
	snprintf(cmd, sizeof(cmd),
		 "p=$(ls -d \"${PYENV_ROOT:-$HOME/.pyenv}\"/versions/3.10.*/bin/python3.10 "
		 "2>/dev/null "
		 "| head -n 1); [ -z \"$p\" ] || \"$p\" '%s'",
		 script);
	f = popen(cmd, "r");
	CHECK(f);
	if (!check_lines(f, "CPython 3.10"))
		printf("CPython 3.10: not installed (pyenv), not tested\n");
	CHECK(pclose(f) == 0);
}

static void test_names(void)
{
	struct pycodes *pc = pycodes__new(false);
	struct pycode_info info = {.pid = 3,
				   .gen = 9,
				   .guard = 1,
				   .addr = 0x5000,
				   .qualname = "Sleeper.nap",
				   .file = "/srv/app.py",
				   .firstlineno = 4};
	const char *qualname, *file;
	struct frame fr;

	CHECK(pc && !pycodes__import(pc, &info));
	CHECK(!pycodes__frame(pc, 3, 9, W(0x5000), P(2, 1), &fr));
	CHECK_STR(fr.name, "Sleeper.nap (app.py)");
	CHECK(fr.line == 0); /* no --lines */
	/* a profile's function: the bare name and the whole file */
	CHECK(!pycodes__function(pc, 3, 9, W(0x5000), P(2, 1), &qualname, &file));
	CHECK_STR(qualname, "Sleeper.nap");
	CHECK_STR(file, "/srv/app.py");
	CHECK(pycodes__function(pc, 3, 9, W(0x5000), P(2, 2), &qualname, &file) == -ENOENT);
	/* another guard at the same address: another code object, not this one's name */
	CHECK(!pycodes__frame(pc, 3, 9, W(0x5000), P(2, 2), &fr));
	CHECK_STR(fr.name, "[unknown python]");
	CHECK(fr.kind == FRAME_UNKNOWN);
	/* another image of the PID, likewise */
	CHECK(!pycodes__frame(pc, 3, 10, W(0x5000), P(2, 1), &fr));
	CHECK_STR(fr.name, "[unknown python]");
	pycodes__free(pc);
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	test_splice();
	test_names();
	test_lines(argv[1]);
	printf("ok\n");
	return 0;
}
