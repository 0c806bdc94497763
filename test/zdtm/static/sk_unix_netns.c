// SPDX-License-Identifier: GPL-2.0-only
/* sk_unix_ns in a network namespace of its own only: no mount namespace. */
#define SK_UNIX_NET_ONLY 1
#include "sk_unix_ns.c"
