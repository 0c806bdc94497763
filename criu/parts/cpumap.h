/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_CPUMAP_H
#define CRIU_PARTS_CPUMAP_H

#include <stddef.h>

#include "core/opts.h"

/*
 * A CPU list of the dumping machine ("0-3,6": a cgroup's cpuset.cpus) as
 * this one runs it, by the rules cpu.c applies to affinities: every CPU
 * online at dump (@online_then, may be NULL) becomes every CPU online here;
 * a CPU of --cpu-map is its DST; one online here stays; any other is
 * dropped with --cpu-map, else online CPU number n mod their count.
 * @what names the list in messages. 0 with @out, -1 logged.
 */
int cpu_map_list(const struct opts *o, const char *online_then, const char *list,
		 char *out, size_t len, const char *what);

#endif
