// SPDX-License-Identifier: GPL-2.0
/*
 * The page server's receiving side: one dump's images from a connection
 * into a directory (Documentation/page-server.md). The peer is not
 * trusted: every frame is checked before it is acted on, names are plain
 * file names created as create_file_at() creates them (nothing followed),
 * and a transfer that does not reach COMMIT leaves nothing behind.
 * inventory.img, what makes a directory a checkpoint, is held unnamed
 * (O_TMPFILE) until the commit, so even a server killed mid-transfer
 * leaves no checkpoint that looks complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/file.h"
#include "core/log.h"
#include "core/util.h"
#include "image/imgout.h"

#define INVENTORY	"inventory.img"
#define MAX_WRITTEN	100000

struct rfile {
	int fd;			/* -1: free */
	uint32_t nr;
	int inventory;		/* held as O_TMPFILE until the commit */
	uint64_t off;		/* bytes written */
	uint64_t flushed;	/* of those, sent to the disk already */
};

/*
 * Writeback is started every so many bytes of a file, while the rest still
 * comes: the commit's syncfs then waits for the tail, not for the whole.
 */
#define FLUSH_EVERY	(8U << 20)

struct server {
	int dirfd, sk;
	struct rfile files[PS_MAX_FILES];
	char **written;		/* names created, removed if no commit comes */
	int nr_written;
	int inv_fd;		/* the closed inventory's O_TMPFILE, or -1 */
	int committed;
	uint8_t *buf;
	int pipe[2];		/* socket -> pipe -> file; -1: read and write */
	int spliced;		/* splice worked once: its errors are errors */
	uint64_t bytes;
};

/* What the pipe holds at once (F_SETPIPE_SZ, within the default limit). */
#define PIPE_BYTES	(1U << 20)

/* One error line for the peer too (best effort), then the caller fails. */
static int refuse(struct server *s, const char *why, const char *what)
{
	char msg[400];

	snprintf(msg, sizeof(msg), "%s%s%s", why, what ? ": " : "", what ? what : "");
	pr_err("Page server: %s", msg);
	ps_send(s->sk, PS_ERR, 0, msg, strlen(msg));
	return -1;
}

/* The same for a failed system call, errno told. */
static int refuse_errno(struct server *s, const char *what, const char *name)
{
	char why[320];

	snprintf(why, sizeof(why), "%s%s%s: %s", what, name ? " " : "", name ? name : "",
		 strerror(errno));
	return refuse(s, why, NULL);
}

/* A plain file name: no directory, no parent, nothing hidden in it. */
static int plain_name(const char *name, size_t len)
{
	if (!len || len > PS_MAX_NAME || memchr(name, '\0', len) || memchr(name, '/', len))
		return 0;
	return strcmp(name, ".") && strcmp(name, "..");
}

static struct rfile *find(struct server *s, uint32_t nr)
{
	int i;

	for (i = 0; i < PS_MAX_FILES; i++)
		if (s->files[i].fd >= 0 && s->files[i].nr == nr)
			return &s->files[i];
	return NULL;
}

static int remember(struct server *s, const char *name)
{
	char *copy;

	if (s->nr_written == MAX_WRITTEN || !(copy = xstrdup(name)))
		return -1;
	if (xgrow(s->written, s->nr_written)) {
		free(copy);
		return -1;
	}
	s->written[s->nr_written++] = copy;
	return 0;
}

static int do_open(struct server *s, const struct ps_hdr *h)
{
	char name[PS_MAX_NAME + 1];
	struct rfile *f = NULL;
	int i;

	if (h->len > PS_MAX_NAME || ps_read_full(s->sk, name, h->len))
		return refuse(s, h->len > PS_MAX_NAME ? "a file name too long" :
			      "the connection was lost", NULL);
	name[h->len] = '\0';
	if (!plain_name(name, h->len))
		return refuse(s, "a file name that is not a plain name refused", name);
	if (find(s, h->file))
		return refuse(s, "a file number opened twice", name);
	for (i = 0; i < PS_MAX_FILES && !f; i++)
		if (s->files[i].fd < 0)
			f = &s->files[i];
	if (!f)
		return refuse(s, "too many files open at once", name);
	f->inventory = !strcmp(name, INVENTORY);
	if (f->inventory && s->inv_fd >= 0)
		return refuse(s, "inventory.img sent twice", NULL);
	if (!f->inventory && remember(s, name))
		return refuse(s, "too many files", name);
	if (f->inventory)
		f->fd = openat(s->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	else
		f->fd = create_file_at(s->dirfd, name, O_WRONLY);
	if (f->fd < 0)
		return refuse_errno(s, "can't create image", name);
	f->nr = h->file;
	f->off = f->flushed = 0;
	return 0;
}

/*
 * @len bytes from the socket into @fd through our pipe: the kernel moves
 * the socket's pages into the pipe and copies them once, into the file's
 * page cache. 1: splice can't (an fs without it): the caller reads instead.
 */
static int splice_in(struct server *s, int fd, size_t len)
{
	ssize_t n, m;

	while (len) {
		n = splice(s->sk, NULL, s->pipe[1], NULL, min(len, (size_t)PIPE_BYTES),
			   SPLICE_F_MOVE | SPLICE_F_MORE);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 && errno == EINVAL && !s->spliced ? 1 : -1;
		len -= n;
		for (; n; n -= m) {
			m = splice(s->pipe[0], NULL, fd, NULL, n, SPLICE_F_MOVE);
			if (m < 0 && errno == EINTR)
				m = 0;
			else if (m <= 0)
				return -1;
		}
		s->spliced = 1;
	}
	return 0;
}

static int read_in(struct server *s, int fd, size_t len)
{
	if (ps_read_full(s->sk, s->buf, len))
		return -1;
	return write_full(fd, s->buf, len);
}

static int do_data(struct server *s, const struct ps_hdr *h)
{
	struct rfile *f = find(s, h->file);
	int ret = 1;

	if (!f)
		return refuse(s, "data for a file that is not open", NULL);
	if (h->len > PS_MAX_DATA)
		return refuse(s, "a data frame too large", NULL);
	errno = 0;
	if (s->pipe[0] >= 0)
		ret = splice_in(s, f->fd, h->len);
	if (ret > 0)
		ret = read_in(s, f->fd, h->len);
	if (ret && !errno)
		return refuse(s, "the connection was lost in a data frame", NULL);
	if (ret)
		return refuse_errno(s, "can't write an image", NULL);
	s->bytes += h->len;
	f->off += h->len;
	if (f->off - f->flushed >= FLUSH_EVERY) {
		/* a hint: the commit's fsync and syncfs are what count */
		sync_file_range(f->fd, f->flushed, f->off - f->flushed, SYNC_FILE_RANGE_WRITE);
		f->flushed = f->off;
	}
	return 0;
}

static int do_close(struct server *s, const struct ps_hdr *h)
{
	struct rfile *f = find(s, h->file);

	if (!f || h->len)
		return refuse(s, f ? "a close frame with a payload" :
			      "a close of a file that is not open", NULL);
	if (f->inventory)
		s->inv_fd = f->fd;
	else
		close(f->fd);
	f->fd = -1;
	return 0;
}

/* Every file on disk, then the inventory named: the checkpoint exists. */
static int do_commit(struct server *s)
{
	char path[64];
	int i;

	for (i = 0; i < PS_MAX_FILES; i++)
		if (s->files[i].fd >= 0)
			return refuse(s, "a commit with files still open", NULL);
	if (s->inv_fd < 0)
		return refuse(s, "a commit without inventory.img", NULL);
	if (fsync(s->inv_fd) || syncfs(s->dirfd))
		return refuse_errno(s, "can't sync the images", NULL);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s->inv_fd);
	if ((unlinkat(s->dirfd, INVENTORY, 0) && errno != ENOENT) ||
	    linkat(AT_FDCWD, path, s->dirfd, INVENTORY, AT_SYMLINK_FOLLOW) ||
	    fsync(s->dirfd))
		return refuse_errno(s, "can't name", INVENTORY);
	s->committed = 1;
	if (ps_send(s->sk, PS_ACK, 0, NULL, 0))
		pr_warn("Page server: can't tell the dump its images are safe: %s",
			strerror(errno));
	pr_info("Page server: checkpoint committed, %lu bytes received", s->bytes);
	return 0;
}

static int hello(struct server *s)
{
	struct ps_hdr h;
	uint32_t v[2];

	if (ps_read_full(s->sk, &h, sizeof(h)) || h.type != PS_HELLO || h.len != sizeof(v) ||
	    ps_read_full(s->sk, v, sizeof(v)) || v[0] != PS_MAGIC)
		return refuse(s, "the peer is not a criu dump", NULL);
	if (v[1] != PS_VERSION) {
		char ver[32];

		snprintf(ver, sizeof(ver), "%u, this server speaks %u", v[1], PS_VERSION);
		return refuse(s, "an unknown protocol version", ver);
	}
	return 0;
}

/* Frames until DONE (1), ABORT or an error (-1). */
static int serve(struct server *s)
{
	struct ps_hdr h;
	int ret;

	if (hello(s))
		return -1;
	for (;;) {
		if (ps_read_full(s->sk, &h, sizeof(h))) {
			if (s->committed)
				pr_err("Page server: the dump went away after the commit; "
				       "the checkpoint is complete and kept");
			else
				pr_err("Page server: the connection was lost before the "
				       "checkpoint was complete%s%s", errno ? ": " : "",
				       errno ? strerror(errno) : "");
			return -1;
		}
		/* the tests kill the server here: at frame N, or on the commit */
		fault_point("pagesrv-frame");
		if (h.type == PS_COMMIT)
			fault_point("pagesrv-commit");
		if (s->committed && h.type != PS_DONE && h.type != PS_ABORT)
			return refuse(s, "a frame after the commit", NULL);
		switch (h.type) {
		case PS_OPEN: ret = do_open(s, &h); break;
		case PS_DATA: ret = do_data(s, &h); break;
		case PS_CLOSE: ret = do_close(s, &h); break;
		case PS_COMMIT: ret = h.len ? refuse(s, "a commit with a payload", NULL) :
				      do_commit(s); break;
		case PS_DONE:
			if (!s->committed)
				return refuse(s, "done before the commit", NULL);
			return 1;
		case PS_ABORT:
			pr_err("Page server: the dump failed; its images are removed");
			s->committed = 0;
			return -1;
		default:
			return refuse(s, "an unknown frame", NULL);
		}
		if (ret)
			return -1;
	}
}

/* A transfer that did not commit leaves nothing of its own behind. */
static void cleanup(struct server *s)
{
	int i;

	for (i = 0; i < PS_MAX_FILES; i++)
		if (s->files[i].fd >= 0)
			close(s->files[i].fd);
	if (s->inv_fd >= 0)
		close(s->inv_fd);
	for (i = 0; i < s->nr_written; i++) {
		if (!s->committed)
			unlinkat(s->dirfd, s->written[i], 0);
		free(s->written[i]);
	}
	if (!s->committed)
		unlinkat(s->dirfd, INVENTORY, 0);
	free(s->written);
}

int ps_receive(int dirfd, int sk)
{
	struct server s = { .dirfd = dirfd, .sk = sk, .inv_fd = -1, .pipe = { -1, -1 } };
	int i, ret;

	for (i = 0; i < PS_MAX_FILES; i++)
		s.files[i].fd = -1;
	if (pipe2(s.pipe, O_CLOEXEC) || fcntl(s.pipe[0], F_SETPIPE_SZ, PIPE_BYTES) < 0) {
		if (s.pipe[0] >= 0) {
			close(s.pipe[0]);
			close(s.pipe[1]);
		}
		s.pipe[0] = s.pipe[1] = -1;
	}
	s.buf = mmap(NULL, PS_MAX_DATA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (s.buf == MAP_FAILED) {
		pr_perror("Page server: can't allocate its buffer");
		ret = -1;
		goto out;
	}
	/* no inventory means no checkpoint: an older one here is no longer one */
	unlinkat(dirfd, INVENTORY, 0);
	ret = serve(&s) == 1 ? 0 : -1;
	cleanup(&s);
	munmap(s.buf, PS_MAX_DATA);
out:
	if (s.pipe[0] >= 0) {
		close(s.pipe[0]);
		close(s.pipe[1]);
	}
	return ret;
}
