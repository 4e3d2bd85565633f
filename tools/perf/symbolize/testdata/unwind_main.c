// SPDX-License-Identifier: GPL-2.0
//
// The program of the unwinding tests: calls into libunwind_hot.so for MILLISECONDS (default
// 1000) and exits; with "realign", through the library's stack-realigning unwind_realign
// rather than its chain of calls. Usage: unwind_workload [MILLISECONDS [realign]]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

unsigned long unwind_level1(unsigned long n);
unsigned long unwind_realign(unsigned long n);

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
  double end = now_ms() + ms;
  int realign = argc > 2 && strcmp(argv[2], "realign") == 0;
  unsigned long acc = 0;
  while (now_ms() < end)
    acc += realign ? unwind_realign(200000) : unwind_level1(200000);
  printf("unwind_workload: %lu\n", acc & 0xff);
  return 0;
}
