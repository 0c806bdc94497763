// SPDX-License-Identifier: GPL-2.0
/*
 * The dump driver: freeze -> check -> ask inside -> write -> resume or kill.
 * Until every image is written and synced the task is only borrowed: any
 * failure puts its registers and mask back and lets it go as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "dump.h"
#include "image/image.h"
#include "parts/part.h"
#include "parts/timens.h"
#include "task/ptrace.h"
#include "inventory.pb-c.h"
#include "pstree.pb-c.h"

#define DUMP_BATCH_ENTRIES	256
#define DUMP_BATCH_DATA		(64 << 10)

static int check_tree(const struct opts *o, struct dtask *t)
{
	pid_t *children;
	int nr;

	if (t->status.tracer && t->status.tracer != getpid()) {
		pr_err("Task %d is already traced by %d", t->pid, t->status.tracer);
		return -1;
	}
	nr = proc_list_threads(t->pid, &t->tids);
	if (nr < 0)
		return -1;
	t->nr_threads = nr;
	if (nr != 1) {
		pr_err("Task %d has %d threads; multi-threaded tasks are not supported yet",
		       t->pid, nr);
		return -1;
	}
	nr = proc_list_children(t->pid, t->pid, &children);
	if (nr < 0)
		return -1;
	free(children);
	if (nr) {
		pr_err("Task %d has %d child process(es); process trees are not supported yet",
		       t->pid, nr);
		return -1;
	}
	if (t->stat.sid != t->pid && !o->shell_job) {
		pr_err("Task %d is not a session leader (session %d); use --shell-job",
		       t->pid, t->stat.sid);
		return -1;
	}
	return 0;
}

static int write_tree(struct dump_ctx *dc, struct dtask *t)
{
	PstreeEntry e = PSTREE_ENTRY__INIT;
	PstreeTask pt = PSTREE_TASK__INIT, *ppt = &pt;
	uint32_t tids[1] = { t->pid };

	pt.pid = t->pid;
	pt.ppid = t->stat.ppid;
	pt.pgid = t->stat.pgid;
	pt.sid = t->stat.sid;
	pt.threads = tids;
	pt.n_threads = 1;
	e.tasks = &ppt;
	e.n_tasks = 1;
	return img_write(dc->dirfd, IMG_PSTREE, 0, &e.base);
}

static int write_inventory(struct dump_ctx *dc, struct dtask *t)
{
	InventoryEntry e = INVENTORY_ENTRY__INIT;

	e.fmt_version = IMG_FMT_VERSION;
	e.root_pid = t->pid;
	e.criu_version = CRIU_VERSION;
	e.has_dump_realtime_ns = e.has_page_size = e.has_ntasks = 1;
	e.dump_realtime_ns = clock_ns(CLOCK_REALTIME);
	e.page_size = PAGE_SIZE;
	e.ntasks = 1;
	return img_write(dc->dirfd, IMG_INVENTORY, 0, &e.base);
}

/* In-task questions of every part, in one round trip. */
static int ask_inside(struct dump_ctx *dc, struct dtask *t, struct batch *b, void **buf)
{
	struct infect inf;
	size_t size = batch_area_size(DUMP_BATCH_ENTRIES, DUMP_BATCH_DATA);
	int i, ret = -1;

	*buf = xzalloc(size);
	if (!*buf)
		return -1;
	if (infect_start(&inf, t->pid, &t->regs, t->sigmask, &t->maps, size))
		return -1;
	if (batch_init(b, *buf, inf.area, size, DUMP_BATCH_ENTRIES))
		goto out;
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->prepare && parts[i]->prepare(dc, t, b))
			goto out;
	if (b->nr && infect_run(&inf, b))
		goto out;
	ret = 0;
out:
	if (infect_stop(&inf))
		ret = -1;
	return ret;
}

static int dump_task(struct dump_ctx *dc, struct dtask *t)
{
	struct batch b;
	void *buf = NULL;
	int i, ret = -1;

	if (proc_read_status(t->pid, &t->status) ||
	    proc_read_stat(t->pid, 0, &t->stat) || check_tree(dc->opts, t))
		return -1;
	/* the scratch area comes and goes without a trace: one read serves all */
	if (proc_read_maps(t->pid, 1, &t->maps))
		return -1;
	for (i = 0; i < PART_NR; i++)
		if (parts[i]->check && parts[i]->check(dc, t))
			return -1;
	if (ptrace_get_regs(t->pid, &t->regs) || ptrace_get_sigmask(t->pid, &t->sigmask))
		return -1;
	/* the clocks as the task saw them when it stopped */
	if (timens_dump(dc, t->pid))
		return -1;
	if (ask_inside(dc, t, &b, &buf))
		goto out;
	fault_point("infected");
	for (i = 0; i < PART_NR; i++) {
		if (parts[i]->dump && parts[i]->dump(dc, t, &b))
			goto out;
		if (i == PART_MM)
			fault_point("memory");
	}
	if (write_tree(dc, t))
		goto out;
	ret = 0;
out:
	free(buf);
	return ret;
}

static int finish(const struct opts *o, pid_t pid)
{
	int status;

	if (o->leave_running || o->leave_stopped) {
		if (ptrace(PTRACE_DETACH, pid, 0, o->leave_stopped ? SIGSTOP : 0)) {
			pr_perror("Task %d: can't detach from it", pid);
			return -1;
		}
		return 0;
	}
	if (kill(pid, SIGKILL)) {
		pr_perror("Task %d: can't kill it after the dump", pid);
		return -1;
	}
	/* as its tracer we see it die; its parent reaps it */
	while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
		;
	return 0;
}

static int open_images_dir(const char *dir)
{
	int fd;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		pr_perror("Can't create the images directory %s", dir);
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		pr_perror("Can't open the images directory %s", dir);
	return fd;
}

int cr_dump(const struct opts *o)
{
	struct dump_ctx dc = { .opts = o };
	struct dtask t = { .pid = o->pid };
	int ret = -1, seized = 0;

	if (o->pid <= 1 || o->pid == getpid()) {
		pr_err("Can't dump task %d", o->pid);
		return -1;
	}
	dc.dirfd = open_images_dir(o->images_dir);
	if (dc.dirfd < 0)
		return -1;
	/* no inventory means no checkpoint, whatever else is left here */
	unlinkat(dc.dirfd, "inventory.img", 0);
	if (ptrace_seize_stop(o->pid))
		goto out;
	seized = 1;
	fault_point("seized");
	if (dump_task(&dc, &t))
		goto out;
	if (write_inventory(&dc, &t) || syncfs(dc.dirfd)) {
		pr_perror("Can't write and sync the images");
		goto out;
	}
	fault_point("written");
	ret = finish(o, o->pid);
	seized = 0;
	pr_info("Dumped task %d", o->pid);
out:
	if (seized && ptrace(PTRACE_DETACH, o->pid, 0, 0))
		pr_perror("Task %d: can't detach from it", o->pid);
	if (ret)
		unlinkat(dc.dirfd, "inventory.img", 0);
	proc_maps_free(&t.maps);
	proc_status_free(&t.status);
	free(t.tids);
	close(dc.dirfd);
	return ret;
}
