// SPDX-License-Identifier: GPL-2.0
/*
 * The three setitimer(2) timers: ITIMER_REAL (CLOCK_MONOTONIC, SIGALRM),
 * ITIMER_VIRTUAL (user CPU time, SIGVTALRM) and ITIMER_PROF (user and
 * system CPU time, SIGPROF). They are shared by the whole process.
 *
 * Only getitimer() shows them, so dump runs it inside the task; restore
 * runs setitimer() there with the remaining time. That is relative, as
 * the task's own clocks are: CLOCK_MONOTONIC in its time namespace does
 * not see the downtime, and a dumped task uses no CPU time.
 */
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/time.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "itimer.pb-c.h"

#define NSEC_PER_USEC	1000ULL
#define NSEC_PER_SEC	1000000000ULL
#define NR_ITIMERS	3

/* The kernel's struct itimerval on x86_64. */
struct kitimerval {
	int64_t interval_sec, interval_usec;
	int64_t value_sec, value_usec;
};

static const char *const itimer_names[NR_ITIMERS] = {
	[ITIMER_REAL] = "real",
	[ITIMER_VIRTUAL] = "virtual",
	[ITIMER_PROF] = "prof",
};

static ItimerVal **itimer_slot(ItimerEntry *ie, int which)
{
	switch (which) {
	case ITIMER_REAL:
		return &ie->real;
	case ITIMER_VIRTUAL:
		return &ie->virt;
	default:
		return &ie->prof;
	}
}

/* ---------------------------------------------------------------- dump */

struct itimer_dump_priv {
	uint64_t vals;		/* remote kitimerval[NR_ITIMERS] */
};

static int itimer_prepare(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct itimer_dump_priv *p = xzalloc(sizeof(*p));
	int which;

	if (!p)
		return -1;
	t->priv[PART_ITIMER] = p;
	p->vals = batch_put(b, NULL, NR_ITIMERS * sizeof(struct kitimerval));
	if (!p->vals)
		return -1;
	for (which = 0; which < NR_ITIMERS; which++)
		if (BATCH(b, "getitimer", __NR_getitimer, which,
			  p->vals + which * sizeof(struct kitimerval)) < 0)
			return -1;
	return 0;
}

static uint64_t tv_to_ns(int64_t sec, int64_t usec)
{
	return (uint64_t)sec * NSEC_PER_SEC + (uint64_t)usec * NSEC_PER_USEC;
}

static int itimer_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct itimer_dump_priv *p = t->priv[PART_ITIMER];
	ItimerEntry ie = ITIMER_ENTRY__INIT;
	ItimerVal vals[NR_ITIMERS];
	struct kitimerval *kv;
	int which, ret;

	kv = batch_local(b, p->vals);
	for (which = 0; which < NR_ITIMERS; which++, kv++) {
		itimer_val__init(&vals[which]);
		vals[which].interval_ns = tv_to_ns(kv->interval_sec, kv->interval_usec);
		vals[which].value_ns = tv_to_ns(kv->value_sec, kv->value_usec);
		*itimer_slot(&ie, which) = &vals[which];
		if (vals[which].value_ns || vals[which].interval_ns)
			pr_debug("Task %d: itimer %s: %lu ns left, interval %lu ns", t->pid,
				 itimer_names[which], vals[which].value_ns,
				 vals[which].interval_ns);
	}
	ret = img_write(dc->dirfd, IMG_ITIMER, t->ns_pid, &ie.base);
	free(p);
	t->priv[PART_ITIMER] = NULL;
	return ret;
}

/* ------------------------------------------------------------- restore */

struct itimer_loaded {
	ItimerEntry *ie;
	uint64_t tick;		/* what setitimer() adds to a CPU-time timer */
};

/*
 * setitimer() arms ITIMER_VIRTUAL and ITIMER_PROF one tick (TICK_NSEC)
 * later than asked, as CPU time is sampled per tick; getitimer() shows
 * that tick as part of the remaining time. Restoring the remaining time
 * as read would add one more. HZ is not exported, so measure what the
 * kernel adds to a one-second ITIMER_VIRTUAL of our own (criu never uses
 * it) and take the HZ whose tick is nearest: the reading is truncated to
 * microseconds and, with precise accounting, less the CPU time spent.
 */
static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static uint64_t cpu_timer_tick(void)
{
	static const unsigned int hzs[] = { 100, 128, 200, 250, 256, 300, 500, 512,
					    1000, 1024, 1200 };
	struct itimerval probe = { .it_value = { .tv_sec = 1 } }, old, now;
	static uint64_t tick;
	uint64_t extra, t, best = 0;
	size_t i;
	int tries;

	if (tick)
		return tick;
	for (tries = 0; !tick && tries < 5; tries++) {
		if (setitimer(ITIMER_VIRTUAL, &probe, &old) ||
		    getitimer(ITIMER_VIRTUAL, &now) || setitimer(ITIMER_VIRTUAL, &old, NULL))
			break;
		extra = tv_to_ns(now.it_value.tv_sec, now.it_value.tv_usec);
		/* a tick of our own CPU time was counted meanwhile: again */
		if (extra <= NSEC_PER_SEC || extra >= NSEC_PER_SEC + NSEC_PER_SEC / 10)
			continue;
		extra -= NSEC_PER_SEC;
		for (i = 0; i < ARRAY_SIZE(hzs); i++) {
			t = (NSEC_PER_SEC + hzs[i] / 2) / hzs[i];
			if (!best || absdiff(t, extra) < absdiff(best, extra))
				best = t;
		}
		/* an HZ we don't know: the measure itself is within a microsecond */
		tick = absdiff(best, extra) < extra / 20 ? best : extra;
	}
	if (!tick)
		pr_warn("Can't measure the tick of CPU-time timers; they may fire a tick late");
	else
		pr_debug("CPU-time timers are armed a tick (%lu ns) late", tick);
	return tick;
}

static int itimer_load(struct rst_ctx *rc, struct rtask *t)
{
	struct itimer_loaded *l = xzalloc(sizeof(*l));
	ItimerVal *v;
	int which;

	if (!l)
		return -1;
	t->img[PART_ITIMER] = l;
	if (img_read(rc->dirfd, IMG_ITIMER, t->pid, (void **)&l->ie, 0) < 0)
		return -1;
	for (which = 0; which < NR_ITIMERS; which++) {
		v = *itimer_slot(l->ie, which);
		/* the kernel keeps timers in signed nanoseconds */
		if (v->interval_ns > INT64_MAX || v->value_ns > INT64_MAX) {
			pr_err("Task %d: image itimer has an out of range %s timer "
			       "(%lu ns, interval %lu ns)", t->pid, itimer_names[which],
			       v->value_ns, v->interval_ns);
			return -1;
		}
		if (which != ITIMER_REAL && v->value_ns)
			l->tick = cpu_timer_tick();
	}
	t->batch_entries += NR_ITIMERS;
	t->batch_data += NR_ITIMERS * sizeof(struct kitimerval);
	return 0;
}

/* Rounds up: a timer that was armed must stay armed. */
static void ns_to_tv(uint64_t ns, int64_t *sec, int64_t *usec)
{
	ns = (ns + NSEC_PER_USEC - 1) / NSEC_PER_USEC * NSEC_PER_USEC;
	*sec = ns / NSEC_PER_SEC;
	*usec = ns % NSEC_PER_SEC / NSEC_PER_USEC;
}

static int itimer_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	struct itimer_loaded *l = t->img[PART_ITIMER];
	struct kitimerval kv;
	uint64_t value, addr;
	ItimerVal *v;
	int which;

	for (which = 0; which < NR_ITIMERS; which++) {
		v = *itimer_slot(l->ie, which);
		value = v->value_ns;
		if (which != ITIMER_REAL && value)
			value = value > l->tick ? value - l->tick : 1;
		/*
		 * A periodic ITIMER_REAL reads 0 from the moment it expired
		 * until its SIGALRM is dequeued, which re-arms it. setitimer()
		 * with a zero value would drop the interval; expiring at once
		 * instead queues a SIGALRM that merges with the pending one
		 * the signal part restored, and keeps the interval. (Had the
		 * task ignored that SIGALRM, nothing is pending and the timer
		 * stays dead until a SIGALRM is dequeued; ours will be, later.)
		 */
		if (which == ITIMER_REAL && !value && v->interval_ns)
			value = 1;
		ns_to_tv(v->interval_ns, &kv.interval_sec, &kv.interval_usec);
		ns_to_tv(value, &kv.value_sec, &kv.value_usec);
		addr = batch_put(b, &kv, sizeof(kv));
		if (!addr || BATCH(b, "setitimer", __NR_setitimer, which, addr, 0) < 0)
			return -1;
	}
	return 0;
}

static void itimer_release(struct rtask *t)
{
	struct itimer_loaded *l = t->img[PART_ITIMER];

	if (!l)
		return;
	img_free(IMG_ITIMER, l->ie);
	free(l);
	t->img[PART_ITIMER] = NULL;
}

const struct part part_itimer = {
	.name = "itimer",
	.id = PART_ITIMER,
	.prepare = itimer_prepare,
	.dump = itimer_dump,
	.load = itimer_load,
	.batch = itimer_batch,
	.release = itimer_release,
};
