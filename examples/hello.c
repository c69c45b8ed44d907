/* The demo: an ordinary static Linux program reporting where it runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>

int main(int argc, char **argv)
{
    struct utsname u;
    struct sysinfo si;
    uname(&u);
    sysinfo(&si);
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
