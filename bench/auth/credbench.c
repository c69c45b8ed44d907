/* What proving who runs yod costs a launch (issue 19): yod signs its
 * allocation request with a MUNGE credential (cred_sign: a round trip to
 * munged), the allocator verifies it (cred_verify: another).  Runs both
 * N times on an allocation request of a 64-node job and prints the median
 * and minimum microseconds of each.  Run by bench/auth_cost.py, which
 * starts a private munged (TERN_MUNGE_SOCKET). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tern/cred.h>
#include <tern/tern_proto.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    if (n < 1 || n > 100000) {
        fprintf(stderr, "usage: credbench [N (1..100000)]\n");
        return 2;
    }
    double *sign = calloc((size_t)n, sizeof *sign), *verify = calloc((size_t)n, sizeof *verify);
    struct tern_alloc a;
    char err[256];
    if (!sign || !verify)
        return 1;
    for (int i = 0; i < n; i++) {
        memset(&a, 0, sizeof a);
        a.h.magic = TERN_MAGIC;
        a.h.version = TERN_PROTO_VERSION;
        a.h.type = TERN_ALLOC;
        a.h.request_id = (uint64_t)i + 1;
        a.count = 64;
        size_t len = offsetof(struct tern_alloc, list);
        double t0 = now_us();
        if (cred_sign(&a.h, len, err, sizeof err)) {
            fprintf(stderr, "credbench: sign: %s\n", err);
            return 1;
        }
        double t1 = now_us();
        uint32_t uid, gid;
        if (cred_verify(&a.h, len, &uid, &gid, err, sizeof err)) {
            fprintf(stderr, "credbench: verify: %s\n", err);
            return 1;
        }
        double t2 = now_us();
        sign[i] = t1 - t0;
        verify[i] = t2 - t1;
    }
    qsort(sign, (size_t)n, sizeof *sign, cmp);
    qsort(verify, (size_t)n, sizeof *verify, cmp);
    printf("credbench: %d rounds: sign median %.1f us min %.1f us, verify median %.1f us "
           "min %.1f us\n", n, sign[n / 2], sign[0], verify[n / 2], verify[0]);
    return 0;
}
