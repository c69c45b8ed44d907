/* The RSDP -> RSDT/XSDT -> MADT walk (ACPI 6.x, section 5.2).  Every table
 * is checked (signature, length, checksum) before its contents are used, and
 * every MADT entry against the end of its table: firmware tables are input,
 * and a malformed one must cost the node its other CPUs, never the boot. */
#include "acpi.h"

#define SDT_HEADER 36
#define MADT_ENTRIES 44                /* header, local APIC address, flags */
#define TABLE_MAX (1u << 20)           /* no sane RSDT/XSDT/MADT is larger */

static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static bool same(const uint8_t *p, const char *s, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (p[i] != (uint8_t)s[i])
            return false;
    return true;
}

static bool sums_to_zero(const uint8_t *p, uint64_t len)
{
    uint8_t sum = 0;
    for (uint64_t i = 0; i < len; i++)
        sum = (uint8_t)(sum + p[i]);
    return sum == 0;
}

/* A valid RSDP at pa, or NULL. */
static const uint8_t *rsdp_at(acpi_map_fn map, void *ctx, uint64_t pa)
{
    const uint8_t *p = map(pa, 20, ctx);
    if (!p || !same(p, "RSD PTR ", 8) || !sums_to_zero(p, 20))
        return NULL;
    if (p[15] >= 2) {                  /* ACPI 2.0+: length and extended checksum */
        const uint8_t *x = map(pa, 36, ctx);
        if (!x)
            return NULL;
        uint32_t len = rd32(x + 20);
        if (len < 36 || len > 4096 || !(x = map(pa, len, ctx)) || !sums_to_zero(x, len))
            return NULL;
        return x;
    }
    return p;
}

static const uint8_t *rsdp_scan(acpi_map_fn map, void *ctx, uint64_t start, uint64_t len)
{
    for (uint64_t pa = start; pa + 20 <= start + len; pa += 16) {
        const uint8_t *p = rsdp_at(map, ctx, pa);
        if (p)
            return p;
    }
    return NULL;
}

/* "<table>: <problem>" for the log, in a static buffer. */
static const char *problem(const char *table, const char *what)
{
    static char msg[96];
    unsigned n = 0;
    for (const char *s = table; *s && n < sizeof msg - 1; s++)
        msg[n++] = *s;
    for (const char *s = ": "; *s && n < sizeof msg - 1; s++)
        msg[n++] = *s;
    for (const char *s = what; *s && n < sizeof msg - 1; s++)
        msg[n++] = *s;
    msg[n] = 0;
    return msg;
}

/* The whole table at pa with signature sig, checked; or NULL, with *why set
 * when the table has that signature (or cannot be read) but is unusable. */
static const uint8_t *table_at(acpi_map_fn map, void *ctx, uint64_t pa, const char *sig,
                               const char *name, const char **why)
{
    const uint8_t *h = map(pa, SDT_HEADER, ctx);
    if (!h) {
        *why = problem(name, "address outside memory");
        return NULL;
    }
    if (!same(h, sig, 4))
        return NULL;
    uint32_t len = rd32(h + 4);
    const uint8_t *t = NULL;
    if (len < SDT_HEADER || len > TABLE_MAX)
        *why = problem(name, "length out of range");
    else if (!(t = map(pa, len, ctx)))
        *why = problem(name, "runs outside memory");
    else if (!sums_to_zero(t, len))
        *why = problem(name, "bad checksum");
    return *why ? NULL : t;
}

static const char *madt_parse(const uint8_t *t, struct acpi_cpus *out)
{
    uint32_t len = rd32(t + 4);
    if (len < MADT_ENTRIES)
        return "MADT: shorter than its fixed fields";
    out->lapic_phys = rd32(t + 36);
    for (uint32_t off = MADT_ENTRIES; off < len;) {
        if (len - off < 2)
            return "MADT: entry header runs past the table";
        uint8_t type = t[off], elen = t[off + 1];
        if (elen < 2)
            return "MADT: entry of length < 2";
        if (elen > len - off)
            return "MADT: entry runs past the table";
        const uint8_t *e = t + off;
        uint32_t apic_id = 0, uid = 0, flags = 0;
        bool is_cpu = false;
        if (type == 0) {               /* processor local APIC */
            if (elen < 8)
                return "MADT: local APIC entry too short";
            uid = e[2], apic_id = e[3], flags = rd32(e + 4);
            is_cpu = true;
        } else if (type == 9) {        /* processor local x2APIC */
            if (elen < 16)
                return "MADT: local x2APIC entry too short";
            apic_id = rd32(e + 4), flags = rd32(e + 8), uid = rd32(e + 12);
            is_cpu = true;
        } else if (type == 5) {        /* local APIC address override */
            if (elen < 12)
                return "MADT: APIC address override too short";
            out->lapic_phys = rd64(e + 4);
        }
        if (is_cpu) {
            bool enabled = flags & 1;
            for (unsigned i = 0; i < out->n; i++)
                if (out->cpu[i].apic_id == apic_id && (enabled || out->cpu[i].enabled))
                    return "MADT: lists one APIC id twice";
            if (out->n == ACPI_MAX_CPUS) {
                out->dropped++;
            } else {
                out->cpu[out->n++] = (struct acpi_cpu){apic_id, uid, enabled};
                out->enabled += enabled;
            }
        }
        off += elen;
    }
    if (!out->enabled)
        return "MADT: lists no enabled CPU";
    return NULL;
}

const char *acpi_find_cpus(acpi_map_fn map, void *ctx, struct acpi_cpus *out)
{
    *out = (struct acpi_cpus){0};
    /* The first KiB of the EBDA (its segment is at 0x40E), then the BIOS
     * area 0xE0000-0xFFFFF, on 16-byte boundaries. */
    const uint8_t *rsdp = NULL;
    const uint8_t *bda = map(0x40E, 2, ctx);
    uint64_t ebda = bda ? (uint64_t)(bda[0] | bda[1] << 8) << 4 : 0;
    if (ebda >= 0x80000 && ebda < 0xA0000)
        rsdp = rsdp_scan(map, ctx, ebda, 1024);
    if (!rsdp)
        rsdp = rsdp_scan(map, ctx, 0xE0000, 0x20000);
    if (!rsdp)
        return "no ACPI tables (no RSDP)";

    const char *why = NULL;
    const uint8_t *root = NULL;
    unsigned entry_size = 4;
    if (rsdp[15] >= 2 && rd64(rsdp + 24)) {
        root = table_at(map, ctx, rd64(rsdp + 24), "XSDT", "XSDT", &why);
        entry_size = 8;
        out->xsdt = root != NULL;
    }
    if (!root && rd32(rsdp + 16)) {    /* no XSDT, or a broken one: the RSDT */
        why = NULL;
        root = table_at(map, ctx, rd32(rsdp + 16), "RSDT", "RSDT", &why);
        entry_size = 4;
        if (!root && !why)
            why = "RSDT: wrong signature";
    }
    if (!root)
        return why ? why : "no RSDT or XSDT";

    uint32_t n = (rd32(root + 4) - SDT_HEADER) / entry_size;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = root + SDT_HEADER + i * entry_size;
        uint64_t pa = entry_size == 8 ? rd64(e) : rd32(e);
        why = NULL;
        const uint8_t *t = table_at(map, ctx, pa, "APIC", "MADT", &why);
        if (t)
            return madt_parse(t, out);
        if (why && map(pa, SDT_HEADER, ctx))   /* the MADT itself is broken */
            return why;
    }
    return "no MADT in the ACPI tables";
}
