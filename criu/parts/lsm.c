// SPDX-License-Identifier: GPL-2.0
/*
 * Security labels of tasks (lsm-PID.img): the AppArmor profile, SELinux
 * context or Smack label of each thread, as the module that labels tasks
 * here keeps them.
 *
 * Dump reads /proc/PID/task/TID/attr/current; where no module labels
 * tasks the kernel answers EINVAL and the image holds no kind. Restore
 * sets the labels again, each thread its own (the kernel lets a thread
 * write only its own attr/current): open, write, close in its batch. The
 * leader's comes before its threads are made, which take it (SELinux
 * can't relabel a process of several threads: their contexts must be the
 * leader's); a thread of another label sets its own. --lsm-profile TYPE:NAME gives
 * every task NAME instead (CRIU's option). A label of a module this
 * machine does not run is refused before anything is made, with the
 * option that would help; a task that is not confined (AppArmor's
 * "unconfined", which can't be asked for) is left as criu's child is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "core/file.h"
#include "core/log.h"
#include "core/lsm.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "lsm.pb-c.h"

#define LSM_LABEL_MAX	4096
#define LSM_ATTR	"/proc/thread-self/attr/current"

/* ---------------------------------------------------------------- dump */

/* Thread @tid's label in *@out (malloc'ed); 0 with *@out NULL: no module. */
static int read_label(pid_t pid, pid_t tid, const char *kind, char **out)
{
	char path[64], *label;
	size_t len;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/attr/current", pid, tid);
	label = read_file(-1, path, &len);
	if (!label) {
		if (!kind && (errno == EINVAL || errno == ENOENT))
			return 0;
		pr_perror("Task %d: can't read the security label of thread %d", pid, tid);
		return -1;
	}
	if (!kind) {
		pr_err("Task %d: thread %d has a security label but no module that labels "
		       "tasks is known here", pid, tid);
		goto bad;
	}
	if (len >= LSM_LABEL_MAX || lsm_label_norm(kind, label, len)) {
		pr_err("Task %d: the %s label of thread %d is not one criu can set again",
		       pid, kind, tid);
		goto bad;
	}
	*out = label;
	return 0;
bad:
	free(label);
	return -1;
}

static void entry_free(LsmEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_label; i++)
		free(e->label[i]);
	free(e->label);
	free(e);
}

static int lsm_check(struct dump_ctx *dc, struct dtask *t)
{
	const char *kind = lsm_active();
	LsmEntry *e = xzalloc(sizeof(*e));
	char *label;
	int i;

	if (!e)
		return -1;
	lsm_entry__init(e);
	e->label = xzalloc(t->nr_threads * sizeof(*e->label));
	if (!e->label)
		goto err;
	for (i = 0; i < t->nr_threads; i++) {
		if (read_label(t->pid, t->tids[i], kind, &label))
			goto err;
		if (!label)
			break;
		e->label[e->n_label++] = label;
	}
	if (e->n_label)
		e->kind = (char *)kind;
	t->priv[PART_LSM] = e;
	return 0;
err:
	entry_free(e);
	return -1;
}

static int lsm_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	LsmEntry *e = t->priv[PART_LSM];
	int ret;

	ret = img_write(dc->dirfd, IMG_LSM, t->ns_pid, &e->base);
	entry_free(e);
	t->priv[PART_LSM] = NULL;
	return ret;
}

/* ------------------------------------------------------------- restore */

/*
 * What restore gives each thread, worked out once at load: --lsm-profile's
 * label for all, or each thread's own from the image; NULL for none.
 */
struct lsm_want {
	LsmEntry *e;
	const char *kind;
	const char **label;	/* one per thread */
};

static const char *image_label(const LsmEntry *e, int th)
{
	if (!e->kind || (size_t)th >= e->n_label)
		return NULL;
	if (!strcmp(e->kind, "apparmor") && !strcmp(e->label[th], "unconfined"))
		return NULL;
	return e->label[th];
}

static int want_labels(struct rst_ctx *rc, struct rtask *t, struct lsm_want *w)
{
	const char *name = NULL;
	int th;

	w->label = xzalloc(t->nr_threads * sizeof(*w->label));
	if (!w->label)
		return -1;
	w->kind = w->e->kind;
	if (rc->opts->lsm_profile && lsm_profile_parse(rc->opts->lsm_profile, &w->kind, &name)) {
		pr_err("Task %d: --lsm-profile %s is no TYPE:NAME of a module that labels tasks",
		       t->pid, rc->opts->lsm_profile);
		return -1;
	}
	for (th = 0; th < t->nr_threads; th++)
		w->label[th] = name ? name : image_label(w->e, th);
	return 0;
}

static int check_labels(struct rst_ctx *rc, struct rtask *t, const struct lsm_want *w)
{
	const char *here = lsm_active(), *label;
	int th;

	if (w->e->kind && (!w->e->n_label || w->e->n_label != (size_t)t->nr_threads)) {
		pr_err("Task %d: image lsm is invalid: %zu %s labels for %d threads", t->pid,
		       w->e->n_label, w->e->kind, t->nr_threads);
		return -1;
	}
	for (th = 0; th < t->nr_threads; th++) {
		label = w->label[th];
		if (!label)
			continue;
		if (strlen(label) >= LSM_LABEL_MAX || strchr(label, '\n')) {
			pr_err("Task %d: image lsm is invalid: a %s label criu can't set", t->pid,
			       w->kind);
			return -1;
		}
		if (th && w->label[0] && !strcmp(w->kind, "selinux") && strcmp(label, w->label[0])) {
			pr_err("Task %d: thread %d has another SELinux context than its leader "
			       "(%s); SELinux can't give a process threads of several contexts",
			       t->pid, t->tids[th], label);
			return -1;
		}
		if (!here || strcmp(here, w->kind)) {
			pr_err("Task %d: its %s label %s can't be restored: this machine runs %s%s",
			       t->pid, w->kind, label, here ? here : "no security module that "
			       "labels tasks", rc->opts->lsm_profile ? "" : " (--lsm-profile "
			       "TYPE:NAME gives another label)");
			return -1;
		}
	}
	return 0;
}

static void want_free(struct lsm_want *w)
{
	if (!w)
		return;
	img_free(IMG_LSM, w->e);
	free(w->label);
	free(w);
}

static int lsm_load(struct rst_ctx *rc, struct rtask *t)
{
	struct lsm_want *w = xzalloc(sizeof(*w));
	int ret;

	if (!w)
		return -1;
	ret = img_read(rc->dirfd, IMG_LSM, t->pid, (void **)&w->e, 1);
	if (ret < 0)
		goto err;
	if (!ret) {
		/* a checkpoint of an older criu: no labels */
		w->e = xzalloc(sizeof(*w->e));
		if (!w->e)
			goto err;
		lsm_entry__init(w->e);
	}
	if (want_labels(rc, t, w) || check_labels(rc, t, w))
		goto err;
	t->img[PART_LSM] = w;
	t->batch_entries += 3;
	t->batch_data += LSM_LABEL_MAX + 64;
	t->thread_entries += 3;
	t->thread_data += LSM_LABEL_MAX + 64;
	return 0;
err:
	want_free(w);
	return -1;
}

/* open, write through the fd the open returned, close it */
static int queue_label(const char *kind, const char *label, struct batch *b)
{
	char value[LSM_LABEL_MAX + 32];
	uint64_t path, data, fd;
	int len, open;

	len = lsm_set_value(kind, label, value, sizeof(value));
	if (len < 0)
		return -1;
	path = batch_put(b, LSM_ATTR, sizeof(LSM_ATTR));
	data = batch_put(b, value, len);
	if (!path || !data)
		return -1;
	open = BATCH(b, "open(" LSM_ATTR ")", __NR_openat, AT_FDCWD, path,
		     O_WRONLY | O_CLOEXEC);
	if (open < 0)
		return -1;
	fd = batch_ret_remote(b, open);
	if (BATCH(b, "write of the security label", __NR_write | SC_ARG0_AT, fd, data, len) < 0 ||
	    BATCH(b, "close(" LSM_ATTR ")", __NR_close | SC_ARG0_AT, fd) < 0)
		return -1;
	return 0;
}

/* the leader, before its threads exist */
static int lsm_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	const struct lsm_want *w = t->img[PART_LSM];

	return w->label[0] ? queue_label(w->kind, w->label[0], b) : 0;
}

/* a thread whose label is not the leader's, which it was made with */
static int lsm_thread_batch(struct rst_ctx *rc, struct rtask *t, int th, struct batch *b)
{
	const struct lsm_want *w = t->img[PART_LSM];
	const char *label = w->label[th];

	if (!th || !label || (w->label[0] && !strcmp(label, w->label[0])))
		return 0;
	return queue_label(w->kind, label, b);
}

/* The labels the kernel shows now are the ones asked for. */
static int lsm_final(struct rst_ctx *rc, struct rtask *t)
{
	const struct lsm_want *w = t->img[PART_LSM];
	char *now;
	int th;

	for (th = 0; th < t->nr_threads; th++) {
		if (!w->label[th])
			continue;
		if (read_label(t->host_pid, t->host_tids[th], w->kind, &now))
			return -1;
		if (!now || strcmp(now, w->label[th])) {
			pr_err("Task %d: thread %d has the %s label %s after restore, not %s",
			       t->pid, t->tids[th], w->kind, now ? now : "(none)", w->label[th]);
			free(now);
			return -1;
		}
		free(now);
	}
	return 0;
}

static void lsm_release(struct rtask *t)
{
	want_free(t->img[PART_LSM]);
	t->img[PART_LSM] = NULL;
}

const struct part part_lsm = {
	.name = "lsm",
	.id = PART_LSM,
	.check = lsm_check,
	.dump = lsm_dump,
	.load = lsm_load,
	.batch = lsm_batch,
	.thread_batch = lsm_thread_batch,
	.final = lsm_final,
	.release = lsm_release,
};
