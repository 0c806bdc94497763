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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "rpc/rpc.h"
#include "replay.h"

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
int main(int argc, char **argv)
{
	return fuzz_replay("fuzz_rpc", argc, argv);
}
#endif
