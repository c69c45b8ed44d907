/*
 * Where an application processor starts: real mode, at the page the SIPI
 * names (below 1 MiB).  smp.c copies this blob there and fills in the
 * parameter block at its end (offsets in smp.h): a GDT, the far pointers
 * (the page's address is only known at run time), the page tables, and the
 * stack, per-CPU area and C entry of the one CPU expected.
 *
 * real mode -> 32-bit protected mode -> long mode on the trampoline's page
 * tables (the kernel's, plus an identity map of the low 2 MiB so this code
 * stays reachable when paging comes on) -> smp_ap_main at its kernel
 * address, which moves to the kernel's own page tables.
 *
 * A CPU whose APIC id is not the one expected (one that missed its turn and
 * woke late) halts here for good instead of taking another CPU's stack.
 */
#include "smp.h"

#define TP(x) (smp_tramp_params - smp_tramp_start + (x))

	.section .rodata
	.align 16
	.globl smp_tramp_start, smp_tramp_end, smp_tramp_params, smp_tramp_pm32, smp_tramp_lm64

	.code16
smp_tramp_start:
	cli
	cld
	movw %cs, %ax
	movw %ax, %ds
	movl $1, TP(TP_ALIVE)
	movl $1, %eax
	cpuid
	shrl $24, %ebx                  /* initial APIC id */
	cmpl TP(TP_APIC), %ebx
	jne 9f
	xorl %esi, %esi
	movw %cs, %si
	shll $4, %esi                   /* esi: this page's physical address */
	lgdtl TP(TP_GDTR)
	movl %cr0, %eax
	orl $1, %eax                    /* PE */
	movl %eax, %cr0
	ljmpl *TP(TP_FAR32)
9:	cli
	hlt
	jmp 9b

	.code32
smp_tramp_pm32:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movl %cr4, %eax
	orl $(1 << 5), %eax             /* PAE */
	movl %eax, %cr4
	movl TP(TP_CR3)(%esi), %eax
	movl %eax, %cr3
	movl $0xC0000080, %ecx          /* EFER */
	rdmsr
	orl $(1 << 8), %eax             /* LME */
	wrmsr
	movl %cr0, %eax
	andl $0x9FFFFFFF, %eax          /* caches on: CD, NW off (INIT sets them) */
	orl $0x80010001, %eax           /* PG, WP, PE */
	movl %eax, %cr0
	ljmpl *TP(TP_FAR64)(%esi)

	.code64
smp_tramp_lm64:
	movl %esi, %esi                 /* the upper halves are undefined here */
	movq TP(TP_STACK)(%rsi), %rsp
	movq TP(TP_PERCPU)(%rsi), %rdi
	movq TP(TP_ENTRY)(%rsi), %rax
	xorl %ebp, %ebp
	jmpq *%rax

	.align 8
smp_tramp_params:
	.space TP_SIZE
smp_tramp_end:

	.section .note.GNU-stack, "", @progbits
