/* Forced in front of kernel/elf.c (and the harness) when the kernel's ELF
 * loader is built for the host (tests/fuzz/Makefile.inc).  The kernel's own
 * headers are used as they are; only the fixed direct-map address of
 * kernel/include/layout.h is replaced: on the host "physical" memory is a
 * heap block the harness owns, and PHYS_BASE is where that block's address
 * 0 would be. */
#ifndef TERN_FUZZ_KERNEL_HOST_H
#define TERN_FUZZ_KERNEL_HOST_H
#include <stdint.h>
#define TERN_LAYOUT_H
extern uint64_t fuzz_phys_base;
#define PHYS_BASE fuzz_phys_base
#define KERNEL_VMA 0
#define TERN_KERNEL_ON_HOST 1      /* process.h: `proc` is the one process */
#endif
