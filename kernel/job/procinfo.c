/* The text of the node's own files (procinfo.h): what a program parsing
 * /proc/cpuinfo or /proc/meminfo (CPU counters, OpenMP runtimes, psutil,
 * `free`) finds there on Linux, describing this node rather than the
 * service node a forwarded read would describe.
 *
 * /proc/cpuinfo: one stanza per running CPU, Linux's fields in Linux's
 * order and layout (arch/x86/kernel/cpu/proc.c).  Identification and
 * flags come from CPUID on the CPU that reads (a node's CPUs are alike);
 * flags for state the kernel does not enable (AVX without YMM in XCR0,
 * AVX-512 without the ZMM state, AMX, protection keys, 5-level paging)
 * are left out, as Linux leaves them out.  The topology is what the kernel
 * uses: one package whose cores are the node's CPUs, one thread each. */
#include "cpu.h"
#include "kernel.h"
#include "mem.h"
#include "percpu.h"
#include "procinfo.h"
#include "reserve.h"
#include "smp.h"
#include "time.h"
#include "x86.h"

/* ---- the output ---------------------------------------------------------- */

void text_printf(struct text_out *o, const char *fmt, ...)
{
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    text_write(o, line, (uint64_t)n < sizeof line ? (uint64_t)n : sizeof line - 1);
}

void text_write(struct text_out *o, const void *bytes, uint64_t len)
{
    uint64_t start = o->pos, end = o->pos + len;
    o->pos = end;
    uint64_t lo = start > o->from ? start : o->from;
    uint64_t hi = end < o->from + o->len ? end : o->from + o->len;
    if (!o->ubuf || lo >= hi)
        return;
    memcpy((void *)(o->ubuf + (lo - o->from)), (const char *)bytes + (lo - start), hi - lo);
}

uint64_t text_got(const struct text_out *o)
{
    if (o->pos <= o->from)
        return 0;
    uint64_t n = o->pos - o->from;
    return n < o->len ? n : o->len;
}

void procinfo_cpulist(struct text_out *o, bool online)
{
    unsigned n = online ? smp_ncpus() : smp_ncpus_found();
    if (n > 1)
        text_printf(o, "0-%u\n", n - 1);
    else
        text_printf(o, "0\n");
}

/* ---- /proc/cpuinfo ---------------------------------------------------------- */

enum { EAX, EBX, ECX, EDX };

/* A CPUID bit and Linux's name for it, in Linux's order (its capability
 * words: 1.EDX, 0x80000001.EDX, 1.ECX, 0x80000001.ECX, 7.EBX, 0xD.1.EAX,
 * 7.1.EAX, 6.EAX, 7.ECX, 7.EDX).  Bits Linux does not name are not listed. */
struct flag {
    uint32_t leaf;
    uint8_t sub, reg, bit;
    const char *name;
};

#define F(l, s, r, b, n) {l, s, r, b, n}
static const struct flag flags[] = {
    F(1, 0, EDX, 0, "fpu"), F(1, 0, EDX, 1, "vme"), F(1, 0, EDX, 2, "de"), F(1, 0, EDX, 3, "pse"),
    F(1, 0, EDX, 4, "tsc"), F(1, 0, EDX, 5, "msr"), F(1, 0, EDX, 6, "pae"), F(1, 0, EDX, 7, "mce"),
    F(1, 0, EDX, 8, "cx8"), F(1, 0, EDX, 9, "apic"), F(1, 0, EDX, 11, "sep"),
    F(1, 0, EDX, 12, "mtrr"), F(1, 0, EDX, 13, "pge"), F(1, 0, EDX, 14, "mca"),
    F(1, 0, EDX, 15, "cmov"), F(1, 0, EDX, 16, "pat"), F(1, 0, EDX, 17, "pse36"),
    F(1, 0, EDX, 18, "pn"), F(1, 0, EDX, 19, "clflush"), F(1, 0, EDX, 21, "dts"),
    F(1, 0, EDX, 22, "acpi"), F(1, 0, EDX, 23, "mmx"), F(1, 0, EDX, 24, "fxsr"),
    F(1, 0, EDX, 25, "sse"), F(1, 0, EDX, 26, "sse2"), F(1, 0, EDX, 27, "ss"),
    F(1, 0, EDX, 28, "ht"), F(1, 0, EDX, 29, "tm"), F(1, 0, EDX, 30, "ia64"),
    F(1, 0, EDX, 31, "pbe"),
    F(0x80000001, 0, EDX, 11, "syscall"), F(0x80000001, 0, EDX, 19, "mp"),
    F(0x80000001, 0, EDX, 20, "nx"), F(0x80000001, 0, EDX, 22, "mmxext"),
    F(0x80000001, 0, EDX, 25, "fxsr_opt"), F(0x80000001, 0, EDX, 26, "pdpe1gb"),
    F(0x80000001, 0, EDX, 27, "rdtscp"), F(0x80000001, 0, EDX, 29, "lm"),
    F(0x80000001, 0, EDX, 30, "3dnowext"), F(0x80000001, 0, EDX, 31, "3dnow"),
    /* Linux's own word: an invariant TSC (0x80000007.EDX[8]) */
    F(0x80000007, 0, EDX, 8, "constant_tsc"), F(0x80000007, 0, EDX, 8, "nonstop_tsc"),
    F(1, 0, ECX, 0, "pni"), F(1, 0, ECX, 1, "pclmulqdq"), F(1, 0, ECX, 2, "dtes64"),
    F(1, 0, ECX, 3, "monitor"), F(1, 0, ECX, 4, "ds_cpl"), F(1, 0, ECX, 5, "vmx"),
    F(1, 0, ECX, 6, "smx"), F(1, 0, ECX, 7, "est"), F(1, 0, ECX, 8, "tm2"),
    F(1, 0, ECX, 9, "ssse3"), F(1, 0, ECX, 10, "cid"), F(1, 0, ECX, 11, "sdbg"),
    F(1, 0, ECX, 12, "fma"), F(1, 0, ECX, 13, "cx16"), F(1, 0, ECX, 14, "xtpr"),
    F(1, 0, ECX, 15, "pdcm"), F(1, 0, ECX, 17, "pcid"), F(1, 0, ECX, 18, "dca"),
    F(1, 0, ECX, 19, "sse4_1"), F(1, 0, ECX, 20, "sse4_2"), F(1, 0, ECX, 21, "x2apic"),
    F(1, 0, ECX, 22, "movbe"), F(1, 0, ECX, 23, "popcnt"),
    F(1, 0, ECX, 24, "tsc_deadline_timer"), F(1, 0, ECX, 25, "aes"), F(1, 0, ECX, 26, "xsave"),
    F(1, 0, ECX, 28, "avx"), F(1, 0, ECX, 29, "f16c"), F(1, 0, ECX, 30, "rdrand"),
    F(1, 0, ECX, 31, "hypervisor"),
    F(0x80000001, 0, ECX, 0, "lahf_lm"), F(0x80000001, 0, ECX, 1, "cmp_legacy"),
    F(0x80000001, 0, ECX, 2, "svm"), F(0x80000001, 0, ECX, 3, "extapic"),
    F(0x80000001, 0, ECX, 4, "cr8_legacy"), F(0x80000001, 0, ECX, 5, "abm"),
    F(0x80000001, 0, ECX, 6, "sse4a"), F(0x80000001, 0, ECX, 7, "misalignsse"),
    F(0x80000001, 0, ECX, 8, "3dnowprefetch"), F(0x80000001, 0, ECX, 9, "osvw"),
    F(0x80000001, 0, ECX, 10, "ibs"), F(0x80000001, 0, ECX, 11, "xop"),
    F(0x80000001, 0, ECX, 12, "skinit"), F(0x80000001, 0, ECX, 13, "wdt"),
    F(0x80000001, 0, ECX, 15, "lwp"), F(0x80000001, 0, ECX, 16, "fma4"),
    F(0x80000001, 0, ECX, 17, "tce"), F(0x80000001, 0, ECX, 19, "nodeid_msr"),
    F(0x80000001, 0, ECX, 21, "tbm"), F(0x80000001, 0, ECX, 22, "topoext"),
    F(0x80000001, 0, ECX, 23, "perfctr_core"), F(0x80000001, 0, ECX, 24, "perfctr_nb"),
    F(0x80000001, 0, ECX, 26, "bpext"), F(0x80000001, 0, ECX, 27, "ptsc"),
    F(0x80000001, 0, ECX, 28, "perfctr_llc"), F(0x80000001, 0, ECX, 29, "mwaitx"),
    F(7, 0, EBX, 0, "fsgsbase"), F(7, 0, EBX, 1, "tsc_adjust"), F(7, 0, EBX, 2, "sgx"),
    F(7, 0, EBX, 3, "bmi1"), F(7, 0, EBX, 4, "hle"), F(7, 0, EBX, 5, "avx2"),
    F(7, 0, EBX, 7, "smep"), F(7, 0, EBX, 8, "bmi2"), F(7, 0, EBX, 9, "erms"),
    F(7, 0, EBX, 10, "invpcid"), F(7, 0, EBX, 11, "rtm"), F(7, 0, EBX, 12, "cqm"),
    F(7, 0, EBX, 14, "mpx"), F(7, 0, EBX, 15, "rdt_a"), F(7, 0, EBX, 16, "avx512f"),
    F(7, 0, EBX, 17, "avx512dq"), F(7, 0, EBX, 18, "rdseed"), F(7, 0, EBX, 19, "adx"),
    F(7, 0, EBX, 20, "smap"), F(7, 0, EBX, 21, "avx512ifma"), F(7, 0, EBX, 23, "clflushopt"),
    F(7, 0, EBX, 24, "clwb"), F(7, 0, EBX, 25, "intel_pt"), F(7, 0, EBX, 26, "avx512pf"),
    F(7, 0, EBX, 27, "avx512er"), F(7, 0, EBX, 28, "avx512cd"), F(7, 0, EBX, 29, "sha_ni"),
    F(7, 0, EBX, 30, "avx512bw"), F(7, 0, EBX, 31, "avx512vl"),
    F(0xD, 1, EAX, 0, "xsaveopt"), F(0xD, 1, EAX, 1, "xsavec"), F(0xD, 1, EAX, 2, "xgetbv1"),
    F(0xD, 1, EAX, 3, "xsaves"),
    F(7, 1, EAX, 4, "avx_vnni"), F(7, 1, EAX, 5, "avx512_bf16"),
    F(6, 0, EAX, 2, "arat"),
    F(7, 0, ECX, 1, "avx512vbmi"), F(7, 0, ECX, 2, "umip"), F(7, 0, ECX, 3, "pku"),
    F(7, 0, ECX, 5, "waitpkg"), F(7, 0, ECX, 6, "avx512_vbmi2"), F(7, 0, ECX, 8, "gfni"),
    F(7, 0, ECX, 9, "vaes"), F(7, 0, ECX, 10, "vpclmulqdq"), F(7, 0, ECX, 11, "avx512_vnni"),
    F(7, 0, ECX, 12, "avx512_bitalg"), F(7, 0, ECX, 13, "tme"),
    F(7, 0, ECX, 14, "avx512_vpopcntdq"), F(7, 0, ECX, 16, "la57"), F(7, 0, ECX, 22, "rdpid"),
    F(7, 0, ECX, 24, "bus_lock_detect"), F(7, 0, ECX, 25, "cldemote"),
    F(7, 0, ECX, 27, "movdiri"), F(7, 0, ECX, 28, "movdir64b"), F(7, 0, ECX, 29, "enqcmd"),
    F(7, 0, ECX, 30, "sgx_lc"),
    F(7, 0, EDX, 2, "avx512_4vnniw"), F(7, 0, EDX, 3, "avx512_4fmaps"), F(7, 0, EDX, 4, "fsrm"),
    F(7, 0, EDX, 8, "avx512_vp2intersect"), F(7, 0, EDX, 10, "md_clear"),
    F(7, 0, EDX, 14, "serialize"), F(7, 0, EDX, 16, "tsxldtrk"), F(7, 0, EDX, 18, "pconfig"),
    F(7, 0, EDX, 19, "arch_lbr"), F(7, 0, EDX, 20, "ibt"), F(7, 0, EDX, 22, "amx_bf16"),
    F(7, 0, EDX, 23, "avx512_fp16"), F(7, 0, EDX, 24, "amx_tile"), F(7, 0, EDX, 25, "amx_int8"),
    F(7, 0, EDX, 28, "flush_l1d"), F(7, 0, EDX, 29, "arch_capabilities"),
};
#undef F

static bool starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* A feature the program can use on this node: what needs register state
 * the kernel did not enable, or a mode it does not run, is not there. */
static bool usable(const char *name)
{
    bool ymm = cpu.xcr0 & 0x4, zmm = (cpu.xcr0 & 0xE0) == 0xE0;
    if (starts(name, "avx512"))
        return zmm;
    if (starts(name, "avx") || !strcmp(name, "fma") || !strcmp(name, "f16c") ||
        !strcmp(name, "vaes") || !strcmp(name, "vpclmulqdq"))
        return ymm;
    if (starts(name, "xsave") || !strcmp(name, "xgetbv1"))
        return cpu.xcr0 != 0;
    return !starts(name, "amx") && strcmp(name, "pku") && strcmp(name, "la57");
}

/* The leaves the flags come from, read once for a whole read. */
static const struct { uint32_t leaf, sub; } flag_leaves[] = {
    {1, 0}, {6, 0}, {7, 0}, {7, 1}, {0xD, 1}, {0x80000001, 0}, {0x80000007, 0},
};
#define N_FLAG_LEAVES ARRAY_SIZE(flag_leaves)

struct ident {
    uint32_t max_leaf, max_ext, max7_sub;
    uint32_t regs[N_FLAG_LEAVES][4];       /* flag_leaves' (0 where absent) */
    char vendor[13], model_name[49];
    unsigned family, model, stepping, clflush, phys_bits, virt_bits, cache_kb;
};

static void identify(struct ident *id)
{
    uint32_t r[4];
    memset(id, 0, sizeof *id);
    cpuid(0, 0, r);
    id->max_leaf = r[EAX];
    memcpy(id->vendor, &r[EBX], 4);
    memcpy(id->vendor + 4, &r[EDX], 4);
    memcpy(id->vendor + 8, &r[ECX], 4);
    cpuid(1, 0, r);
    id->family = (r[EAX] >> 8) & 0xF;
    id->model = (r[EAX] >> 4) & 0xF;
    id->stepping = r[EAX] & 0xF;
    if (id->family == 0xF)
        id->family += (r[EAX] >> 20) & 0xFF;
    if (id->family >= 6)
        id->model += ((r[EAX] >> 16) & 0xF) << 4;
    id->clflush = ((r[EBX] >> 8) & 0xFF) * 8;
    if (id->max_leaf >= 7) {
        cpuid(7, 0, r);
        id->max7_sub = r[EAX];
    }
    cpuid(0x80000000, 0, r);
    id->max_ext = r[EAX];
    if (id->max_ext >= 0x80000004) {
        uint32_t *w = (uint32_t *)id->model_name;
        for (uint32_t l = 0; l < 3; l++)
            cpuid(0x80000002 + l, 0, w + 4 * l);
        id->model_name[48] = 0;
        /* Linux drops the spaces some vendors pad the brand string with */
        char *s = id->model_name;
        while (*s == ' ')
            s++;
        memmove(id->model_name, s, strlen(s) + 1);
        size_t n = strlen(id->model_name);
        while (n && id->model_name[n - 1] == ' ')
            id->model_name[--n] = 0;
    }
    if (id->max_ext >= 0x80000006) {
        cpuid(0x80000006, 0, r);
        id->cache_kb = r[ECX] >> 16;        /* L2, as Linux reports it for AMD */
    }
    for (size_t k = 0; k < N_FLAG_LEAVES; k++) {
        uint32_t leaf = flag_leaves[k].leaf, sub = flag_leaves[k].sub;
        bool there = leaf >= 0x80000000 ? leaf <= id->max_ext : leaf <= id->max_leaf;
        if (there && (leaf != 7 || sub <= id->max7_sub))
            cpuid(leaf, sub, id->regs[k]);
    }
    id->phys_bits = 36;
    id->virt_bits = 48;
    if (id->max_ext >= 0x80000008) {
        cpuid(0x80000008, 0, r);
        id->phys_bits = r[EAX] & 0xFF;
        id->virt_bits = (r[EAX] >> 8) & 0xFF;
    }
    if (id->virt_bits > 48)
        id->virt_bits = 48;            /* 4-level paging: a 57-bit CPU offers 48 here */
}

static bool has(const struct ident *id, const struct flag *f)
{
    for (size_t k = 0; k < N_FLAG_LEAVES; k++)
        if (flag_leaves[k].leaf == f->leaf && flag_leaves[k].sub == f->sub)
            return (id->regs[k][f->reg] >> f->bit) & 1;
    return false;
}

void procinfo_cpuinfo(struct text_out *o)
{
    struct ident id;
    identify(&id);
    bool shown[ARRAY_SIZE(flags)];
    for (size_t k = 0; k < ARRAY_SIZE(flags); k++)
        shown[k] = has(&id, &flags[k]) && usable(flags[k].name);
    unsigned n = smp_ncpus();
    uint64_t khz = time_tsc_hz() / 1000;
    for (unsigned i = 0; i < n; i++) {
        text_printf(o, "processor\t: %u\nvendor_id\t: %s\ncpu family\t: %u\nmodel\t\t: %u\n", i,
                    id.vendor, id.family, id.model);
        text_printf(o, "model name\t: %s\nstepping\t: %u\n",
                    id.model_name[0] ? id.model_name : "unknown", id.stepping);
        text_printf(o, "cpu MHz\t\t: %lu.%03lu\n", khz / 1000, khz % 1000);
        if (id.cache_kb)
            text_printf(o, "cache size\t: %u KB\n", id.cache_kb);
        text_printf(o, "physical id\t: 0\nsiblings\t: %u\ncore id\t\t: %u\ncpu cores\t: %u\n", n, i,
                    n);
        text_printf(o, "apicid\t\t: %u\ninitial apicid\t: %u\n", cpus[i]->apic_id,
                    cpus[i]->apic_id);
        text_printf(o, "fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: %u\nwp\t\t: yes\n",
                    id.max_leaf);
        text_printf(o, "flags\t\t:");
        for (size_t k = 0; k < ARRAY_SIZE(flags); k++)
            if (shown[k])
                text_printf(o, " %s", flags[k].name);
        text_printf(o, "\nbugs\t\t:\nbogomips\t: %lu.%02lu\n", 2 * khz / 1000, 2 * khz / 10 % 100);
        text_printf(o, "clflush size\t: %u\ncache_alignment\t: %u\n", id.clflush, id.clflush);
        text_printf(o, "address sizes\t: %u bits physical, %u bits virtual\n", id.phys_bits,
                    id.virt_bits);
        text_printf(o, "power management:\n\n");
    }
}

/* ---- /proc/meminfo ---------------------------------------------------------- */

static void kb(struct text_out *o, const char *name, uint64_t bytes)
{
    text_printf(o, "%-16s%8lu kB\n", name, bytes >> 10);
}

void procinfo_meminfo(struct text_out *o)
{
    uint64_t total = app_memory_bytes();
    uint64_t free = heap_free_bytes();
    if (free > total)
        free = total;
    uint64_t used = total - free;     /* the image, brk, mmap, the stack: all resident */
    kb(o, "MemTotal:", total);
    kb(o, "MemFree:", free);
    kb(o, "MemAvailable:", free);
    kb(o, "Buffers:", 0);
    kb(o, "Cached:", 0);
    kb(o, "SwapCached:", 0);
    kb(o, "Active:", used);
    kb(o, "Inactive:", 0);
    kb(o, "Active(anon):", used);
    kb(o, "Inactive(anon):", 0);
    kb(o, "Active(file):", 0);
    kb(o, "Inactive(file):", 0);
    kb(o, "Unevictable:", 0);
    kb(o, "Mlocked:", 0);
    kb(o, "SwapTotal:", 0);
    kb(o, "SwapFree:", 0);
    kb(o, "Dirty:", 0);
    kb(o, "Writeback:", 0);
    kb(o, "AnonPages:", used);
    kb(o, "Mapped:", 0);
    kb(o, "Shmem:", 0);
    kb(o, "KReclaimable:", 0);
    kb(o, "Slab:", 0);
    kb(o, "SReclaimable:", 0);
    kb(o, "SUnreclaim:", 0);
    kb(o, "KernelStack:", 0);
    kb(o, "PageTables:", 0);
    kb(o, "CommitLimit:", total);     /* nothing is overcommitted */
    kb(o, "Committed_AS:", used);
    kb(o, "VmallocTotal:", 0);
    kb(o, "VmallocUsed:", 0);
    kb(o, "VmallocChunk:", 0);
    text_printf(o, "%-16s%8u\n%-16s%8u\n%-16s%8u\n%-16s%8u\n", "HugePages_Total:", 0,
                "HugePages_Free:", 0, "HugePages_Rsvd:", 0, "HugePages_Surp:", 0);
    kb(o, "Hugepagesize:", 2 << 20);
}
