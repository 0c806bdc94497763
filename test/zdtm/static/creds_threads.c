// SPDX-License-Identifier: GPL-2.0-only
/*
 * Threads with credentials of their own, changed with raw system calls so
 * that glibc does not apply them to every thread: one thread takes other
 * user and group ids (setresgid, setresuid), one drops a capability from
 * its own sets (capset), one sets no_new_privs and a securebit
 * (SECBIT_NO_SETUID_FIXUP). The main thread keeps root's.
 * After restore each thread reads its own credentials again.
 */
#include <linux/capability.h>
#include <linux/securebits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

#define NR_THREADS	3
#define DROPPED		CAP_NET_RAW

struct report {
	volatile int ready, done;
	char why[160];
};

static struct report rep[NR_THREADS];
static volatile int go_check;

static int caps_of_self(uint64_t *eff, uint64_t *prm)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	*eff = d[0].effective | (uint64_t)d[1].effective << 32;
	*prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	return 0;
}

static int drop_cap(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].effective &= ~(1u << DROPPED);
	d[0].permitted &= ~(1u << DROPPED);
	return syscall(SYS_capset, &h, d);
}

/* What is wrong with thread @i's credentials now, or an empty string. */
static void check(int i, char *why, size_t len)
{
	uid_t r, e, s;
	gid_t gr, ge, gs;
	uint64_t eff, prm;
	int nnp, bits;

	why[0] = '\0';
	syscall(SYS_getresuid, &r, &e, &s);
	syscall(SYS_getresgid, &gr, &ge, &gs);
	if (caps_of_self(&eff, &prm)) {
		snprintf(why, len, "capget: %m");
		return;
	}
	nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	bits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
	if (i == 0 && (r != 2001 || e != 2002 || s != 2003 || gr != 1001 || ge != 1002 ||
		       gs != 1003))
		snprintf(why, len, "ids %u/%u/%u %u/%u/%u, want 2001/2002/2003 1001/1002/1003",
			 r, e, s, gr, ge, gs);
	else if (i != 0 && (r || e || s || gr || ge || gs))
		snprintf(why, len, "ids %u/%u/%u %u/%u/%u, want root's", r, e, s, gr, ge, gs);
	else if (i == 1 && ((eff | prm) & (1ULL << DROPPED)))
		snprintf(why, len, "has CAP_NET_RAW again (eff %#lx)", eff);
	else if (i == 2 && (!(prm & (1ULL << DROPPED)) || !(eff & (1ULL << DROPPED))))
		snprintf(why, len, "lost CAP_NET_RAW (eff %#lx)", eff);
	else if (nnp != (i == 2))
		snprintf(why, len, "no_new_privs %d", nnp);
	else if (!!(bits & SECBIT_NO_SETUID_FIXUP) != (i == 2))
		snprintf(why, len, "securebits %#x", bits);
}

static void *thread_fn(void *arg)
{
	int i = (long)arg;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (i == 0 && (syscall(SYS_setresgid, 1001, 1002, 1003) ||
		       syscall(SYS_setresuid, 2001, 2002, 2003)))
		snprintf(rep[i].why, sizeof(rep[i].why), "setresuid: %m");
	if (i == 1 && drop_cap())
		snprintf(rep[i].why, sizeof(rep[i].why), "capset: %m");
	if (i == 2 && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		       prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP, 0, 0, 0)))
		snprintf(rep[i].why, sizeof(rep[i].why), "prctl: %m");
	if (!rep[i].why[0])
		check(i, rep[i].why, sizeof(rep[i].why));
	rep[i].ready = 1;
	while (!go_check)
		usleep(1000);
	check(i, rep[i].why, sizeof(rep[i].why));
	rep[i].done = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NR_THREADS];
	char why[160];
	long i;

	test_init(argc, argv);
	if (getuid() != 0)
		skip("needs root to change ids");
	for (i = 0; i < NR_THREADS; i++)
		if (pthread_create(&th[i], NULL, thread_fn, (void *)i))
			fail("pthread_create");
	for (i = 0; i < NR_THREADS; i++) {
		while (!rep[i].ready)
			usleep(1000);
		if (rep[i].why[0])
			fail("thread %ld before the dump: %s", i, rep[i].why);
	}

	test_ready();
	test_waitsig();

	go_check = 1;
	for (i = 0; i < NR_THREADS; i++) {
		pthread_join(th[i], NULL);
		if (rep[i].why[0])
			fail("thread %ld: %s", i, rep[i].why);
	}
	check(-1, why, sizeof(why));
	if (why[0])
		fail("main thread: %s", why);
	pass();
}
