/*
 * The first user-mode code of every program: process_start copies this
 * below the program's initial stack and enters user mode here instead of
 * at the program's entry.  It clears what the CPU still holds of the
 * previous program's AVX and AVX-512 registers (the kernel clears x87/SSE
 * with fxrstor at the end of a job, job/end.c), then jumps to the entry
 * stored in the slot at its end, with the general registers enter_user
 * cleared still clear.  Only the program's own pushes overwrite it later.
 *
 * In user mode because a hypervisor that emulates kernel mode may lack VEX
 * and EVEX instructions (kvm_pvm: the VM stops), and asking the CPU which
 * state is enabled (xgetbv) because under kvm_pvm user mode runs with the
 * host's XCR0, whatever the kernel set: AVX registers a program wrote there
 * survived the end of its job until this clear.
 */
	.section .rodata
	.globl user_start, user_start_entry, user_start_end
	.balign 16
user_start:
	movl $1, %eax
	cpuid
	btl $27, %ecx                   /* OSXSAVE: xgetbv may be used */
	jnc 2f
	xorl %ecx, %ecx
	xgetbv
	testb $4, %al                   /* AVX state enabled */
	jz 2f
	vzeroall
	andb $0xE0, %al                 /* opmask, ZMM0-15 upper, ZMM16-31 */
	cmpb $0xE0, %al
	jne 2f
	.irp n, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	vpxord %zmm\n, %zmm\n, %zmm\n
	.endr
	.irp n, 0, 1, 2, 3, 4, 5, 6, 7
	kxorw %k\n, %k\n, %k\n
	.endr
2:	xorl %eax, %eax
	xorl %ebx, %ebx
	xorl %ecx, %ecx
	xorl %edx, %edx
	jmp *user_start_entry(%rip)
	.balign 8
user_start_entry:
	.quad 0
user_start_end:

	.section .note.GNU-stack, "", @progbits
