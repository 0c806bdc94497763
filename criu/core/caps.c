// SPDX-License-Identifier: GPL-2.0
/* criu's own capabilities, and their names for what it tells the user. */
#include <linux/capability.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/caps.h"

/* The kernel's numbering (include/uapi/linux/capability.h). */
static const char *const names[] = {
	"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL",
	"SETGID", "SETUID", "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE",
	"NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
	"SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
	"SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME",
	"SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL",
	"SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM",
	"BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
};

static int read_caps(uint64_t *eff, uint64_t *prm)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capget, &h, d))
		return -1;
	*eff = d[0].effective | (uint64_t)d[1].effective << 32;
	*prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	return 0;
}

uint64_t caps_effective(void)
{
	uint64_t eff = 0, prm;

	read_caps(&eff, &prm);
	return eff;
}

uint64_t caps_permitted(void)
{
	uint64_t eff, prm = 0;

	read_caps(&eff, &prm);
	return prm;
}

int cap_have(int cap)
{
	return cap >= 0 && cap < 64 && (caps_effective() >> cap & 1);
}

const char *cap_names(uint64_t mask, char *buf, size_t len)
{
	size_t off = 0;
	int cap, n;

	buf[0] = '\0';
	for (cap = 0; cap < 64 && off < len; cap++) {
		if (!(mask >> cap & 1))
			continue;
		if (cap < (int)(sizeof(names) / sizeof(names[0])))
			n = snprintf(buf + off, len - off, "%sCAP_%s", off ? ", " : "", names[cap]);
		else
			n = snprintf(buf + off, len - off, "%scapability %d", off ? ", " : "", cap);
		off += n > 0 ? n : 0;
	}
	return buf;
}
