/* The demo: an ordinary static Linux program reporting where it runs.  Under
 * yod it also says which rank it is and on which node (docs/job-interface.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>

/* Rank r's nid: entry r of TERN_MAP ("nid[:pid],..."). */
static const char *nid_of(const char *map, int r)
{
    static char nid[16];
    for (; map && r > 0; r--)
        if ((map = strchr(map, ',')))
            map++;
    snprintf(nid, sizeof nid, "%s", map ? map : "?");
    nid[strcspn(nid, ",:")] = 0;
    return nid;
}

int main(int argc, char **argv)
{
    struct utsname u;
    struct sysinfo si;
    uname(&u);
    sysinfo(&si);
    const char *rank = getenv("TERN_RANK"), *size = getenv("TERN_SIZE");
    if (rank && size)
        printf("hello from rank %s of %s on nid %s: %s %s\n", rank, size,
               nid_of(getenv("TERN_MAP"), atoi(rank)), u.sysname, u.release);
    else
        printf("hello from %s %s (%s)\n", u.sysname, u.release, u.version);
    printf("node memory %lu MiB, free for this program %lu MiB\n",
           (unsigned long)(si.totalram >> 20), (unsigned long)(si.freeram >> 20));
    for (int i = 1; i < argc; i++)
        printf("arg %d: %s\n", i, argv[i]);
    double *v = malloc(1000 * sizeof *v);
    double sum = 0;
    for (int i = 0; i < 1000; i++)
        sum += (v[i] = sqrt((double)i));
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    printf("sum of sqrt(0..999) = %.6f; the time is %s", sum, ctime(&t.tv_sec));
    free(v);
    return 0;
}
