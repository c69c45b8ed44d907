/* Exercises what ordinary programs use: stdio formatting, malloc/free of many
 * sizes, floating-point math (x87, SSE and, where present, AVX2), time.  The
 * lines before "--- time" are deterministic: a test compares them with the
 * same binary run natively on Linux. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((target("avx2"))) static double dot_avx2(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

static double dot(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

int main(void)
{
    printf("ints: %d %u %x %ld %lld %05d|%-6s|%c\n", -42, 42u, 0xbeefu, -1234567890123L,
           9000000000000LL, 42, "ab", 'z');
    printf("floats: %.3f %e %g %.10f\n", 3.14159265, 6.02e23, 1e-7, 1.0 / 3.0);

    size_t total = 0;
    for (size_t sz = 1; sz <= (8u << 20); sz = sz * 3 + 1) {
        unsigned char *p = malloc(sz);
        if (!p) {
            printf("malloc(%zu) failed\n", sz);
            return 1;
        }
        memset(p, (int)(sz & 0xFF), sz);
        for (size_t i = 0; i < sz; i += 4093)
            if (p[i] != (sz & 0xFF))
                return 1;
        total += sz;
        free(p);
    }
    printf("malloc/free of sizes up to 8 MiB: %zu bytes ok\n", total);

    printf("math: sin %.12f cos %.12f exp %.12f log %.12f pow %.12f sqrt %.12f\n", sin(1.0),
           cos(1.0), exp(2.5), log(10.0), pow(2.0, 0.5), sqrt(2.0));
    printf("math: atan2 %.12f tanh %.12f fmod %.12f lgamma %.12f\n", atan2(1.0, 2.0), tanh(0.5),
           fmod(10.5, 3.0), lgamma(4.5));
    long double ld = 1.0L / 3.0L;
    printf("x87 long double: %.18Lf\n", ld);

    enum { N = 4096 };
    static double a[N], b[N];
    for (int i = 0; i < N; i++) {
        a[i] = i * 0.5;
        b[i] = 1.0 / (i + 1);
    }
    double d1 = dot(a, b, N);
    double d2 = __builtin_cpu_supports("avx2") ? dot_avx2(a, b, N) : d1;
    printf("dot product %.9f, avx2 path %s\n", d1, fabs(d1 - d2) < 1e-9 ? "agrees" : "DIFFERS");

    printf("--- time\n");
    struct timespec t0, t1, rt;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct timespec nap = {0, 20 * 1000 * 1000};
    nanosleep(&nap, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_REALTIME, &rt);
    double slept = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("slept %.1f ms\n", slept * 1000);
    printf("realtime %lld\n", (long long)rt.tv_sec);
    printf("time() %lld\n", (long long)time(NULL));
    struct tm tm;
    time_t now = rt.tv_sec;
    gmtime_r(&now, &tm);
    char buf[64];
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    printf("date %s UTC\n", buf);
    printf("pid %d\n", (int)getpid());
    return 0;
}
