/* Fixed virtual and physical layout shared by boot.S, the linker script and C. */
#ifndef TERN_LAYOUT_H
#define TERN_LAYOUT_H

#define KERNEL_VMA        0xFFFFFFFF80000000
#define KERNEL_PHYS_LOAD  0x100000           /* multiboot loaders put us at 1 MiB */
#define PHYS_BASE         0xFFFF800000000000 /* direct map of physical memory */
#define KERNEL_STACK_SIZE 16384

#endif
