/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_IMAGE_IMGOUT_H
#define CRIU_IMAGE_IMGOUT_H

/*
 * Where a dump's images go: files in the images directory, or, with
 * --page-server, a page server's connection (Documentation/page-server.md).
 * img_write() and the page store write through imgout_create/write/close;
 * the raw stores the kernel fills by fd (shmem, System V, tmpfs; some in a
 * helper process) are made in the images directory as ever and sent, then
 * removed there, by imgout_commit(). A local file and a remote one look the
 * same to the writer.
 */
#include <stddef.h>
#include <stdint.h>

/* The frames, both ways: a header, then len bytes of payload. */
struct ps_hdr {
	uint32_t type;		/* PS_* */
	uint32_t file;		/* the file's number, chosen by the dump */
	uint64_t len;		/* payload bytes */
} __attribute__((packed));

enum {
	PS_HELLO = 1,		/* payload: PS_MAGIC, PS_VERSION (u32 each) */
	PS_OPEN,		/* payload: the file's name */
	PS_DATA,		/* payload: the file's next bytes */
	PS_CLOSE,		/* no payload */
	PS_COMMIT,		/* every file is there: sync, answer PS_ACK */
	PS_DONE,		/* the dump succeeded: the server exits 0 */
	PS_ABORT,		/* the dump failed: the server removes what it wrote */
	PS_ACK,		/* server: the checkpoint is complete and synced */
	PS_ERR,		/* server: payload a reason; it closes after this */
	PS_NR
};

#define PS_MAGIC	0x50475352u	/* "RSGP" */
#define PS_VERSION	1u
#define PS_MAX_NAME	255
#define PS_MAX_DATA	(16U << 20)	/* one DATA frame at most */
#define PS_MAX_FILES	64		/* open at once */

struct imgout_file {
	int fd;			/* local: the file */
	uint32_t nr;		/* remote: its number on the connection */
};

/* For errors: "" locally, else " to page server ADDR:PORT". */
const char *imgout_where(void);

/*
 * Starts sending to the page server at @addr:@port (HELLO sent), through
 * TLS if @tls->on (image/tls.h). @staged:
 * the names of the stores made in @dirfd and sent at the commit (NULL
 * ends it; img_staged_stores()); an older dump's are removed now. 0 or -1
 * logged.
 */
struct tls_opts;
int imgout_connect(int dirfd, const char *addr, int port, const struct tls_opts *tls,
		   const char *const *staged);
int imgout_remote(void);

/*
 * Creates image @name in @dirfd, or on the server; 0 or -1 logged. Write
 * and close return -1 with errno, for the caller to say what failed.
 */
int imgout_create(int dirfd, const char *name, struct imgout_file *f);
int imgout_write(struct imgout_file *f, const void *buf, size_t len);
int imgout_close(struct imgout_file *f);

/*
 * The images are written: locally syncfs(@dirfd); remotely the staged
 * stores go, then COMMIT, and the server's ACK says they are safe there.
 */
int imgout_commit(int dirfd);
/* End of the dump: DONE (@ok) or ABORT; staged stores removed; closes. */
void imgout_end(int dirfd, int ok);

/*
 * The server's side (psrecv.c): one dump's images from @sk into @dirfd.
 * 0 once the dump said DONE after a commit; -1 logged (what it wrote is
 * removed unless the checkpoint was committed).
 */
int ps_receive(int dirfd, int sk);
/* Reads exactly @len bytes; 0, or -1 (errno, 0 at EOF). */
int ps_read_full(int sk, void *buf, size_t len);
/*
 * The socket address of numeric IPv4 or IPv6 @addr (NULL: any IPv4) and
 * @port; -1 if @addr is not one (a static criu has no name service).
 */
struct sockaddr_storage;
int ps_sockaddr(const char *addr, int port, struct sockaddr_storage *ss, unsigned int *len);
/* Sends one frame; 0 or -1 with errno. */
int ps_send(int sk, uint32_t type, uint32_t file, const void *p, size_t len);

#endif
