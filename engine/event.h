/* SPDX-License-Identifier: MIT */
/* engine: event.c: record --event */
#ifndef SCORCH_ENGINE_EVENT_H
#define SCORCH_ENGINE_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "engine.h"

/*
 * Finds what @ev names: a uprobe's or USDT probe's file (a path, or a file name found
 * among the mappings of @pids, then @cmd's executable, then the library directories)
 * and a uprobe's function (by its name, demangled name, a qualified name's end, or a
 * glob; ambiguity is an error listing the candidates); a tracepoint in the kernel's
 * BTF. Returns 0, or -errno after an error line and a hint.
 */
int event__resolve(struct event_spec *ev, const pid_t *pids, size_t nr_pids, char **cmd);
/* What @ev counts, in a phrase: the event as given, and --weight, --latency or --period
 * ("uprobe:libc.so.6:malloc, weighed by its argument"). Lives as long as @ev (in
 * ev->subtitle, rewritten at each call). */
const char *event__describe(struct event_spec *ev);
/* The SVG's title, subtitle (event__describe()) and count name, unless the user chose
 * them; the strings live as long as @ev. */
struct flamegraph_opts;
void event__svg_defaults(struct event_spec *ev, struct flamegraph_opts *fg);
/* The unit of @ev's counts: pprof's sample type and unit, the SVG's count name. */
void event__unit(const struct event_spec *ev, const char **type, const char **unit,
		 const char **countname);

#endif /* SCORCH_ENGINE_EVENT_H */
