// SPDX-License-Identifier: GPL-2.0
//
// pbid-workload: burns CPU for N milliseconds, mostly inside libpbidwork.so, so that a
// profile has samples in an executable and a shared library that both carry build ids.
// Usage: pbid-workload [MILLISECONDS] (default 500)
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

unsigned long pbid_work_spin(unsigned long iterations);

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static unsigned long main_spin(unsigned long n) {
  volatile unsigned long x = 0;
  for (unsigned long i = 0; i < n; i++)
    x += i ^ (x >> 3);
  return x;
}

int main(int argc, char** argv) {
  long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 500;
  if (ms <= 0) {
    fprintf(stderr, "usage: %s [MILLISECONDS]\n", argv[0]);
    return 2;
  }
  double end = now_ms() + ms;
  unsigned long acc = 0;
  while (now_ms() < end) {
    acc += pbid_work_spin(200000);
    acc += main_spin(20000);
  }
  printf("pbid-workload: %lu\n", acc & 0xff);
  return 0;
}
