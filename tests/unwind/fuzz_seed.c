// SPDX-License-Identifier: MIT
/*
 * tests/unwind: the source of fuzz_unwind's seeds (small shared objects, no libc). Its
 * call frame information uses every kind of rule the unwinder reads: the CFA in rsp and
 * in rbp (alloca), a CFA expression (a PLT's), remember/restore_state, val_offset,
 * register, an expression rule, a signal frame and an undefined return address.
 * Built by tests/unwind/CMakeLists.txt in fuzzing builds.
 */
#include <alloca.h>

int seed_leaf(int x)
{
	return x * 3 + 1;
}

int seed_alloca(int n)
{
	volatile char *p = alloca(n);

	p[0] = (char)n;
	return seed_leaf(p[0]) + 1;
}

/* hand-written CFI: every directive below becomes one of the DW_CFA_* the reader runs */
__asm__(".text\n"
	".globl seed_rules\n"
	".type seed_rules, @function\n"
	"seed_rules:\n"
	".cfi_startproc\n"
	"	push %rbp\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	".cfi_remember_state\n"
	"	test %edi, %edi\n"
	"	jz 1f\n"
	"	pop %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	".cfi_same_value %rbp\n"
	"	ret\n"
	".cfi_restore_state\n"
	"1:	mov %rbx, %rax\n"
	".cfi_register %rbx, %rax\n"
	".cfi_val_offset %rsp, 0\n"
	"	nop\n"
	/* DW_CFA_expression rbp: DW_OP_breg7 (rsp) 0 */
	".cfi_escape 0x10, 0x06, 0x02, 0x77, 0x00\n"
	"	nop\n"
	/* DW_CFA_def_cfa_expression: the PLT's rsp + 8 + ((rip & 15) >= 11) * 8 */
	".cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22\n"
	"	nop\n"
	".cfi_undefined %rip\n"
	"	leave\n"
	"	ret\n"
	".cfi_endproc\n"
	".size seed_rules, .-seed_rules\n"
	".globl seed_signal\n"
	".type seed_signal, @function\n"
	"	nop\n"
	"seed_signal:\n"
	".cfi_startproc simple\n"
	".cfi_signal_frame\n"
	/* CFA: [rsp + 160]; rip saved at rsp + 168 (an rt_sigframe's layout) */
	".cfi_escape 0x0f, 0x05, 0x77, 0xa0, 0x01, 0x06, 0x23\n"
	".cfi_escape 0x10, 0x10, 0x03, 0x77, 0xa8, 0x01\n"
	".cfi_escape 0x10, 0x06, 0x03, 0x77, 0x98, 0x01\n"
	"	mov $15, %eax\n"
	"	syscall\n"
	".cfi_endproc\n"
	".size seed_signal, .-seed_signal\n");
