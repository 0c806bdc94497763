// SPDX-License-Identifier: GPL-2.0
/* /proc/PID/maps and /proc/PID/smaps. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"

static const struct {
	char name[3];
	unsigned int bit;
} vmflag_names[] = {
	{ "gd", VMF_GROWSDOWN }, { "dc", VMF_DONTCOPY }, { "de", VMF_DONTEXPAND },
	{ "dd", VMF_DONTDUMP }, { "hg", VMF_HUGEPAGE }, { "nh", VMF_NOHUGEPAGE },
	{ "mg", VMF_MERGEABLE }, { "wf", VMF_WIPEONFORK }, { "lo", VMF_LOCKED },
	{ "sh", VMF_SHARED }, { "mr", VMF_MAYREAD }, { "io", VMF_IO },
	{ "pf", VMF_PFNMAP }, { "sl", VMF_SEALED }, { "mw", VMF_MAYWRITE },
	{ "lf", VMF_LOCKONFAULT }, { "um", VMF_UFFD }, { "uw", VMF_UFFD_WP },
	{ "ui", VMF_UFFD }, { "ht", VMF_HUGETLB },
};

static unsigned int parse_vmflags(const char *s)
{
	unsigned int flags = 0;
	size_t i;

	while (*s) {
		while (*s == ' ')
			s++;
		if (!s[0] || !s[1])
			break;
		for (i = 0; i < ARRAY_SIZE(vmflag_names); i++)
			if (s[0] == vmflag_names[i].name[0] && s[1] == vmflag_names[i].name[1])
				flags |= vmflag_names[i].bit;
		s += 2;
	}
	return flags;
}

static int parse_vma_line(char *line, struct proc_vma *v)
{
	char perms[5];
	int path_off = 0;
	unsigned long long start, end, pgoff, ino;

	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms,
		   &pgoff, &v->dev_major, &v->dev_minor, &ino, &path_off) != 7)
		return -1;
	if (start >= end || (start & ~PAGE_MASK) || (end & ~PAGE_MASK))
		return -1;
	v->start = start;
	v->end = end;
	v->pgoff = pgoff;
	v->ino = ino;
	v->prot = (perms[0] == 'r' ? PROT_READ : 0) |
		  (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	v->shared = perms[3] == 's';
	v->vmflags = 0;
	v->pkey = 0;
	v->page_kb = 0;
	v->path = NULL;
	if (path_off && line[path_off]) {
		v->path = xstrdup(line + path_off);
		if (!v->path)
			return -1;
	}
	return 0;
}

int proc_parse_maps(char *buf, struct proc_maps *maps)
{
	char *line, *next, *colon, *space;
	struct proc_vma *v;
	int cap = 0;

	maps->vma = NULL;
	maps->nr = 0;
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strncmp(line, "ProtectionKey:", 14)) {
			if (maps->nr)
				maps->vma[maps->nr - 1].pkey = atoi(line + 14);
			continue;
		}
		if (!strncmp(line, "KernelPageSize:", 15)) {
			if (maps->nr)
				maps->vma[maps->nr - 1].page_kb = strtoul(line + 15, NULL, 10);
			continue;
		}
		if (!strncmp(line, "VmFlags:", 8)) {
			if (maps->nr)
				maps->vma[maps->nr - 1].vmflags = parse_vmflags(line + 8);
			continue;
		}
		/* smaps detail lines are "Name: value": a colon before any space */
		colon = strchr(line, ':');
		space = strchr(line, ' ');
		if (colon && (!space || colon < space))
			continue;
		if (maps->nr == cap) {
			cap = cap ? cap * 2 : 64;
			v = xrealloc(maps->vma, cap * sizeof(*v));
			if (!v)
				goto err;
			maps->vma = v;
		}
		if (parse_vma_line(line, &maps->vma[maps->nr])) {
			pr_err("Can't parse maps line '%.80s'", line);
			goto err;
		}
		maps->nr++;
	}
	return 0;
err:
	proc_maps_free(maps);
	return -1;
}

int proc_read_maps(pid_t pid, int smaps, struct proc_maps *maps)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, smaps ? "smaps" : "maps");
	return proc_read(path, proc_parse_maps, maps);
}

void proc_maps_free(struct proc_maps *maps)
{
	int i;

	for (i = 0; i < maps->nr; i++)
		free(maps->vma[i].path);
	free(maps->vma);
	maps->vma = NULL;
	maps->nr = 0;
}
