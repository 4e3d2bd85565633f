// SPDX-License-Identifier: GPL-2.0
// The shared library half of pbid-workload: where most samples land.
__attribute__((noinline)) unsigned long pbid_work_spin(unsigned long iterations) {
  volatile unsigned long h = 1469598103934665603UL;
  for (unsigned long i = 0; i < iterations; i++)
    h = (h ^ i) * 1099511628211UL;
  return h;
}
