/* Bad pointers handed to Portals calls on a node with a NIC: each gets an
 * error code and the node carries on.  Also times the system call itself.
 * Exit status: the number of unexpected results. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "portals4.h"
#include "ptl_tern.h"
#include "../../../include/tern/ptl_syscall.h"

#define KERNEL_TEXT ((void *)0xffffffff80100000UL)
#define DIRECT_MAP ((void *)0xffff800000100000UL)
#define LOW ((void *)0x1000UL)     /* below every program */

static int fails;

static void expect(const char *what, long got, long want)
{
    printf("%-44s %ld%s\n", what, got, got == want ? "" : "  UNEXPECTED");
    fails += got != want;
}

static long raw(long op, const void *args)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(1024L), "D"(op), "S"(args) : "rcx", "r11", "memory");
    return ret;
}

static double ns_per_call(int (*fn)(void *), void *arg, int n)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++)
        fn(arg);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
}

static int do_nop(void *arg) { (void)arg; return ptl_tern_nop(); }
/* Each empty look is followed by another call: back-to-back empty looks are
 * a spin, which the kernel halts after 200 us (kernel/sys/portals_spin.c);
 * the nop's cost is taken off below. */
static int do_eqget(void *arg)
{
    ptl_event_t ev;
    int rc = PtlEQGet(*(ptl_handle_eq_t *)arg, &ev);
    ptl_tern_nop();
    return rc;
}
static int do_getpid(void *arg)
{
    (void)arg;
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(39L) : "rcx", "r11", "memory");
    return (int)r;
}

static char buf[65536];

int main(void)
{
    expect("PtlInit", PtlInit(), PTL_OK);
    ptl_handle_ni_t ni;
    expect("PtlNIInit desired in kernel", PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
           PTL_NI_PHYSICAL, PTL_PID_ANY, KERNEL_TEXT, NULL, &ni), PTL_ARG_INVALID);
    expect("PtlNIInit handle in kernel", PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
           PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL, DIRECT_MAP), PTL_ARG_INVALID);
    ptl_ni_limits_t lim;
    int rc = PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL,
                       &lim, &ni);
    expect("PtlNIInit", rc, PTL_OK);
    if (rc != PTL_OK)
        return 100;
    ptl_process_t me;
    expect("PtlGetId", PtlGetId(ni, &me), PTL_OK);
    printf("nid %u pid %u, max_msg_size %lu\n", me.phys.nid, me.phys.pid,
           (unsigned long)lim.max_msg_size);
    expect("PtlGetId into kernel", PtlGetId(ni, KERNEL_TEXT), PTL_ARG_INVALID);
    ptl_handle_eq_t eq;
    expect("PtlEQAlloc", PtlEQAlloc(ni, 64, &eq), PTL_OK);

    /* More than the kernel heap holds: refused, and the heap stays usable. */
    ptl_handle_eq_t big;
    int brc = PtlEQAlloc(ni, 1ULL << 20, &big);
    expect("PtlEQAlloc of 2^20 events (no room)", brc == PTL_NO_SPACE || brc == PTL_ARG_INVALID,
           1);
    brc = PtlEQAlloc(ni, 1ULL << 40, &big);
    expect("PtlEQAlloc of 2^40 events", brc == PTL_NO_SPACE || brc == PTL_ARG_INVALID, 1);
    ptl_md_t md = {.start = buf, .length = sizeof buf, .eq_handle = eq, .ct_handle = PTL_CT_NONE};
    ptl_handle_md_t mdh;
    expect("PtlMDBind (good)", PtlMDBind(ni, &md, &mdh), PTL_OK);
    expect("PtlMDRelease (good)", PtlMDRelease(mdh), PTL_OK);
    md.start = KERNEL_TEXT;
    expect("MD in kernel text", PtlMDBind(ni, &md, &mdh), PTL_ARG_INVALID);
    md.start = DIRECT_MAP;
    expect("MD in the direct map", PtlMDBind(ni, &md, &mdh), PTL_ARG_INVALID);
    md.start = LOW;
    expect("MD below the program", PtlMDBind(ni, &md, &mdh), PTL_ARG_INVALID);
    md.start = buf;
    md.length = 1ULL << 40;
    expect("MD of 1 TiB", PtlMDBind(ni, &md, &mdh), PTL_ARG_INVALID);
    md.length = UINT64_MAX;
    expect("MD wrapping around", PtlMDBind(ni, &md, &mdh), PTL_ARG_INVALID);
    md.length = 16;
    expect("MD struct in kernel", PtlMDBind(ni, KERNEL_TEXT, &mdh), PTL_ARG_INVALID);
    expect("MD handle out in kernel", PtlMDBind(ni, &md, KERNEL_TEXT), PTL_ARG_INVALID);

    ptl_iovec_t iov[4] = {{buf, 100}, {buf + 200, 100}, {KERNEL_TEXT, 100}, {buf, 1}};
    md.options = PTL_IOVEC;
    md.start = iov;
    md.length = 2;
    expect("iovec MD (good)", PtlMDBind(ni, &md, &mdh), PTL_OK);
    /* The kernel holds its own copy: rewriting ours changes nothing. */
    iov[0].iov_base = KERNEL_TEXT;
    expect("iovec MD release after rewrite", PtlMDRelease(mdh), PTL_OK);
    iov[0].iov_base = buf;
    md.length = 3;
    expect("iovec element in kernel", PtlMDBind(ni, &md, &mdh), PTL_ARG_INVALID);
    md.start = KERNEL_TEXT;
    md.length = 2;
    expect("iovec array in kernel", PtlMDBind(ni, &md, &mdh), PTL_ARG_INVALID);
    md.start = iov;
    md.length = 1ULL << 30;
    expect("iovec count 2^30", PtlMDBind(ni, &md, &mdh), PTL_ARG_INVALID);
    md.options = 0;

    ptl_pt_index_t pt;
    expect("PtlPTAlloc", PtlPTAlloc(ni, 0, eq, PTL_PT_ANY, &pt), PTL_OK);
    ptl_me_t mee = {.start = KERNEL_TEXT, .length = 64, .ct_handle = PTL_CT_NONE,
                    .uid = PTL_UID_ANY, .options = PTL_ME_OP_PUT,
                    .match_id.phys = {PTL_NID_ANY, PTL_PID_ANY}};
    ptl_handle_me_t meh;
    expect("ME in kernel", PtlMEAppend(ni, pt, &mee, PTL_PRIORITY_LIST, NULL, &meh),
           PTL_ARG_INVALID);
    mee.start = buf;
    mee.length = 1ULL << 50;
    expect("ME of 2^50 bytes", PtlMEAppend(ni, pt, &mee, PTL_PRIORITY_LIST, NULL, &meh),
           PTL_ARG_INVALID);
    mee.length = 64;
    expect("ME struct NULL", PtlMEAppend(ni, pt, NULL, PTL_PRIORITY_LIST, NULL, &meh),
           PTL_ARG_INVALID);
    expect("ME (good)", PtlMEAppend(ni, pt, &mee, PTL_PRIORITY_LIST, NULL, &meh), PTL_OK);
    ptl_event_t ev;
    expect("PtlEQGet (LINK event)", PtlEQGet(eq, &ev), PTL_OK);
    expect("PtlMEUnlink", PtlMEUnlink(meh), PTL_OK);
    ptl_le_t le = {.start = iov, .length = 3, .ct_handle = PTL_CT_NONE, .uid = PTL_UID_ANY,
                   .options = PTL_IOVEC | PTL_LE_OP_PUT};
    ptl_handle_le_t leh;
    expect("LE iovec element in kernel", PtlLEAppend(ni, pt, &le, PTL_PRIORITY_LIST, NULL, &leh),
           PTL_ARG_INVALID);

    expect("PtlEQGet event NULL", PtlEQGet(eq, NULL), PTL_ARG_INVALID);
    expect("PtlEQGet event in kernel", PtlEQGet(eq, KERNEL_TEXT), PTL_ARG_INVALID);
    expect("PtlEQWait event in kernel", PtlEQWait(eq, DIRECT_MAP), PTL_ARG_INVALID);
    unsigned which;
    expect("PtlEQPoll handles in kernel", PtlEQPoll(KERNEL_TEXT, 1, 0, &ev, &which),
           PTL_ARG_INVALID);
    expect("PtlEQPoll 2^31 handles", PtlEQPoll(&eq, 1U << 31, 0, &ev, &which), PTL_ARG_INVALID);
    expect("PtlEQPoll (empty, 10 ms)", PtlEQPoll(&eq, 1, 10, &ev, &which), PTL_EQ_EMPTY);
    ptl_handle_ct_t ct;
    expect("PtlCTAlloc", PtlCTAlloc(ni, &ct), PTL_OK);
    ptl_size_t test = 1;
    ptl_ct_event_t cev;
    expect("PtlCTPoll tests in kernel", PtlCTPoll(&ct, KERNEL_TEXT, 1, 0, &cev, &which),
           PTL_ARG_INVALID);
    expect("PtlCTGet into kernel", PtlCTGet(ct, DIRECT_MAP), PTL_ARG_INVALID);
    expect("PtlCTPoll (timeout)", PtlCTPoll(&ct, &test, 1, 5, &cev, &which), PTL_CT_NONE_REACHED);
    expect("PtlGetMap map in kernel", PtlGetMap(ni, 4, KERNEL_TEXT, NULL), PTL_ARG_INVALID);
    expect("PtlSetMap 2^62 entries", PtlSetMap(ni, 1ULL << 62, (void *)buf), PTL_ARG_INVALID);
    md.start = buf;
    md.length = 64;
    expect("PtlMDBind (good)", PtlMDBind(ni, &md, &mdh), PTL_OK);
    expect("PtlSwap operand in kernel", PtlSwap(mdh, 0, mdh, 8, 8, me, pt, 0, 0, NULL, 0,
           KERNEL_TEXT, PTL_CSWAP, PTL_UINT64_T), PTL_ARG_INVALID);
    uint64_t args[16] = {0};
    expect("unknown op", raw(999, args), -22);
    expect("argument block in kernel", raw(3, KERNEL_TEXT), -14);
    /* The node's counters (TPO_STATS) grew
     * a field: a program built before passes no size and a buffer of the
     * eleven it knew, of which the kernel must write no more; one that says
     * its size gets all twelve; a size past the struct (14 words since the
     * doorbell count) gets no more than it. */
    uint64_t st[15];
    for (int i = 0; i < 15; i++)
        st[i] = 0x5EED5EED5EED5EEDull;
    uint64_t sargs[16] = {0, (uint64_t)(uintptr_t)st, 0};
    expect("stats, no size", raw(TPO_STATS, sargs), PTL_OK);
    expect("stats, no size: 12th word untouched", st[11] == 0x5EED5EED5EED5EEDull, 1);
    expect("stats, no size: kmem size given", st[5] != 0x5EED5EED5EED5EEDull && st[5] > 0, 1);
    sargs[2] = 12 * 8;
    expect("stats, 12 words", raw(TPO_STATS, sargs), PTL_OK);
    expect("stats, 12 words: 12th word written", st[11] != 0x5EED5EED5EED5EEDull, 1);
    sargs[2] = 1 << 20;
    expect("stats, 1 MiB asked", raw(TPO_STATS, sargs), PTL_OK);
    expect("stats, 1 MiB asked: 14th word written", st[13] != 0x5EED5EED5EED5EEDull, 1);
    expect("stats, 1 MiB asked: 15th word untouched", st[14] == 0x5EED5EED5EED5EEDull, 1);
    /* The library's counters grew too (why held ACKs went alone, frames
     * kept for an NI not made yet): without their size a program gets the
     * 24 words up to tx_carried, with it all 29, and no more for a size
     * past them. */
    uint64_t lst[30];
    for (int i = 0; i < 30; i++)
        lst[i] = 0x5EED5EED5EED5EEDull;
    uint64_t largs[16] = {(uint64_t)(uintptr_t)lst, 0, 0, 0};
    expect("library stats, no size", raw(TPO_STATS, largs), PTL_OK);
    expect("library stats, no size: 24th word written", lst[23] != 0x5EED5EED5EED5EEDull, 1);
    expect("library stats, no size: 25th word untouched", lst[24] == 0x5EED5EED5EED5EEDull, 1);
    largs[3] = 1 << 20;
    expect("library stats, 1 MiB asked", raw(TPO_STATS, largs), PTL_OK);
    expect("library stats, 1 MiB asked: 29th word written", lst[28] != 0x5EED5EED5EED5EEDull, 1);
    expect("library stats, 1 MiB asked: 30th word untouched", lst[29] == 0x5EED5EED5EED5EEDull, 1);

    double nop = ns_per_call(do_nop, NULL, 20000);
    double eqget = ns_per_call(do_eqget, &eq, 20000) - nop;
    double getpid = ns_per_call(do_getpid, NULL, 20000);
    printf("cost: tern_portals nop %.0f ns, PtlEQGet (empty) %.0f ns, getpid %.0f ns\n", nop,
           eqget, getpid);
    expect("PtlMDRelease", PtlMDRelease(mdh), PTL_OK);
    expect("PtlNIFini", PtlNIFini(ni), PTL_OK);
    PtlFini();
    printf("badptr: %s\n", fails ? "FAILED" : "ok");
    return fails;
}
