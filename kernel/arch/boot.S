/*
 * Multiboot (v1) entry.  The header carries the a.out-kludge address fields
 * (flag 16) so GRUB, iPXE and `qemu -kernel` all load the image the same way:
 * as a flat copy of the file into physical memory at 1 MiB, whatever the ELF
 * headers say (iPXE refuses a plain ELF64 multiboot image; QEMU too).  The
 * loader enters _start32 in 32-bit protected mode; we build page tables,
 * enable long mode and jump to the kernel's higher-half address.
 *
 * Virtual layout set up here (2 MiB pages):
 *   0x0000000000000000 +4G  identity (only until kmain drops it: user space)
 *   0xFFFF800000000000 +4G  direct map of physical memory (PHYS_BASE)
 *   0xFFFFFFFF80000000 +1G  kernel image (KERNEL_VMA), -mcmodel=kernel
 */
#include "layout.h"

#define MB_MAGIC     0x1BADB002
#define MB_FLAGS     ((1 << 0) | (1 << 1) | (1 << 16))
#define PHYS(x)      ((x) - KERNEL_VMA)

#define PTE_P   0x001
#define PTE_W   0x002
#define PTE_PWT 0x008
#define PTE_PCD 0x010
#define PTE_PS  0x080

	.section .multiboot, "a"
	.align 4
mb_header:
	.long MB_MAGIC
	.long MB_FLAGS
	.long -(MB_MAGIC + MB_FLAGS)
	.long _mb_header_phys          /* header_addr */
	.long _load_start_phys         /* load_addr */
	.long _load_end_phys           /* load_end_addr */
	.long _bss_end_phys            /* bss_end_addr */
	.long _start32_phys            /* entry_addr */
	.globl mb_header

	.section .boot.text, "ax"
	.code32
	.globl _start32
_start32:
	cli
	cld
	movl $_boot_stack_top_phys, %esp
	movl %eax, %edi                 /* multiboot magic -> 1st C argument */
	movl %ebx, %esi                 /* multiboot info  -> 2nd C argument */

	/* Long mode present?  If not, say so on COM1 and stop. */
	movl $0x80000000, %eax
	cpuid
	cmpl $0x80000001, %eax
	jb no_long_mode
	movl $0x80000001, %eax
	cpuid
	btl $29, %edx
	jnc no_long_mode

	/* boot_pd: 4 page directories, 2048 x 2 MiB = 4 GiB.  3-4 GiB is the
	 * PCI/APIC hole on PCs: map it uncached. */
	movl $_boot_pd_phys, %ebx
	xorl %ecx, %ecx
1:	movl %ecx, %eax
	shll $21, %eax
	orl $(PTE_P | PTE_W | PTE_PS), %eax
	cmpl $1536, %ecx
	jb 2f
	orl $(PTE_PCD | PTE_PWT), %eax
2:	movl %eax, (%ebx, %ecx, 8)
	movl $0, 4(%ebx, %ecx, 8)
	incl %ecx
	cmpl $2048, %ecx
	jb 1b

	/* boot_pdpt_low (identity) and boot_pdpt_phys (direct map) both point
	 * at the four PDs; boot_pdpt_high[510] points at PD0 (kernel image). */
	xorl %ecx, %ecx
3:	movl %ecx, %eax
	shll $12, %eax
	addl $(_boot_pd_phys + PTE_P + PTE_W), %eax
	movl $_boot_pdpt_low_phys, %ebx
	movl %eax, (%ebx, %ecx, 8)
	movl $_boot_pdpt_phys_phys, %ebx
	movl %eax, (%ebx, %ecx, 8)
	incl %ecx
	cmpl $4, %ecx
	jb 3b
	movl $_boot_pdpt_high_phys, %ebx
	movl $(_boot_pd_phys + PTE_P + PTE_W), 510*8(%ebx)

	movl $_boot_pml4_phys, %ebx
	movl $(_boot_pdpt_low_phys + PTE_P + PTE_W), (%ebx)
	movl $(_boot_pdpt_phys_phys + PTE_P + PTE_W), 256*8(%ebx)
	movl $(_boot_pdpt_high_phys + PTE_P + PTE_W), 511*8(%ebx)

	movl %cr4, %eax
	orl $(1 << 5), %eax             /* PAE */
	movl %eax, %cr4
	movl %ebx, %cr3
	movl $0xC0000080, %ecx          /* EFER */
	rdmsr
	orl $(1 << 8), %eax             /* LME */
	wrmsr
	movl %cr0, %eax
	orl $((1 << 31) | (1 << 16) | 1), %eax  /* PG, WP, PE */
	movl %eax, %cr0

	lgdt _boot_gdt_ptr_phys
	ljmp $0x08, $_long_entry_phys

no_long_mode:
	movl $_no_lm_msg_phys, %esi
4:	movb (%esi), %al
	testb %al, %al
	jz 6f
	movw $0x3FD, %dx                /* COM1 line status: wait for THR empty */
5:	inb %dx, %al
	testb $0x20, %al
	jz 5b
	movb (%esi), %al
	movw $0x3F8, %dx
	outb %al, %dx
	incl %esi
	jmp 4b
6:	hlt
	jmp 6b

	.code64
	.globl _long_entry
_long_entry:
	movabsq $high_entry, %rax
	jmp *%rax

	.section .boot.rodata, "a"
	.globl _no_lm_msg
_no_lm_msg:
	.asciz "tern: this CPU has no 64-bit long mode; cannot boot\r\n"
	.align 16
	.globl _boot_gdt
_boot_gdt:
	.quad 0
	.quad 0x00AF9A000000FFFF        /* 0x08: 64-bit code */
	.quad 0x00CF92000000FFFF        /* 0x10: data */
_boot_gdt_end:
	.globl _boot_gdt_ptr
_boot_gdt_ptr:
	.word _boot_gdt_end - _boot_gdt - 1
	.long _boot_gdt_phys

	.text
	.code64
high_entry:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorw %ax, %ax
	movw %ax, %fs
	movw %ax, %gs
	movabsq $boot_stack_top, %rsp
	xorl %ebp, %ebp
	/* edi = magic, esi = info (zero-extended by the 32-bit moves) */
	call kmain
7:	cli
	hlt
	jmp 7b

	.section .bss.pagetables, "aw", @nobits
	.align 4096
	.globl boot_pml4, boot_pdpt_low, boot_pdpt_phys, boot_pdpt_high, boot_pd
boot_pml4:      .space 4096
boot_pdpt_low:  .space 4096
boot_pdpt_phys: .space 4096
boot_pdpt_high: .space 4096
boot_pd:        .space 4 * 4096

	.section .bss.stack, "aw", @nobits
	.align 16
	.globl boot_stack_top
boot_stack:     .space KERNEL_STACK_SIZE
boot_stack_top:

	.section .note.GNU-stack, "", @progbits
