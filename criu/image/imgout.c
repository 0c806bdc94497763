// SPDX-License-Identifier: GPL-2.0
/*
 * The images' way out: the images directory, or the page server's
 * connection. Frames are sent whole under one lock, since the page
 * store's writer thread sends pages while the dump writes other images.
 */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/file.h"
#include "core/log.h"
#include "core/util.h"
#include "image/imgout.h"
#include "image/tls.h"

/* What a staged store is sent through: read here, then one DATA frame. */
#define STAGE_CHUNK	(8U << 20)

static struct {
	int sk;			/* -1: images go to the directory */
	struct tls_helper tls;	/* --tls: sk is its plain end */
	char peer[300];		/* for errors: "ADDR:PORT" */
	uint32_t next;		/* the next file's number */
	pthread_mutex_t lock;
	const char *const *staged;	/* made here, sent at the commit */
	char said[256];		/* the server's ERR, read once a send failed */
} out = { .sk = -1, .tls = { .fd = -1 }, .lock = PTHREAD_MUTEX_INITIALIZER };

int ps_read_full(int sk, void *buf, size_t len)
{
	ssize_t n;

	for (; len; buf = (char *)buf + n, len -= n) {
		n = read(sk, buf, len);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n <= 0) {
			if (!n)
				errno = 0;
			return -1;
		}
	}
	return 0;
}

/* writev, without SIGPIPE: a server that went away is an error, not a death */
static int send_iov(int sk, struct iovec *iov, int nr)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = nr };
	ssize_t n;

	while (nr) {
		n = sendmsg(sk, &mh, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		while (nr && (size_t)n >= iov->iov_len) {
			n -= iov->iov_len;
			iov++;
			nr--;
		}
		if (nr) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= n;
		}
		mh.msg_iov = iov;
		mh.msg_iovlen = nr;
	}
	return 0;
}

int ps_send(int sk, uint32_t type, uint32_t file, const void *p, size_t len)
{
	struct ps_hdr h = { .type = type, .file = file, .len = len };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)p, len } };

	return send_iov(sk, iov, len ? 2 : 1);
}

/*
 * A send failed: the server may have said why (PS_ERR) before it closed;
 * that frame is still ours to read. errno is kept.
 */
static void hear_why(void)
{
	struct ps_hdr h;
	int err = errno;
	ssize_t n;

	if (out.said[0])
		return;
	n = recv(out.sk, &h, sizeof(h), MSG_DONTWAIT);
	if (n == sizeof(h) && h.type == PS_ERR && h.len && h.len < sizeof(out.said)) {
		n = recv(out.sk, out.said, h.len, MSG_DONTWAIT);
		out.said[n > 0 ? n : 0] = '\0';
	}
	errno = err;
}

static int send_locked(uint32_t type, uint32_t file, const void *p, size_t len)
{
	int ret;

	pthread_mutex_lock(&out.lock);
	ret = ps_send(out.sk, type, file, p, len);
	if (ret)
		hear_why();
	pthread_mutex_unlock(&out.lock);
	return ret;
}

const char *imgout_where(void)
{
	static char where[sizeof(out.peer) + sizeof(out.said) + 40];

	if (out.sk < 0)
		return "";
	snprintf(where, sizeof(where), " to page server %s%s%s%s", out.peer,
		 out.said[0] ? " (it said: " : "", out.said, out.said[0] ? ")" : "");
	return where;
}

int imgout_remote(void)
{
	return out.sk >= 0;
}

static int hello(void)
{
	uint32_t h[2] = { PS_MAGIC, PS_VERSION };

	out.next = 1;
	if (!send_locked(PS_HELLO, 0, h, sizeof(h)))
		return 0;
	pr_perror("Page server %s: can't greet it", out.peer);
	return -1;
}

/* Removes the staged stores here: an older dump's, or ours once sent. */
static void unlink_staged(int dirfd)
{
	const char *const *n;

	for (n = out.staged; n && *n; n++)
		unlinkat(dirfd, *n, 0);
}

int ps_sockaddr(const char *addr, int port, struct sockaddr_storage *ss, unsigned int *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	*len = sizeof(*in);
	if (!addr || inet_pton(AF_INET, addr, &in->sin_addr) == 1)
		return 0;
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	*len = sizeof(*in6);
	return inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1 ? 0 : -1;
}

int imgout_connect(int dirfd, const char *addr, int port, const struct tls_opts *tls,
		   const char *const *staged)
{
	char who[sizeof(out.peer) + 16];

	struct sockaddr_storage ss;
	socklen_t len;
	int sk;

	if (!addr || !*addr || port <= 0 || port > 65535) {
		pr_err("Page server: dump needs --address and --port (1-65535)");
		return -1;
	}
	snprintf(out.peer, sizeof(out.peer), "%s:%d", addr, port);
	if (ps_sockaddr(addr, port, &ss, &len)) {
		pr_err("Page server %s: not a numeric IPv4 or IPv6 address", out.peer);
		return -1;
	}
	sk = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sk < 0 || connect(sk, (struct sockaddr *)&ss, len)) {
		pr_perror("Page server %s: can't connect", out.peer);
		if (sk >= 0)
			close(sk);
		return -1;
	}
	if (tls->on) {
		snprintf(who, sizeof(who), "Page server %s", out.peer);
		if (tls_wrap(sk, tls, addr, who, &out.tls))
			return -1;
		sk = out.tls.fd;
	}
	out.sk = sk;
	out.staged = staged;
	unlink_staged(dirfd);
	return hello();
}

int imgout_create(int dirfd, const char *name, struct imgout_file *f)
{
	f->fd = -1;
	if (out.sk < 0) {
		f->fd = create_file_at(dirfd, name, O_RDWR);
		if (f->fd < 0)
			pr_perror("Can't create image %s", name);
		return f->fd < 0 ? -1 : 0;
	}
	pthread_mutex_lock(&out.lock);
	f->nr = out.next++;
	pthread_mutex_unlock(&out.lock);
	if (!send_locked(PS_OPEN, f->nr, name, strlen(name)))
		return 0;
	pr_perror("Can't create image %s%s", name, imgout_where());
	return -1;
}

int imgout_write(struct imgout_file *f, const void *buf, size_t len)
{
	size_t n;

	if (f->fd >= 0)
		return write_full(f->fd, buf, len);
	for (; len; buf = (const char *)buf + n, len -= n) {
		n = min(len, (size_t)PS_MAX_DATA);
		if (send_locked(PS_DATA, f->nr, buf, n))
			return -1;
	}
	return 0;
}

int imgout_close(struct imgout_file *f)
{
	if (f->fd >= 0) {
		close(f->fd);
		f->fd = -1;
		return 0;
	}
	return send_locked(PS_CLOSE, f->nr, NULL, 0);
}

/* Sends staged store @name through one file of the connection. */
static int ship(int dirfd, const char *name, void *buf)
{
	struct imgout_file f;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;
	int ret = -1;

	if (fd < 0) {
		pr_perror("Can't open image %s to send it", name);
		return -1;
	}
	if (imgout_create(dirfd, name, &f))
		goto out;
	while ((n = read(fd, buf, STAGE_CHUNK)) > 0)
		if (imgout_write(&f, buf, n))
			break;
	if (n < 0)
		pr_perror("Can't read image %s to send it", name);
	else if (n > 0 || imgout_close(&f))
		pr_perror("Can't send image %s%s", name, imgout_where());
	else
		ret = 0;
out:
	close(fd);
	return ret;
}

static int ship_staged(int dirfd)
{
	const char *const *n;
	void *buf;
	int ret = 0;

	buf = mmap(NULL, STAGE_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (buf == MAP_FAILED) {
		pr_perror("Can't allocate a buffer to send the stores");
		return -1;
	}
	for (n = out.staged; n && *n && !ret; n++)
		if (!faccessat(dirfd, *n, F_OK, AT_SYMLINK_NOFOLLOW))
			ret = ship(dirfd, *n, buf);	/* else this dump made none */
	munmap(buf, STAGE_CHUNK);
	return ret;
}

static int wait_ack(void)
{
	struct ps_hdr h;
	char why[256] = "";

	if (ps_read_full(out.sk, &h, sizeof(h))) {
		pr_err("Page server %s: no answer to the commit: %s", out.peer,
		       errno ? strerror(errno) : "it closed the connection");
		return -1;
	}
	if (h.type == PS_ACK && !h.len)
		return 0;
	if (h.type == PS_ERR && h.len < sizeof(why) && !ps_read_full(out.sk, why, h.len))
		pr_err("Page server %s: %s", out.peer, why);
	else
		pr_err("Page server %s: a bad answer to the commit (frame %u)", out.peer,
		       h.type);
	return -1;
}

int imgout_commit(int dirfd)
{
	if (out.sk < 0) {
		if (syncfs(dirfd)) {
			pr_perror("Can't sync the images");
			return -1;
		}
		return 0;
	}
	if (ship_staged(dirfd))
		return -1;
	if (send_locked(PS_COMMIT, 0, NULL, 0)) {
		pr_perror("Page server %s: can't commit the checkpoint", out.peer);
		return -1;
	}
	return wait_ack();
}

void imgout_end(int dirfd, int ok)
{
	if (out.sk < 0)
		return;
	unlink_staged(dirfd);
	/* after a commit the server keeps the checkpoint even if this is lost */
	if (ps_send(out.sk, ok ? PS_DONE : PS_ABORT, 0, NULL, 0))
		pr_warn("Page server %s: can't tell it the dump %s: %s", out.peer,
			ok ? "is done" : "failed", strerror(errno));
	if (out.tls.fd >= 0)
		tls_unwrap(&out.tls);	/* closes out.sk */
	else
		close(out.sk);
	out.sk = -1;
}
