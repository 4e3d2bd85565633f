// SPDX-License-Identifier: GPL-2.0
//
// The library of the unwinding tests: unwind_hot sits four calls below the program's main,
// all of it built -O2 -fomit-frame-pointer, so that only the unwind tables lead back to main.
// Each call is followed by work on its result: none is a tail call, every frame stays.
// UNWIND_SALT changes the code, and with it the build ID, of the rebuilt library.
#ifndef UNWIND_SALT
#define UNWIND_SALT 1
#endif

volatile unsigned long unwind_sink;

#if UNWIND_SALT != 1
// The rebuild's functions lie elsewhere than the original's, so that the original's unwind
// tables do not fit it.
__attribute__((noinline, noclone)) unsigned long unwind_pad(unsigned long n) {
  unsigned long x = 0;
  for (unsigned long i = 0; i < n; i++)
    x += (x << 3) ^ (i * 0x9e3779b97f4a7c15UL) ^ (x >> 7);
  return x;
}
#endif

__attribute__((noinline, noclone)) unsigned long unwind_hot(unsigned long n) {
  unsigned long x = UNWIND_SALT;
  for (unsigned long i = 0; i < n; i++)
    x = x * 6364136223846793005UL + i;
  return x;
}

__attribute__((noinline, noclone)) unsigned long unwind_level3(unsigned long n) {
  unsigned long v = unwind_hot(n);
  unwind_sink += v;
  return v ^ n;
}

__attribute__((noinline, noclone)) unsigned long unwind_level2(unsigned long n) {
  unsigned long v = unwind_level3(n + 1);
  unwind_sink += v;
  return v ^ n;
}

__attribute__((noinline, noclone)) unsigned long unwind_level1(unsigned long n) {
  unsigned long v = unwind_level2(n + 1);
  unwind_sink += v;
  return v ^ n;
}

// unwind_hot called from a frame found only through rbx, as glibc's lazy-binding trampoline
// (_dl_runtime_resolve) realigns its stack: it saves rbx, keeps its entry stack pointer there,
// aligns rsp down to 64 bytes, and its unwind table finds its caller from rbx. unwind_hot
// never saves rbx, so the unwinder must know that the psABI keeps rbx across the call.
#if defined(__x86_64__)
unsigned long unwind_realign(unsigned long n);
__asm__(
    "	.text\n"
    "	.globl unwind_realign\n"
    "	.type unwind_realign, @function\n"
    "unwind_realign:\n"
    "	.cfi_startproc\n"
    "	pushq %rbx\n"
    "	.cfi_adjust_cfa_offset 8\n"
    "	.cfi_rel_offset %rbx, 0\n"
    "	movq %rsp, %rbx\n"
    "	.cfi_def_cfa_register %rbx\n"
    "	andq $-64, %rsp\n"
    "	subq $192, %rsp\n"
    "	call unwind_hot\n"
    "	movq %rbx, %rsp\n"
    "	.cfi_def_cfa_register %rsp\n"
    "	popq %rbx\n"
    "	.cfi_adjust_cfa_offset -8\n"
    "	.cfi_restore %rbx\n"
    "	ret\n"
    "	.cfi_endproc\n"
    "	.size unwind_realign, .-unwind_realign\n");
#else
__attribute__((noinline, noclone)) unsigned long unwind_realign(unsigned long n) {
  unsigned long v = unwind_hot(n);
  unwind_sink += v;
  return v;
}
#endif
