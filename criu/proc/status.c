// SPDX-License-Identifier: GPL-2.0
/* /proc/PID/status and /proc/PID/stat. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"

/* The last of the tab-separated numbers; *levels gets how many there are. */
static int last_id(const char *s, int *levels)
{
	int v = 0, n = 0;
	char *end;

	for (;;) {
		long x = strtol(s, &end, 10);

		if (end == s)
			break;
		v = x;
		n++;
		s = end;
	}
	if (levels)
		*levels = n;
	return v;
}

static int parse_groups(const char *s, struct proc_status *st)
{
	unsigned int *g = NULL;
	char *end;
	unsigned long v;
	int nr = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '\n')
			break;
		v = strtoul(s, &end, 10);
		if (end == s)
			break;
		if (xgrow(g, nr)) {
			free(g);
			return -1;
		}
		g[nr++] = v;
		s = end;
	}
	/* a second Groups line (never from the kernel) replaces the first */
	free(st->groups);
	st->groups = g;
	st->ngroups = nr;
	return 0;
}

int proc_parse_status(char *buf, struct proc_status *st)
{
	char *line, *next, *val;
	int seen = 0;

	memset(st, 0, sizeof(*st));
	st->umask = -1;
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		val = strchr(line, ':');
		if (!val)
			continue;
		*val++ = '\0';
		while (*val == ' ' || *val == '\t')
			val++;
		if (!strcmp(line, "Name"))
			snprintf(st->name, sizeof(st->name), "%s", val);
		else if (!strcmp(line, "Umask"))
			st->umask = strtol(val, NULL, 8);
		else if (!strcmp(line, "State"))
			st->state = val[0];
		else if (!strcmp(line, "Tgid"))
			st->tgid = atoi(val);
		else if (!strcmp(line, "Pid"))
			st->pid = atoi(val), seen++;
		else if (!strcmp(line, "PPid"))
			st->ppid = atoi(val);
		else if (!strcmp(line, "TracerPid"))
			st->tracer = atoi(val);
		else if (!strcmp(line, "Uid"))
			seen += sscanf(val, "%u %u %u %u", &st->uid[0], &st->uid[1],
				       &st->uid[2], &st->uid[3]) == 4;
		else if (!strcmp(line, "Gid"))
			seen += sscanf(val, "%u %u %u %u", &st->gid[0], &st->gid[1],
				       &st->gid[2], &st->gid[3]) == 4;
		else if (!strcmp(line, "Groups")) {
			if (parse_groups(val, st))
				return -1;
		} else if (!strcmp(line, "Threads"))
			st->threads = atoi(val);
		else if (!strcmp(line, "SigQ"))
			sscanf(val, "%ld/%ld", &st->sigq_used, &st->sigq_max);
		else if (!strcmp(line, "SigPnd"))
			st->sig_pnd = strtoull(val, NULL, 16);
		else if (!strcmp(line, "ShdPnd"))
			st->shd_pnd = strtoull(val, NULL, 16);
		else if (!strcmp(line, "SigBlk"))
			st->sig_blk = strtoull(val, NULL, 16);
		else if (!strcmp(line, "SigIgn"))
			st->sig_ign = strtoull(val, NULL, 16);
		else if (!strcmp(line, "SigCgt"))
			st->sig_cgt = strtoull(val, NULL, 16);
		else if (!strcmp(line, "CapInh"))
			st->cap_inh = strtoull(val, NULL, 16), seen++;
		else if (!strcmp(line, "CapPrm"))
			st->cap_prm = strtoull(val, NULL, 16);
		else if (!strcmp(line, "CapEff"))
			st->cap_eff = strtoull(val, NULL, 16);
		else if (!strcmp(line, "CapBnd"))
			st->cap_bnd = strtoull(val, NULL, 16);
		else if (!strcmp(line, "CapAmb"))
			st->cap_amb = strtoull(val, NULL, 16);
		else if (!strcmp(line, "NoNewPrivs"))
			st->no_new_privs = atoi(val);
		else if (!strcmp(line, "Seccomp"))
			st->seccomp = atoi(val);
		else if (!strcmp(line, "NStgid"))
			st->ns_tgid = last_id(val, NULL);
		else if (!strcmp(line, "NSpid"))
			st->ns_pid = last_id(val, &st->ns_levels);
		else if (!strcmp(line, "NSpgid"))
			st->ns_pgid = last_id(val, NULL);
		else if (!strcmp(line, "NSsid"))
			st->ns_sid = last_id(val, NULL);
	}
	if (!st->ns_levels) {
		st->ns_levels = 1;
		st->ns_pid = st->pid;
		st->ns_tgid = st->tgid;
	}
	if (seen < 4) {
		pr_err("/proc status is missing Pid, Uid, Gid or CapInh");
		proc_status_free(st);
		return -1;
	}
	return 0;
}

int proc_read_status(pid_t pid, struct proc_status *st)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return proc_read(path, proc_parse_status, st);
}

pid_t proc_ns_pid(pid_t pid)
{
	struct proc_status st;

	if (proc_read_status(pid, &st))
		return 0;
	proc_status_free(&st);
	return st.ns_pid;
}

void proc_status_free(struct proc_status *st)
{
	free(st->groups);
	st->groups = NULL;
	st->ngroups = 0;
}

int proc_parse_stat(const char *buf, struct proc_stat *st)
{
	const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	unsigned long long f[52];
	const char *p;
	char *end;
	size_t len;
	int i;

	memset(st, 0, sizeof(*st));
	if (!open || !close || close < open || close[1] != ' ' || !close[2])
		return -1;
	st->pid = atoi(buf);
	len = min((size_t)(close - open - 1), sizeof(st->comm) - 1);
	memcpy(st->comm, open + 1, len);
	st->comm[len] = '\0';
	st->state = close[2];
	/* field 3 is the state; parse fields 4..52 as numbers */
	p = close + 3;
	for (i = 4; i <= 52; i++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		f[i - 1] = strtoull(p, &end, 10);
		if (*p == '-')
			f[i - 1] = (unsigned long long)strtoll(p, &end, 10);
		if (end == p)
			return -1;
		p = end;
	}
	if (i <= 41)
		return -1;
	for (; i <= 52; i++)
		f[i - 1] = 0;
	st->ppid = f[3];
	st->pgid = f[4];
	st->sid = f[5];
	st->priority = (long)f[17];
	st->nice = (long)f[18];
	st->num_threads = f[19];
	st->starttime = f[21];
	st->start_code = f[25];
	st->end_code = f[26];
	st->start_stack = f[27];
	st->rt_priority = f[39];
	st->policy = f[40];
	st->start_data = f[44];
	st->end_data = f[45];
	st->start_brk = f[46];
	st->arg_start = f[47];
	st->arg_end = f[48];
	st->env_start = f[49];
	st->env_end = f[50];
	st->exit_code = f[51];
	return 0;
}

int proc_read_stat(pid_t pid, pid_t tid, struct proc_stat *st)
{
	char path[64];

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return proc_read(path, proc_parse_stat, st);
}
