/* Host harness for kernel/acpi.c: reads a file as physical memory from
 * address 0 and prints what acpi_find_cpus makes of it (tests/test_kernel_smp.py
 * builds the images, well-formed and not). */
#include <stdio.h>
#include <stdlib.h>

#include "acpi.h"

struct image {
    unsigned char *bytes;
    size_t size;
};

static const void *map(uint64_t pa, uint64_t len, void *ctx)
{
    const struct image *im = ctx;
    if (pa + len < pa || pa + len > im->size)
        return NULL;
    return im->bytes + pa;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: acpi_probe IMAGE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    static unsigned char buf[4 << 20];
    struct image im = {buf, fread(buf, 1, sizeof buf, f)};
    fclose(f);
    static struct acpi_cpus cpus;
    const char *why = acpi_find_cpus(map, &im, &cpus);
    if (why) {
        printf("error: %s\n", why);
        return 1;
    }
    printf("ok %s n=%u enabled=%u dropped=%u lapic=0x%llx\n", cpus.xsdt ? "xsdt" : "rsdt",
           cpus.n, cpus.enabled, cpus.dropped, (unsigned long long)cpus.lapic_phys);
    for (unsigned i = 0; i < cpus.n; i++)
        printf("cpu %u %u %d\n", cpus.cpu[i].apic_id, cpus.cpu[i].acpi_uid, cpus.cpu[i].enabled);
    return 0;
}
