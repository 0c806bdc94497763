/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_RPC_SERVER_H
#define CRIU_RPC_SERVER_H

#include "rpc/rpc.h"

/*
 * Serves the client on @sk until it closes, a request fails, or one comes
 * without keep_open. 0 when the last request succeeded.
 */
int rpc_serve(int sk, enum rpc_mode mode);

#endif
