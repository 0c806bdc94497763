// SPDX-License-Identifier: GPL-2.0
/*
 * timerfd: a kind of open file for the fd table (file.c).
 *
 * What a timerfd holds: its clock, the flags of its last timerfd_settime(),
 * the time to its next expiry, its interval and the expirations nobody has
 * read yet. /proc/PID/fdinfo shows all of it, but the kernel re-arms an
 * expired periodic timer only when it is read or queried: until then the
 * fdinfo shows one tick and no remaining time, and the missed periods and
 * the phase are lost. So the dump takes the description itself with
 * pidfd_getfd() and asks timerfd_gettime(), which does that catch-up, and
 * takes the ticks from the fdinfo around it.
 *
 * The next expiry is kept as a moment on a clock (see ref_clock()):
 *  - MONOTONIC, BOOTTIME (and BOOTTIME_ALARM) timers: on their clock as
 *    the task sees it. Restore puts the task in a time namespace where
 *    these clocks go on from the dump: the downtime brings no expiry, and
 *    the timer fires when namespace time reaches the same moment, never
 *    earlier (a remaining time read some milliseconds into the dump and
 *    re-armed relative would be that much early).
 *  - A relative CLOCK_REALTIME timer was armed for a duration; the kernel
 *    itself runs it on the monotonic clock (clock_settime() does not move
 *    it). It keeps its moment on CLOCK_MONOTONIC, like a monotonic one.
 *  - An absolute CLOCK_REALTIME(_ALARM) timer was armed for a moment on
 *    the wall clock, which did not stop. It is re-armed absolute at the
 *    same deadline, or later by what the clock read right after
 *    timerfd_gettime() took (well under a microsecond), never earlier. A deadline that
 *    passed during the downtime fires at once, and a periodic one counts
 *    the periods of the downtime, as after a suspend.
 *
 * Restore: timerfd_create() where the fd table wants it (in criu when
 * tasks share it); then the task the deadline belongs to (the one it was
 * read through, its owner) arms it with timerfd_settime() and the dumped
 * flags, then TFD_IOC_SET_TICKS for the unread expirations. The owner
 * does it itself because an absolute time on a namespace clock means what
 * it means only in that task's time namespace, which a tree with several
 * (nested) ones may have made after criu forked (Documentation/
 * namespaces.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"
#include "task/ptrace.h"

/* linux/timerfd.h has it (Linux 3.17, CONFIG_CHECKPOINT_RESTORE) but clashes with glibc's */
#ifndef TFD_IOC_SET_TICKS
#define TFD_IOC_SET_TICKS	_IOW('T', 0, uint64_t)
#endif
#ifndef TFD_TIMER_CANCEL_ON_SET
#define TFD_TIMER_CANCEL_ON_SET	(1 << 1)
#endif
#define TFD_SETTIME_FLAGS	(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET)

#define NSEC_PER_SEC		1000000000LL
/* fdinfo and timerfd_gettime() agree when no expiry fell between them */
#define READ_TRIES		8
/* a read of the clock around timerfd_gettime() longer than this was disturbed */
#define STEADY_NS		20000LL
/* an expiry this close is waited for before the unread ticks are set */
#define IMMINENT_NS		2000000LL

struct tfd_info {
	int clockid;
	unsigned int flags;
	uint64_t ticks;
};

/*
 * The clock the next expiry is kept on: the wall clock for an absolute
 * wall-clock timer, else the clock that stands still over the downtime.
 */
static int ref_clock(int clockid, unsigned int flags)
{
	switch (clockid) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_ALARM:
		return flags & TFD_TIMER_ABSTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC;
	case CLOCK_BOOTTIME:
	case CLOCK_BOOTTIME_ALARM:
		return CLOCK_BOOTTIME;
	default:
		return CLOCK_MONOTONIC;
	}
}

static uint64_t its_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static void ns_to_ts(int64_t ns, struct timespec *ts)
{
	ts->tv_sec = ns / NSEC_PER_SEC;
	ts->tv_nsec = ns % NSEC_PER_SEC;
}

/* ---------------------------------------------------------------- dump */

static int tfd_match(const char *link, const struct stat *st)
{
	return !strcmp(link, "anon_inode:[timerfd]");
}

/* The timerfd lines of an fdinfo text (fs/timerfd.c: timerfd_show()). */
static int parse_tfd_fdinfo(const char *buf, struct tfd_info *ti)
{
	const char *p, *next;
	unsigned long long ticks;
	unsigned int flags;
	int clockid, seen = 0;

	for (p = buf; p && *p; p = next) {
		next = strchr(p, '\n');
		if (next)
			next++;
		if (sscanf(p, "clockid: %d", &clockid) == 1)
			seen |= 1;
		else if (sscanf(p, "ticks: %llu", &ticks) == 1)
			seen |= 2;
		else if (sscanf(p, "settime flags: %o", &flags) == 1)
			seen |= 4;
	}
	if (seen != 7)
		return -1;
	ti->clockid = clockid;
	ti->ticks = ticks;
	ti->flags = flags;
	return 0;
}

static int read_tfd_fdinfo(pid_t pid, int fd, struct tfd_info *ti)
{
	char path[64], *buf;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	buf = read_file(-1, path, NULL);
	if (!buf) {
		pr_perror("Task %d: can't read %s", pid, path);
		return -1;
	}
	ret = parse_tfd_fdinfo(buf, ti);
	if (ret)
		pr_err("Task %d: %s does not look like a timerfd's", pid, path);
	free(buf);
	return ret;
}

/*
 * How far the task's CLOCK_MONOTONIC and CLOCK_BOOTTIME are ahead of ours
 * (time namespaces; also a task that made one for its children and stays
 * in its own).
 */
static int ns_delta(pid_t pid, int64_t *mono, int64_t *boot)
{
	int64_t tm, tb, sm, sb;

	*mono = *boot = 0;
	if (proc_ns_id(pid, 0, "time") == proc_ns_id(0, 0, "time"))
		return 0;
	if (proc_timens_offsets(pid, &tm, &tb) || proc_timens_offsets(0, &sm, &sb))
		return -1;
	*mono = tm - sm;
	*boot = tb - sb;
	return 0;
}

/*
 * Reads the state so that ticks, remaining time and the clock belong
 * together: an expiry between the two fdinfo reads shows as a change of
 * ticks, and then it is read again. The first gettime may also catch up a
 * periodic timer that expired long ago; that changes the ticks too. A read
 * that took long (we were preempted) is done again, for the deadline's
 * sake. @now is our ref_clock() right after timerfd_gettime().
 */
static int read_state(pid_t pid, int fd, int tfd, struct tfd_info *ti,
		      struct itimerspec *its, int64_t *now)
{
	struct tfd_info before;
	int64_t t1, t2;
	int try, clk;

	for (try = 0; try < READ_TRIES; try++) {
		if (read_tfd_fdinfo(pid, fd, &before))
			return -1;
		clk = ref_clock(before.clockid, before.flags);
		t1 = clock_ns(clk);
		if (timerfd_gettime(tfd, its)) {
			pr_perror("Task %d: timerfd_gettime of fd %d", pid, fd);
			return -1;
		}
		t2 = clock_ns(clk);
		if (read_tfd_fdinfo(pid, fd, ti))
			return -1;
		/* after it: the deadline is never early (late by under STEADY_NS) */
		*now = t2;
		if (before.ticks == ti->ticks && before.flags == ti->flags &&
		    t2 - t1 < STEADY_NS)
			return 0;
	}
	if (before.ticks != ti->ticks || before.flags != ti->flags)
		pr_warn("Task %d: timerfd %d expires too often to read it steadily; "
			"an expiry may be counted twice", pid, fd);
	return 0;
}

static int tfd_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	pid_t pid = f->pid;
	int fd = f->fd;
	struct itimerspec its;
	struct tfd_info ti;
	TimerfdEntry *e;
	int64_t now, mono, boot;
	int tfd, ret, clk;

	tfd = ptrace_getfd(pid, fd);
	if (tfd < 0)
		return -1;
	ret = read_state(pid, fd, tfd, &ti, &its, &now);
	close(tfd);
	if (ret < 0)
		return -1;
	e = xmalloc(sizeof(*e));
	if (!e)
		return -1;
	timerfd_entry__init(e);
	e->clockid = ti.clockid;
	e->settime_flags = ti.flags;
	e->ticks = ti.ticks;
	e->value_ns = its_ns(&its.it_value);
	e->interval_ns = its_ns(&its.it_interval);
	e->owner = proc_ns_pid(pid);
	e->has_owner = e->owner > 0;
	d->tfd = e;
	clk = ref_clock(ti.clockid, ti.flags);
	/* the wall clock is the same everywhere; the others need the offsets */
	ret = clk == CLOCK_REALTIME ? 0 : ns_delta(pid, &mono, &boot);
	if (ret < 0)
		return -1;
	if (e->value_ns) {
		e->has_deadline_ns = 1;
		e->deadline_ns = now + (int64_t)e->value_ns;
		if (clk != CLOCK_REALTIME)
			e->deadline_ns += clk == CLOCK_BOOTTIME ? boot : mono;
	}
	pr_debug("Task %d: timerfd %d: clock %d, flags %#x, %lu ns left (at %ld on clock %d), "
		 "interval %lu ns, %lu unread", pid, fd, e->clockid, e->settime_flags,
		 e->value_ns, e->deadline_ns, clk, e->interval_ns, e->ticks);
	return 0;
}

static void tfd_free(FileDesc *d)
{
	free(d->tfd);
	d->tfd = NULL;
}

/* ------------------------------------------------------------- restore */

static int tfd_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const TimerfdEntry *e = d->tfd;

	if (!e) {
		pr_err("Task %d: image fdinfo has a timerfd #%u without its timer", pid, d->id);
		return -1;
	}
	switch (e->clockid) {
	case CLOCK_REALTIME: case CLOCK_MONOTONIC: case CLOCK_BOOTTIME:
	case CLOCK_REALTIME_ALARM: case CLOCK_BOOTTIME_ALARM:
		break;
	default:
		pr_err("Task %d: image fdinfo has a timerfd on clock %d", pid, e->clockid);
		return -1;
	}
	if ((e->settime_flags & ~TFD_SETTIME_FLAGS) || e->value_ns > INT64_MAX ||
	    e->interval_ns > INT64_MAX || (e->has_deadline_ns && e->deadline_ns < 0)) {
		pr_err("Task %d: image fdinfo has an invalid timerfd #%u (flags %#x, "
		       "%lu ns, interval %lu ns)", pid, d->id, e->settime_flags,
		       e->value_ns, e->interval_ns);
		return -1;
	}
	return 0;
}

/*
 * The expiry to arm, as timerfd_settime() with the dumped flags takes it,
 * and how far away it is now. In the new task, whose namespace clocks go
 * on from the dump. A relative deadline may have passed already: it was
 * read while the tree was frozen, and the clocks go on from the end of
 * the dump. The kernel counts the periods an absolute one missed; for a
 * relative one the periods that fell due are added to the unread
 * expirations (*missed) and the next one is armed.
 */
static void arm_value(const TimerfdEntry *e, struct timespec *value, int64_t *in,
		      uint64_t *missed)
{
	int64_t now;

	*missed = 0;
	*in = e->value_ns;
	if (!e->value_ns || !e->has_deadline_ns) {
		ns_to_ts(e->value_ns, value);
		return;
	}
	now = clock_ns(ref_clock(e->clockid, e->settime_flags));
	*in = e->deadline_ns - now;
	if (e->settime_flags & TFD_TIMER_ABSTIME) {
		ns_to_ts(e->deadline_ns, value);
		return;
	}
	if (*in <= 0 && e->interval_ns) {
		*missed = -*in / (int64_t)e->interval_ns + 1;
		*in += *missed * (int64_t)e->interval_ns;
	}
	ns_to_ts(max(*in, 1), value);	/* 0 would disarm it */
}

/*
 * TFD_IOC_SET_TICKS replaces the count: an expiry that comes between
 * settime and the ioctl would be lost. One that is due at once (a wall
 * clock deadline passed during the downtime) is waited for and added.
 */
static int set_ticks(pid_t pid, int fd, const TimerfdEntry *e, int64_t in, uint64_t missed)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t ticks = e->ticks + missed, fired = 0;

	if (!ticks)
		return 0;
	if (e->value_ns && in < IMMINENT_NS) {
		if (poll(&pfd, 1, 1000) == 1 && read(fd, &fired, sizeof(fired)) != sizeof(fired))
			fired = 0;
		ticks += fired;
	}
	if (ioctl(fd, TFD_IOC_SET_TICKS, &ticks)) {
		if (errno == ENOTTY)
			pr_err("Task %d: the kernel can't set a timerfd's unread expirations "
			       "(TFD_IOC_SET_TICKS needs CONFIG_CHECKPOINT_RESTORE)", pid);
		else
			pr_perror("Task %d: can't set %lu unread expirations of a timerfd",
				  pid, ticks);
		return -1;
	}
	return 0;
}

/* In the owner task (or where it was created, for older images). */
static int tfd_arm(pid_t pid, int fd, const TimerfdEntry *e)
{
	struct itimerspec its;
	uint64_t missed;
	int64_t in;

	ns_to_ts(e->interval_ns, &its.it_interval);
	arm_value(e, &its.it_value, &in, &missed);
	if ((e->value_ns || e->interval_ns || e->settime_flags) &&
	    timerfd_settime(fd, e->settime_flags, &its, NULL)) {
		pr_perror("Task %d: can't arm a timerfd (clock %d, flags %#x, %ld.%09ld s, "
			  "interval %ld.%09ld s)", pid, e->clockid, e->settime_flags,
			  its.it_value.tv_sec, its.it_value.tv_nsec,
			  its.it_interval.tv_sec, its.it_interval.tv_nsec);
		return -1;
	}
	return set_ticks(pid, fd, e, in, missed);
}

static int tfd_open(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const TimerfdEntry *e = d->tfd;
	int fd;

	fd = timerfd_create(e->clockid, TFD_CLOEXEC | (d->flags & O_NONBLOCK ? TFD_NONBLOCK : 0));
	if (fd < 0) {
		if (errno == EPERM)
			pr_err("Task %d: creating a timerfd on alarm clock %d needs "
			       "CAP_WAKE_ALARM", pid, e->clockid);
		else
			pr_perror("Task %d: can't create a timerfd on clock %d",
				  pid, e->clockid);
		return -1;
	}
	if (!e->has_owner && tfd_arm(pid, fd, e)) {
		close(fd);
		return -1;
	}
	return fd;
}

static pid_t tfd_installer(const FileDesc *d)
{
	return d->tfd->has_owner ? d->tfd->owner : 0;
}

static int tfd_install(pid_t pid, int fd, const FileDesc *d)
{
	return tfd_arm(pid, fd, d->tfd);
}

const struct file_kind fk_timerfd = {
	.name = "timerfd",
	.kind = FILE_KIND__FILE_TIMERFD,
	.match = tfd_match,
	.dump = tfd_dump,
	.validate = tfd_validate,
	.open = tfd_open,
	.installer = tfd_installer,
	.install = tfd_install,
	.free = tfd_free,
	.task_clocks = 1,
};
