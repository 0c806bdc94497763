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

static size_t ent_off(void)
{
	return CODE_SIZE;
}

static size_t desc_off(int max)
{
	return ent_off() + max * sizeof(struct sc_entry);
}

static size_t data_off(int max)
{
	return desc_off(max) + max * SC_DESC_LEN;
}

size_t batch_area_size(int max_entries, size_t data)
{
	return (data_off(max_entries) + data + PAGE_SIZE - 1) & PAGE_MASK;
}

int batch_init(struct batch *b, void *local, uint64_t remote, size_t size, int max)
{
	if (data_off(max) > size)
		return -1;
	b->local = local;
	b->remote = remote;
	b->size = size;
	b->nr = 0;
	b->max = max;
	b->data_used = 0;
	memcpy(b->local, executor_code_start, executor_code_end - executor_code_start);
	memset(hdr(b), 0, sizeof(struct batch_hdr));
	hdr(b)->nr = 0;
	hdr(b)->max = max;
	hdr(b)->size = size;
	return 0;
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
	b->local = local;
	b->remote = remote;
	b->size = h->size;
	b->nr = h->nr;
	b->max = h->max;
	b->data_used = 0;
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

int batch_add(struct batch *b, const char *desc, long nr, const long args[6])
{
	struct sc_entry *e;

	if (b->nr == b->max) {
		pr_err("Syscall batch is full (%d entries) at '%s'", b->max, desc);
		return -1;
	}
	e = batch_entry(b, b->nr);
	e->nr = nr;
	memcpy(e->args, args, sizeof(e->args));
	e->ret = -1;
	strncpy((char *)b->local + desc_off(b->max) + b->nr * SC_DESC_LEN, desc,
		SC_DESC_LEN - 1);
	hdr(b)->nr = b->nr + 1;
	return b->nr++;
}

uint64_t batch_put(struct batch *b, const void *data, size_t len)
{
	size_t off = data_off(b->max) + b->data_used;

	if (off + len > b->size) {
		pr_err("Syscall batch data area is full (%zu bytes)", b->size);
		return 0;
	}
	if (data)
		memcpy(b->local + off, data, len);
	else
		memset(b->local + off, 0, len);
	b->data_used += (len + 15) & ~15UL;
	return b->remote + off;
}

void *batch_local(struct batch *b, uint64_t remote)
{
	return b->local + (remote - b->remote);
}

struct sc_entry *batch_entry(struct batch *b, int idx)
{
	return (struct sc_entry *)(b->local + ent_off()) + idx;
}

const char *batch_desc(struct batch *b, int idx)
{
	char *d = (char *)b->local + desc_off(b->max) + idx * SC_DESC_LEN;

	d[SC_DESC_LEN - 1] = '\0';
	return d;
}

uint64_t batch_entries_remote(struct batch *b)
{
	return b->remote + ent_off();
}

uint64_t batch_code_remote(struct batch *b)
{
	return b->remote;
}

uint64_t batch_syscall_insn(struct batch *b)
{
	return b->remote + (executor_syscall_insn - executor_code_start);
}
