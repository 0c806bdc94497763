// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "task/batch.h"

extern const char executor_code_start[], executor_code_end[], executor_syscall_insn[];
extern const char executor_signalled[];

#define CODE_SIZE	PAGE_SIZE
#define HDR_OFF		2048	/* in the code page, after the executor */

/* executor.S reads these at fixed offsets */
_Static_assert(offsetof(struct batch_hdr, exit_sig) == 16, "executor.S HDR_EXIT_SIG");
_Static_assert(offsetof(struct batch_hdr, exit_ip) == 24, "executor.S HDR_EXIT_IP");
_Static_assert(offsetof(struct batch_hdr, exit_sp) == 32, "executor.S HDR_EXIT_SP");
_Static_assert(offsetof(struct batch_hdr, unmap_addr) == 40, "executor.S HDR_UNMAP_ADDR");
_Static_assert(offsetof(struct batch_hdr, unmap_len) == 48, "executor.S HDR_UNMAP_LEN");

static struct batch_hdr *hdr(struct batch *b)
{
	return (struct batch_hdr *)(b->local + HDR_OFF);
}

static size_t desc_off(int max)
{
	return CODE_SIZE + max * sizeof(struct sc_entry);
}

static size_t data_off(int max)
{
	return desc_off(max) + max * SC_DESC_LEN;
}

size_t batch_area_size(int max_entries, size_t data)
{
	return (data_off(max_entries) + data + PAGE_SIZE - 1) & PAGE_MASK;
}

/* The code page: the executor, and its header behind it. */
static void init_code(struct batch *b, int max, size_t size)
{
	memcpy(b->local, executor_code_start, executor_code_end - executor_code_start);
	memset(hdr(b), 0, sizeof(struct batch_hdr));
	hdr(b)->max = max;
	hdr(b)->size = size;
}

int batch_init(struct batch *b, void *local, uint64_t remote, size_t size, int max)
{
	if (data_off(max) > size)
		return -1;
	memset(b, 0, sizeof(*b));
	b->local = local;
	b->remote = remote;
	b->size = size;
	b->max = max;
	b->table_off = CODE_SIZE;
	b->data_off = data_off(max);
	init_code(b, max, size);
	return 0;
}

int batch_init_grow(struct batch *b, uint64_t remote)
{
	memset(b, 0, sizeof(*b));
	b->local = xmalloc(CODE_SIZE);
	if (!b->local)
		return -1;
	b->remote = remote;
	b->grow = 1;
	b->data_off = CODE_SIZE;
	init_code(b, 0, 0);
	return 0;
}

/* The executor's stack pointer starts this far below the area's end: see infect.c. */
#define STACK_ROOM	64

/*
 * Growing, the table's place is known at the seal only: until then
 * batch_ret_remote() hands out the entry's index with this bit, which no
 * address of the task has, and the seal puts the address in.
 */
#define RET_PENDING	(1ULL << 63)

size_t batch_seal(struct batch *b)
{
	size_t end;
	int i;

	if (!b->grow)
		return b->size;
	b->table_off = (CODE_SIZE + b->data_used + 63) & ~63UL;
	for (i = 0; i < b->nr; i++)
		if ((b->ents[i].nr & SC_ARG0_AT) && (b->ents[i].args[0] & RET_PENDING))
			b->ents[i].args[0] = b->remote + b->table_off +
				(b->ents[i].args[0] & ~RET_PENDING) * sizeof(struct sc_entry) +
				offsetof(struct sc_entry, ret);
	end = b->table_off + b->nr * sizeof(struct sc_entry) + STACK_ROOM;
	b->size = (end + PAGE_SIZE - 1) & PAGE_MASK;
	hdr(b)->nr = b->nr;
	hdr(b)->max = b->nr;
	hdr(b)->size = b->size;
	return b->size;
}

void batch_free(struct batch *b)
{
	if (!b->grow)
		return;
	free(b->local);
	free(b->ents);
	free(b->descs);
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* Adds a vector of @len bytes, local and remote, to the @n there are. */
static int iov_add(struct iovec *l, struct iovec *r, int n, void *local, uint64_t remote,
		   size_t len)
{
	l[n].iov_base = local;
	l[n].iov_len = len;
	r[n].iov_base = (void *)remote;
	r[n].iov_len = len;
	return n + 1;
}

int batch_iov(struct batch *b, int in, struct iovec *local, struct iovec *remote)
{
	int n = 0;

	if (in)
		n = iov_add(local, remote, n, b->local, b->remote, CODE_SIZE);
	if (b->data_used)
		n = iov_add(local, remote, n, b->data, b->remote + b->data_off, b->data_used);
	if (b->nr)
		n = iov_add(local, remote, n, b->ents, b->remote + b->table_off,
			    b->nr * sizeof(struct sc_entry));
	return n;
}

void batch_set_exit(struct batch *b, int sig, uint64_t ip, uint64_t sp,
		    uint64_t addr, uint64_t len)
{
	hdr(b)->exit_sig = sig;
	hdr(b)->exit_ip = ip;
	hdr(b)->exit_sp = sp;
	hdr(b)->unmap_addr = addr;
	hdr(b)->unmap_len = len;
}

int batch_exit_sig(struct batch *b)
{
	return hdr(b)->exit_sig;
}

uint64_t batch_signalled_ip(struct batch *b)
{
	return b->remote + (executor_signalled - executor_code_start);
}

int batch_attach(struct batch *b, void *local, uint64_t remote)
{
	struct batch_hdr *h = (struct batch_hdr *)((uint8_t *)local + HDR_OFF);

	if (h->max <= 0 || h->nr < 0 || h->nr > h->max || h->size < data_off(h->max))
		return -1;
	memset(b, 0, sizeof(*b));
	b->local = local;
	b->remote = remote;
	b->size = h->size;
	b->nr = h->nr;
	b->max = h->max;
	b->table_off = CODE_SIZE;
	b->data_off = data_off(h->max);
	return 0;
}

size_t batch_header_size(void)
{
	return HDR_OFF + sizeof(struct batch_hdr);
}

size_t batch_table_size(int max_entries)
{
	return data_off(max_entries);
}

/* Growing: room for one more entry. */
static int grow_table(struct batch *b)
{
	int max = b->max ? 2 * b->max : 64;
	struct sc_entry *e = xrealloc(b->ents, max * sizeof(*e));
	char *d;

	if (!e)
		return -1;
	b->ents = e;
	d = xrealloc(b->descs, (size_t)max * SC_DESC_LEN);
	if (!d)
		return -1;
	b->descs = d;
	b->max = max;
	return 0;
}

static char *desc_at(struct batch *b, int idx)
{
	if (b->grow)
		return b->descs + (size_t)idx * SC_DESC_LEN;
	return (char *)b->local + desc_off(b->max) + (size_t)idx * SC_DESC_LEN;
}

int batch_add(struct batch *b, const char *desc, long nr, const long args[6])
{
	struct sc_entry *e;

	if (b->nr == b->max && (!b->grow || grow_table(b))) {
		pr_err("Syscall batch is full (%d entries) at '%s'", b->max, desc);
		return -1;
	}
	e = batch_entry(b, b->nr);
	e->nr = nr;
	memcpy(e->args, args, sizeof(e->args));
	e->ret = -1;
	strncpy(desc_at(b, b->nr), desc, SC_DESC_LEN - 1);
	desc_at(b, b->nr)[SC_DESC_LEN - 1] = '\0';
	hdr(b)->nr = b->nr + 1;
	return b->nr++;
}

/* Growing: room for @len more bytes of data. */
static int grow_data(struct batch *b, size_t len)
{
	size_t max = b->data_max ? b->data_max : 4096;
	uint8_t *d;

	while (max < b->data_used + len)
		max *= 2;
	if (max == b->data_max)
		return 0;
	d = xrealloc(b->data, max);
	if (!d)
		return -1;
	b->data = d;
	b->data_max = max;
	return 0;
}

uint64_t batch_put(struct batch *b, const void *data, size_t len)
{
	size_t off = b->data_off + b->data_used;
	uint8_t *to;

	if (b->grow ? grow_data(b, (len + 15) & ~15UL) : off + len > b->size) {
		pr_err("Syscall batch data area is full (%zu bytes)", b->size);
		return 0;
	}
	to = b->grow ? b->data + b->data_used : b->local + off;
	if (data)
		memcpy(to, data, len);
	else
		memset(to, 0, len);
	b->data_used += (len + 15) & ~15UL;
	return b->remote + off;
}

void *batch_local(struct batch *b, uint64_t remote)
{
	if (b->grow)
		return b->data + (remote - b->remote - b->data_off);
	return b->local + (remote - b->remote);
}

struct sc_entry *batch_entry(struct batch *b, int idx)
{
	if (b->grow)
		return b->ents + idx;
	return (struct sc_entry *)(b->local + b->table_off) + idx;
}

const char *batch_desc(struct batch *b, int idx)
{
	char *d = desc_at(b, idx);

	d[SC_DESC_LEN - 1] = '\0';
	return d;
}

uint64_t batch_entries_remote(struct batch *b)
{
	return b->remote + b->table_off;
}

uint64_t batch_ret_remote(struct batch *b, int idx)
{
	if (b->grow && !b->size)
		return RET_PENDING | idx;
	return batch_entries_remote(b) + idx * sizeof(struct sc_entry) +
	       offsetof(struct sc_entry, ret);
}

uint64_t batch_code_remote(struct batch *b)
{
	return b->remote;
}

uint64_t batch_syscall_insn(struct batch *b)
{
	return b->remote + (executor_syscall_insn - executor_code_start);
}
