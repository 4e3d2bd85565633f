/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The body of the lab's two test modules. Writing N to a module's spin_ms
 * parameter keeps the writing task in that module's own function for N
 * milliseconds, so that a recording has samples in each module's code.
 * PBID_MOD_SPIN names the function (each module's symbol is its own) and
 * PBID_MOD_SALT makes the two modules' code, and so their build IDs, differ.
 * PBID_MOD_SPIN_SECTION, when defined, puts the function in a section of its
 * own, after .text and (built with -fno-toplevel-reorder) .init.text: a
 * report then has to place it as the kernel lays out a module's code,
 * executable sections first and .init ones left out.
 */
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>

#ifdef PBID_MOD_SPIN_SECTION
#define PBID_MOD_SPIN_ATTR __section(PBID_MOD_SPIN_SECTION)
#else
#define PBID_MOD_SPIN_ATTR
#endif

static u64 pbid_mod_sink;

static int __init pbid_mod_init(void)
{
	/*
	 * Longer than the spin function: counted into the core by mistake, it
	 * would move every sample of b's spin function out of it.
	 */
	asm volatile(".fill 512, 1, 0x90");
	pbid_mod_sink = PBID_MOD_SALT;
	return 0;
}
module_init(pbid_mod_init);

static noinline PBID_MOD_SPIN_ATTR u64 PBID_MOD_SPIN(unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	u64 x = PBID_MOD_SALT;

	while (time_before(jiffies, end)) {
		int i;

		for (i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + PBID_MOD_SALT;
		/* The guest may have one CPU: let the recorder drain. */
		cond_resched();
	}
	return x;
}

static int pbid_mod_spin_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int err = kstrtouint(val, 0, &ms);

	if (err)
		return err;
	if (ms > 10000)
		return -EINVAL;
	WRITE_ONCE(pbid_mod_sink, PBID_MOD_SPIN(ms));
	return 0;
}

static const struct kernel_param_ops pbid_mod_spin_ops = {
	.set = pbid_mod_spin_set,
};
module_param_cb(spin_ms, &pbid_mod_spin_ops, NULL, 0200);
MODULE_LICENSE("GPL");
