// SPDX-License-Identifier: GPL-2.0
/*
 * One request packet to a criu_req, or one line saying why not. Nothing
 * here touches the system: the fuzz target (test/fuzz/fuzz_rpc.c) feeds
 * it, and the option mapping after it, whatever bytes it likes.
 *
 * protobuf-c already refuses what does not parse and a missing required
 * field; on top, a request may not carry fields this criu does not know
 * (a newer client would be asking for something unseen) nor enum values
 * outside CRIU's.
 */
#include <stdio.h>
#include <string.h>

#include "rpc/rpc.h"

#define MAX_DEPTH	8

static int check_enum(const ProtobufCFieldDescriptor *f, const void *p, char *err,
		      size_t errlen, const char *msg)
{
	const ProtobufCEnumDescriptor *e = f->descriptor;
	int v = *(const int *)p;

	if (protobuf_c_enum_descriptor_get_value(e, v))
		return 0;
	snprintf(err, errlen, "Request field %s.%s has value %d, not one of %s", msg, f->name,
		 v, e->name);
	return -1;
}

static int check_message(const ProtobufCMessage *m, char *err, size_t errlen, int depth);

/* The values of field @f of @m: enums checked, messages walked. */
static int check_field(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
		       char *err, size_t errlen, int depth)
{
	const char *base = (const char *)m;
	const char *p = base + f->offset;
	size_t i, n = 1;

	if (f->type != PROTOBUF_C_TYPE_ENUM && f->type != PROTOBUF_C_TYPE_MESSAGE)
		return 0;
	if (f->label == PROTOBUF_C_LABEL_REPEATED) {
		n = *(const size_t *)(base + f->quantifier_offset);
		p = *(char *const *)p;
	} else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type == PROTOBUF_C_TYPE_ENUM &&
		   !*(const protobuf_c_boolean *)(base + f->quantifier_offset)) {
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (f->type == PROTOBUF_C_TYPE_ENUM) {
			if (check_enum(f, p + i * sizeof(int), err, errlen,
				       m->descriptor->name))
				return -1;
			continue;
		}
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			if (check_message(((ProtobufCMessage *const *)p)[i], err, errlen,
					  depth + 1))
				return -1;
		} else if (*(ProtobufCMessage *const *)p &&
			   check_message(*(ProtobufCMessage *const *)p, err, errlen, depth + 1)) {
			return -1;
		}
	}
	return 0;
}

static int check_message(const ProtobufCMessage *m, char *err, size_t errlen, int depth)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	unsigned i;

	if (depth > MAX_DEPTH) {
		snprintf(err, errlen, "Request nests %s deeper than criu_req does", d->name);
		return -1;
	}
	if (m->n_unknown_fields) {
		snprintf(err, errlen, "Request has field %u in %s, unknown to this criu "
			 "(CRIU %d.%d's protocol)", m->unknown_fields[0].tag, d->name,
			 RPC_CRIU_MAJOR, RPC_CRIU_MINOR);
		return -1;
	}
	for (i = 0; i < d->n_fields; i++)
		if (check_field(m, &d->fields[i], err, errlen, depth))
			return -1;
	return 0;
}

CriuReq *rpc_decode(const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	CriuReq *req;

	if (!len || len > RPC_MAX_MSG) {
		snprintf(err, errlen, "Request of %zu bytes: %s", len,
			 len ? "too large" : "empty");
		return NULL;
	}
	req = criu_req__unpack(NULL, len, buf);
	if (!req) {
		snprintf(err, errlen, "Request of %zu bytes is not a criu_req: truncated, "
			 "garbage, or a required field is missing", len);
		return NULL;
	}
	if (check_message(&req->base, err, errlen, 0)) {
		criu_req__free_unpacked(req, NULL);
		return NULL;
	}
	return req;
}
