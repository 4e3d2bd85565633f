// SPDX-License-Identifier: GPL-2.0
// Burns CPU for the milliseconds given as its argument. Built twice with another VARIANT, so
// that two files of the same name differ.
#include <stdlib.h>
#include <time.h>

#ifndef VARIANT
#define VARIANT 1
#endif

volatile unsigned long sink;

// The other variant is also longer: same-length variants whose differences lie between their
// first and last 4 KiB have one file hash (the limit identities.sh shows).
#if VARIANT != 1
__attribute__((used)) static const char longer[4096] = "another variant";
#endif

__attribute__((noinline)) static void spin(void) {
  for (unsigned long i = 0; i < 100000; i++)
    sink += i * VARIANT;
}

int main(int argc, char** argv) {
  struct timespec t0, t;
  long ms = argc > 1 ? atol(argv[1]) : 200;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    spin();
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
  return 0;
}
