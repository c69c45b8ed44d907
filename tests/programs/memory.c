/* Real-memory checks.
 *   touch PCT   allocate PCT % of the free memory sysinfo reports, write a byte
 *               per page, read them back
 *   over        ask malloc for more than the node has: must get NULL
 *   churn       many malloc/realloc/free cycles of mixed sizes, data verified */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

static int touch(int pct)
{
    struct sysinfo si;
    if (sysinfo(&si)) {
        perror("sysinfo");
        return 1;
    }
    size_t want = (size_t)(si.freeram * si.mem_unit / 100 * pct);
    printf("total %lu KiB, free %lu KiB, allocating %zu KiB\n",
           (unsigned long)(si.totalram * si.mem_unit >> 10),
           (unsigned long)(si.freeram * si.mem_unit >> 10), want >> 10);
    unsigned char *p = malloc(want);
    if (!p) {
        printf("malloc failed\n");
        return 1;
    }
    for (size_t i = 0; i < want; i += 4096)
        p[i] = (unsigned char)(i >> 12);
    for (size_t i = 0; i < want; i += 4096)
        if (p[i] != (unsigned char)(i >> 12)) {
            printf("mismatch at %zu\n", i);
            return 1;
        }
    printf("touched %zu pages: ok\n", want / 4096);
    free(p);
    return 0;
}

static int over(void)
{
    struct sysinfo si;
    sysinfo(&si);
    size_t total = si.totalram * si.mem_unit;
    void *a = malloc(total * 2);
    void *b = malloc(si.freeram * si.mem_unit + (8 << 20));
    printf("malloc(2 x total) = %s\n", a ? "non-NULL" : "NULL");
    printf("malloc(free + 8 MiB) = %s\n", b ? "non-NULL" : "NULL");
    void *c = malloc(1 << 20);
    printf("malloc(1 MiB) afterwards = %s\n", c ? "non-NULL" : "NULL");
    return a || b || !c;
}

static int churn(void)
{
    enum { N = 512 };
    static unsigned char *ptr[N];
    static size_t len[N];
    uint32_t x = 12345;
    for (int round = 0; round < 20000; round++) {
        x = x * 1103515245 + 12345;
        int k = (int)((x >> 8) % N);
        if (ptr[k]) {
            for (size_t i = 0; i < len[k]; i += 97)
                if (ptr[k][i] != (unsigned char)(k + i)) {
                    printf("corruption in block %d\n", k);
                    return 1;
                }
            if ((x >> 20) & 1) {
                free(ptr[k]);
                ptr[k] = NULL;
                continue;
            }
        }
        size_t n = ((x >> 4) % 7 == 0) ? (x % (512 << 10)) + 1 : (x % 2048) + 1;
        unsigned char *q = ptr[k] ? realloc(ptr[k], n) : calloc(1, n);
        if (!q) {
            printf("allocation of %zu failed\n", n);
            return 1;
        }
        if (!ptr[k])
            for (size_t i = 0; i < n; i++)
                if (q[i]) {
                    printf("calloc memory not zero\n");
                    return 1;
                }
        ptr[k] = q;
        len[k] = n;
        for (size_t i = 0; i < n; i += 97)
            q[i] = (unsigned char)(k + i);
    }
    for (int k = 0; k < N; k++)
        free(ptr[k]);
    printf("churn: ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "touch"))
        return touch(argc > 2 ? atoi(argv[2]) : 90);
    if (!strcmp(what, "over"))
        return over();
    if (!strcmp(what, "churn"))
        return churn();
    fprintf(stderr, "usage: memory touch PCT | over | churn\n");
    return 2;
}
