// SPDX-License-Identifier: GPL-2.0
/* Reading a /proc file (proc_read); /proc/PID/limits, fdinfo, task/ and children. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"

char *proc_read_text(const char *path)
{
	char *buf = read_file(-1, path, NULL);

	if (!buf)
		pr_perror("Can't read %s", path);
	return buf;
}

void proc_parse_failed(const char *path)
{
	pr_err("Can't parse %s", path);
}

static const struct {
	const char *name;
	int res;
} limit_names[] = {
	{ "Max cpu time", RLIMIT_CPU },
	{ "Max file size", RLIMIT_FSIZE },
	{ "Max data size", RLIMIT_DATA },
	{ "Max stack size", RLIMIT_STACK },
	{ "Max core file size", RLIMIT_CORE },
	{ "Max resident set", RLIMIT_RSS },
	{ "Max processes", RLIMIT_NPROC },
	{ "Max open files", RLIMIT_NOFILE },
	{ "Max locked memory", RLIMIT_MEMLOCK },
	{ "Max address space", RLIMIT_AS },
	{ "Max file locks", RLIMIT_LOCKS },
	{ "Max pending signals", RLIMIT_SIGPENDING },
	{ "Max msgqueue size", RLIMIT_MSGQUEUE },
	{ "Max nice priority", RLIMIT_NICE },
	{ "Max realtime priority", RLIMIT_RTPRIO },
	{ "Max realtime timeout", RLIMIT_RTTIME },
};

static int parse_limit_value(const char *s, uint64_t *v)
{
	char *end;

	while (*s == ' ')
		s++;
	if (!strncmp(s, "unlimited", 9)) {
		*v = RLIM_INFINITY;
		return 9;
	}
	*v = strtoull(s, &end, 10);
	return end == s ? -1 : (int)(end - s);
}

int proc_parse_limits(const char *buf, struct proc_rlimit *lim, int nr)
{
	const char *line = buf, *p;
	int found = 0, n;
	size_t i, len;

	for (; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		for (i = 0; i < ARRAY_SIZE(limit_names); i++) {
			len = strlen(limit_names[i].name);
			if (strncmp(line, limit_names[i].name, len) || line[len] != ' ')
				continue;
			if (limit_names[i].res >= nr || found == nr)
				break;
			p = line + len;
			lim[found].resource = limit_names[i].res;
			n = parse_limit_value(p, &lim[found].cur);
			if (n < 0)
				return -1;
			p += strspn(p, " ") + n;
			if (parse_limit_value(p, &lim[found].max) < 0)
				return -1;
			found++;
			break;
		}
	}
	return found;
}

int proc_read_limits(pid_t pid, struct proc_rlimit *lim, int nr)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/limits", pid);
	return proc_read(path, proc_parse_limits, lim, nr);
}

int proc_parse_fdinfo(const char *buf, struct proc_fdinfo *fi)
{
	int seen = 0;

	memset(fi, 0, sizeof(*fi));
	for (; buf && *buf; buf = strchr(buf, '\n'), buf = buf ? buf + 1 : NULL) {
		if (!strncmp(buf, "pos:", 4))
			seen += sscanf(buf + 4, "%llu", (unsigned long long *)&fi->pos) == 1;
		else if (!strncmp(buf, "flags:", 6))
			seen += sscanf(buf + 6, "%o", &fi->flags) == 1;
		else if (!strncmp(buf, "mnt_id:", 7))
			sscanf(buf + 7, "%d", &fi->mnt_id);
	}
	return seen == 2 ? 0 : -1;
}

int proc_read_fdinfo(pid_t pid, int fd, struct proc_fdinfo *fi)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	return proc_read(path, proc_parse_fdinfo, fi);
}

const char *proc_fdinfo_field(const char *fdinfo, const char *key)
{
	size_t len = strlen(key);
	const char *p;

	for (p = fdinfo; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, len))
			return p + len;
	return NULL;
}

const char *proc_next_lock(const char *p)
{
	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "lock:", 5))
			return p + 5;
	return NULL;
}

static const struct {
	const char *word;
	enum proc_lock_kind kind;
} lock_words[] = {
	{ "POSIX", PROC_LOCK_POSIX }, { "OFDLCK", PROC_LOCK_OFD },
	{ "FLOCK", PROC_LOCK_FLOCK }, { "LEASE", PROC_LOCK_LEASE },
};

/* "1: POSIX  ADVISORY  WRITE 1234 fe:00:5678 10 29": id, kind, state, type, pid, inode, range */
int proc_parse_lock(const char *line, struct proc_lock *l)
{
	char type[16], end[24];
	long long start;
	int pid, id, n = 0;
	size_t i;

	memset(l, 0, sizeof(*l));
	if (sscanf(line, " %d: %15s %15s %15s %d %x:%x:%" SCNu64 " %lld %23s%n", &id, l->word,
		   l->state, type, &pid, &l->major, &l->minor, &l->ino, &start, end, &n) != 10 ||
	    start < 0)
		return -1;
	line += n;
	if (line[strspn(line, " \t")] != '\n' && line[strspn(line, " \t")] != '\0')
		return -1;
	l->start = start;
	if (!strcmp(end, "EOF"))
		l->end = -1;
	else if (sscanf(end, "%" SCNd64 "%n", &l->end, &n) != 1 || end[n] || l->end < start)
		return -1;
	if (!strcmp(type, "READ"))
		l->type = F_RDLCK;
	else if (!strcmp(type, "WRITE"))
		l->type = F_WRLCK;
	else if (!strcmp(type, "UNLCK"))
		l->type = F_UNLCK;
	else
		return -1;
	l->kind = PROC_LOCK_OTHER;
	for (i = 0; i < ARRAY_SIZE(lock_words); i++)
		if (!strcmp(l->word, lock_words[i].word))
			l->kind = lock_words[i].kind;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	return *(const pid_t *)a - *(const pid_t *)b;
}

int proc_list_threads(pid_t pid, pid_t **tids)
{
	char path[64];
	struct dirent *de;
	pid_t *list = NULL, *slot;
	int nr = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d) {
		pr_perror("Can't open %s", path);
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		slot = xpush(list, nr);
		if (!slot) {
			free(list);
			closedir(d);
			return -1;
		}
		*slot = atoi(de->d_name);
	}
	closedir(d);
	qsort(list, nr, sizeof(*list), cmp_pid);
	*tids = list;
	return nr;
}

int proc_parse_children(const char *buf, pid_t **pids)
{
	pid_t *list = NULL, *slot;
	const char *p;
	char *end;
	int nr = 0;
	long v;

	for (p = buf;; p = end) {
		v = strtol(p, &end, 10);
		if (end == p)
			break;
		slot = xpush(list, nr);
		if (!slot) {
			free(list);
			return -1;
		}
		*slot = v;
	}
	*pids = list;
	return nr;
}

int proc_list_children(pid_t pid, pid_t tid, pid_t **pids)
{
	char path[80];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, tid);
	return proc_read(path, proc_parse_children, pids);
}

int proc_parse_net_raw(char *text, unsigned long ino, struct proc_raw_sk *sk)
{
	char *line, *save = NULL, rem[40];
	unsigned long i;
	unsigned int st;
	int n;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* sl local:port rem:port st tx:rx tr:when retr uid timeout inode */
		if (sscanf(line, " %*d: %*[0-9A-Fa-f]:%*x %39[0-9A-Fa-f]:%*x %x %*x:%*x %*x:%*x "
			   "%*x %*u %*d %lu", rem, &st, &i) != 3 || i != ino)
			continue;
		n = strlen(rem);
		if (n != 8 && n != 32)
			return -1;
		memset(sk, 0, sizeof(*sk));
		sk->state = st;
		/* each 32-bit word as the kernel holds it, printed as a number */
		for (i = 0; i < (unsigned long)n / 8; i++) {
			char word[9];

			memcpy(word, rem + i * 8, 8);
			word[8] = '\0';
			sk->rem[i] = strtoul(word, NULL, 16);
		}
		return 1;
	}
	return 0;
}
