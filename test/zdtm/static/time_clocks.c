// SPDX-License-Identifier: GPL-2.0-only
/*
 * Downtime is invisible to CLOCK_MONOTONIC and CLOCK_BOOTTIME: the test
 * samples the clocks every ~10 ms. Across the two samples where REALTIME
 * jumped the most (the dump, the runner's gap between dump and restore,
 * ZDTM_GAP, and the restore), MONOTONIC and BOOTTIME must have advanced at
 * least the gap less than REALTIME: they saw the task frozen while it was
 * dumped (as any frozen task would), not the downtime. How long the dump
 * took does not count (a second in a loaded guest); REALTIME must have
 * jumped by the gap at least. BOOTTIME - MONOTONIC stays constant, neither
 * goes backwards, and after the restore MONOTONIC and REALTIME advance at
 * the same rate.
 */
#include <errno.h>
#include <time.h>

#include "zdtm.h"

#define EPS	0.01	/* REALTIME may be slewed a little */
#define STILL	0.01	/* readings this close make one moment */
#define SETTLE 20	/* samples taken before ready and after SIGTERM */

struct sample {
	double mono, boot, real;
};

#define RING 4096
static struct sample ring[RING];

static double ts2d(const struct timespec *ts)
{
	return ts->tv_sec + ts->tv_nsec / 1e9;
}

/*
 * The three clocks at one moment: read again when MONOTONIC moved by more
 * than STILL meanwhile (a dump froze the task between two readings, and
 * BOOTTIME - MONOTONIC would seem to move by as long as the freeze).
 */
static void sample(struct sample *s)
{
	struct timespec m, b, r, m2;
	int i;

	for (i = 0; i < 100; i++) {
		clock_gettime(CLOCK_MONOTONIC, &m);
		clock_gettime(CLOCK_BOOTTIME, &b);
		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(CLOCK_MONOTONIC, &m2);
		if (ts2d(&m2) - ts2d(&m) < STILL)
			break;
	}
	s->mono = ts2d(&m);
	s->boot = ts2d(&b);
	s->real = ts2d(&r);
}

int main(int argc, char **argv)
{
	double hid_mono = 0, hid_boot = 0, max_real = 0, offset, gap;
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	unsigned long n = 0, after = 0;
	struct sample *s, *p, from = { 0, 0, 0 };
	double dm, dr;

	test_init(argc, argv);
	gap = test_gap();
	sample(&ring[0]);
	offset = ring[0].boot - ring[0].mono;

	/*
	 * Sample for a while before the checkpoint, and for a while after
	 * SIGTERM (i.e. after the restore), so both sides are well covered.
	 */
	for (;;) {
		if (n == SETTLE)
			test_ready();
		if (test_sigterm && !after) {
			after = n;
			from = ring[n % RING];
		}
		if (after && n >= after + SETTLE)
			break;
		clock_nanosleep(CLOCK_MONOTONIC, 0, &tick, NULL);
		p = &ring[n % RING];
		s = &ring[++n % RING];
		sample(s);
		if (s->mono < p->mono || s->boot < p->boot)
			fail("a clock went backwards: mono %.6f -> %.6f, boot %.6f -> %.6f",
			     p->mono, s->mono, p->boot, s->boot);
		if (s->real - p->real > max_real) {
			max_real = s->real - p->real;
			/* what REALTIME saw go by and the others did not */
			hid_mono = max_real - (s->mono - p->mono);
			hid_boot = max_real - (s->boot - p->boot);
		}
		if (s->boot - s->mono - offset > 0.2 || s->boot - s->mono - offset < -0.2)
			fail("BOOTTIME - MONOTONIC moved by %.3f s", s->boot - s->mono - offset);
	}

	test_msg("%lu samples; largest REALTIME step %.3f s, hidden from mono %.3f boot "
		 "%.3f; gap %.1f", n, max_real, hid_mono, hid_boot, gap);
	/* after the restore the clocks run at the same rate */
	s = &ring[n % RING];
	dm = s->mono - from.mono;
	dr = s->real - from.real;
	if (dm < dr * 0.9 - 0.005 || dm > dr * 1.1 + 0.005)
		fail("after SIGTERM MONOTONIC advanced %.3f s while REALTIME advanced %.3f s",
		     dm, dr);
	if (gap > 0) {
		if (hid_mono < gap - EPS)
			fail("CLOCK_MONOTONIC saw %.3f s of the %.1f s gap go by",
			     gap - hid_mono, gap);
		if (hid_boot < gap - EPS)
			fail("CLOCK_BOOTTIME saw %.3f s of the %.1f s gap go by",
			     gap - hid_boot, gap);
		if (max_real < gap)
			fail("CLOCK_REALTIME never jumped by the gap (%.3f s < %.1f s): "
			     "was the task restored at all?", max_real, gap);
	}
	pass();
}
