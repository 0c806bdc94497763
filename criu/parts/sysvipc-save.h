/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_SYSVIPC_SAVE_H
#define CRIU_PARTS_SYSVIPC_SAVE_H

/*
 * What the sysvipc part's dump helper reads inside the tree's IPC
 * namespace (sysvipc-save.c), and what that part (sysvipc.c: what is
 * refused, the helper, the restore) shares with it.
 */
#include <stdint.h>
#include <sys/types.h>

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	struct seminfo *__buf;
};

/* The namespace's limits, saved and written back (only these names; sysvipc-save.c). */
#define SYSVIPC_NR_LIMITS	8
extern const char *const sysvipc_limits[SYSVIPC_NR_LIMITS];

/* A segment some task of the tree has attached. */
struct sysvipc_attach {
	int id;
	pid_t last;		/* the last such task in tree order (image pid) */
	uint32_t key;		/* the key in its areas' name */
};

/*
 * In the helper, inside the tree's namespace: every object, into
 * sysvipc.img and sysvipc-pages.img. @root is the root's image pid.
 */
int sysvipc_save(const struct sysvipc_attach *att, int nr_att, pid_t root, int dirfd);

#endif
