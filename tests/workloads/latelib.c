// SPDX-License-Identifier: MIT
/* latelib: the library tests/workloads/latemap.c loads with dlopen() after it was sampled. */
__attribute__((noinline)) unsigned long late_spin(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++)
		x += i;
	return x;
}
