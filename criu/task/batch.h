/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_BATCH_H
#define CRIU_TASK_BATCH_H

#include <stddef.h>
#include <stdint.h>

/*
 * A batch of system calls for the executor (executor.S) plus the data
 * they point to, laid out in one area that lives at @remote in the task:
 *   [executor code, 1 page][entries][descriptions][data]
 * Built in @local (a buffer here, or the area itself when the task being
 * restored builds its own batch), then run inside the task.
 */
struct sc_entry {
	int64_t nr;
	int64_t args[6];
	int64_t ret;
};

#define SC_MAY_FAIL	(1LL << 62)
#define SC_DESC_LEN	64

/* Kept in the code page, so a batch built by the task can be found by criu. */
struct batch_hdr {
	int32_t nr, max;
	uint64_t size;
	/* how the executor ends: see executor.S (offsets fixed there) */
	uint64_t exit_sig, exit_ip, exit_sp, unmap_addr, unmap_len;
};

struct batch {
	uint8_t *local;
	uint64_t remote;
	size_t size;
	int nr, max;
	size_t data_used;
};

size_t batch_area_size(int max_entries, size_t data);
int batch_init(struct batch *b, void *local, uint64_t remote, size_t size, int max_entries);
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
