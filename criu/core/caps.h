/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_CAPS_H
#define CRIU_CORE_CAPS_H

#include <stddef.h>
#include <stdint.h>

/* criu's own capability sets (capget), as 64-bit masks; 0 if unreadable. */
uint64_t caps_effective(void);
uint64_t caps_permitted(void);
/* Whether criu has capability @cap (CAP_*) effective. */
int cap_have(int cap);
/* "CAP_SYS_ADMIN, CAP_SYS_PTRACE" for @mask, in @buf (cut to fit). */
const char *cap_names(uint64_t mask, char *buf, size_t len);

#endif
