/* Multiboot information and kernel options. */
#include "boot.h"
#include "kernel.h"
#include "msgtrace.h"

struct bootinfo bootinfo;
struct boot_options options = {
    .stack_size = MiB(2),
    .heap_size = 0,
    .kmem_size = -1,
    .nid = -1,
};

#define MB_BOOTLOADER_MAGIC 0x2BADB002

struct __attribute__((packed)) mb_info {
    uint32_t flags, mem_lower, mem_upper, boot_device, cmdline, mods_count, mods_addr;
    uint32_t syms[4];
    uint32_t mmap_length, mmap_addr;
};
struct __attribute__((packed)) mb_module { uint32_t start, end, string, reserved; };
struct __attribute__((packed)) mb_mmap { uint32_t size; uint64_t addr, len; uint32_t type; };

static void copy_phys_string(char *dst, uint32_t pa, size_t max)
{
    dst[0] = 0;
    if (pa)
        strlcpy(dst, phys_to_virt(pa), max);
}

void bootinfo_read(uint32_t magic, uint64_t info_phys)
{
    if (magic != MB_BOOTLOADER_MAGIC)
        panic("not started by a multiboot loader (magic 0x%x)", magic);
    const struct mb_info *mb = phys_to_virt(info_phys);
    if (mb->flags & (1 << 2))
        copy_phys_string(bootinfo.cmdline, mb->cmdline, sizeof bootinfo.cmdline);
    if (mb->flags & (1 << 6)) {
        uint64_t p = mb->mmap_addr, end = p + mb->mmap_length;
        while (p < end && bootinfo.nram < MAX_RAM_RANGES) {
            const struct mb_mmap *e = phys_to_virt(p);
            if (e->type == 1 && e->len)
                bootinfo.ram[bootinfo.nram++] = (struct mem_range){e->addr, e->addr + e->len};
            p += e->size + 4;
        }
    } else if (mb->flags & 1) {
        bootinfo.ram[bootinfo.nram++] = (struct mem_range){0, (uint64_t)mb->mem_lower << 10};
        bootinfo.ram[bootinfo.nram++] =
            (struct mem_range){MiB(1), MiB(1) + ((uint64_t)mb->mem_upper << 10)};
    } else {
        panic("the boot loader gave no memory map");
    }
    if (mb->flags & (1 << 3)) {
        const struct mb_module *m = phys_to_virt(mb->mods_addr);
        for (uint32_t i = 0; i < mb->mods_count && i < MAX_MODULES; i++) {
            bootinfo.mod[i].start = m[i].start;
            bootinfo.mod[i].end = m[i].end;
            copy_phys_string(bootinfo.mod[i].cmdline, m[i].string, CMDLINE_MAX);
            bootinfo.nmods++;
        }
    }
}

int split_words(char *s, char **words, int max)
{
    int n = 0;
    char *out = s;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        if (!*s)
            break;
        char *start = out;
        bool quoted = false;
        while (*s && (quoted || (*s != ' ' && *s != '\t' && *s != '\n'))) {
            if (*s == '"') {
                quoted = !quoted;
                s++;
            } else if (*s == '\\' && s[1]) {
                *out++ = s[1];
                s += 2;
            } else {
                *out++ = *s++;
            }
        }
        if (*s)
            s++;
        *out++ = 0;
        if (n < max)
            words[n++] = start;
    }
    return n;
}

static char cmdline_words[CMDLINE_MAX];

void options_parse(void)
{
    static char *w[MAX_ARGS];
    static char bad[128];
    strlcpy(cmdline_words, bootinfo.cmdline, sizeof cmdline_words);
    int n = split_words(cmdline_words, w, MAX_ARGS);
    bool seen_name = false;
    for (int i = 0; i < n; i++) {
        if (!strcmp(w[i], "--")) {
            for (i++; i < n && options.envc < MAX_ARGS - 1; i++)
                options.envp[options.envc++] = w[i];
            break;
        }
        char *eq = strchr(w[i], '=');
        if (!eq) {
            /* Loaders put the kernel's own file name first. */
            if (!seen_name)
                seen_name = true;
            else
                kprintf("ignoring unknown option '%s'\n", w[i]);
            continue;
        }
        *eq = 0;
        const char *k = w[i], *v = eq + 1;
        uint64_t size;
        if (!strcmp(k, "stack") || !strcmp(k, "heap")) {
            if (!parse_size(v, &size)) {
                snprintf(bad, sizeof bad, "bad size '%s' for %s=", v, k);
                continue;
            }
            if (k[0] == 's')
                options.stack_size = ALIGN_UP(size, 4096);
            else
                options.heap_size = ALIGN_UP(size, 4096);
        } else if (!strcmp(k, "kmem")) {
            if (!parse_size(v, &size) || size > GiB(1)) {
                snprintf(bad, sizeof bad, "bad size '%s' for kmem=", v);
                continue;
            }
            options.kmem_size = (int64_t)ALIGN_UP(size, 4096);
        } else if (!strcmp(k, "nid")) {
            /* Portals nids are 24 bits: the low half of a MAC (portals.md). */
            if (!parse_size(v, &size) || size > 0xFFFFFF) {
                snprintf(bad, sizeof bad, "bad node id '%s' for nid=", v);
                continue;
            }
            options.nid = (int64_t)size;
        } else if (!strcmp(k, "mtu")) {
            if (!parse_size(v, &size) || size < 576 || size > 65535) {
                snprintf(bad, sizeof bad, "bad MTU '%s' for mtu= (576 .. 65535)", v);
                continue;
            }
            options.mtu = (unsigned)size;
        } else if (!strcmp(k, "hostlink")) {
            options.hostlink = !strcmp(v, "com2");
        } else if (!strcmp(k, "stdin")) {
            if (!strcmp(v, "pipe"))
                options.stdin_mode = STDIN_PIPE;
            else if (!strcmp(v, "tty"))
                options.stdin_mode = STDIN_TTY;
            else if (strcmp(v, "none"))
                snprintf(bad, sizeof bad, "unknown stdin mode '%s' (pipe, tty or none)", v);
        } else if (!strcmp(k, "exit")) {
            options.exit_port = !strcmp(v, "qemu") ? 0xf4 : 0;
        } else if (!strcmp(k, "alloc_nid")) {
            uint64_t id;
            if (!parse_size(v, &id) || id > 0xFFFFFF)
                snprintf(bad, sizeof bad, "bad nid '%s' for alloc_nid=", v);
            else
                options.alloc_nid = (uint32_t)id;
        } else if (!strcmp(k, "uid") || !strcmp(k, "gid")) {
            uint64_t id;
            if (!parse_size(v, &id) || id > 0xFFFFFFFF) {
                snprintf(bad, sizeof bad, "bad id '%s' for %s=", v, k);
                continue;
            }
            if (k[0] == 'u')
                options.uid = (uint32_t)id;
            else
                options.gid = (uint32_t)id;
        } else if (!strcmp(k, "ranks")) {
            uint64_t n;
            if (!parse_size(v, &n) || n < 1 || n > 255) {
                snprintf(bad, sizeof bad, "bad value '%s' for ranks= (1 .. 255)", v);
                continue;
            }
            options.ranks = (unsigned)n;
        } else if (!strcmp(k, "end_hold")) {
            uint64_t ms;
            if (!parse_size(v, &ms) || ms > 60000)
                snprintf(bad, sizeof bad, "bad value '%s' for end_hold= (0 .. 60000 ms)", v);
            else
                options.end_hold_ms = (unsigned)ms;
        } else if (!strcmp(k, "smptest")) {
            options.smptest = !strcmp(v, "1");
        } else if (!strcmp(k, "payload_crc")) {
            if (strcmp(v, "0") && strcmp(v, "1"))
                snprintf(bad, sizeof bad, "bad value '%s' for payload_crc= (0 or 1)", v);
            options.payload_crc = !strcmp(v, "1");
        } else if (!strcmp(k, "msgtrace")) {
            uint64_t n;
            if (!parse_size(v, &n) || n > MSGTRACE_CPUS)
                snprintf(bad, sizeof bad, "bad value '%s' for msgtrace= (0 .. %u CPUs)", v,
                         MSGTRACE_CPUS);
            else
                options.msgtrace_cpus = (unsigned)n;
        } else if (!strcmp(k, "nettest")) {
            if (strcmp(v, "echo") && strcmp(v, "ping") && strcmp(v, "barrier"))
                snprintf(bad, sizeof bad, "unknown nettest mode '%s' (echo, ping or barrier)", v);
            options.nettest_echo = !strcmp(v, "echo");
            options.nettest_ping = !strcmp(v, "ping");
            options.nettest_barrier = !strcmp(v, "barrier");
        } else {
            kprintf("ignoring unknown option '%s=%s'\n", k, v);
        }
    }
    options.envp[options.envc] = NULL;
    if (!options.hostlink)
        options.stdin_mode = STDIN_NONE;     /* input comes over the host link only */
    /* Reported only now, so hostlink= and exit= are in force wherever they stand. */
    if (bad[0])
        load_error("%s", bad);
}
