// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pending, blocked signals in both queues: the thread's private queue
 * (tgkill, rt_tgsigqueueinfo) and the process' shared one (kill, sigqueue),
 * real-time signals queued several times with values. After restore each
 * must be dequeued by sigtimedwait() in the same order with the same
 * siginfo (signo, code, pid, uid, value), and nothing more.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

struct pend {
	int sig;
	int shared;
	int code;
	long value;	/* for SI_QUEUE and custom codes */
};

#define CUSTOM_CODE (-42)

static const struct pend pends[] = {
	/* standard signals: one per queue at most */
	{ SIGUSR1, 0, SI_TKILL, 0 },
	{ SIGUSR1, 1, SI_USER, 0 },
	{ SIGHUP, 1, SI_USER, 0 },
	{ SIGUSR2, 0, SI_TKILL, 0 },
	{ SIGWINCH, 1, SI_QUEUE, 0x77 },
	/* real-time signals queue up */
	{ 40, 0, SI_QUEUE, 4001 },
	{ 40, 0, SI_QUEUE, 4002 },
	{ 40, 0, SI_TKILL, 0 },
	{ 40, 0, CUSTOM_CODE, 4004 },
	{ 41, 1, SI_QUEUE, 4101 },
	{ 41, 1, SI_USER, 0 },
	{ 41, 1, SI_QUEUE, 4103 },
	{ 41, 1, SI_QUEUE, 4104 },
	{ 44, 1, SI_QUEUE, 4401 },
	{ 44, 0, SI_QUEUE, 4402 },
	{ 44, 1, CUSTOM_CODE, 4403 },
	{ 44, 0, SI_TKILL, 0 },
	{ 64, 1, SI_QUEUE, 6401 },
};

#define BIT(sig) (1ULL << ((sig) - 1))

/* the si_code the kernel gives tgkill(): SI_TKILL, or SI_USER on some */
static int tkill_code;

static void send(const struct pend *p)
{
	pid_t pid = getpid(), tid = gettid();
	siginfo_t si;
	int ret;

	if (p->code == SI_USER) {
		ret = kill(pid, p->sig);
	} else if (p->code == SI_TKILL) {
		ret = syscall(SYS_tgkill, pid, tid, p->sig);
	} else {
		memset(&si, 0, sizeof(si));
		si.si_signo = p->sig;
		si.si_code = p->code;
		si.si_pid = pid;
		si.si_uid = getuid();
		si.si_value.sival_ptr = (void *)p->value;
		if (p->shared)
			ret = syscall(SYS_rt_sigqueueinfo, pid, p->sig, &si);
		else
			ret = syscall(SYS_rt_tgsigqueueinfo, pid, tid, p->sig, &si);
	}
	if (ret)
		fail_errno("sending signal %d", p->sig);
}

static unsigned long long status_mask(const char *key)
{
	char buf[64];

	if (!test_status_field(key, buf, sizeof(buf)))
		fail("no %s in /proc/self/status", key);
	return strtoull(buf, NULL, 16);
}

int main(int argc, char **argv)
{
	unsigned long long blocked = 0, priv = 0, shared = 0, v;
	struct timespec zero = { 0, 0 };
	unsigned int i, j;
	sigset_t set;
	siginfo_t si;

	test_init(argc, argv);
	tkill_code = test_tkill_code();
	for (i = 0; i < ARRAY_SIZE(pends); i++) {
		blocked |= BIT(pends[i].sig);
		if (pends[i].shared)
			shared |= BIT(pends[i].sig);
		else
			priv |= BIT(pends[i].sig);
	}
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &blocked, NULL, sizeof(blocked)))
		fail_errno("rt_sigprocmask");
	for (i = 0; i < ARRAY_SIZE(pends); i++)
		send(&pends[i]);
	if (status_mask("SigPnd") != priv || status_mask("ShdPnd") != shared)
		fail("pending sets are wrong before the checkpoint");

	test_ready();
	test_waitsig();

	v = status_mask("SigPnd");
	if (v != priv)
		fail("private pending set is %#llx, was %#llx", v, priv);
	v = status_mask("ShdPnd");
	if (v != shared)
		fail("shared pending set is %#llx, was %#llx", v, shared);

	/* dequeue per signal: the private queue first, each in FIFO order */
	for (i = 0; i < ARRAY_SIZE(pends); i++) {
		int sig = pends[i].sig, pass_no;

		/* first occurrence of this signal only */
		for (j = 0; j < i; j++)
			if (pends[j].sig == sig)
				break;
		if (j < i)
			continue;
		sigemptyset(&set);
		sigaddset(&set, sig);
		for (pass_no = 0; pass_no < 2; pass_no++) {
			int want_shared = pass_no, want_code;

			for (j = i; j < ARRAY_SIZE(pends); j++) {
				const struct pend *p = &pends[j];

				if (p->sig != sig || p->shared != want_shared)
					continue;
				if (sigtimedwait(&set, &si, &zero) != sig)
					fail_errno("signal %d (#%u) is no longer pending", sig, j);
				want_code = p->code == SI_TKILL ? tkill_code : p->code;
				if (si.si_code != want_code)
					fail("signal %d (#%u): si_code %d, was %d", sig, j, si.si_code, want_code);
				if (si.si_pid != getpid() || si.si_uid != getuid())
					fail("signal %d (#%u): si_pid %d si_uid %d", sig, j, si.si_pid, si.si_uid);
				if (p->code != SI_USER && p->code != SI_TKILL &&
				    (long)si.si_value.sival_ptr != p->value)
					fail("signal %d (#%u): value %ld, was %ld", sig, j,
					     (long)si.si_value.sival_ptr, p->value);
			}
		}
		if (sigtimedwait(&set, &si, &zero) >= 0)
			fail("signal %d pending once more than it was (code %d)", sig, si.si_code);
		if (errno != EAGAIN)
			fail_errno("sigtimedwait");
	}
	if (status_mask("SigPnd") || status_mask("ShdPnd") & ~BIT(SIGTERM))
		fail("other signals are pending");
	pass();
}
