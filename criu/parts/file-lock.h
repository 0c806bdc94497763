/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_LOCK_H
#define CRIU_PARTS_FILE_LOCK_H

#include "parts/file-kind.h"

/*
 * The fd table's check (file.c) hands every fd of every task here: the
 * locks its fdinfo shows are refused without --file-locks, else noted
 * (once each, however many fds show one) for file-lock.img.
 */
int file_lock_scan(struct dump_ctx *dc, const struct fd_dump *f);

#endif
