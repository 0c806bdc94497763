// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target of the RPC request decoder (criu/rpc/decode.c) and of what
 * runs on a decoded request before any system call: the option table, in
 * both modes, and the config-file parser on the same bytes as text.
 *
 * A request that decodes must hold what the server relies on: every
 * required field there (protobuf_c_message_check), and packing it again
 * gives bytes that decode again. A request that does not decode must leave
 * a reason. Any violation aborts.
 *
 * Two builds. libFuzzer (clang):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=gnu11 -D_GNU_SOURCE \
 *     -DCRIU_VERSION='"fuzz"' -Icriu -Ibuild/images test/fuzz/fuzz_rpc.c \
 *     criu/rpc/decode.c criu/rpc/options.c criu/core/log.c criu/core/util.c \
 *     build/images/rpc.pb-c.c -lprotobuf-c -o fuzz_rpc
 *   ./fuzz_rpc test/fuzz/corpus-rpc
 * and, with FUZZ_STANDALONE, a replay driver that meson builds and runs as
 * a test: every seed of the corpus, then deterministic mutations of each
 * (bit flips, cuts, splices, inserted varints).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "rpc/rpc.h"

static void die(const char *what)
{
	fprintf(stderr, "fuzz_rpc: %s\n", what);
	abort();
}

static void check_roundtrip(const CriuReq *req)
{
	size_t len = criu_req__get_packed_size(req);
	uint8_t *buf = malloc(len ? len : 1);
	char err[256];
	CriuReq *again;

	if (!buf)
		return;
	if (!protobuf_c_message_check(&req->base))
		die("a decoded request misses a required field");
	if (criu_req__pack(req, buf) != len)
		die("packing gives another size");
	again = rpc_decode(buf, len, err, sizeof(err));
	if (!again && len)
		die("a packed request does not decode again");
	if (again)
		criu_req__free_unpacked(again, NULL);
	free(buf);
}

static void map_options(const CriuReq *req)
{
	struct rpc_setup rs;

	if (rpc_setup_from_opts(&rs, req->opts, req->type, RPC_SWRK) && !rs.err[0])
		die("a refused request without a reason");
	rpc_setup_free(&rs);
	if (rpc_setup_from_opts(&rs, req->opts, req->type, RPC_SERVICE) && !rs.err[0])
		die("a refused request without a reason (service)");
	rpc_setup_free(&rs);
}

static void config_text(const uint8_t *data, size_t size)
{
	struct rpc_setup rs;
	char *text = malloc(size + 1);

	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	rpc_setup_from_opts(&rs, NULL, CRIU_REQ_TYPE__DUMP, RPC_SWRK);
	if (rpc_setup_config_text(&rs, text, "fuzz.conf") && !rs.err[0])
		die("a refused config without a reason");
	rpc_setup_free(&rs);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	char err[256] = "";
	CriuReq *req;

	if (!quiet) {
		log_open(NULL, 0);	/* errors kept, nothing printed */
		log_set_stderr_errors(0);
		quiet = 1;
	}
	req = rpc_decode(data, size, err, sizeof(err));
	if (!req) {
		if (!err[0])
			die("a request refused without a reason");
	} else {
		check_roundtrip(req);
		map_options(req);
		criu_req__free_unpacked(req, NULL);
	}
	config_text(data, size);
	return 0;
}

#ifdef FUZZ_STANDALONE
#define MUTATIONS	5000

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)rnd_state;
}

/* One mutation of @in into @out (room for @len + 16 bytes); its length. */
static size_t mutate(const uint8_t *in, size_t len, uint8_t *out)
{
	size_t n = len, at = len ? rnd() % len : 0, i, k;

	memcpy(out, in, len);
	switch (rnd() % 5) {
	case 0:		/* flip bits */
		for (i = 0; n && i < 1 + rnd() % 3; i++)
			out[rnd() % n] ^= 1 << (rnd() % 8);
		break;
	case 1:		/* cut */
		n = at;
		break;
	case 2:		/* a varint or a key in the middle */
		k = 1 + rnd() % 10;
		memmove(out + at + k, out + at, len - at);
		for (i = 0; i < k; i++)
			out[at + i] = (i + 1 < k ? 0x80 : 0) | (rnd() & 0x7f);
		n = len + k;
		break;
	case 3:		/* a byte of extremes */
		if (n)
			out[at] = (uint8_t[]){ 0x00, 0x7f, 0x80, 0xff }[rnd() % 4];
		break;
	default:	/* repeat a slice */
		k = len - at > 16 ? 16 : len - at;
		memmove(out + at + k, out + at, len - at);
		n = len + k;
		break;
	}
	return n;
}

static int run_file(const char *path)
{
	uint8_t in[1 << 16], out[(1 << 16) + 16];
	size_t len, n;
	FILE *f = fopen(path, "rb");
	int i;

	if (!f)
		return 0;
	len = fread(in, 1, sizeof(in) - 16, f);
	fclose(f);
	LLVMFuzzerTestOneInput(in, len);
	for (i = 0; i < MUTATIONS; i++) {
		n = mutate(in, len, out);
		LLVMFuzzerTestOneInput(out, n);
		if (n <= sizeof(in) - 16 && rnd() % 4 == 0) {
			memcpy(in, out, n);	/* mutations build on each other */
			len = n;
		}
	}
	return 1;
}

int main(int argc, char **argv)
{
	char path[4096];
	struct dirent *de;
	int i, files = 0;
	DIR *d;

	for (i = 1; i < argc; i++) {
		d = opendir(argv[i]);
		if (!d) {
			files += run_file(argv[i]);
			continue;
		}
		while ((de = readdir(d)))
			if (de->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
				files += run_file(path);
			}
		closedir(d);
	}
	printf("fuzz_rpc: %d seeds, %d inputs each, no finding\n", files, MUTATIONS + 1);
	return files ? 0 : 1;
}
#endif
