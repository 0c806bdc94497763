// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX timers: the timer_create(2) timers of a process.
 *
 * /proc/PID/timers shows each timer's id, clock and notification; only
 * timer_gettime() and timer_getoverrun() inside the task show its time,
 * so dump asks them in the batch, each right before a clock_gettime() of
 * the task's own: the next expiry is kept as a moment of its namespace
 * time, that clock plus what was left, never earlier than the true one
 * (the clock read first, the expiry came out early by the time between
 * the two calls). Restore, in the new task's batch, creates the timers with the same
 * ids (prctl PR_TIMER_CREATE_RESTORE_IDS, or in order on older kernels)
 * and arms them: MONOTONIC and BOOTTIME timers absolute at that moment,
 * since those clocks go on from the dump in the new time namespace (never
 * early; the downtime brings no expiry); wall-clock (and TAI) timers with
 * what was left of their duration, as nothing tells whether one was armed
 * with TIMER_ABSTIME (the kernel runs a relative one on the monotonic
 * clock); CPU-time timers with what was left of their CPU time.
 *
 * A timer whose signal waits in a queue: the signal part saves that
 * siginfo and queues it again on restore, as an ordinary signal, so the
 * timer must not deliver the same expiry a second time. The kernel stops
 * a periodic timer while its signal is queued and catches it up when
 * queried: timer_gettime() already names the expiry after the queued one,
 * unless that signal came between the time was read and the signal part
 * looked. Restore compares the signal image with what was queued before
 * the time was read, and skips that expiry then.
 *
 * Not kept: the overrun, which nothing can set. timer_getoverrun() reads
 * 0 after restore until the next expiry is delivered; a signal pending at
 * the dump carries the si_overrun the queue had (0: the kernel fills it in
 * at delivery); a periodic timer whose signal stays blocked queues a new
 * signal at its next expiry instead of counting an overrun (the queued
 * copy is not the timer's own).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <time.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "posix_timer.pb-c.h"
#include "signal.pb-c.h"

/* Linux 6.16 (newer than the 6.1 headers of Debian 12) */
#define PR_TIMER_CREATE_RESTORE_IDS	77
#define PR_TIMER_CREATE_RESTORE_IDS_OFF	0
#define PR_TIMER_CREATE_RESTORE_IDS_ON	1
#define PR_TIMER_CREATE_RESTORE_IDS_GET	2

#ifndef SIGEV_THREAD_ID
#define SIGEV_THREAD_ID		4
#endif

/* CPU-time clocks are negative: ~pid << 3 | per-thread bit | kind */
#define CPUCLOCK_PID(c)		(~((c) >> 3))
#define CPUCLOCK_CLOCKFD	3	/* kind 3: a dynamic clock, not CPU time */

#define NSEC_PER_SEC		1000000000LL
#define SIGINFO_SIZE		128
#define PEEK_CHUNK		32
#define SI_CODE_OFF		8
#define SI_TIMERID_OFF		16	/* si_tid of a timer's siginfo: the timer id */
/* without the prctl, ids below the wanted one are taken and dropped */

/* The kernel's sigevent_t and itimerspec on x86_64. */
struct ksigevent {
	uint64_t value;
	int32_t signo;
	int32_t notify;
	int32_t tid;
	int32_t pad[11];
};

struct kitimerspec {
	int64_t interval_sec, interval_nsec;
	int64_t value_sec, value_nsec;
};

/* Our own copy of the uapi struct: glibc's name for it varies. */
struct peek_args {
	uint64_t off;
	uint32_t flags;
	int32_t nr;
};

static int valid_clock(int clockid, pid_t pid)
{
	pid_t owner;

	if (clockid < 0) {
		if ((clockid & 7) == CPUCLOCK_CLOCKFD)
			return 0;
		owner = CPUCLOCK_PID(clockid);
		/* 0 is "the caller": the restored task, as it was the dumped one */
		return owner == 0 || owner == pid;
	}
	switch (clockid) {
	case CLOCK_REALTIME: case CLOCK_MONOTONIC: case CLOCK_BOOTTIME: case CLOCK_TAI:
	case CLOCK_PROCESS_CPUTIME_ID: case CLOCK_THREAD_CPUTIME_ID:
	case CLOCK_REALTIME_ALARM: case CLOCK_BOOTTIME_ALARM:
		return 1;
	}
	return 0;
}

static int valid_notify(int notify)
{
	return notify == SIGEV_SIGNAL || notify == SIGEV_NONE || notify == SIGEV_THREAD ||
	       notify == (SIGEV_SIGNAL | SIGEV_THREAD_ID);
}

/*
 * The clock the next expiry is kept on, as the task sees it: the clocks
 * that stand still over the downtime (a wall-clock timer is kept as a
 * duration). CPU-time clocks keep their remaining time instead: -1.
 */
static int ref_clock(int clockid)
{
	switch (clockid) {
	case CLOCK_REALTIME: case CLOCK_MONOTONIC: case CLOCK_TAI: case CLOCK_REALTIME_ALARM:
		return CLOCK_MONOTONIC;
	case CLOCK_BOOTTIME: case CLOCK_BOOTTIME_ALARM:
		return CLOCK_BOOTTIME;
	}
	return -1;
}

/* ---------------------------------------------------------------- dump */

/* Where @tid (criu's view) is in t->tids, or -1. */
static int thread_index(const struct dtask *t, pid_t tid)
{
	int i;

	for (i = 0; i < t->nr_threads; i++)
		if (t->tids[i] == tid)
			return i;
	return -1;
}

static int pt_check(struct dump_ctx *dc, struct dtask *t)
{
	struct proc_timer *pt;
	int64_t top = -1;
	int i, nr, ret;

	nr = proc_read_timers(t->pid, &pt);
	if (nr < 0)
		return -1;
	for (i = 0; i < nr; i++)
		top = max(top, (int64_t)pt[i].id);
	ret = limit_timer_ids(t->pid, nr, top, t->status.sigq_max - t->status.sigq_used);
	for (i = 0; i < nr && !ret; i++) {
		ret = -1;
		/* a CPU clock names its process as the task sees it */
		if (!valid_clock(pt[i].clockid, t->ns_pid))
			pr_err("Task %d: POSIX timer %d runs on clock %d (%s), which is not "
			       "supported", t->pid, pt[i].id, pt[i].clockid,
			       pt[i].clockid < 0 && (pt[i].clockid & 7) != CPUCLOCK_CLOCKFD ?
			       "the CPU time of another thread or process" : "fd-based or unknown");
		else if (!valid_notify(pt[i].notify))
			pr_err("Task %d: POSIX timer %d has notification %d, which is not "
			       "supported", t->pid, pt[i].id, pt[i].notify);
		else if ((pt[i].notify & SIGEV_THREAD_ID) && thread_index(t, pt[i].target) < 0)
			pr_err("Task %d: POSIX timer %d notifies thread %d, which is not one "
			       "of its threads", t->pid, pt[i].id, pt[i].target);
		else
			ret = 0;
	}
	free(pt);
	return ret;
}

struct pt_dump_priv {
	struct proc_timer *pt;
	int nr;
	uint64_t its;		/* remote kitimerspec[nr] */
	uint64_t now;		/* remote timespec[nr]: ref_clock() after timer_gettime() */
	int *overrun_idx;	/* batch entries of timer_getoverrun() */
	uint8_t *queued;	/* its signal was queued before the batch ran */
};

static int siginfo_timer(const uint8_t *si, int *id)
{
	int code;

	memcpy(&code, si + SI_CODE_OFF, sizeof(code));
	memcpy(id, si + SI_TIMERID_OFF, sizeof(*id));
	return code == SI_TIMER;
}

/* Marks the timers whose signal is in one of the task's queues now. */
static int find_queued(pid_t pid, struct pt_dump_priv *p)
{
	uint8_t buf[PEEK_CHUNK * SIGINFO_SIZE];
	struct peek_args a;
	int shared, i, j, id;
	long n;

	for (shared = 0; shared < 2; shared++) {
		a.off = 0;
		a.flags = shared ? PTRACE_PEEKSIGINFO_SHARED : 0;
		a.nr = PEEK_CHUNK;
		while ((n = ptrace(PTRACE_PEEKSIGINFO, pid, &a, buf)) > 0) {
			for (i = 0; i < n; i++) {
				if (!siginfo_timer(buf + i * SIGINFO_SIZE, &id))
					continue;
				for (j = 0; j < p->nr; j++)
					if (p->pt[j].id == id)
						p->queued[j] = 1;
			}
			a.off += n;
		}
		if (n < 0) {
			pr_perror("Task %d: can't read its pending signals", pid);
			return -1;
		}
	}
	return 0;
}

static int pt_prepare(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct pt_dump_priv *p = xzalloc(sizeof(*p));
	int i, nr;

	if (!p)
		return -1;
	t->priv[PART_POSIX_TIMER] = p;
	nr = proc_read_timers(t->pid, &p->pt);
	if (nr <= 0)
		return nr;
	p->nr = nr;
	p->overrun_idx = xzalloc(nr * sizeof(int));
	p->queued = xzalloc(nr);
	p->its = batch_put(b, NULL, nr * sizeof(struct kitimerspec));
	p->now = batch_put(b, NULL, nr * sizeof(struct timespec));
	if (!p->overrun_idx || !p->queued || !p->its || !p->now)
		return -1;
	/* as late as can be: the batch runs right after the last prepare */
	if (find_queued(t->pid, p))
		return -1;
	for (i = 0; i < nr; i++) {
		if (BATCH(b, "timer_gettime", __NR_timer_gettime, p->pt[i].id,
			  p->its + i * sizeof(struct kitimerspec)) < 0)
			return -1;
		/* the task's own clock, in its time namespace, right after */
		if (ref_clock(p->pt[i].clockid) >= 0 &&
		    BATCH(b, "clock_gettime", __NR_clock_gettime, ref_clock(p->pt[i].clockid),
			  p->now + i * sizeof(struct timespec)) < 0)
			return -1;
		p->overrun_idx[i] = BATCH(b, "timer_getoverrun", __NR_timer_getoverrun,
					  p->pt[i].id);
		if (p->overrun_idx[i] < 0)
			return -1;
	}
	return 0;
}

static void pt_dump_free(struct dtask *t)
{
	struct pt_dump_priv *p = t->priv[PART_POSIX_TIMER];

	if (!p)
		return;
	free(p->pt);
	free(p->overrun_idx);
	free(p->queued);
	free(p);
	t->priv[PART_POSIX_TIMER] = NULL;
}

static int pt_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct pt_dump_priv *p = t->priv[PART_POSIX_TIMER];
	PosixTimerEntry e = POSIX_TIMER_ENTRY__INIT;
	PosixTimer *ents = NULL, **pe = NULL;
	struct kitimerspec *k;
	struct timespec *now;
	int i, ret = -1;

	if (p->nr) {
		ents = xzalloc(p->nr * sizeof(*ents));
		pe = xzalloc(p->nr * sizeof(*pe));
		if (!ents || !pe)
			goto out;
	}
	for (i = 0; i < p->nr; i++) {
		PosixTimer *pt = &ents[i];

		posix_timer__init(pt);
		pt->id = p->pt[i].id;
		pt->clockid = p->pt[i].clockid;
		pt->notify = p->pt[i].notify;
		pt->signo = p->pt[i].signo;
		pt->sigev_value = p->pt[i].value;
		if (pt->notify & SIGEV_THREAD_ID) {
			/* /proc shows criu's view of the tid; pt_check found it */
			pt->has_tid = 1;
			pt->tid = t->ns_tids[thread_index(t, p->pt[i].target)];
		}
		k = batch_local(b, p->its + i * sizeof(*k));
		pt->value_ns = k->value_sec * NSEC_PER_SEC + k->value_nsec;
		pt->interval_ns = k->interval_sec * NSEC_PER_SEC + k->interval_nsec;
		pt->overrun = batch_entry(b, p->overrun_idx[i])->ret;
		pt->signal_queued = p->queued[i];
		now = batch_local(b, p->now + i * sizeof(*now));
		if (pt->value_ns && ref_clock(pt->clockid) >= 0) {
			pt->has_deadline_ns = 1;
			pt->deadline_ns = ts_to_ns(now) + (int64_t)pt->value_ns;
		}
		pe[i] = pt;
		pr_debug("Task %d: POSIX timer %u: clock %d, notify %d, signal %d, "
			 "%lu ns left (at %ld), interval %lu ns, overrun %d%s", t->pid, pt->id,
			 pt->clockid, pt->notify, pt->signo, pt->value_ns, pt->deadline_ns,
			 pt->interval_ns, pt->overrun, pt->signal_queued ? ", signal queued" : "");
	}
	e.timers = pe;
	e.n_timers = p->nr;
	ret = img_write(dc->dirfd, IMG_POSIX_TIMER, t->ns_pid, &e.base);
out:
	free(ents);
	free(pe);
	pt_dump_free(t);
	return ret;
}

/* ------------------------------------------------------------- restore */

/* What the queued signal of a timer asks of its restore. */
enum {
	FIX_NONE,
	FIX_SKIP_EXPIRY,	/* the expiry read is the signal queued again */
	FIX_FIRE_NOW,		/* its queued signal is not queued again: make it */
};

struct pt_rst {
	PosixTimerEntry *img;
	PosixTimer **sorted;	/* by id */
	uint8_t *fix;		/* FIX_* of each sorted timer */
	int exact;		/* the kernel takes the id we ask for */
};

static int is_thread(const struct rtask *t, uint32_t tid)
{
	int i;

	for (i = 0; i < t->nr_threads; i++)
		if ((uint32_t)t->tids[i] == tid)
			return 1;
	return 0;
}

static int validate(struct rtask *t, const PosixTimer *pt)
{
	if (pt->id > INT32_MAX || !valid_clock(pt->clockid, t->pid) ||
	    !valid_notify(pt->notify) || pt->value_ns > INT64_MAX / 2 ||
	    pt->interval_ns > INT64_MAX / 2 ||
	    (pt->has_deadline_ns && (pt->deadline_ns < 0 || pt->deadline_ns > INT64_MAX / 2)) ||
	    ((pt->notify & ~SIGEV_THREAD_ID) != SIGEV_NONE &&
	     (pt->signo < 1 || pt->signo > SIGRTMAX))) {
		pr_err("Task %d: image posix_timer has an invalid timer %u (clock %d, "
		       "notify %d, signal %d)", t->pid, pt->id, pt->clockid, pt->notify,
		       pt->signo);
		return -1;
	}
	/* threads keep their tids, and exist when the timers are made (batch) */
	if ((pt->notify & SIGEV_THREAD_ID) && (!pt->has_tid || !is_thread(t, pt->tid))) {
		pr_err("Task %d: POSIX timer %u notifies thread %u, which is not one of its threads",
		       t->pid, pt->id, pt->tid);
		return -1;
	}
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const PosixTimer *x = *(PosixTimer *const *)a, *y = *(PosixTimer *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int queue_has(SiginfoEntry **q, size_t n, const PosixTimer *pt)
{
	size_t i;
	int id, sig;

	for (i = 0; i < n; i++) {
		if (q[i]->siginfo.len != SIGINFO_SIZE ||
		    !siginfo_timer(q[i]->siginfo.data, &id))
			continue;
		memcpy(&sig, q[i]->siginfo.data, sizeof(sig));
		if (id == (int)pt->id && sig == pt->signo)
			return 1;
	}
	return 0;
}

/*
 * Which timers will have their signal queued again by the signal part
 * (its image is the contract between us; it may be absent).
 */
static int will_be_queued(struct rst_ctx *rc, struct rtask *t, struct pt_rst *r, uint8_t *q)
{
	SignalEntry *se;
	size_t i, j;
	int ret;

	ret = img_read(rc->dirfd, IMG_SIGNAL, t->pid, (void **)&se, 1);
	if (ret <= 0)
		return ret;
	for (i = 0; i < r->img->n_timers; i++) {
		q[i] = queue_has(se->shared_pending, se->n_shared_pending, r->sorted[i]);
		for (j = 0; j < se->n_threads && !q[i]; j++)
			q[i] = queue_has(se->threads[j]->pending, se->threads[j]->n_pending,
					 r->sorted[i]);
	}
	img_free(IMG_SIGNAL, se);
	return 0;
}

/*
 * A signal queued again by the signal part that was not queued yet when
 * the time was read is the expiry that was read: it must not come a
 * second time. A signal that was queued but will not be queued again
 * comes back by letting the timer expire at once.
 */
static int fix_of(const PosixTimer *pt, int requeued)
{
	if (requeued && !pt->signal_queued && pt->value_ns)
		return FIX_SKIP_EXPIRY;
	if (!requeued && pt->signal_queued && (pt->notify & ~SIGEV_THREAD_ID) != SIGEV_NONE)
		return FIX_FIRE_NOW;
	return FIX_NONE;
}

/* Free queued-signal slots of criu's user: the fillers are made before the creds. */
static int64_t sigq_room(void)
{
	struct proc_status self;

	if (proc_read_status(getpid(), &self))
		return 0;
	proc_status_free(&self);
	return self.sigq_max - self.sigq_used;
}

static int pt_load(struct rst_ctx *rc, struct rtask *t)
{
	struct pt_rst *r;
	uint8_t *requeued = NULL;
	size_t i, n;
	uint32_t fillers;

	r = xzalloc(sizeof(*r));
	if (!r)
		return -1;
	t->img[PART_POSIX_TIMER] = r;
	if (img_read(rc->dirfd, IMG_POSIX_TIMER, t->pid, (void **)&r->img, 0) < 0)
		return -1;
	n = r->img->n_timers;
	if (!n)
		return 0;
	r->sorted = xmalloc(n * sizeof(*r->sorted));
	r->fix = xmalloc(n);
	requeued = xzalloc(n);
	if (!r->sorted || !r->fix || !requeued)
		goto err;
	memcpy(r->sorted, r->img->timers, n * sizeof(*r->sorted));
	qsort(r->sorted, n, sizeof(*r->sorted), by_id);
	for (i = 0; i < n; i++) {
		if (validate(t, r->sorted[i]))
			goto err;
		if (i && r->sorted[i]->id == r->sorted[i - 1]->id) {
			pr_err("Task %d: image posix_timer has timer %u twice", t->pid,
			       r->sorted[i]->id);
			goto err;
		}
	}
	if (will_be_queued(rc, t, r, requeued))
		goto err;
	for (i = 0; i < n; i++)
		r->fix[i] = fix_of(r->sorted[i], requeued[i]);
	free(requeued);
	requeued = NULL;

	r->exact = prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_GET,
			 0, 0, 0) >= 0;
	fillers = r->exact ? 0 : r->sorted[n - 1]->id + 1 - n;
	if (!r->exact)
		pr_info("Task %d: no PR_TIMER_CREATE_RESTORE_IDS: %zu POSIX timers are "
			"created in order, with %u in between dropped", t->pid, n, fillers);
	if (!r->exact && limit_timer_ids(t->pid, n, r->sorted[n - 1]->id, sigq_room()))
		return -1;
	t->batch_entries += 2 + 2 * n + 2 * fillers;
	/* batch_put() rounds every piece up to 16 bytes */
	t->batch_data += sizeof(struct ksigevent) + 16 +
			 n * (sizeof(struct ksigevent) + 16 + sizeof(struct kitimerspec));
	return 0;
err:
	free(requeued);
	return -1;
}

static int create_timer(struct batch *b, const PosixTimer *pt)
{
	struct ksigevent sev = {
		.value = pt->sigev_value,
		.signo = pt->signo,
		.notify = pt->notify,
		.tid = pt->has_tid ? (int32_t)pt->tid : 0,
	};
	int32_t id = pt->id;
	uint64_t sevp, idp;
	char desc[SC_DESC_LEN];

	sevp = batch_put(b, &sev, sizeof(sev));
	/* with the prctl on, the kernel reads the id to give from here */
	idp = batch_put(b, &id, sizeof(id));
	if (!sevp || !idp)
		return -1;
	snprintf(desc, sizeof(desc), "timer_create of POSIX timer %d", id);
	return BATCH(b, desc, __NR_timer_create, pt->clockid, sevp, idp) < 0 ? -1 : 0;
}

/*
 * Without the prctl the kernel gives ids in order, from 0 in a new
 * process: the ids in between are taken by SIGEV_NONE timers and dropped
 * once the wanted ones exist.
 */
static int create_linear(struct batch *b, struct pt_rst *r)
{
	struct ksigevent none = { .notify = SIGEV_NONE };
	uint64_t sevp, idp;
	uint32_t next = 0, id;
	size_t i;

	sevp = batch_put(b, &none, sizeof(none));
	idp = batch_put(b, NULL, sizeof(int32_t));
	if (!sevp || !idp)
		return -1;
	for (i = 0; i < r->img->n_timers; i++) {
		for (; next < r->sorted[i]->id; next++)
			if (BATCH(b, "timer_create of a filler timer", __NR_timer_create,
				  CLOCK_MONOTONIC, sevp, idp) < 0)
				return -1;
		if (create_timer(b, r->sorted[i]))
			return -1;
		next++;
	}
	for (i = 0, id = 0; i < r->img->n_timers; id++) {
		if (id == r->sorted[i]->id)
			i++;
		else if (BATCH(b, "timer_delete of a filler timer", __NR_timer_delete, id) < 0)
			return -1;
	}
	return 0;
}

/*
 * How to arm a timer, as timer_settime() takes it; 0: leave it disarmed.
 * Built in the new task: its namespace clocks go on from the dump, so a
 * timer on one of them is armed at its deadline, never earlier; one on
 * the wall clock gets what was left of its duration, CPU-time ones what
 * was left of their CPU time.
 */
static int arm_of(const PosixTimer *pt, int fix, int *flags, int64_t *ns)
{
	int64_t skip = 0, at;
	int clk = ref_clock(pt->clockid);

	*flags = 0;
	if (fix == FIX_FIRE_NOW) {
		*ns = 1;
		return 1;
	}
	if (!pt->value_ns || (fix == FIX_SKIP_EXPIRY && !pt->interval_ns))
		return 0;
	if (fix == FIX_SKIP_EXPIRY)
		skip = pt->interval_ns;
	if (!pt->has_deadline_ns || clk < 0) {
		*ns = pt->value_ns + skip;
		return 1;
	}
	at = pt->deadline_ns + skip;
	if (clk == pt->clockid || pt->clockid == CLOCK_BOOTTIME_ALARM) {
		*flags = TIMER_ABSTIME;
		*ns = at;
	} else {
		*ns = max(at - clock_ns(clk), 1);	/* 0 would disarm it */
	}
	return 1;
}

static int pt_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	struct pt_rst *r = t->img[PART_POSIX_TIMER];
	struct kitimerspec its;
	char desc[SC_DESC_LEN];
	const PosixTimer *pt;
	uint64_t addr;
	size_t i, n = r->img->n_timers;
	int64_t ns;
	int flags;

	if (!n)
		return 0;
	if (!r->exact) {
		if (create_linear(b, r))
			return -1;
	} else {
		if (BATCH(b, "prctl(PR_TIMER_CREATE_RESTORE_IDS, ON)", __NR_prctl,
			  PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_ON) < 0)
			return -1;
		for (i = 0; i < n; i++)
			if (create_timer(b, r->sorted[i]))
				return -1;
		if (BATCH(b, "prctl(PR_TIMER_CREATE_RESTORE_IDS, OFF)", __NR_prctl,
			  PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_OFF) < 0)
			return -1;
	}
	for (i = 0; i < n; i++) {
		pt = r->sorted[i];
		if (!arm_of(pt, r->fix[i], &flags, &ns))
			continue;
		its.value_sec = ns / NSEC_PER_SEC;
		its.value_nsec = ns % NSEC_PER_SEC;
		its.interval_sec = pt->interval_ns / NSEC_PER_SEC;
		its.interval_nsec = pt->interval_ns % NSEC_PER_SEC;
		addr = batch_put(b, &its, sizeof(its));
		snprintf(desc, sizeof(desc), "timer_settime of POSIX timer %u", pt->id);
		if (!addr || BATCH(b, desc, __NR_timer_settime, pt->id, flags, addr, 0) < 0)
			return -1;
	}
	return 0;
}

static void pt_release(struct rtask *t)
{
	struct pt_rst *r = t->img[PART_POSIX_TIMER];

	if (!r)
		return;
	img_free(IMG_POSIX_TIMER, r->img);
	free(r->sorted);
	free(r->fix);
	free(r);
	t->img[PART_POSIX_TIMER] = NULL;
}

const struct part part_posix_timer = {
	.name = "posix_timer",
	.id = PART_POSIX_TIMER,
	.check = pt_check,
	.prepare = pt_prepare,
	.dump = pt_dump,
	.load = pt_load,
	.batch = pt_batch,
	.release = pt_release,
};
