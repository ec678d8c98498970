/* SPDX-License-Identifier: MIT */
/*
 * A SystemTap SDT (USDT) probe with one 8-byte argument, as <sys/sdt.h>'s STAP_PROBE1
 * lays it out (a nop, and a .note.stapsdt note naming it), for workloads built where
 * systemtap-sdt-dev is not installed. x86_64 and arm64 (the argument's register
 * spelled as the assembler prints it).
 */
#ifndef SCORCH_TEST_SDT_H
#define SCORCH_TEST_SDT_H

#define SDT_PROBE1(provider, name, arg)                                                            \
	__asm__ __volatile__("990: nop\n"                                                          \
			     ".pushsection .note.stapsdt,\"?\",\"note\"\n"                         \
			     ".balign 4\n"                                                         \
			     ".4byte 992f-991f, 994f-993f, 3\n"                                    \
			     "991: .asciz \"stapsdt\"\n"                                          \
			     "992: .balign 4\n"                                                    \
			     "993: .8byte 990b\n"                                                  \
			     ".8byte _.stapsdt.base\n"                                             \
			     ".8byte 0\n"                                                          \
			     ".asciz \"" #provider "\"\n"                                          \
			     ".asciz \"" #name "\"\n"                                              \
			     ".asciz \"8@%0\"\n"                                                   \
			     "994: .balign 4\n"                                                    \
			     ".popsection\n"                                                       \
			     ".ifndef _.stapsdt.base\n"                                            \
			     ".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
			     ".weak _.stapsdt.base\n"                                              \
			     ".hidden _.stapsdt.base\n"                                            \
			     "_.stapsdt.base: .space 1\n"                                          \
			     ".size _.stapsdt.base, 1\n"                                           \
			     ".popsection\n"                                                       \
			     ".endif\n"                                                            \
			     :                                                                     \
			     : "r"((unsigned long)(arg)))

#endif
