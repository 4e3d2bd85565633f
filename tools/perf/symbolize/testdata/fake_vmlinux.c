/*
 * A stand-in for vmlinux in the report tests: a freestanding ELF linked at the x86-64 kernel
 * text address, with a build ID, symbols and DWARF, and a `_text` symbol at its start (given
 * with --defsym, as the kernel's linker script does). Nothing runs it; the tests only
 * symbolize addresses in it after removing a KASLR offset.
 */
volatile unsigned long fake_sink;

__attribute__((noinline)) void kfunc_alpha(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		fake_sink += i;
}

__attribute__((noinline)) void kfunc_beta(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		fake_sink ^= i;
}

/* Code inlined into kfunc_gamma: a kernel address named from the vmlinux with two frames. */
static inline __attribute__((always_inline)) void kinline_step(unsigned long i) {
  fake_sink += i * 3;
  fake_sink ^= i >> 1;
}

__attribute__((noinline)) void kfunc_gamma(unsigned long n) {
  for (unsigned long i = 0; i < n; i++)
    kinline_step(i);
}
