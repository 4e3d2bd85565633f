// SPDX-License-Identifier: GPL-2.0
#define PBID_MOD_SPIN pbid_mod_a_spin
#define PBID_MOD_SALT 0xa5a5a5a5ULL
#include "pbid_mod.h"
MODULE_DESCRIPTION("buildid-mmap lab: code to sample in a module (a)");
