/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CHECK_H
#define CRIU_CHECK_H

/*
 * A feature by CRIU's name (criu check --feature): 1 when this criu
 * checkpoints and restores what it stands for on this kernel, 0 when not
 * (*@why says what is missing), -1 for a name CRIU does not have.
 */
int check_feature(const char *name, const char **why);

#endif
