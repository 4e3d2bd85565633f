// SPDX-License-Identifier: GPL-2.0
#include "record_options.h"

#include <gtest/gtest.h>
