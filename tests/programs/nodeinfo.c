/* What a program learns of the machine it runs on from /proc/cpuinfo and
 * /proc/meminfo, parsed as CPU counters, OpenMP runtimes and psutil parse
 * them; beside it what glibc/musl say (get_nprocs, sysconf).  On a Tern
 * node under yod these describe the node, not the service node. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

/* Fields every stanza of Linux's x86 /proc/cpuinfo has. */
static const char *const fields[] = {
    "processor", "vendor_id", "cpu family", "model", "model name", "stepping", "cpu MHz",
    "physical id", "siblings", "core id", "cpu cores", "apicid", "initial apicid", "fpu",
    "cpuid level", "flags", "bogomips", "clflush size", "address sizes",
};
#define NFIELDS (sizeof fields / sizeof fields[0])

static char *value_of(char *line, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(line, key, n))
        return NULL;
    char *p = line + n;
    while (*p == '\t' || *p == ' ')
        p++;
    if (*p != ':')
        return NULL;
    p++;
    if (*p == ' ')
        p++;
    p[strcspn(p, "\n")] = 0;
    return p;
}

static int has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return 1;
    return 0;
}

static int cpuinfo(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) {
        perror("/proc/cpuinfo");
        return 1;
    }
    char line[4096], vendor[64] = "", mhz[32] = "", ids[256] = "", apics[256] = "";
    int processors = 0, complete = 1, seen[NFIELDS] = {0}, siblings = -1, cores = -1;
    int flags_ok = 1, in_stanza = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '\n') {                      /* a stanza ends */
            for (size_t k = 0; k < NFIELDS; k++)
                complete &= seen[k], seen[k] = 0;
            in_stanza = 0;
            continue;
        }
        in_stanza = 1;
        for (size_t k = 0; k < NFIELDS; k++) {
            char copy[4096];
            strcpy(copy, line);
            char *v = value_of(copy, fields[k]);
            if (!v)
                continue;
            seen[k] = 1;
            if (k == 0) {
                processors++;
                snprintf(ids + strlen(ids), sizeof ids - strlen(ids), " %s", v);
            } else if (!strcmp(fields[k], "vendor_id")) {
                snprintf(vendor, sizeof vendor, "%s", v);
            } else if (!strcmp(fields[k], "cpu MHz")) {
                snprintf(mhz, sizeof mhz, "%s", v);
            } else if (!strcmp(fields[k], "siblings")) {
                siblings = atoi(v);
            } else if (!strcmp(fields[k], "cpu cores")) {
                cores = atoi(v);
            } else if (!strcmp(fields[k], "apicid")) {
                snprintf(apics + strlen(apics), sizeof apics - strlen(apics), " %s", v);
            } else if (!strcmp(fields[k], "flags")) {
                flags_ok &= has_word(v, "fpu") && has_word(v, "sse2") && has_word(v, "lm");
            }
        }
    }
    fclose(f);
    if (in_stanza)
        complete = 0;                               /* the last stanza was not ended */
    printf("cpuinfo processors %d:%s\n", processors, ids);
    printf("cpuinfo vendor_id %s\n", vendor);
    printf("cpuinfo cpu MHz %s\n", mhz);
    printf("cpuinfo siblings %d cpu cores %d apicids%s\n", siblings, cores, apics);
    printf("cpuinfo every stanza complete: %s\n", complete && processors ? "yes" : "no");
    printf("cpuinfo flags include fpu sse2 lm: %s\n", flags_ok && processors ? "yes" : "no");
    return 0;
}

static int meminfo(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) {
        perror("/proc/meminfo");
        return 1;
    }
    char line[256];
    long total = -1, free_ = -1, avail = -1, swap = -1;
    int lines = 0, well_formed = 1;
    while (fgets(line, sizeof line, f)) {
        char key[64];
        long v;
        char unit[8] = "";
        lines++;
        if (sscanf(line, "%63[^:]: %ld %7s", key, &v, unit) < 2) {
            well_formed = 0;
            continue;
        }
        if (!strcmp(key, "MemTotal"))
            total = v;
        else if (!strcmp(key, "MemFree"))
            free_ = v;
        else if (!strcmp(key, "MemAvailable"))
            avail = v;
        else if (!strcmp(key, "SwapTotal"))
            swap = v;
        if (strncmp(key, "HugePages_", 10) && strcmp(unit, "kB"))
            well_formed = 0;
    }
    fclose(f);
    printf("meminfo MemTotal %ld kB\n", total);
    printf("meminfo MemFree <= MemAvailable <= MemTotal: %s\n",
           free_ > 0 && free_ <= avail && avail <= total ? "yes" : "no");
    printf("meminfo SwapTotal %ld kB\n", swap);
    printf("meminfo %s lines, all 'Name: value kB': %s\n", lines >= 20 ? "20 or more" : "few",
           well_formed ? "yes" : "no");
    return 0;
}

int main(void)
{
    int rc = cpuinfo() | meminfo();
    printf("sysconf nprocessors %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
    /* sysinfo (and glibc's sysconf(_SC_PHYS_PAGES) on it) must tell the same
     * as MemTotal: a program sizing its arrays by it gets what it can use. */
    struct sysinfo si;
    if (sysinfo(&si))
        return 1;
    printf("sysinfo totalram %llu kB\n", (unsigned long long)si.totalram * si.mem_unit >> 10);
    printf("sysconf phys pages %llu kB\n",
           (unsigned long long)sysconf(_SC_PHYS_PAGES) * (unsigned long long)sysconf(_SC_PAGESIZE) >> 10);
    return rc;
}
