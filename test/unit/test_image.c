// SPDX-License-Identifier: GPL-2.0
/*
 * Image codec tests: every image type written with img_write and read back
 * with img_read, and every way an image file can be broken (truncated, a
 * wrong magic, a length that disagrees with the file, garbage in the
 * message) must make img_read fail with -1 and a logged reason, never crash
 * and never return a half-decoded message.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "image/image.h"
#include "image/sums.h"
#include "image/pagestore.h"

#include "cpu.pb-c.h"
#include "creds.pb-c.h"
#include "fdinfo.pb-c.h"
#include "fs.pb-c.h"
#include "inventory.pb-c.h"
#include "itimer.pb-c.h"
#include "mm.pb-c.h"
#include "pagemap.pb-c.h"
#include "posix_timer.pb-c.h"
#include "pstree.pb-c.h"
#include "regs.pb-c.h"
#include "rlimit.pb-c.h"
#include "sched.pb-c.h"
#include "sigact.pb-c.h"
#include "signal.pb-c.h"
#include "task.pb-c.h"
#include "timens.pb-c.h"
#include "uts.pb-c.h"
#include "seccomp.pb-c.h"
#include "netns.pb-c.h"
#include "mnt.pb-c.h"
#include "tmpfs.pb-c.h"
#include "shmem.pb-c.h"
#include "sysvipc.pb-c.h"

#include "unit.h"

#define ID	4242	/* the "pid" in per-task image names */
#define ARRAY_SIZE_(a)	(sizeof(a) / sizeof((a)[0]))

static char tmpdir[] = "/tmp/criu-unit-image-XXXXXX";
static int imgdir = -1;
static int logfd = -1;

/* ------------------------------------------------------------ helpers */

static void cleanup(void)
{
	struct dirent *de;
	DIR *d;

	if (imgdir < 0)
		return;
	d = fdopendir(dup(imgdir));
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (unlinkat(imgdir, de->d_name, 0) && errno == EISDIR)
			unlinkat(imgdir, de->d_name, AT_REMOVEDIR);
	}
	if (d)
		closedir(d);
	close(imgdir);
	rmdir(tmpdir);
}

/* Where the log ends now; log_since() returns what was logged after it. */
static off_t log_mark(void)
{
	return lseek(logfd, 0, SEEK_END);
}

static const char *log_since(off_t mark)
{
	static char buf[4096];
	ssize_t n;

	n = pread(logfd, buf, sizeof(buf) - 1, mark);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static int write_raw(const char *name, const void *buf, size_t len)
{
	int fd, ret = 0;

	/*
	 * A new file each time: ext4 flushes a file truncated and written
	 * again at close (auto_da_alloc), which made this test wait on disk.
	 */
	unlinkat(imgdir, name, 0);
	fd = openat(imgdir, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -1;
	if (len && write(fd, buf, len) != (ssize_t)len)
		ret = -1;
	close(fd);
	return ret;
}

/* The image file an img_write of @msg produces: header + packed message. */
static uint8_t *frame(enum img_type t, const ProtobufCMessage *msg, size_t *len)
{
	size_t plen = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf = malloc(plen + IMG_HDR_SIZE);

	protobuf_c_message_pack(msg, buf + IMG_HDR_SIZE);
	img_frame_header(t, buf + IMG_HDR_SIZE, plen, buf);
	*len = plen + IMG_HDR_SIZE;
	return buf;
}

/*
 * A frame of the @len - IMG_HDR_SIZE bytes after the header of @buf, its
 * length and checksum made right: what is tested is the decoder behind.
 */
static void reframe(enum img_type t, uint8_t *buf, size_t len)
{
	img_frame_header(t, buf + IMG_HDR_SIZE, len - IMG_HDR_SIZE, buf);
}

static uint8_t *pack(const ProtobufCMessage *msg, size_t *len)
{
	uint8_t *buf;

	*len = protobuf_c_message_get_packed_size(msg);
	buf = malloc(*len ? *len : 1);
	protobuf_c_message_pack(msg, buf);
	return buf;
}

/*
 * img_read of a file holding @len bytes of @buf must fail: -1, *msg left
 * alone or NULL (never a half-decoded message), and an error naming the
 * image in the log.
 */
static void expect_read_fails(enum img_type t, const void *buf, size_t len,
			      const char *what)
{
	void *sentinel = (void *)&sentinel, *msg = sentinel;
	char name[64];
	off_t mark;
	int ret;

	img_name(t, ID, name, sizeof(name));
	if (write_raw(name, buf, len)) {
		expect(0, "can't write %s: %m", name);
		return;
	}
	mark = log_mark();
	ret = img_read(imgdir, t, ID, &msg, 0);
	expect(ret == -1, "%s: %s (%zu bytes): img_read returned %d", name, what, len, ret);
	expect(msg == sentinel || !msg, "%s: %s: img_read left *msg = %p on failure",
	       name, what, msg);
	expect(strstr(log_since(mark), name), "%s: %s: no error naming the image logged "
	       "(log: '%s')", name, what, log_since(mark));
	if (ret == 1)
		img_free(t, msg);
}

/* The same on img_unpack with an exactly sized heap copy (for sanitizers). */
static void expect_unpack_fails(enum img_type t, const void *buf, size_t len,
				const char *what)
{
	uint8_t *copy = malloc(len ? len : 1);
	off_t mark = log_mark();
	void *msg;

	memcpy(copy, buf, len);
	msg = img_unpack(t, copy, len, "unpack-test");
	expect(!msg, "type %d: %s (%zu bytes): img_unpack decoded it", t, what, len);
	expect(strstr(log_since(mark), "unpack-test"),
	       "type %d: %s (%zu bytes): nothing logged", t, what, len);
	img_free(t, msg);
	free(copy);
}

/* ---------------------------------------------------- generic messages */

/*
 * The message of each framed image type, from the registry criu is built
 * from (images/kinds.def): a new kind is round-tripped here with a
 * generic sample unless it gets a hand-made one.
 */
#define IMAGE(name, NAME, nr, file, magic, message) \
	extern const ProtobufCMessageDescriptor message##__descriptor;
#define KIND IMAGE
#include "kinds.def"

static const struct {
	enum img_type t;
	const ProtobufCMessageDescriptor *d;
} type_descs[] = {
#define IMAGE(name, NAME, nr, file, magic, message) { IMG_##NAME, &message##__descriptor },
#define KIND IMAGE
#include "kinds.def"
};

static const ProtobufCMessageDescriptor *desc_of(enum img_type t)
{
	size_t i;

	for (i = 0; i < sizeof(type_descs) / sizeof(type_descs[0]); i++)
		if (type_descs[i].t == t)
			return type_descs[i].d;
	return NULL;
}

static size_t elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	default:
		return 4;
	}
}

static ProtobufCMessage *fill_message(const ProtobufCMessageDescriptor *d,
				      unsigned int seed, int depth);

/* A value for one field, different for every @seed; big ones where they fit. */
static void fill_value(const ProtobufCFieldDescriptor *f, void *p, unsigned int seed,
		       int depth)
{
	const ProtobufCEnumDescriptor *e;
	ProtobufCBinaryData *b;
	char str[64];
	size_t i;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
		*(int32_t *)p = -(int32_t)(seed * 7919 % 1000000) - 1;
		break;
	case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
		*(uint32_t *)p = 0x80000000u | seed;
		break;
	case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
		*(int64_t *)p = -(int64_t)seed * 1000000007LL - 1;
		break;
	case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
		*(uint64_t *)p = 0x8000000000000000ULL | ((uint64_t)seed << 20) | seed;
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		*(float *)p = seed + 0.5f;
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		*(double *)p = seed + 0.25;
		break;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)p = 1;
		break;
	case PROTOBUF_C_TYPE_ENUM:
		e = f->descriptor;
		*(int *)p = e->values[seed % e->n_values].value;
		break;
	case PROTOBUF_C_TYPE_STRING:
		snprintf(str, sizeof(str), "/%s (%u)", f->name, seed);
		*(char **)p = strdup(str);
		break;
	case PROTOBUF_C_TYPE_BYTES:
		b = p;
		b->len = 16 + seed % 200;
		b->data = malloc(b->len);
		for (i = 0; i < b->len; i++)
			b->data[i] = (uint8_t)(seed + i * 31);
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		*(ProtobufCMessage **)p = fill_message(f->descriptor, seed * 3 + 1, depth + 1);
		break;
	}
}

/*
 * A message of @d with every field set (repeated ones twice), allocated the
 * way protobuf_c_message_free_unpacked(m, NULL) frees it.
 */
static ProtobufCMessage *fill_message(const ProtobufCMessageDescriptor *d,
				      unsigned int seed, int depth)
{
	ProtobufCMessage *m = calloc(1, d->sizeof_message);
	const ProtobufCFieldDescriptor *f;
	char *base = (char *)m, *arr;
	size_t n, j, es;
	unsigned int i;

	d->message_init(m);
	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = depth < 3 ? 2 : 0;
			es = elem_size(f->type);
			*(size_t *)(base + f->quantifier_offset) = n;
			arr = n ? calloc(n, es) : NULL;
			for (j = 0; j < n; j++)
				fill_value(f, arr + j * es, seed + i * 17 + j, depth);
			*(void **)(base + f->offset) = arr;
			continue;
		}
		if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_STRING &&
		    f->type != PROTOBUF_C_TYPE_MESSAGE)
			*(protobuf_c_boolean *)(base + f->quantifier_offset) = 1;
		fill_value(f, base + f->offset, seed + i * 17, depth);
	}
	return m;
}

/* ------------------------------------------------------------ samples */

static InventoryEntry inventory = INVENTORY_ENTRY__INIT;

static PstreeTask pstree_tasks[2] = { PSTREE_TASK__INIT, PSTREE_TASK__INIT };
static PstreeTask *pstree_task_ptrs[2] = { &pstree_tasks[0], &pstree_tasks[1] };
static uint32_t threads0[] = { 100, 101, 102 };
static uint32_t threads1[] = { 200 };
static PstreeEntry pstree = PSTREE_ENTRY__INIT;

static TimensEntry timens = TIMENS_ENTRY__INIT;
static TimensNs timens_ns[2] = { TIMENS_NS__INIT, TIMENS_NS__INIT };
static TimensNs *timens_ns_ptrs[2] = { &timens_ns[0], &timens_ns[1] };
static TimensTask timens_task = TIMENS_TASK__INIT;
static TimensTask *timens_task_ptr = &timens_task;
static UtsEntry uts = UTS_ENTRY__INIT;
/* two filters, the second on top of the first; a task with a strict thread */
static uint8_t sc_prog[16] = { 0x20, 0, 0, 0, 4, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0xff, 0x7f };
static SeccompFilter sc_filters[2] = { SECCOMP_FILTER__INIT, SECCOMP_FILTER__INIT };
static SeccompFilter *sc_filter_ptrs[2] = { &sc_filters[0], &sc_filters[1] };
static SeccompEntry sc = SECCOMP_ENTRY__INIT;
static SeccompThread sc_threads[2] = { SECCOMP_THREAD__INIT, SECCOMP_THREAD__INIT };
static SeccompThread *sc_thread_ptrs[2] = { &sc_threads[0], &sc_threads[1] };
static SeccompTaskEntry sc_task = SECCOMP_TASK_ENTRY__INIT;
/* a container's root and a tmpfs of it with a file, a bind of a file of it */
static MountEntry mnts[3] = { MOUNT_ENTRY__INIT, MOUNT_ENTRY__INIT, MOUNT_ENTRY__INIT };
static MountEntry *mnt_ptrs[3] = { &mnts[0], &mnts[1], &mnts[2] };
static MntnsEntry mntns = MNTNS_ENTRY__INIT;
static TmpfsExtent tmpfs_ext = TMPFS_EXTENT__INIT;
static TmpfsExtent *tmpfs_ext_ptr = &tmpfs_ext;
static TmpfsXattr tmpfs_xattr = TMPFS_XATTR__INIT;
static TmpfsXattr *tmpfs_xattr_ptr = &tmpfs_xattr;
static TmpfsNode tmpfs_nodes[3] = { TMPFS_NODE__INIT, TMPFS_NODE__INIT, TMPFS_NODE__INIT };
static TmpfsNode *tmpfs_node_ptrs[3] = { &tmpfs_nodes[0], &tmpfs_nodes[1], &tmpfs_nodes[2] };
static TmpfsEntry tmpfs = TMPFS_ENTRY__INIT;

static UserRegsX86 gpregs = USER_REGS_X86__INIT;
static uint8_t xstate[1088];
static RegsEntry regs = REGS_ENTRY__INIT;

static VmaEntry vmas[4] = { VMA_ENTRY__INIT, VMA_ENTRY__INIT, VMA_ENTRY__INIT,
			    VMA_ENTRY__INIT };
static VmaEntry *vma_ptrs[4] = { &vmas[0], &vmas[1], &vmas[2], &vmas[3] };
static uint64_t auxv[] = { 33, 0x7ffd1000, 6, 4096, 0, 0 };
static MmEntry mm = MM_ENTRY__INIT;

static PagemapRun runs[3] = { PAGEMAP_RUN__INIT, PAGEMAP_RUN__INIT, PAGEMAP_RUN__INIT };
static PagemapRun *run_ptrs[3] = { &runs[0], &runs[1], &runs[2] };
static PagemapEntry pagemap = PAGEMAP_ENTRY__INIT;

static SigactionEntry acts[2] = { SIGACTION_ENTRY__INIT, SIGACTION_ENTRY__INIT };
static SigactionEntry *act_ptrs[2] = { &acts[0], &acts[1] };
static SigactEntry sigact = SIGACT_ENTRY__INIT;

static uint8_t siginfo_bytes[2][128];
static SiginfoEntry siginfos[2] = { SIGINFO_ENTRY__INIT, SIGINFO_ENTRY__INIT };
static SiginfoEntry *pending_ptrs[1] = { &siginfos[0] };
static SiginfoEntry *shared_ptrs[1] = { &siginfos[1] };
static SigaltstackEntry altstack = SIGALTSTACK_ENTRY__INIT;
static ThreadSignalEntry tsig = THREAD_SIGNAL_ENTRY__INIT;
static ThreadSignalEntry *tsig_ptrs[1] = { &tsig };
static SignalEntry signal_img = SIGNAL_ENTRY__INIT;

static ItimerVal itv[3] = { ITIMER_VAL__INIT, ITIMER_VAL__INIT, ITIMER_VAL__INIT };
static ItimerEntry itimer = ITIMER_ENTRY__INIT;

static RlimitOne rlims[3] = { RLIMIT_ONE__INIT, RLIMIT_ONE__INIT, RLIMIT_ONE__INIT };
static RlimitOne *rlim_ptrs[3] = { &rlims[0], &rlims[1], &rlims[2] };
static RlimitEntry rlimit = RLIMIT_ENTRY__INIT;

static SchedThread sched_threads[1] = { SCHED_THREAD__INIT };
static SchedThread *sched_ptrs[1] = { &sched_threads[0] };
static SchedEntry sched = SCHED_ENTRY__INIT;

static uint32_t groups[] = { 4, 24, 27, 65534 };
static CredsEntry creds = CREDS_ENTRY__INIT;

static FsEntry fs = FS_ENTRY__INIT;

static RseqEntry rseq = RSEQ_ENTRY__INIT;
static TaskThread task_threads[2] = { TASK_THREAD__INIT, TASK_THREAD__INIT };
static TaskThread *task_thread_ptrs[2] = { &task_threads[0], &task_threads[1] };
static TaskEntry task = TASK_ENTRY__INIT;

static FileDesc files[2] = { FILE_DESC__INIT, FILE_DESC__INIT };
static FileDesc *file_ptrs[2] = { &files[0], &files[1] };
static FdEntry fds[3] = { FD_ENTRY__INIT, FD_ENTRY__INIT, FD_ENTRY__INIT };
static FdEntry *fd_ptrs[3] = { &fds[0], &fds[1], &fds[2] };
static FdinfoEntry fdinfo = FDINFO_ENTRY__INIT;
static FilesEntry filesimg = FILES_ENTRY__INIT;

/* One sample message per framed image type, indexed by enum img_type. */
static ProtobufCMessage *samples[IMG_NR];

static void build_samples(void)
{
	uint64_t *r = &gpregs.r15;
	size_t i;

	inventory.fmt_version = IMG_FMT_VERSION;
	inventory.root_pid = ID;
	inventory.criu_version = "0.1.0-test";
	inventory.has_dump_realtime_ns = 1;
	inventory.dump_realtime_ns = 1732240000123456789ULL;
	inventory.has_page_size = 1;
	inventory.page_size = 4096;
	samples[IMG_INVENTORY] = &inventory.base;

	pstree_tasks[0].pid = 100;
	pstree_tasks[0].ppid = 1;
	pstree_tasks[0].pgid = 100;
	pstree_tasks[0].sid = 100;
	pstree_tasks[0].n_threads = 3;
	pstree_tasks[0].threads = threads0;
	pstree_tasks[1].pid = 200;
	pstree_tasks[1].ppid = 100;
	pstree_tasks[1].pgid = 100;
	pstree_tasks[1].sid = 100;
	pstree_tasks[1].n_threads = 1;
	pstree_tasks[1].threads = threads1;
	pstree.n_tasks = 2;
	pstree.tasks = pstree_task_ptrs;
	samples[IMG_PSTREE] = &pstree.base;

	timens.monotonic_ns = 123456789012LL;
	timens.boottime_ns = 223456789012LL;
	timens.has_host_monotonic_ns = 1;
	timens.host_monotonic_ns = -5;		/* negative int64: 10-byte varint */
	timens.has_realtime_ns = 1;
	timens.realtime_ns = INT64_MIN;
	/* a task in namespace 1 that made 2 for its children */
	timens_ns[0].id = 1;
	timens_ns[0].monotonic_ns = timens.monotonic_ns;
	timens_ns[0].boottime_ns = timens.boottime_ns;
	timens_ns[1].id = 2;
	timens_ns[1].monotonic_ns = 864000LL * 1000000000LL;
	timens_ns[1].boottime_ns = 86400000LL * 1000000000LL;
	timens_ns[1].has_boottime_offset_ns = 1;
	timens_ns[1].boottime_offset_ns = -1;
	timens.n_nss = 2;
	timens.nss = timens_ns_ptrs;
	timens_task.pid = 1;
	timens_task.ns = 1;
	timens_task.ns_for_children = 2;
	timens.n_tasks = 1;
	timens.tasks = &timens_task_ptr;
	samples[IMG_TIMENS] = &timens.base;

	uts.hostname = "zdtm-host";
	uts.domainname = "";
	samples[IMG_UTS] = &uts.base;

	sc_filters[0].prog.data = sc_prog;
	sc_filters[0].prog.len = sizeof(sc_prog);
	sc_filters[1].prog = sc_filters[0].prog;
	sc_filters[1].has_prev = sc_filters[1].has_flags = 1;
	sc_filters[1].prev = 1;
	sc_filters[1].flags = 2;	/* SECCOMP_FILTER_FLAG_LOG */
	sc.n_filters = 2;
	sc.filters = sc_filter_ptrs;
	samples[IMG_SECCOMP] = &sc.base;
	sc_threads[0].tid = ID;
	sc_threads[0].mode = 2;
	sc_threads[0].has_filter = 1;
	sc_threads[0].filter = 2;
	sc_threads[1].tid = ID + 1;
	sc_threads[1].mode = 1;
	sc_task.n_threads = 2;
	sc_task.threads = sc_thread_ptrs;
	samples[IMG_SECCOMP_TASK] = &sc_task.base;

	mnts[0].id = 64;
	mnts[0].kind = MOUNT_KIND__MNT_ROOT;
	mnts[0].mountpoint = "/";
	mnts[0].root = "/var/lib/ctr/rootfs";
	mnts[0].fstype = "ext4";
	mnts[0].source = "/dev/vda";
	mnts[0].has_master = mnts[0].has_master_outside = 1;
	mnts[0].master = 1;
	mnts[0].master_outside = 1;
	mnts[1].id = 66;
	mnts[1].parent = 64;
	mnts[1].kind = MOUNT_KIND__MNT_NEW;
	mnts[1].mountpoint = "/dev";
	mnts[1].root = "/";
	mnts[1].fstype = "tmpfs";
	mnts[1].source = "tmpfs";
	mnts[1].attrs = 0x2;		/* nosuid */
	mnts[1].options = "size=65536k,mode=755";
	mnts[1].has_contents = mnts[1].has_sb_ro = mnts[1].has_shared = 1;
	mnts[1].contents = 1;
	mnts[1].shared = 7;
	mnts[2].id = 44;
	mnts[2].parent = 64;
	mnts[2].kind = MOUNT_KIND__MNT_BIND;
	mnts[2].mountpoint = "/proc/keys";
	mnts[2].root = "/null";
	mnts[2].fstype = "tmpfs";
	mnts[2].source = "tmpfs";
	mnts[2].has_bind_of = mnts[2].has_unbindable = 1;
	mnts[2].bind_of = 66;
	mnts[2].unbindable = 1;
	mntns.ns_id = 4026532177ULL;
	mntns.maker = 1;
	mntns.n_mounts = 3;
	mntns.mounts = mnt_ptrs;
	samples[IMG_MNTNS] = &mntns.base;

	tmpfs_nodes[0].path = "";
	tmpfs_nodes[0].mode = 040755;
	tmpfs_nodes[1].path = "null";
	tmpfs_nodes[1].mode = 020666;
	tmpfs_nodes[1].has_rdev = 1;
	tmpfs_nodes[1].rdev = 0x103;
	tmpfs_nodes[2].path = "shm/count";
	tmpfs_nodes[2].mode = 0100644;
	tmpfs_nodes[2].uid = tmpfs_nodes[2].gid = 1000;
	tmpfs_nodes[2].atime_ns = 1795315050442912546ULL;
	tmpfs_nodes[2].mtime_ns = 1795315054495318933ULL;
	tmpfs_nodes[2].has_size = 1;
	tmpfs_nodes[2].size = 1 << 20;
	tmpfs_ext.off = 4096;
	tmpfs_ext.len = 8192;
	tmpfs_ext.at = 12288;
	tmpfs_nodes[2].n_data = 1;
	tmpfs_nodes[2].data = &tmpfs_ext_ptr;
	tmpfs_xattr.name = "user.mime";
	tmpfs_xattr.value.data = (uint8_t *)"text/plain";
	tmpfs_xattr.value.len = 10;
	tmpfs_nodes[2].n_xattrs = 1;
	tmpfs_nodes[2].xattrs = &tmpfs_xattr_ptr;
	tmpfs.n_nodes = 3;
	tmpfs.nodes = tmpfs_node_ptrs;
	samples[IMG_TMPFS] = &tmpfs.base;

	/* 27 distinct register values, the high ones needing 10-byte varints */
	for (i = 0; i < 27; i++)
		r[i] = (i & 1) ? 0xffffffff00000000ULL + i : i * 0x1000;
	for (i = 0; i < sizeof(xstate); i++)
		xstate[i] = (uint8_t)(i * 7 + 3);
	regs.tid = ID;
	regs.gpregs = &gpregs;
	regs.has_xstate = 1;
	regs.xstate.len = sizeof(xstate);
	regs.xstate.data = xstate;
	regs.has_xfeatures = 1;
	regs.xfeatures = 0x2e7;
	regs.has_syscall_interrupted = 1;
	regs.syscall_interrupted = 1;
	samples[IMG_REGS] = &regs.base;

	vmas[0].start = 0x555555554000ULL;
	vmas[0].end = 0x555555556000ULL;
	vmas[0].prot = 5;
	vmas[0].flags = 2;
	vmas[0].kind = VMA_KIND__VMA_FILE_PRIVATE;
	vmas[0].has_pgoff = 1;
	vmas[0].pgoff = 0x2000;
	vmas[0].path = "/usr/bin/sleep with space";
	vmas[0].has_dev = 1;
	vmas[0].dev = 0xfe00;
	vmas[0].has_ino = 1;
	vmas[0].ino = 247026;
	vmas[0].has_file_size = 1;
	vmas[0].file_size = 43560;
	vmas[0].has_file_mtime_ns = 1;
	vmas[0].file_mtime_ns = -1;		/* before 1970: negative int64 */
	vmas[0].has_open_flags = 1;
	vmas[0].open_flags = 0;
	vmas[1].start = 0x555555557000ULL;
	vmas[1].end = 0x555555578000ULL;
	vmas[1].prot = 3;
	vmas[1].flags = 0x22;
	vmas[1].kind = VMA_KIND__VMA_ANON_PRIVATE;
	vmas[1].has_madv = 1;
	vmas[1].madv = 0x10;
	vmas[2].start = 0x7ffff7fc1000ULL;
	vmas[2].end = 0x7ffff7fc3000ULL;
	vmas[2].prot = 5;
	vmas[2].flags = 2;
	vmas[2].kind = VMA_KIND__VMA_VDSO;
	vmas[3].start = 0x7ffffffde000ULL;
	vmas[3].end = 0x7ffffffff000ULL;
	vmas[3].prot = 3;
	vmas[3].flags = 0x122;
	vmas[3].kind = VMA_KIND__VMA_ANON_PRIVATE;
	mm.start_code = 0x555555554000ULL;
	mm.end_code = 0x555555555000ULL;
	mm.start_data = 0x555555556000ULL;
	mm.end_data = 0x555555557000ULL;
	mm.start_brk = 0x555555557000ULL;
	mm.brk = 0x555555578000ULL;
	mm.start_stack = 0x7fffffffe000ULL;
	mm.arg_start = 0x7fffffffe100ULL;
	mm.arg_end = 0x7fffffffe200ULL;
	mm.env_start = 0x7fffffffe200ULL;
	mm.env_end = 0x7fffffffefe0ULL;
	mm.n_auxv = sizeof(auxv) / sizeof(auxv[0]);
	mm.auxv = auxv;
	mm.exe_path = "/usr/bin/sleep";
	mm.n_vmas = 4;
	mm.vmas = vma_ptrs;
	mm.has_dumpable = 1;
	mm.dumpable = 1;
	mm.has_vdso_hash = 1;
	mm.vdso_hash = 0xcbf29ce484222325ULL;
	samples[IMG_MM] = &mm.base;

	runs[0].vaddr = 0x555555557000ULL;
	runs[0].nr_pages = 3;
	runs[1].vaddr = 0x55555555c000ULL;
	runs[1].nr_pages = 1;
	runs[2].vaddr = 0x7fffffffd000ULL;
	runs[2].nr_pages = 2;
	pagemap.pages_size = 6 * 4096;
	pagemap.n_runs = 3;
	pagemap.runs = run_ptrs;
	samples[IMG_PAGEMAP] = &pagemap.base;

	acts[0].sig = 10;
	acts[0].handler = 0x555555555189ULL;
	acts[0].flags = 0x14000004;
	acts[0].restorer = 0x7ffff7dd5050ULL;
	acts[0].mask = 1ULL << 11;
	acts[1].sig = 13;
	acts[1].handler = 1;
	sigact.n_acts = 2;
	sigact.acts = act_ptrs;
	samples[IMG_SIGACT] = &sigact.base;

	memset(siginfo_bytes[0], 0xa5, 128);
	memset(siginfo_bytes[1], 0x5a, 128);
	siginfos[0].siginfo.len = siginfos[1].siginfo.len = 128;
	siginfos[0].siginfo.data = siginfo_bytes[0];
	siginfos[1].siginfo.data = siginfo_bytes[1];
	altstack.sp = 0x7ffff7ff0000ULL;
	altstack.flags = 0;
	altstack.size = 65536;
	tsig.tid = ID;
	tsig.blocked = 1ULL << 9;
	tsig.n_pending = 1;
	tsig.pending = pending_ptrs;
	tsig.altstack = &altstack;
	signal_img.n_threads = 1;
	signal_img.threads = tsig_ptrs;
	signal_img.n_shared_pending = 1;
	signal_img.shared_pending = shared_ptrs;
	samples[IMG_SIGNAL] = &signal_img.base;

	itv[0].interval_ns = 1000000;
	itv[0].value_ns = 999999999999ULL;
	itimer.real = &itv[0];
	itimer.virt = &itv[1];
	itimer.prof = &itv[2];
	samples[IMG_ITIMER] = &itimer.base;

	rlims[0].resource = RLIMIT_NOFILE;
	rlims[0].cur = 1024;
	rlims[0].max = 4096;
	rlims[1].resource = RLIMIT_STACK;
	rlims[1].cur = 8 << 20;
	rlims[1].max = RLIM_INFINITY;
	rlims[2].resource = RLIMIT_CORE;
	rlims[2].cur = 0;
	rlims[2].max = RLIM_INFINITY;
	rlimit.n_limits = 3;
	rlimit.limits = rlim_ptrs;
	samples[IMG_RLIMIT] = &rlimit.base;

	sched_threads[0].tid = ID;
	sched_threads[0].policy = 3;
	sched_threads[0].priority = 0;
	sched_threads[0].nice = -7;		/* negative int32 */
	sched_threads[0].has_reset_on_fork = 1;
	sched_threads[0].reset_on_fork = 1;
	sched.n_threads = 1;
	sched.threads = sched_ptrs;
	samples[IMG_SCHED] = &sched.base;

	creds.uid = 1000;
	creds.euid = 1001;
	creds.suid = 1002;
	creds.fsuid = 1003;
	creds.gid = 2000;
	creds.egid = 2001;
	creds.sgid = 2002;
	creds.fsgid = 2003;
	creds.n_groups = sizeof(groups) / sizeof(groups[0]);
	creds.groups = groups;
	creds.cap_prm = 0x1fffeffffffULL;
	creds.cap_eff = 0x1fffeffffffULL;
	creds.cap_bnd = 0x1ffffffffffULL;
	creds.securebits = 0x2f;
	creds.no_new_privs = 1;
	samples[IMG_CREDS] = &creds.base;

	fs.cwd = "/tmp/a dir/with \"quotes\"";
	fs.root = "/";
	fs.umask = 022;
	samples[IMG_FS] = &fs.base;

	rseq.ptr = 0x7ffff7d8a680ULL;
	rseq.len = 32;
	rseq.flags = 0;
	rseq.sig = 0x53053053;
	task_threads[0].tid = ID;
	task_threads[0].comm = "(a) b)";
	task_threads[0].tid_address = 0x7ffff7d8a990ULL;
	task_threads[0].rseq = &rseq;
	task_threads[1].tid = ID + 1;
	task_threads[1].comm = "";
	task.personality = 0x0040000;
	task.pdeath_sig = 9;
	task.child_subreaper = 1;
	task.n_threads = 2;
	task.threads = task_thread_ptrs;
	samples[IMG_TASK] = &task.base;

	files[0].id = 1;
	files[0].kind = FILE_KIND__FILE_CHR;
	files[0].path = "/dev/null";
	files[0].flags = O_RDWR;
	files[0].has_rdev = 1;
	files[0].rdev = (1 << 8) | 3;
	files[1].id = 2;
	files[1].kind = FILE_KIND__FILE_REG;
	files[1].path = "/tmp/log";
	files[1].flags = O_WRONLY | O_APPEND;
	files[1].pos = 1ULL << 40;
	files[1].has_size = 1;
	files[1].size = 1ULL << 40;
	fds[0].fd = 0;
	fds[0].file_id = 1;
	fds[1].fd = 1;
	fds[1].file_id = 2;
	fds[2].fd = 1000;
	fds[2].file_id = 2;
	fds[2].cloexec = 1;
	filesimg.n_files = 2;
	filesimg.files = file_ptrs;
	samples[IMG_FILES] = &filesimg.base;
	fdinfo.n_fds = 3;
	fdinfo.fds = fd_ptrs;
	samples[IMG_FDINFO] = &fdinfo.base;

	/* types without a hand-made sample get a generic one */
	for (i = 0; i < IMG_NR; i++)
		if (!samples[i] && desc_of(i))
			samples[i] = fill_message(desc_of(i), 1, 0);
}

/*
 * img_write @t's sample, check the file (0600, header, size), img_read it
 * back and check that it packs to the very same bytes. Returns the decoded
 * message for field checks, or NULL after a recorded failure.
 */
static void *roundtrip_msg(enum img_type t, const ProtobufCMessage *msg)
{
	size_t want_len, got_len;
	uint8_t *want, *got;
	uint32_t hdr[3] = { 0, 0, 0 };
	uint8_t head[IMG_HDR_SIZE];
	char name[64];
	struct stat st = { 0 };
	void *out = NULL;
	int fd, ret;

	img_name(t, ID, name, sizeof(name));
	unlinkat(imgdir, name, 0);
	if (img_write(imgdir, t, ID, msg)) {
		expect(0, "img_write of %s failed", name);
		return NULL;
	}
	want = pack(msg, &want_len);
	expect(!fstatat(imgdir, name, &st, 0), "%s: stat: %m", name);
	expect((st.st_mode & 07777) == 0600, "%s: mode %o, want 0600", name,
	       st.st_mode & 07777);
	expect(S_ISREG(st.st_mode), "%s: not a regular file", name);
	expect((size_t)st.st_size == want_len + IMG_HDR_SIZE, "%s: %zu bytes, want %zu", name,
	       (size_t)st.st_size, want_len + IMG_HDR_SIZE);
	fd = openat(imgdir, name, O_RDONLY);
	expect(fd >= 0 && read(fd, hdr, IMG_HDR_SIZE) == IMG_HDR_SIZE,
	       "%s: can't read the header", name);
	if (fd >= 0)
		close(fd);
	expect(hdr[0] == img_magic(t), "%s: magic %#x, want %#x", name, hdr[0], img_magic(t));
	expect(hdr[1] == want_len, "%s: length field %u, want %zu", name, hdr[1], want_len);
	img_frame_header(t, want, want_len, head);
	expect(!memcmp(head, hdr, IMG_HDR_SIZE), "%s: checksum %#x, want %#x", name, hdr[2],
	       ((uint32_t *)head)[2]);

	ret = img_read(imgdir, t, ID, &out, 0);
	expect(ret == 1 && out, "%s: img_read returned %d", name, ret);
	if (ret != 1) {
		free(want);
		return NULL;
	}
	got = pack(out, &got_len);
	expect(got_len == want_len && !memcmp(got, want, want_len),
	       "%s: the message read back packs differently (%zu vs %zu bytes)",
	       name, got_len, want_len);
	free(got);
	free(want);
	return out;
}

static void *roundtrip(enum img_type t)
{
	return roundtrip_msg(t, samples[t]);
}

/* -------------------------------------------------------------- tests */

static void test_names_and_magics(void)
{
	char buf[64];
	int i, j;

	expect(!strcmp(img_name(IMG_INVENTORY, 7, buf, sizeof(buf)), "inventory.img"), "%s", buf);
	expect(!strcmp(img_name(IMG_PSTREE, 7, buf, sizeof(buf)), "pstree.img"), "%s", buf);
	expect(!strcmp(img_name(IMG_MM, 7, buf, sizeof(buf)), "mm-7.img"), "%s", buf);
	expect(!strcmp(img_name(IMG_PAGEMAP, 12345, buf, sizeof(buf)), "pagemap-12345.img"),
	       "%s", buf);
	expect(!strcmp(img_name(IMG_PAGES, 12345, buf, sizeof(buf)), "pages-12345.img"), "%s", buf);
	expect(!strcmp(img_name(IMG_FDINFO, 1, buf, sizeof(buf)), "fdinfo-1.img"), "%s", buf);
	expect(img_magic(IMG_PAGES) == 0, "the raw page store has no magic");
	expect(img_magic(IMG_SHMEM_PAGES) == 0 && img_magic(IMG_SYSVIPC_PAGES) == 0,
	       "the shared memory stores have no magic");
	expect(img_magic(IMG_TMPFS_DATA) == 0, "the tmpfs data store has no magic");
	for (i = 0; i < IMG_NR; i++) {
		if (i == IMG_PAGES || i == IMG_SHMEM_PAGES || i == IMG_SYSVIPC_PAGES ||
		    i == IMG_TMPFS_DATA)
			continue;
		expect(img_magic(i) != 0, "type %d has no magic", i);
		for (j = 0; j < i; j++)
			expect(!img_magic(j) || img_magic(i) != img_magic(j),
			       "types %d and %d share magic %#x", i, j, img_magic(i));
	}
}

/*
 * Every framed image type has its message in type_descs[] and a sample
 * (a generic one at least). (The raw stores are checked by
 * test_names_and_magics.)
 */
static void test_every_type_has_sample(void)
{
	char name[64];
	int t;

	for (t = 0; t < IMG_NR; t++) {
		if (!img_magic(t))
			continue;
		img_name(t, ID, name, sizeof(name));
		expect(desc_of(t), "image type %d (%s) is not in type_descs[]", t, name);
		expect(samples[t], "image type %d (%s) has no sample", t, name);
	}
}

/* Every framed type at least round-trips to identical bytes. */
static void test_roundtrip_all_types(void)
{
	void *out;
	int t;

	for (t = 0; t < IMG_NR; t++) {
		if (!img_magic(t) || !samples[t])
			continue;	/* raw stores; a missing sample fails above */
		out = roundtrip(t);
		img_free(t, out);
	}
}

/* Every field of every message, set to values that need long encodings. */
static void test_roundtrip_every_field(void)
{
	const ProtobufCMessageDescriptor *d;
	ProtobufCMessage *msg;
	unsigned int seed;
	void *out;
	size_t i;

	for (i = 0; i < sizeof(type_descs) / sizeof(type_descs[0]); i++) {
		d = type_descs[i].d;
		for (seed = 0; seed < 3; seed++) {
			msg = fill_message(d, seed * 1000, 0);
			expect(protobuf_c_message_check(msg), "%s: the filled message is invalid",
			       d->name);
			out = roundtrip_msg(type_descs[i].t, msg);
			expect(out && protobuf_c_message_check(out), "%s: read back invalid",
			       d->name);
			img_free(type_descs[i].t, out);
			protobuf_c_message_free_unpacked(msg, NULL);
		}
	}
}

static void test_roundtrip_inventory(void)
{
	InventoryEntry *m = roundtrip(IMG_INVENTORY);

	require(m, "no message");
	expect(m->fmt_version == IMG_FMT_VERSION, "fmt_version %u", m->fmt_version);
	expect(m->root_pid == ID, "root_pid %u", m->root_pid);
	expect(m->criu_version && !strcmp(m->criu_version, "0.1.0-test"), "criu_version");
	expect(m->has_dump_realtime_ns && m->dump_realtime_ns == 1732240000123456789ULL,
	       "dump_realtime_ns %llu", (unsigned long long)m->dump_realtime_ns);
	expect(m->has_page_size && m->page_size == 4096, "page_size");
	expect(!m->has_ntasks, "ntasks was not set but reads back as set");
	img_free(IMG_INVENTORY, m);
}

static void test_roundtrip_pstree(void)
{
	PstreeEntry *m = roundtrip(IMG_PSTREE);

	require(m, "no message");
	require(m->n_tasks == 2, "%zu tasks", m->n_tasks);
	expect(m->tasks[0]->pid == 100 && m->tasks[0]->ppid == 1 &&
	       m->tasks[0]->pgid == 100 && m->tasks[0]->sid == 100, "task 0 ids");
	require(m->tasks[0]->n_threads == 3, "task 0: %zu threads", m->tasks[0]->n_threads);
	expect(!memcmp(m->tasks[0]->threads, threads0, sizeof(threads0)), "task 0 tids");
	expect(m->tasks[1]->pid == 200 && m->tasks[1]->ppid == 100, "task 1 ids");
	expect(m->tasks[1]->n_threads == 1 && m->tasks[1]->threads[0] == 200, "task 1 tids");
	img_free(IMG_PSTREE, m);
}

static void test_roundtrip_mm(void)
{
	MmEntry *m = roundtrip(IMG_MM);
	size_t i;

	require(m, "no message");
	expect(m->start_code == mm.start_code && m->end_code == mm.end_code &&
	       m->start_brk == mm.start_brk && m->brk == mm.brk &&
	       m->start_stack == mm.start_stack && m->env_end == mm.env_end, "mm fields");
	expect(m->n_auxv == mm.n_auxv && !memcmp(m->auxv, auxv, sizeof(auxv)), "auxv");
	expect(m->exe_path && !strcmp(m->exe_path, "/usr/bin/sleep"), "exe_path");
	expect(m->has_vdso_hash && m->vdso_hash == mm.vdso_hash, "vdso_hash");
	expect(m->has_dumpable && m->dumpable == 1 && !m->has_thp_disabled, "optionals");
	require(m->n_vmas == 4, "%zu vmas", m->n_vmas);
	for (i = 0; i < 4; i++) {
		VmaEntry *v = m->vmas[i], *w = &vmas[i];

		expect(v->start == w->start && v->end == w->end, "vma %zu: %#llx-%#llx", i,
		       (unsigned long long)v->start, (unsigned long long)v->end);
		expect(v->prot == w->prot && v->flags == w->flags && v->kind == w->kind,
		       "vma %zu: prot/flags/kind", i);
		expect(!!v->path == !!w->path && (!v->path || !strcmp(v->path, w->path)),
		       "vma %zu: path '%s'", i, v->path ? v->path : "(none)");
		expect(v->has_pgoff == w->has_pgoff && v->pgoff == w->pgoff, "vma %zu: pgoff", i);
		expect(v->has_madv == w->has_madv && v->madv == w->madv, "vma %zu: madv", i);
	}
	expect(m->vmas[0]->has_file_mtime_ns && m->vmas[0]->file_mtime_ns == -1,
	       "negative mtime reads back as %lld", (long long)m->vmas[0]->file_mtime_ns);
	expect(m->vmas[0]->has_open_flags && m->vmas[0]->open_flags == 0,
	       "an optional field set to 0 must stay present");
	img_free(IMG_MM, m);
}

static void test_roundtrip_pagemap(void)
{
	PagemapEntry *m = roundtrip(IMG_PAGEMAP);
	uint64_t total = 0;
	size_t i;

	require(m, "no message");
	require(m->n_runs == 3, "%zu runs", m->n_runs);
	for (i = 0; i < 3; i++) {
		expect(m->runs[i]->vaddr == runs[i].vaddr &&
		       m->runs[i]->nr_pages == runs[i].nr_pages, "run %zu", i);
		total += m->runs[i]->nr_pages * 4096ULL;
	}
	expect(m->pages_size == total, "pages_size %llu, runs sum to %llu",
	       (unsigned long long)m->pages_size, (unsigned long long)total);
	img_free(IMG_PAGEMAP, m);
}

static void test_roundtrip_regs(void)
{
	RegsEntry *m = roundtrip(IMG_REGS);

	require(m, "no message");
	expect(m->tid == ID, "tid %u", m->tid);
	require(m->gpregs, "no gpregs");
	expect(!memcmp(&m->gpregs->r15, &gpregs.r15, 27 * sizeof(uint64_t)),
	       "general registers differ (ip %#llx)", (unsigned long long)m->gpregs->ip);
	expect(m->has_xstate && m->xstate.len == sizeof(xstate) &&
	       !memcmp(m->xstate.data, xstate, sizeof(xstate)), "xstate bytes");
	expect(m->has_xfeatures && m->xfeatures == 0x2e7, "xfeatures");
	expect(m->has_syscall_interrupted && m->syscall_interrupted, "syscall_interrupted");
	img_free(IMG_REGS, m);
}

static void test_roundtrip_signal(void)
{
	SignalEntry *m = roundtrip(IMG_SIGNAL);
	ThreadSignalEntry *t;

	require(m, "no message");
	require(m->n_threads == 1 && m->n_shared_pending == 1, "counts");
	t = m->threads[0];
	expect(t->tid == ID && t->blocked == 1ULL << 9, "thread fields");
	require(t->n_pending == 1, "%zu pending", t->n_pending);
	expect(t->pending[0]->siginfo.len == 128 &&
	       !memcmp(t->pending[0]->siginfo.data, siginfo_bytes[0], 128), "pending siginfo");
	expect(m->shared_pending[0]->siginfo.len == 128 &&
	       !memcmp(m->shared_pending[0]->siginfo.data, siginfo_bytes[1], 128),
	       "shared siginfo");
	expect(t->altstack && t->altstack->sp == altstack.sp &&
	       t->altstack->size == 65536, "altstack");
	img_free(IMG_SIGNAL, m);
}

static void test_roundtrip_timens(void)
{
	TimensEntry *m = roundtrip(IMG_TIMENS);

	require(m, "no message");
	expect(m->monotonic_ns == timens.monotonic_ns, "monotonic");
	expect(m->boottime_ns == timens.boottime_ns, "boottime");
	expect(m->has_host_monotonic_ns && m->host_monotonic_ns == -5, "host_monotonic %lld",
	       (long long)m->host_monotonic_ns);
	expect(!m->has_host_boottime_ns, "host_boottime was not set");
	expect(m->has_realtime_ns && m->realtime_ns == INT64_MIN, "realtime");
	require(m->n_nss == 2 && m->n_tasks == 1, "%zu namespaces, %zu tasks", m->n_nss,
		m->n_tasks);
	expect(m->nss[1]->id == 2 && m->nss[1]->boottime_ns == timens_ns[1].boottime_ns &&
	       m->nss[1]->has_boottime_offset_ns && m->nss[1]->boottime_offset_ns == -1 &&
	       !m->nss[1]->has_monotonic_offset_ns, "namespace 2");
	expect(m->tasks[0]->pid == 1 && m->tasks[0]->ns == 1 && m->tasks[0]->ns_for_children == 2,
	       "task entry");
	img_free(IMG_TIMENS, m);
}

static void test_roundtrip_uts(void)
{
	UtsEntry *m = roundtrip(IMG_UTS);

	require(m, "no message");
	expect(!strcmp(m->hostname, "zdtm-host") && !strcmp(m->domainname, ""),
	       "names '%s' '%s'", m->hostname, m->domainname);
	img_free(IMG_UTS, m);
}

static void test_roundtrip_seccomp(void)
{
	SeccompEntry *m = roundtrip(IMG_SECCOMP);
	SeccompTaskEntry *t = roundtrip(IMG_SECCOMP_TASK);

	require(m && t, "no message");
	require(m->n_filters == 2 && t->n_threads == 2, "%zu filters, %zu threads", m->n_filters,
		t->n_threads);
	expect(m->filters[0]->prog.len == sizeof(sc_prog) &&
	       !memcmp(m->filters[1]->prog.data, sc_prog, sizeof(sc_prog)), "programs");
	expect(!m->filters[0]->has_prev && m->filters[1]->prev == 1 && m->filters[1]->flags == 2,
	       "chain and flags");
	expect(t->threads[0]->mode == 2 && t->threads[0]->filter == 2 &&
	       t->threads[1]->mode == 1 && !t->threads[1]->has_filter, "threads");
	img_free(IMG_SECCOMP, m);
	img_free(IMG_SECCOMP_TASK, t);
}

static void test_roundtrip_mnt(void)
{
	MntnsEntry *m = roundtrip(IMG_MNTNS);
	TmpfsEntry *t = roundtrip(IMG_TMPFS);

	require(m && t, "no message");
	require(m->n_mounts == 3 && t->n_nodes == 3, "%zu mounts, %zu nodes", m->n_mounts,
		t->n_nodes);
	expect(m->mounts[0]->kind == MOUNT_KIND__MNT_ROOT && m->mounts[0]->master_outside &&
	       !m->mounts[0]->parent, "the root");
	expect(m->mounts[1]->contents == 1 && m->mounts[1]->shared == 7 &&
	       !strcmp(m->mounts[1]->options, "size=65536k,mode=755"), "the tmpfs");
	expect(m->mounts[2]->bind_of == 66 && m->mounts[2]->unbindable &&
	       !strcmp(m->mounts[2]->root, "/null"), "the bind of a file");
	expect(t->nodes[1]->rdev == 0x103 && t->nodes[2]->n_data == 1 &&
	       t->nodes[2]->data[0]->at == 12288 && t->nodes[2]->n_xattrs == 1 &&
	       t->nodes[2]->xattrs[0]->value.len == 10, "nodes");
	img_free(IMG_MNTNS, m);
	img_free(IMG_TMPFS, t);
}

static void test_roundtrip_fdinfo(void)
{
	FdinfoEntry *m = roundtrip(IMG_FDINFO);
	FilesEntry *f = roundtrip(IMG_FILES);

	require(m && f, "no message");
	require(f->n_files == 2 && m->n_fds == 3, "%zu files, %zu fds", f->n_files, m->n_fds);
	expect(f->files[0]->kind == FILE_KIND__FILE_CHR &&
	       !strcmp(f->files[0]->path, "/dev/null") &&
	       f->files[0]->has_rdev && f->files[0]->rdev == 259 && !f->files[0]->has_size,
	       "file 0");
	expect(f->files[1]->kind == FILE_KIND__FILE_REG && f->files[1]->pos == 1ULL << 40 &&
	       f->files[1]->flags == (O_WRONLY | O_APPEND), "file 1");
	expect(m->fds[2]->fd == 1000 && m->fds[2]->file_id == 2 && m->fds[2]->cloexec, "fd 1000");
	expect(!m->fds[0]->cloexec, "fd 0 cloexec");
	img_free(IMG_FDINFO, m);
	img_free(IMG_FILES, f);
}

static void test_roundtrip_task_creds_sched_rlimit(void)
{
	TaskEntry *tk = roundtrip(IMG_TASK);
	CredsEntry *cr = roundtrip(IMG_CREDS);
	SchedEntry *sc = roundtrip(IMG_SCHED);
	RlimitEntry *rl = roundtrip(IMG_RLIMIT);

	if (tk) {
		expect(tk->n_threads == 2 && !strcmp(tk->threads[0]->comm, "(a) b)") &&
		       !strcmp(tk->threads[1]->comm, ""), "task comms");
		expect(tk->threads[0]->rseq && tk->threads[0]->rseq->sig == 0x53053053 &&
		       !tk->threads[1]->rseq, "task rseq");
		expect(tk->child_subreaper && tk->pdeath_sig == 9, "task fields");
	}
	if (cr) {
		expect(cr->uid == 1000 && cr->fsgid == 2003 && cr->n_groups == 4 &&
		       cr->groups[3] == 65534, "creds ids");
		expect(cr->cap_bnd == 0x1ffffffffffULL && cr->no_new_privs &&
		       !cr->has_keep_caps, "creds caps");
	}
	if (sc)
		expect(sc->n_threads == 1 && sc->threads[0]->nice == -7 &&
		       sc->threads[0]->reset_on_fork, "sched nice %d", sc->threads[0]->nice);
	if (rl)
		expect(rl->n_limits == 3 && rl->limits[1]->max == RLIM_INFINITY &&
		       rl->limits[2]->cur == 0, "rlimits");
	img_free(IMG_TASK, tk);
	img_free(IMG_CREDS, cr);
	img_free(IMG_SCHED, sc);
	img_free(IMG_RLIMIT, rl);
}

/* A second img_write replaces the file, whatever was there before. */
static void test_overwrite(void)
{
	PagemapEntry small = PAGEMAP_ENTRY__INIT, *m = NULL;
	char name[64];
	struct stat st;

	require(!img_write(imgdir, IMG_PAGEMAP, ID, samples[IMG_PAGEMAP]), "first write");
	require(!img_write(imgdir, IMG_PAGEMAP, ID, &small.base), "second write");
	img_name(IMG_PAGEMAP, ID, name, sizeof(name));
	expect(!fstatat(imgdir, name, &st, 0) && st.st_size == IMG_HDR_SIZE + 2,
	       "%s is %lld bytes, want %d", name, (long long)st.st_size, IMG_HDR_SIZE + 2);
	expect(img_read(imgdir, IMG_PAGEMAP, ID, (void **)&m, 0) == 1, "read");
	expect(m && m->n_runs == 0 && m->pages_size == 0, "old runs survived the rewrite");
	img_free(IMG_PAGEMAP, m);
}

/* Every proper prefix of every image is refused, by img_read and img_unpack. */
static void test_truncated(void)
{
	uint8_t *buf;
	size_t len, cut;
	char what[64];
	int t;

	for (t = 0; t < IMG_NR; t++) {
		if (!samples[t])
			continue;
		buf = frame(t, samples[t], &len);
		for (cut = 0; cut < len; cut++) {
			snprintf(what, sizeof(what), "truncated to %zu of %zu", cut, len);
			expect_read_fails(t, buf, cut, what);
			expect_unpack_fails(t, buf, cut, what);
		}
		free(buf);
	}
}

/*
 * Prefixes whose length field was fixed up to match: protobuf-c sees a cut
 * message. Cuts at a field boundary after the required fields are valid
 * messages; anything else must be refused. Nothing may crash.
 */
static void test_truncated_reframed(void)
{
	uint8_t *buf;
	size_t len, cut;
	void *msg;
	int t, refused;

	for (t = 0; t < IMG_NR; t++) {
		if (!samples[t])
			continue;
		buf = frame(t, samples[t], &len);
		refused = 0;
		for (cut = IMG_HDR_SIZE; cut < len; cut++) {
			reframe(t, buf, cut);
			msg = img_unpack(t, buf, cut, "reframed");
			refused += !msg;
			img_free(t, msg);
		}
		/* cutting inside the last field's bytes is always an error */
		expect(len == IMG_HDR_SIZE || refused > 0, "type %d: no cut message was refused",
		       t);
		free(buf);
	}
}

static void test_wrong_magic(void)
{
	uint8_t *buf;
	uint32_t other;
	size_t len;
	char what[64];
	int t, i;

	for (t = 0; t < IMG_NR; t++) {
		if (!samples[t])
			continue;
		buf = frame(t, samples[t], &len);
		for (i = 0; i < 4; i++) {
			buf[i] ^= 0x40;
			snprintf(what, sizeof(what), "magic byte %d flipped", i);
			expect_read_fails(t, buf, len, what);
			buf[i] ^= 0x40;
		}
		/* a valid magic of another image: files swapped or misnamed */
		other = img_magic(t == IMG_MM ? IMG_PAGEMAP : IMG_MM);
		memcpy(buf, &other, 4);
		expect_read_fails(t, buf, len, "another image's magic");
		memset(buf, 0, 4);
		expect_read_fails(t, buf, len, "zero magic");
		free(buf);
	}
}

static void test_length_mismatch(void)
{
	static const uint32_t bad[] = { 0xffffffffu, IMG_MAX_MSG + 1, 0x80000000u };
	uint8_t *buf, *longer;
	uint32_t plen, v;
	size_t len, i;
	char what[80];
	int t;

	for (t = 0; t < IMG_NR; t++) {
		if (!samples[t])
			continue;
		buf = frame(t, samples[t], &len);
		plen = len - IMG_HDR_SIZE;

		v = plen + 1;
		memcpy(buf + 4, &v, 4);
		expect_read_fails(t, buf, len, "length one more than the file holds");
		if (plen) {
			v = plen - 1;
			memcpy(buf + 4, &v, 4);
			expect_read_fails(t, buf, len, "length one less than the file holds");
			v = 0;
			memcpy(buf + 4, &v, 4);
			expect_read_fails(t, buf, len, "length 0 with a message after it");
		}
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			memcpy(buf + 4, &bad[i], 4);
			snprintf(what, sizeof(what), "absurd length %#x", bad[i]);
			expect_read_fails(t, buf, len, what);
			expect_unpack_fails(t, buf, len, what);
		}
		memcpy(buf + 4, &plen, 4);

		/* a right length but trailing bytes: a second message or junk */
		longer = malloc(len * 2);
		memcpy(longer, buf, len);
		memcpy(longer + len, buf + IMG_HDR_SIZE, len - IMG_HDR_SIZE);
		expect_read_fails(t, longer, len + 1, "one trailing byte");
		expect_read_fails(t, longer, len * 2 - IMG_HDR_SIZE, "the message twice");
		free(longer);
		free(buf);
	}
}

/* A header announcing an empty message: fine exactly when nothing is required. */
static void test_empty_message(void)
{
	const ProtobufCMessageDescriptor *d;
	uint8_t hdr[IMG_HDR_SIZE];
	char name[64];
	unsigned int i;
	void *msg;
	int t, want;

	for (t = 0; t < IMG_NR; t++) {
		d = desc_of(t);
		if (!d)
			continue;
		want = 1;
		for (i = 0; i < d->n_fields; i++)
			want &= d->fields[i].label != PROTOBUF_C_LABEL_REQUIRED;
		img_frame_header(t, hdr, 0, hdr);
		if (want) {
			img_name(t, ID, name, sizeof(name));
			write_raw(name, hdr, IMG_HDR_SIZE);
			msg = NULL;
			expect(img_read(imgdir, t, ID, &msg, 0) == 1 && msg,
			       "%s: an empty message is valid", name);
			img_free(t, msg);
		} else {
			expect_read_fails(t, hdr, IMG_HDR_SIZE, "empty message with required fields");
		}
	}
}

static uint32_t rnd_state = 0x12345678;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

static void test_garbage_message(void)
{
	/* bodies protobuf must refuse, whatever the message type */
	static const struct {
		const char *what;
		uint8_t bytes[16];
		size_t len;
	} bodies[] = {
		{ "all 0xff (endless varint)", { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		  0xff, 0xff, 0xff, 0xff, 0xff }, 12 },
		{ "field number 0", { 0x00, 0x01 }, 2 },
		{ "wire type 7", { 0x0f, 0x01 }, 2 },
		{ "wire type 6", { 0x0e, 0x01 }, 2 },
		{ "end group without a start", { 0x0c }, 1 },
		{ "field 1 varint cut", { 0x08, 0x80 }, 2 },
		{ "field 1 bytes longer than the message", { 0x0a, 0x7f, 0x41 }, 3 },
		{ "field 1 bytes with a 5 GiB length", { 0x0a, 0x80, 0x80, 0x80, 0x80, 0x14 }, 6 },
		{ "field 1 fixed64 cut", { 0x09, 1, 2, 3 }, 4 },
		{ "field 1 fixed32 cut", { 0x0d, 1, 2 }, 3 },
	};
	uint8_t buf[IMG_HDR_SIZE + 256];
	size_t i, n;
	off_t mark;
	void *msg;
	int t, k;

	for (t = 0; t < IMG_NR; t++) {
		if (!samples[t])
			continue;
		for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
			memcpy(buf + IMG_HDR_SIZE, bodies[i].bytes, bodies[i].len);
			reframe(t, buf, IMG_HDR_SIZE + bodies[i].len);
			expect_read_fails(t, buf, IMG_HDR_SIZE + bodies[i].len, bodies[i].what);
		}
		/* random bodies: decoded or refused with a log line, never a crash */
		for (k = 0; k < 2000; k++) {
			n = rnd() % 256;
			for (i = 0; i < n; i++)
				buf[IMG_HDR_SIZE + i] = rnd();
			reframe(t, buf, IMG_HDR_SIZE + n);
			mark = log_mark();
			msg = img_unpack(t, buf, IMG_HDR_SIZE + n, "random");
			expect(msg || strstr(log_since(mark), "random"),
			       "type %d: refused a random body without logging", t);
			img_free(t, msg);
		}
	}
}

/* Random mutations of real samples reach deeper into the messages. */
static void test_mutated_samples(void)
{
	uint8_t *buf;
	size_t len, i;
	void *msg;
	int t, k;

	for (t = 0; t < IMG_NR; t++) {
		if (!samples[t])
			continue;
		buf = frame(t, samples[t], &len);
		if (len <= IMG_HDR_SIZE) {
			free(buf);
			continue;
		}
		for (k = 0; k < 2000; k++) {
			uint8_t *m = malloc(len);

			memcpy(m, buf, len);
			for (i = 0; i < 1 + rnd() % 4; i++)
				m[IMG_HDR_SIZE + rnd() % (len - IMG_HDR_SIZE)] = rnd();
			reframe(t, m, len);
			msg = img_unpack(t, m, len, "mutated");
			img_free(t, msg);
			free(m);
		}
		free(buf);
	}
}

static void test_missing(void)
{
	void *sentinel = (void *)&sentinel, *msg = sentinel;
	off_t mark;
	int ret;

	unlinkat(imgdir, "creds-999999.img", 0);
	mark = log_mark();
	ret = img_read(imgdir, IMG_CREDS, 999999, &msg, 1);
	expect(ret == 0, "a missing optional image: img_read returned %d", ret);
	expect(msg == sentinel, "a missing optional image changed *msg");
	expect(!*log_since(mark), "a missing optional image logged '%s'", log_since(mark));

	mark = log_mark();
	ret = img_read(imgdir, IMG_CREDS, 999999, &msg, 0);
	expect(ret == -1, "a missing required image: img_read returned %d", ret);
	expect(strstr(log_since(mark), "creds-999999.img"),
	       "a missing required image: log '%s'", log_since(mark));
	expect(msg == sentinel, "a missing required image changed *msg");
}

/* A directory where an image should be is an error, optional or not. */
static void test_not_a_file(void)
{
	void *msg = NULL;
	off_t mark;

	require(!mkdirat(imgdir, "fs-77.img", 0700), "mkdir: %m");
	mark = log_mark();
	expect(img_read(imgdir, IMG_FS, 77, &msg, 1) == -1, "a directory read as an image");
	expect(strstr(log_since(mark), "fs-77.img"), "nothing logged");
	unlinkat(imgdir, "fs-77.img", AT_REMOVEDIR);
}

static void test_unpack_bad_type(void)
{
	uint8_t buf[16] = { 0 };
	off_t mark;

	mark = log_mark();
	expect(!img_unpack(IMG_PAGES, buf, sizeof(buf), "pages"), "the page store is raw");
	expect(strstr(log_since(mark), "pages"), "nothing logged for the page store");
	mark = log_mark();
	expect(!img_unpack(IMG_NR, buf, sizeof(buf), "nr"), "IMG_NR is no type");
	expect(strstr(log_since(mark), "nr"), "nothing logged for IMG_NR");
	expect(!img_unpack((enum img_type)-1, buf, sizeof(buf), "neg"), "-1 is no type");
	/* img_read of the raw page store: an error, and said so */
	require(!write_raw("pages-4242.img", buf, sizeof(buf)), "write");
	expect_read_fails(IMG_PAGES, buf, sizeof(buf), "the raw page store");
}

static void test_raw_pages(void)
{
	char page[4096], back[4096], name[64];
	struct stat st;
	off_t mark;
	int fd;

	memset(page, 0x3c, sizeof(page));
	fd = img_open_raw(imgdir, IMG_PAGES, ID, 1);
	require(fd >= 0, "img_open_raw for writing failed");
	expect(write(fd, page, sizeof(page)) == sizeof(page), "write");
	close(fd);
	img_name(IMG_PAGES, ID, name, sizeof(name));
	expect(!fstatat(imgdir, name, &st, 0) && (st.st_mode & 07777) == 0600,
	       "%s: mode %o, want 0600", name, st.st_mode & 07777);

	fd = img_open_raw(imgdir, IMG_PAGES, ID, 0);
	require(fd >= 0, "img_open_raw for reading failed");
	expect(read(fd, back, sizeof(back)) == sizeof(back) && !memcmp(page, back, 4096),
	       "pages read back differ");
	expect(write(fd, page, 1) < 0, "a page store opened for reading is writable");
	close(fd);

	mark = log_mark();
	expect(img_open_raw(imgdir, IMG_PAGES, 999999, 0) < 0, "a missing page store opened");
	expect(strstr(log_since(mark), "pages-999999.img"), "nothing logged");
}

/* Fills @len bytes of @buf with a pattern unique to @seq. */
static void pattern(uint8_t *buf, size_t len, unsigned int seq)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 13 + seq * 101 + (i >> 12));
}

/* The threaded page store writer: what is submitted lands in order. */
static void test_pagestore(void)
{
	static const size_t sizes[] = { 3 * 4096, PSTORE_BUF, 1, 5 * 4096, 4096 };
	uint8_t *want, *got, *buf;
	uint64_t total = 0, sum = 0;
	struct pstore *ps;
	char name[64];
	struct stat st;
	size_t i, off;
	int fd;

	ps = pstore_create(imgdir, ID + 7);
	require(ps, "pstore_create failed");
	for (i = 0; i < ARRAY_SIZE_(sizes); i++) {
		buf = pstore_buf(ps);
		require(buf, "pstore_buf returned NULL without an error");
		pattern(buf, sizes[i], i);
		expect(!pstore_submit(ps, sizes[i]), "submit %zu", i);
		sum += sizes[i];
	}
	expect(!pstore_submit(ps, 0), "an empty submission");
	expect(!pstore_close(ps, &total), "pstore_close failed");
	expect(total == sum, "total %llu, submitted %llu", (unsigned long long)total,
	       (unsigned long long)sum);

	img_name(IMG_PAGES, ID + 7, name, sizeof(name));
	require(!fstatat(imgdir, name, &st, 0), "%s: %m", name);
	expect((st.st_mode & 07777) == 0600, "%s: mode %o", name, st.st_mode & 07777);
	expect((uint64_t)st.st_size == sum, "%s: %lld bytes, want %llu", name,
	       (long long)st.st_size, (unsigned long long)sum);
	fd = img_open_raw(imgdir, IMG_PAGES, ID + 7, 0);
	require(fd >= 0, "can't open %s", name);
	want = malloc(PSTORE_BUF);
	got = malloc(PSTORE_BUF);
	for (i = 0, off = 0; i < ARRAY_SIZE_(sizes); off += sizes[i], i++) {
		pattern(want, sizes[i], i);
		expect(pread(fd, got, sizes[i], off) == (ssize_t)sizes[i] &&
		       !memcmp(want, got, sizes[i]), "submission %zu differs in the file", i);
	}
	close(fd);
	free(want);
	free(got);
	unlinkat(imgdir, name, 0);
}

/* Checks that store @id holds the submissions of @sizes, patterns from @seq on. */
static void check_store(int id, const size_t *sizes, int n, int seq)
{
	uint8_t *want = malloc(PSTORE_BUF), *got = malloc(PSTORE_BUF);
	char name[64];
	struct stat st;
	size_t off = 0;
	int i, fd;

	img_name(IMG_PAGES, id, name, sizeof(name));
	fd = img_open_raw(imgdir, IMG_PAGES, id, 0);
	require(fd >= 0 && want && got, "can't open %s", name);
	for (i = 0; i < n; off += sizes[i], i++) {
		pattern(want, sizes[i], seq + i);
		expect(pread(fd, got, sizes[i], off) == (ssize_t)sizes[i] &&
		       !memcmp(want, got, sizes[i]), "%s: submission %d differs", name, i);
	}
	expect(!fstat(fd, &st) && (uint64_t)st.st_size == off, "%s: %lld bytes, want %zu",
	       name, (long long)st.st_size, off);
	close(fd);
	unlinkat(imgdir, name, 0);
	free(want);
	free(got);
}

/*
 * One writer for the stores of a whole dump, in turn: small ones written
 * without a thread, a big one starting it, and those after it through the
 * thread; each file holds what was submitted for it, in order.
 */
static void test_pagestore_reuse(void)
{
	static const size_t a[] = { 2 * 4096, 4096 };
	static const size_t b[] = { PSTORE_BUF, 3 * 4096, PSTORE_BUF, 5 };
	static const size_t c[] = { 7 * 4096 };
	static const struct {
		const size_t *sizes;
		int n;
	} stores[] = { { a, 2 }, { b, 4 }, { c, 1 }, { a, 2 } };
	struct pstore *ps = pstore_new();
	uint64_t total, sum;
	int s, i, seq = 0;
	void *buf;

	require(ps, "pstore_new failed");
	for (s = 0; s < (int)ARRAY_SIZE_(stores); s++) {
		require(!pstore_open(ps, imgdir, ID + 20 + s), "pstore_open %d", s);
		for (i = 0, sum = 0; i < stores[s].n; i++) {
			buf = pstore_buf(ps);
			require(buf, "store %d: pstore_buf returned NULL", s);
			pattern(buf, stores[s].sizes[i], seq + i);
			expect(!pstore_submit(ps, stores[s].sizes[i]), "store %d: submit %d", s, i);
			sum += stores[s].sizes[i];
		}
		expect(!pstore_flush(ps, &total), "store %d: pstore_flush failed", s);
		expect(total == sum, "store %d: total %llu, submitted %llu", s,
		       (unsigned long long)total, (unsigned long long)sum);
		check_store(ID + 20 + s, stores[s].sizes, stores[s].n, seq);
		seq += stores[s].n;
	}
	pstore_free(ps);
}

/*
 * A failed write (here: past RLIMIT_FSIZE, EFBIG) is reported, not lost.
 * (It was a symlink to /dev/full: criu follows no link any more.)
 */
static void test_pagestore_write_error(void)
{
	struct rlimit old, small = { 4096, 4096 };
	uint64_t total = 1;
	struct pstore *ps;
	char name[64];
	int i, ret, got_null = 0, big_log = logfd;
	off_t mark;
	void *buf;

	img_name(IMG_PAGES, ID + 8, name, sizeof(name));
	unlinkat(imgdir, name, 0);
	/* the limit holds for the log too: an empty one meanwhile */
	logfd = openat(imgdir, "small.log", O_RDWR | O_CREAT | O_APPEND | O_TRUNC, 0600);
	require(logfd >= 0, "small.log: %m");
	log_set_fd(logfd);
	signal(SIGXFSZ, SIG_IGN);
	require(!getrlimit(RLIMIT_FSIZE, &old), "getrlimit: %m");
	small.rlim_max = old.rlim_max;
	require(!setrlimit(RLIMIT_FSIZE, &small), "setrlimit: %m");
	mark = log_mark();
	ps = pstore_create(imgdir, ID + 8);
	if (!ps) {
		setrlimit(RLIMIT_FSIZE, &old);
		unlinkat(imgdir, name, 0);
		logfd = big_log;
		log_set_fd(logfd);
		expect(0, "pstore_create failed");
		return;
	}
	for (i = 0; i < 6; i++) {
		buf = pstore_buf(ps);
		if (!buf) {
			got_null = 1;
			break;
		}
		memset(buf, i, 2 * 4096);
		pstore_submit(ps, 2 * 4096);
	}
	ret = pstore_close(ps, &total);
	setrlimit(RLIMIT_FSIZE, &old);
	unlinkat(imgdir, name, 0);

	expect(ret == -1, "pstore_close returned %d after a failed write", ret);
	expect(strstr(log_since(mark), "page store"), "no error logged: '%s'", log_since(mark));
	close(logfd);
	unlinkat(imgdir, "small.log", 0);
	logfd = big_log;
	log_set_fd(logfd);
	expect(got_null, "pstore_buf kept handing out buffers after a failed write");
	expect(total <= 4096, "total %llu counts bytes that were not written",
	       (unsigned long long)total);
}

static void unit_setup(void)
{
	char logname[PATH_MAX];

	umask(0);	/* so that a mode other than 0600 would show */
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(1);
	}
	imgdir = open(tmpdir, O_RDONLY | O_DIRECTORY);
	snprintf(logname, sizeof(logname), "%s.log", tmpdir);
	logfd = open(logname, O_RDWR | O_CREAT | O_APPEND | O_TRUNC, 0600);
	unlink(logname);
	if (imgdir < 0 || logfd < 0) {
		perror("open");
		exit(1);
	}
	atexit(cleanup);
	log_open(NULL, LOG_DEBUG);
	log_set_fd(logfd);
	build_samples();
}

static const struct unit_test tests[] = {
	UNIT_TEST(test_names_and_magics),
	UNIT_TEST(test_every_type_has_sample),
	UNIT_TEST(test_roundtrip_all_types),
	UNIT_TEST(test_roundtrip_every_field),
	UNIT_TEST(test_roundtrip_inventory),
	UNIT_TEST(test_roundtrip_pstree),
	UNIT_TEST(test_roundtrip_mm),
	UNIT_TEST(test_roundtrip_pagemap),
	UNIT_TEST(test_roundtrip_regs),
	UNIT_TEST(test_roundtrip_signal),
	UNIT_TEST(test_roundtrip_timens),
	UNIT_TEST(test_roundtrip_uts),
	UNIT_TEST(test_roundtrip_seccomp),
	UNIT_TEST(test_roundtrip_mnt),
	UNIT_TEST(test_roundtrip_fdinfo),
	UNIT_TEST(test_roundtrip_task_creds_sched_rlimit),
	UNIT_TEST(test_overwrite),
	UNIT_TEST(test_truncated),
	UNIT_TEST(test_truncated_reframed),
	UNIT_TEST(test_wrong_magic),
	UNIT_TEST(test_length_mismatch),
	UNIT_TEST(test_empty_message),
	UNIT_TEST(test_garbage_message),
	UNIT_TEST(test_mutated_samples),
	UNIT_TEST(test_missing),
	UNIT_TEST(test_not_a_file),
	UNIT_TEST(test_unpack_bad_type),
	UNIT_TEST(test_raw_pages),
	UNIT_TEST(test_pagestore),
	UNIT_TEST(test_pagestore_write_error),
	UNIT_TEST(test_pagestore_reuse),
};

UNIT_MAIN(tests)
