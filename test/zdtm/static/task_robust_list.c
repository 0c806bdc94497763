// SPDX-License-Identifier: GPL-2.0-only
/*
 * The robust futex list head registered with set_robust_list() is kept.
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

static struct robust_list_head head;

int main(int argc, char **argv)
{
	struct robust_list_head *h;
	size_t len;

	test_init(argc, argv);
	head.list.next = &head.list;
	head.futex_offset = 24;
	head.list_op_pending = NULL;
	if (syscall(SYS_set_robust_list, &head, sizeof(head)))
		fail_errno("set_robust_list");

	test_ready();
	test_waitsig();

	if (syscall(SYS_get_robust_list, 0, &h, &len))
		fail_errno("get_robust_list");
	if (h != &head || len != sizeof(head))
		fail("robust list is %p/%zu, was %p/%zu", h, len, &head, sizeof(head));
	if (head.list.next != &head.list || head.futex_offset != 24)
		fail("robust list head content changed");
	pass();
}
