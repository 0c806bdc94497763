/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_RPC_WIRE_H
#define CRIU_RPC_WIRE_H

#include <stdint.h>
#include <sys/types.h>

#include "rpc.pb-c.h"

/*
 * Receives one packet into a malloc()ed *@buf: its length, 0 when the
 * client closed the connection, -1 on an error (errno set).
 */
ssize_t rpc_recv(int sk, uint8_t **buf);
/* Sends @resp, with @fd as SCM_RIGHTS unless it is -1: 0 or -1 (errno). */
int rpc_send(int sk, const CriuResp *resp, int fd);

#endif
