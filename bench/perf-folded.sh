#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# perf-folded.sh FILE: perf's folded stacks of FILE, `perf script -F comm,ip,sym` through the
# fold step in fold-perf-script.awk: perf's side of the bench row for `report --format folded`.
set -euo pipefail
perf script -F comm,ip,sym -i "$1" | awk -f "$(dirname "$0")/fold-perf-script.awk"
