// SPDX-License-Identifier: GPL-2.0
#define PBID_MOD_SPIN pbid_mod_b_spin
#define PBID_MOD_SALT 0x5b5b5b5bULL
#define PBID_MOD_SPIN_SECTION ".text.pbid_spin"
#include "pbid_mod.h"
MODULE_DESCRIPTION("buildid-mmap lab: code to sample in a module (b)");
