/* What the firmware's ACPI tables say about the CPUs: the MADT ("APIC"),
 * found through the RSDP and the RSDT or XSDT.  Only reading and checking
 * here, no AML.  The code is pure (no kernel services): memory is reached
 * through the caller's map function, so the same file is tested on the host
 * against malformed tables (tests/test_kernel_smp.py). */
#ifndef TERN_ACPI_H
#define TERN_ACPI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ACPI_MAX_CPUS 256

struct acpi_cpu {
    uint32_t apic_id;
    uint32_t acpi_uid;
    bool enabled;                /* MADT flags bit 0; else present but not usable */
};

struct acpi_cpus {
    uint64_t lapic_phys;         /* local APIC address (with the 64-bit override) */
    unsigned n;                  /* entries in cpu[] */
    unsigned enabled;            /* of them, enabled */
    unsigned dropped;            /* entries beyond ACPI_MAX_CPUS */
    bool xsdt;                   /* found through the XSDT (else the RSDT) */
    struct acpi_cpu cpu[ACPI_MAX_CPUS];
};

/* Returns a pointer to len bytes of physical memory at pa, or NULL when that
 * range cannot be read (the tables are then taken as malformed). */
typedef const void *(*acpi_map_fn)(uint64_t pa, uint64_t len, void *ctx);

/* Fills *out from the MADT.  NULL on success, else what is wrong (no RSDP,
 * a bad checksum, no MADT, an entry that runs past its table, ...): a
 * phrase for the log. */
const char *acpi_find_cpus(acpi_map_fn map, void *ctx, struct acpi_cpus *out);
#endif
