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
