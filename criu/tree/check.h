/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TREE_CHECK_H
#define CRIU_TREE_CHECK_H

#include <stdint.h>

#include "pstree.pb-c.h"

/*
 * The tree as pstree.img holds it, checked alike by dump (the tree it is
 * about to write) and restore (the one it read): @what names it in the
 * one error line; @root is the root's pid the inventory names.
 */
int tree_check(const char *what, const PstreeEntry *pe, uint32_t root);

#endif
