// SPDX-License-Identifier: GPL-2.0-only
/*
 * Dispositions of (nearly) every signal, set with the raw rt_sigaction so
 * that the restorer is ours: handler, SA_* flags, sa_mask and sa_restorer
 * must read back exactly the same after restore.
 */
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

struct ksigaction {
	unsigned long handler;
	unsigned long flags;
	unsigned long restorer;
	unsigned long long mask;
};

#define NSIG_K 64

static struct ksigaction want[NSIG_K + 1];

static void handler_a(int sig)
{
}

static void handler_b(int sig, siginfo_t *si, void *uc)
{
}

static void fake_restorer(void)
{
}

/* left alone: the lib's SIGTERM, and signals a crash would need */
static int skipped(int sig)
{
	return sig == SIGKILL || sig == SIGSTOP || sig == SIGTERM ||
	       sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT;
}

static int get(int sig, struct ksigaction *ka)
{
	return syscall(SYS_rt_sigaction, sig, NULL, ka, sizeof(ka->mask));
}

int main(int argc, char **argv)
{
	static const unsigned long flag_sets[] = {
		0,
		SA_SIGINFO,
		SA_RESTART,
		SA_ONSTACK | SA_NODEFER,
		SA_RESETHAND | SA_SIGINFO,
		SA_RESTART | SA_ONSTACK | SA_SIGINFO | SA_NODEFER,
	};
	struct ksigaction ka;
	int sig;

	test_init(argc, argv);

	for (sig = 1; sig <= NSIG_K; sig++) {
		if (skipped(sig))
			continue;
		memset(&ka, 0, sizeof(ka));
		switch (sig % 4) {
		case 0:
			ka.handler = (unsigned long)SIG_IGN;
			break;
		case 1:
			ka.handler = (unsigned long)handler_a;
			break;
		case 2:
			ka.handler = (unsigned long)handler_b;
			break;
		case 3:
			/* default, but with flags and a mask still */
			ka.handler = (unsigned long)SIG_DFL;
			break;
		}
		ka.flags = flag_sets[sig % ARRAY_SIZE(flag_sets)];
		if (sig % 3 != 0) {
			ka.flags |= SA_RESTORER;
			ka.restorer = (unsigned long)fake_restorer + sig;
		}
		if (sig == SIGCHLD)
			ka.flags |= SA_NOCLDSTOP;
		ka.mask = test_pattern(0x516, sig) &
			  ~((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1)));
		if (syscall(SYS_rt_sigaction, sig, &ka, NULL, sizeof(ka.mask)))
			fail_errno("rt_sigaction(%d)", sig);
		if (get(sig, &want[sig]))
			fail_errno("rt_sigaction(%d) get", sig);
		if (want[sig].handler != ka.handler || want[sig].mask != ka.mask ||
		    want[sig].restorer != ka.restorer || want[sig].flags != ka.flags)
			fail("signal %d reads back differently before the checkpoint", sig);
	}

	test_ready();
	test_waitsig();

	for (sig = 1; sig <= NSIG_K; sig++) {
		if (skipped(sig))
			continue;
		if (get(sig, &ka))
			fail_errno("rt_sigaction(%d) get", sig);
		if (ka.handler != want[sig].handler)
			fail("signal %d: handler %#lx, was %#lx", sig, ka.handler, want[sig].handler);
		if (ka.flags != want[sig].flags)
			fail("signal %d: flags %#lx, was %#lx", sig, ka.flags, want[sig].flags);
		if (ka.restorer != want[sig].restorer)
			fail("signal %d: restorer %#lx, was %#lx", sig, ka.restorer, want[sig].restorer);
		if (ka.mask != want[sig].mask)
			fail("signal %d: mask %#llx, was %#llx", sig, ka.mask, want[sig].mask);
	}
	pass();
}
