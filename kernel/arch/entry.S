/*
 * Kernel entry and exit: exception/interrupt stubs and the `syscall` path.
 * Both build a `struct regs` (include/cpu.h) on the kernel stack.
 *
 * GS: in the kernel, GS base is this CPU's per-CPU area (percpu.h); in user
 * mode it is the application's.  Every way in from user mode and every way
 * back out does `swapgs`, so the two trade places (the MSR KERNEL_GS_BASE
 * holds whichever is not in use).
 */
#include "percpu.h"
#define MSR_GS_BASE 0xC0000101
	.macro PUSH_GPRS
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	.endm

	.macro POP_GPRS
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	.endm

	.text
/* One stub per vector; those without a CPU error code push a zero. */
	.macro STUB v
	.align 16
stub_\v:
	.if (\v == 8) || (\v >= 10 && \v <= 14) || (\v == 17) || (\v == 21) || (\v == 29) || (\v == 30)
	.else
	pushq $0
	.endif
	pushq $\v
	jmp trap_common
	.endm

	.altmacro
	.macro STUBS from, to
	STUB \from
	.if \to-\from
	STUBS %(\from+1), \to
	.endif
	.endm
	STUBS 0, 63
	STUBS 64, 127
	STUBS 128, 191
	STUBS 192, 255

	.macro STUBADDR v
	.quad stub_\v
	.endm
	.macro STUBADDRS from, to
	STUBADDR \from
	.if \to-\from
	STUBADDRS %(\from+1), \to
	.endif
	.endm

	.section .rodata
	.align 8
	.globl trap_stubs
trap_stubs:
	STUBADDRS 0, 63
	STUBADDRS 64, 127
	STUBADDRS 128, 191
	STUBADDRS 192, 255
	.noaltmacro

	.text
/* On entry: vector, error code, then the CPU's frame (rip at 16(%rsp), cs at
 * 24(%rsp)).  From user mode: swapgs.  An interrupt in kernel mode finds the
 * kernel's GS (interrupts are off between a swapgs and the return to user
 * mode).  An exception in kernel mode may not: one raised by the return to
 * user mode itself comes after the swapgs, so its GS base is looked at (a
 * kernel address is negative).  Such exceptions are fatal, so nothing needs
 * undoing on the way out, but for an NMI (kernel/smp.c asks a CPU that does
 * not answer where it is), which returns: its swap is undone. */
trap_common:
	cld
	testb $3, 24(%rsp)
	jnz 1f
	cmpq $32, (%rsp)
	jae 2f
	pushq %rax
	pushq %rcx
	pushq %rdx
	movl $MSR_GS_BASE, %ecx
	rdmsr
	testl %edx, %edx
	popq %rdx
	popq %rcx
	popq %rax
	js 2f
	cmpq $2, (%rsp)
	jne 1f
	movq $1, 8(%rsp)                /* an NMI (smp.c's question) returns: note the swap */
1:	swapgs
2:	PUSH_GPRS
	movq %rsp, %rdi
	call trap_handler
	POP_GPRS
	cmpq $2, (%rsp)
	jne 4f
	testb $3, 24(%rsp)
	jnz 4f
	cmpq $1, 8(%rsp)
	jne 4f
	swapgs                          /* taken between a swapgs and its iretq: the user's GS back */
4:	addq $16, %rsp
	testb $3, 8(%rsp)
	jz 3f
	swapgs
3:	iretq

/*
 * syscall: RCX = user RIP, R11 = user RFLAGS, IF already cleared by SFMASK.
 * The per-CPU area holds the user RSP while we switch to the kernel stack.
 */
	.globl syscall_entry
syscall_entry:
	swapgs
	movq %rsp, %gs:PCPU_USER_RSP
	movq %gs:PCPU_KERNEL_RSP, %rsp
	pushq $0x23                     /* ss */
	pushq %gs:PCPU_USER_RSP         /* rsp */
	pushq %r11                      /* rflags */
	pushq $0x2B                     /* cs */
	pushq %rcx                      /* rip */
	pushq $0                        /* error */
	pushq $-1                       /* vector: system call */
	PUSH_GPRS
	movq %rsp, %rdi
	call syscall_dispatch
	testl %eax, %eax
	jnz 1f
	/* Fast return: RCX/R11 are clobbered, as on Linux. */
	POP_GPRS
	addq $16, %rsp
	popq %rcx
	addq $8, %rsp
	popq %r11
	popq %rsp
	swapgs
	sysretq
	/* Full return (signal delivery, sigreturn): every register restored. */
1:	POP_GPRS
	addq $16, %rsp
	swapgs
	iretq

/* thread_switch(save_ksp, new_ksp, prev): saves the callee-saved registers
 * and the stack pointer in *save_ksp, continues on new_ksp where that stack
 * was switched out, and returns there with prev (the thread switched from,
 * in RAX) so its new owner can mark it off the CPU (thread.c). */
	.globl thread_switch
thread_switch:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	movq %rdx, %rax
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret

/* Where a new thread's first switch returns: RAX is the thread switched
 * from, RSP points at the struct regs thread.c built from the parent's
 * clone call; leave through them as a trap would. */
	.globl thread_first
thread_first:
	movq %rax, %rdi
	call thread_started
	POP_GPRS
	addq $16, %rsp
	swapgs
	iretq

/* enter_user(rip, rsp): first entry into the application, all registers clean. */
	.globl enter_user
enter_user:
	movq %gs:PCPU_KERNEL_RSP, %rsp
	pushq $0x23
	pushq %rsi
	pushq $0x202                    /* IF set, nothing else */
	pushq $0x2B
	pushq %rdi
	xorl %eax, %eax
	xorl %ebx, %ebx
	xorl %ecx, %ecx
	xorl %edx, %edx
	xorl %esi, %esi
	xorl %edi, %edi
	xorl %ebp, %ebp
	xorl %r8d, %r8d
	xorl %r9d, %r9d
	xorl %r10d, %r10d
	xorl %r11d, %r11d
	xorl %r12d, %r12d
	xorl %r13d, %r13d
	xorl %r14d, %r14d
	xorl %r15d, %r15d
	swapgs
	iretq

	.section .note.GNU-stack, "", @progbits
