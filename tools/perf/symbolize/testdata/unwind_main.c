// SPDX-License-Identifier: GPL-2.0
//
// The program of the unwinding tests: calls into libunwind_hot.so for MILLISECONDS (default
// 1000) and exits. Usage: unwind_workload [MILLISECONDS]
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

unsigned long unwind_level1(unsigned long n);

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
  double end = now_ms() + ms;
  unsigned long acc = 0;
  while (now_ms() < end)
    acc += unwind_level1(200000);
  printf("unwind_workload: %lu\n", acc & 0xff);
  return 0;
}
