// SPDX-License-Identifier: GPL-2.0
/*
 * criu-tls: TLS (GnuTLS) for the page server's connection, as a helper
 * process (Documentation/page-server.md, "TLS"). criu is linked statically
 * and GnuTLS cannot be (Debian ships no static p11-kit); so criu hands
 * this helper the TCP socket and speaks its plain protocol to it through a
 * socketpair, and the plain path keeps its sendmsg and splice untouched.
 *
 *   criu-tls client|server [--host ADDR] [--cacert F] [--cacrl F] [--cert F]
 *            [--key F] [--no-cn-verify] [--no-cert-verify]
 *
 * fd 3: the TCP socket; fd 4: criu's plain end; fd 5: the status: one
 * line, "OK <session>" once the handshake is done and the peer accepted,
 * or the reason it failed; then it is closed. Both sides present a
 * certificate and check the other's against the CA (CRIU's default
 * files). The server then sends one byte: under TLS 1.3 the client's
 * handshake ends before the server has judged the client's certificate,
 * and the dump must learn of a refusal before it freezes anything.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/socket.h>
#include <gnutls/x509.h>

/* CRIU's default PKI paths (the CA's two are used only if present) */
#define DEF_CACERT	"/etc/pki/CA/cacert.pem"
#define DEF_CACRL	"/etc/pki/CA/cacrl.pem"
#define DEF_CERT	"/etc/pki/criu/cert.pem"
#define DEF_KEY		"/etc/pki/criu/private/key.pem"

#define TCP_FD		3
#define PLAIN_FD	4
#define STATUS_FD	5

#define READY		'R'	/* the server's byte: your certificate is accepted */
/*
 * What one read of the plain side takes: GnuTLS then cuts it into full
 * 16 KiB records (TLS's limit), one send each.
 */
#define CHUNK		(1U << 20)
/* How long the peer's TLS close is waited for, once criu is done. */
#define LINGER_S	5

struct tls {
	int server;
	const char *host;	/* client: the server's address, matched against its cert */
	const char *cacert, *cacrl, *cert, *key;
	int no_cn_verify, no_cert_verify;
	gnutls_session_t s;
	gnutls_certificate_credentials_t cred;
};

/* The status line, once: criu logs it as its own error, naming the peer. */
static void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STATUS_FD, line, n) != n)
		return;	/* criu is gone: nobody to tell */
}

static int load_ca(struct tls *t)
{
	const char *ca = t->cacert ? t->cacert : DEF_CACERT;
	const char *crl = t->cacrl ? t->cacrl : DEF_CACRL;
	int ret;

	/* CRIU's rule: a CA given is the only one; else the system's and the default */
	if (!t->cacert)
		gnutls_certificate_set_x509_system_trust(t->cred);
	if (t->cacert || !access(ca, R_OK)) {
		ret = gnutls_certificate_set_x509_trust_file(t->cred, ca, GNUTLS_X509_FMT_PEM);
		if (ret <= 0) {
			say("no CA certificate loaded from %s: %s", ca,
			    ret ? gnutls_strerror(ret) : "none in it");
			return -1;
		}
	}
	if (t->cacrl || !access(crl, R_OK)) {
		ret = gnutls_certificate_set_x509_crl_file(t->cred, crl, GNUTLS_X509_FMT_PEM);
		if (ret < 0) {
			say("can't load the revocation list %s: %s", crl, gnutls_strerror(ret));
			return -1;
		}
	}
	return 0;
}

static int load_creds(struct tls *t)
{
	const char *cert = t->cert ? t->cert : DEF_CERT;
	const char *key = t->key ? t->key : DEF_KEY;
	int ret;

	if (gnutls_certificate_allocate_credentials(&t->cred) < 0) {
		say("can't allocate the credentials");
		return -1;
	}
	if (load_ca(t))
		return -1;
	ret = gnutls_certificate_set_x509_key_file(t->cred, cert, key, GNUTLS_X509_FMT_PEM);
	if (ret < 0) {
		say("can't load certificate %s with key %s: %s", cert, key, gnutls_strerror(ret));
		return -1;
	}
	return 0;
}

/* Why the peer's certificate was refused here, in GnuTLS's words. */
static void say_untrusted(struct tls *t)
{
	unsigned int status = gnutls_session_get_verify_cert_status(t->s);
	gnutls_datum_t why = { NULL, 0 };

	if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &why, 0))
		why.data = NULL;
	while (why.data && why.size && (why.data[why.size - 1] == ' ' || !why.data[why.size - 1]))
		why.data[--why.size] = '\0';
	say("its certificate is refused: %s", why.data ? (char *)why.data : "not trusted");
	gnutls_free(why.data);
}

static void say_failed(struct tls *t, int err)
{
	if (err == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR)
		say_untrusted(t);
	else if (err == GNUTLS_E_FATAL_ALERT_RECEIVED)
		say("it refused the TLS handshake (alert: %s)%s",
		    gnutls_alert_get_name(gnutls_alert_get(t->s)),
		    t->server ? "" : "; does it trust the CA of our certificate?");
	else if (err == GNUTLS_E_UNEXPECTED_PACKET_LENGTH || err == GNUTLS_E_UNEXPECTED_PACKET ||
		 err == GNUTLS_E_UNSUPPORTED_VERSION_PACKET)
		say("it does not speak TLS (%s); is it running with --tls?",
		    gnutls_strerror(err));
	else if (err == GNUTLS_E_PREMATURE_TERMINATION)
		say("it closed the connection in the TLS handshake (its log says why)");
	else
		say("the TLS handshake failed: %s", gnutls_strerror(err));
}

/*
 * After a failed handshake: the peer must get our alert. Closing with its
 * last flight unread would reset the connection under it; so our side
 * ends first and its bytes are read until it closes (a while at most).
 */
static void linger(void)
{
	struct pollfd p = { .fd = TCP_FD, .events = POLLIN };
	char buf[4096];
	int i;

	shutdown(TCP_FD, SHUT_WR);
	for (i = 0; i < 100 && poll(&p, 1, 10 * LINGER_S) >= 0; i++)
		if (read(TCP_FD, buf, sizeof(buf)) <= 0)
			break;
}

static int handshake(struct tls *t)
{
	int ret;

	do
		ret = gnutls_handshake(t->s);
	while (ret < 0 && !gnutls_error_is_fatal(ret));
	if (ret < 0) {
		gnutls_alert_send_appropriate(t->s, ret);
		say_failed(t, ret);
		linger();
		return -1;
	}
	return 0;
}

static int send_all(struct tls *t, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = gnutls_record_send(t->s, buf, len);
		if (n == GNUTLS_E_INTERRUPTED || n == GNUTLS_E_AGAIN)
			continue;	/* the same arguments again, as GnuTLS asks */
		if (n < 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

static ssize_t recv_some(struct tls *t, void *buf, size_t len)
{
	ssize_t n;

	do
		n = gnutls_record_recv(t->s, buf, len);
	while (n == GNUTLS_E_INTERRUPTED || n == GNUTLS_E_AGAIN);
	return n;
}

/* Server: READY once the client is accepted; client: hears it, or the alert. */
static int confirm(struct tls *t)
{
	char c = READY;
	ssize_t n;

	if (t->server) {
		if (!send_all(t, &c, 1))
			return 0;
		say("it went away after the TLS handshake");
		return -1;
	}
	n = recv_some(t, &c, 1);
	if (n == 1 && c == READY)
		return 0;
	if (n < 0)
		say_failed(t, n);
	else
		say("it closed the connection after the TLS handshake");
	linger();
	return -1;
}

static int start(struct tls *t)
{
	char *desc;

	if (load_creds(t))
		return -1;
	if (gnutls_init(&t->s, (t->server ? GNUTLS_SERVER : GNUTLS_CLIENT) | GNUTLS_NO_SIGNAL) ||
	    gnutls_set_default_priority(t->s) ||
	    gnutls_credentials_set(t->s, GNUTLS_CRD_CERTIFICATE, t->cred)) {
		say("can't start a TLS session");
		return -1;
	}
	if (t->server) {
		gnutls_certificate_server_set_request(t->s, t->no_cert_verify ?
						      GNUTLS_CERT_REQUEST : GNUTLS_CERT_REQUIRE);
		/*
		 * No list of our CAs: the client then presents its certificate
		 * whoever signed it, and a refusal names the reason here
		 * ("issuer unknown"), not "no certificate".
		 */
		gnutls_certificate_send_x509_rdn_sequence(t->s, 1);
	}
	/* checked in the handshake: a refusal is an alert the peer hears */
	if (!t->no_cert_verify)
		gnutls_session_set_verify_cert(t->s, t->server || t->no_cn_verify ? NULL : t->host,
					       0);
	gnutls_transport_set_int(t->s, TCP_FD);
	gnutls_handshake_set_timeout(t->s, GNUTLS_DEFAULT_HANDSHAKE_TIMEOUT);
	if (handshake(t) || confirm(t))
		return -1;
	desc = gnutls_session_get_desc(t->s);
	say("OK %s, kernel TLS offload %s", desc ? desc : "",
	    gnutls_transport_is_ktls_enabled(t->s) ? "on" : "off");
	gnutls_free(desc);
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	for (; len; buf += n, len -= n) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n <= 0)
			return -1;
	}
	return 0;
}

/*
 * The peer's records to criu. A close of the connection, or an error, is
 * an end criu sees on its side: it says what it was in the middle of.
 */
static void *down(void *arg)
{
	struct tls *t = arg;
	char *buf = malloc(CHUNK);
	ssize_t n;

	while (buf && (n = recv_some(t, buf, CHUNK)) > 0)
		if (write_all(PLAIN_FD, buf, n))
			break;
	free(buf);
	shutdown(PLAIN_FD, SHUT_WR);
	return NULL;
}

/* criu's bytes to the peer, until criu closes its end; then the TLS close. */
static int up(struct tls *t)
{
	char *buf = malloc(CHUNK);
	ssize_t n;

	if (!buf)
		return 1;
	for (;;) {
		n = read(PLAIN_FD, buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (send_all(t, buf, n)) {
			/* criu's next write fails: it reports the lost connection */
			shutdown(PLAIN_FD, SHUT_RDWR);
			return 1;
		}
	}
	gnutls_bye(t->s, GNUTLS_SHUT_WR);
	return n < 0;
}

static int parse(int argc, char **argv, struct tls *t)
{
	static const struct option lo[] = {
		{ "host", required_argument, NULL, 'h' },
		{ "cacert", required_argument, NULL, 'a' },
		{ "cacrl", required_argument, NULL, 'r' },
		{ "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ "no-cn-verify", no_argument, NULL, 'n' },
		{ "no-cert-verify", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	if (argc < 2 || (strcmp(argv[1], "client") && strcmp(argv[1], "server")))
		return -1;
	t->server = !strcmp(argv[1], "server");
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'h': t->host = optarg; break;
		case 'a': t->cacert = optarg; break;
		case 'r': t->cacrl = optarg; break;
		case 'c': t->cert = optarg; break;
		case 'k': t->key = optarg; break;
		case 'n': t->no_cn_verify = 1; break;
		case 'N': t->no_cert_verify = 1; break;
		default: return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct tls t = { 0 };
	struct timespec until;
	pthread_t th;
	int ret;

	if (parse(argc, argv, &t)) {
		fprintf(stderr, "criu-tls: run by criu only (client|server, fds 3, 4, 5)\n");
		return 2;
	}
	if (start(&t))
		return 1;
	close(STATUS_FD);
	if (pthread_create(&th, NULL, down, &t)) {
		shutdown(PLAIN_FD, SHUT_RDWR);
		return 1;
	}
	/*
	 * One thread sends and one receives, which GnuTLS allows on a
	 * session. When criu closes its end the work is done.
	 */
	ret = up(&t);
	/*
	 * The peer's end, briefly: exiting with its bytes unread would reset
	 * the connection under what it has not read yet.
	 */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += LINGER_S;
	pthread_timedjoin_np(th, NULL, &until);
	return ret;
}
