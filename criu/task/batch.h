/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_BATCH_H
#define CRIU_TASK_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/*
 * A batch of system calls for the executor (executor.S) plus the data
 * they point to, run inside a task from one area at @remote there.
 *
 * Two ways to build one:
 *  - in place (batch_init): the area is given, with room for @max
 *    entries and the data after them, laid out
 *      [executor code, 1 page][entries][descriptions][data]
 *    The task being restored builds its own batch so, in its trampoline,
 *    sized beforehand by what the images hold.
 *  - growing (batch_init_grow): built here, as long as the work is; only
 *    the data's place is fixed while it grows,
 *      [executor code, 1 page][data][entries]
 *    and batch_seal() puts the table after the data once it is complete.
 *    batch_seal() says how big the area must be; the dump maps it so.
 * Either way no count of anything runs into a size fixed in advance.
 */
struct sc_entry {
	int64_t nr;
	int64_t args[6];
	int64_t ret;
};

#define SC_MAY_FAIL	(1LL << 62)
/* args[0] is where the value is: batch_ret_remote() of an earlier entry */
#define SC_ARG0_AT	(1LL << 61)
#define SC_DESC_LEN	64

/* Kept in the code page, so a batch built by the task can be found by criu. */
struct batch_hdr {
	int32_t nr, max;
	uint64_t size;
	/* how the executor ends: see executor.S (offsets fixed there) */
	uint64_t exit_sig, exit_ip, exit_sp, unmap_addr, unmap_len;
};

struct batch {
	uint8_t *local;		/* the code page (and, in place, the whole area) */
	uint64_t remote;
	size_t size;
	int nr, max;
	size_t data_used;
	size_t data_off;	/* of the data in the area */
	size_t table_off;	/* of the entries in the area */
	/* growing: entries, descriptions and data kept here */
	int grow;
	struct sc_entry *ents;
	char *descs;
	uint8_t *data;
	size_t data_max;
};

size_t batch_area_size(int max_entries, size_t data);
int batch_init(struct batch *b, void *local, uint64_t remote, size_t size, int max_entries);
int batch_init_grow(struct batch *b, uint64_t remote);
/* Growing: lays the table out after the data; returns the area's size, 0 on error. */
size_t batch_seal(struct batch *b);
void batch_free(struct batch *b);
/*
 * Growing, sealed: what to copy into the area before the run (@in: code,
 * data, entries) and back out of it after (data, entries). Returns the
 * number of vectors (at most 3) filled in @local and @remote.
 */
int batch_iov(struct batch *b, int in, struct iovec *local, struct iovec *remote);
int batch_add(struct batch *b, const char *desc, long nr, const long args[6]);
/* Takes up a batch from a copy of its area (header, table, descriptions). */
int batch_attach(struct batch *b, void *local, uint64_t remote);
size_t batch_header_size(void);
size_t batch_table_size(int max_entries);
/* Copies @len bytes of @data (zeroes if NULL) into the area; returns its remote address or 0. */
uint64_t batch_put(struct batch *b, const void *data, size_t len);
void *batch_local(struct batch *b, uint64_t remote);
struct sc_entry *batch_entry(struct batch *b, int idx);
const char *batch_desc(struct batch *b, int idx);
uint64_t batch_entries_remote(struct batch *b);
/* where entry @idx's ret will be, in the task (for SC_ARG0_AT; growing, a token the seal resolves) */
uint64_t batch_ret_remote(struct batch *b, int idx);
uint64_t batch_syscall_insn(struct batch *b);
uint64_t batch_code_remote(struct batch *b);
/*
 * Makes the executor end by sending itself @sig instead of int3, and with
 * no tracer left go home: munmap(@addr, @len) at @ip, a `syscall; ret`,
 * with the stack at @sp (an rt_sigreturn frame behind a return address).
 */
void batch_set_exit(struct batch *b, int sig, uint64_t ip, uint64_t sp,
		    uint64_t addr, uint64_t len);
int batch_exit_sig(struct batch *b);
/* Where a thread stops when the executor's signal reaches the tracer. */
uint64_t batch_signalled_ip(struct batch *b);

#define BATCH(b, desc, nr, ...) batch_add(b, desc, nr, (const long[6]){ __VA_ARGS__ })

#endif
