/* Every global operation against the serial answer. */
#include <math.h>
#include <string.h>
#include "nxtest.h"

static long xor_all(long n) { long x = 0; for (long i = 0; i < n; i++) x ^= (i * 37 + 5); return x; }

static long maxop(void *a, void *b)
{
    long *x = a, *y = b;
    for (int i = 0; i < 3; i++)
        if (y[i] > x[i])
            x[i] = y[i];
    return 0;
}

int main(void)
{
    long me = mynode(), n = numnodes();
    double d[3] = {me + 1.0, 1.0 + me / 10.0, -(double)me}, dw[3];
    gdsum(d, 1, dw);
    CHECK(d[0] == n * (n + 1) / 2.0, "gdsum %f", d[0]);
    double p = 1.0 + me / 10.0, pw, pe = 1;
    for (long i = 0; i < n; i++) pe *= 1.0 + i / 10.0;
    gdprod(&p, 1, &pw);
    CHECK(fabs(p - pe) < 1e-9 * pe, "gdprod %f want %f", p, pe);
    double h = me * 1.5, l = me * 1.5;
    gdhigh(&h, 1, &pw); gdlow(&l, 1, &pw);
    CHECK(h == (n - 1) * 1.5 && l == 0, "gdhigh/gdlow %f %f", h, l);

    long x[4] = {me + 1, me % 3 + 1, me * 37 + 5, -me}, w[4];
    long s = x[0]; gisum(&s, 1, w); CHECK(s == n * (n + 1) / 2, "gisum %ld", s);
    long pr = x[1], pe2 = 1; for (long i = 0; i < n; i++) pe2 *= i % 3 + 1;
    giprod(&pr, 1, w); CHECK(pr == pe2, "giprod %ld want %ld", pr, pe2);
    long hi = x[2], lo = x[3]; gihigh(&hi, 1, w); gilow(&lo, 1, w);
    CHECK(hi == (n - 1) * 37 + 5 && lo == -(n - 1), "gihigh/gilow %ld %ld", hi, lo);
    long a = ~(1L << me), o = 1L << me, xo = x[2];
    giand(&a, 1, w); gior(&o, 1, w); gixor(&xo, 1, w);
    CHECK(a == ~((1L << n) - 1) && o == (1L << n) - 1 && xo == xor_all(n), "bit ops %lx %lx %lx", a, o, xo);
    long la = me != 1, lr = me == n - 1;
    gland(&la, 1, w); glor(&lr, 1, w);
    CHECK(la == (n < 2) && lr == 1, "logical %ld %ld", la, lr);

    float f = (float)(me + 1), fw, fp = 2.0f, fh = (float)me, fl = (float)me;
    gssum(&f, 1, &fw); gsprod(&fp, 1, &fw); gshigh(&fh, 1, &fw); gslow(&fl, 1, &fw);
    CHECK(f == n * (n + 1) / 2.0f && fp == powf(2.0f, (float)n) && fh == n - 1 && fl == 0,
          "float ops %f %f %f %f", f, fp, fh, fl);

    enum { V = 1000 };
    static double vec[V], vw[V];
    for (int i = 0; i < V; i++) vec[i] = i + me;
    gdsum(vec, V, vw);
    for (int i = 0; i < V; i++) CHECK(vec[i] == (double)i * n + n * (n - 1) / 2.0, "vector %d", i);

    char mine[16], all[16 * 64];
    long len = snprintf(mine, sizeof mine, "<%ld>", me), got = 0;
    gcol(mine, len, all, sizeof all, &got);
    char want[22 * 64] = "";
    for (long i = 0; i < n && i < 64; i++) snprintf(want + strlen(want), 22, "<%ld>", (long)(int)i);
    CHECK(got == (long)strlen(want) && !memcmp(all, want, (size_t)got), "gcol %.*s", (int)got, all);

    long trip[3] = {me, -me, me % 2}, tw[3];
    gopf(trip, sizeof trip, tw, maxop);
    CHECK(trip[0] == n - 1 && trip[1] == 0 && trip[2] == (n > 1), "gopf %ld %ld %ld", trip[0], trip[1], trip[2]);

    for (int i = 0; i < 10; i++) gsync();
    if (me == 0) printf("reduce ok on %ld nodes\n", n);
    return 0;
}
