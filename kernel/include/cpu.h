#ifndef TERN_CPU_H
#define TERN_CPU_H
#include <stdbool.h>
#include <stdint.h>

#define KERNEL_CS 0x08
#define KERNEL_DS 0x10
#define USER_DS   (0x20 | 3)
#define USER_CS   (0x28 | 3)

/* Saved user or kernel state: what the trap stubs and the syscall entry push
 * (entry.S).  `vector` is the exception number, or -1 for a system call. */
struct regs {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    int64_t vector;
    uint64_t error;
    uint64_t rip, cs, rflags, rsp, ss;
};

struct cpu_features {
    bool xsave, avx, avx512, fsgsbase, rdrand, pdpe1gb, tsc_deadline, x2apic;
    uint32_t hwcap;            /* CPUID.1:EDX, what Linux reports as AT_HWCAP */
    uint64_t xcr0;             /* state components enabled for the application */
    uint32_t xsave_size;       /* bytes of XSAVE area for xcr0 */
    char vendor[13];
    /* Set when the hypervisor turned out to emulate ring 0 with an
     * instruction emulator that lacks xsave (kvm_pvm; see trap.c): signal
     * frames then hold fxsave state (x87/SSE, not the AVX upper halves). */
    bool ring0_emulated;
    /* Kernel mode runs through an instruction emulator far slower than the
     * CPU (measured at boot: ring0_loop_cycles, TSC cycles per iteration
     * of a two-instruction loop).  Such an emulator (kvm_pvm's) may lack
     * instructions rarer than the ones it was written for: executing one
     * stops the VM for good, with no fault the kernel could handle, so
     * kernel code then keeps to plain ones (Portals' CRC32C uses tables,
     * not the SSE4.2 `crc32` instruction).  Not set under QEMU's TCG,
     * which emulates every instruction it offers. */
    bool ring0_interpreted;
    uint64_t ring0_loop_cycles;
};
/* Hardware and ordinary KVM: ~1 cycle an iteration; TCG 10; kvm_pvm 2900-4200. */
#define RING0_INTERPRETED_CYCLES 200
#define RING0_TRANSLATED_CYCLES 4
extern struct cpu_features cpu;

void cpu_init(void);           /* GDT, TSS, IDT, syscall MSRs, FPU/SSE/AVX */
struct percpu;
void cpu_init_ap(struct percpu *c, uint64_t double_fault_stack_top, uint64_t nmi_stack_top);
void cpu_set_kernel_stack(uint64_t top);
/* The vector registers' state, to or from a 64-byte aligned area of
 * cpu.xsave_size bytes: xsave where the kernel may use it, else fxsave (the
 * x87/SSE part).  fpu_load_area trusts the area (signal.c checks a user's). */
bool cpu_use_xsave(void);
void fpu_save_area(void *area);
void fpu_load_area(const void *area);
__attribute__((noreturn)) void enter_user(uint64_t rip, uint64_t rsp);
void trap_handler(struct regs *r);
void irq_set_handler(int vector, void (*fn)(struct regs *));
#endif
