/* What a program reads of itself in /proc/self and /proc/PID: its status
 * (Pid, Name, Threads, VmRSS and VmHWM, as codes that report their memory
 * read them) and its memory map (the line holding a local variable is
 * [stack], the one holding main names the program, the break is in [heap]),
 * and glibc's pthread_getattr_np for the first thread, which reads that map;
 * /proc/self/exe against argv[0] (run it by its absolute path), and cmdline
 * and environ against argv and envp.  Each line says yes or no, the same on
 * Linux; under yod they describe the rank on its node, not yod on the
 * service node. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *yes(int ok) { return ok ? "yes" : "NO"; }

/* The value after "Key:" in a status file, or -1. */
static long field(const char *path, const char *key, char *text, size_t size)
{
    FILE *f = fopen(path, "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && line[n] == ':') {
            char *p = line + n + 1;
            p += strspn(p, " \t");
            p[strcspn(p, "\n")] = 0;
            if (text)
                snprintf(text, size, "%s", p);
            v = strtol(p, NULL, 10);
            break;
        }
    if (f)
        fclose(f);
    return v;
}

static pthread_barrier_t two;

static void *second(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&two);        /* counted while here */
    pthread_barrier_wait(&two);
    return NULL;
}

/* Whether the file holds exactly the strings v[0..], each ended by a NUL. */
static int holds(const char *path, char **v)
{
    static char got[65536], want[65536];
    size_t n = 0, m = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    n = fread(got, 1, sizeof got, f);
    fclose(f);
    for (; *v && m + strlen(*v) + 1 <= sizeof want; v++)
        m += (size_t)sprintf(want + m, "%s", *v) + 1;
    return n == m && !memcmp(got, want, n);
}

int main(int argc, char **argv, char **envp)
{
    (void)argc;
    int local = 0;
    char path[64], name[64] = "";
    snprintf(path, sizeof path, "/proc/%d/status", (int)getpid());
    long pid = field("/proc/self/status", "Pid", NULL, 0);
    field("/proc/self/status", "Name", name, sizeof name);
    const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    long rss = field("/proc/self/status", "VmRSS", NULL, 0);
    long hwm = field("/proc/self/status", "VmHWM", NULL, 0);
    printf("status Pid is getpid(): %s\n", yes(pid == getpid()));
    printf("status Name is the program's: %s\n", yes(!strncmp(name, base, 15)));
    printf("status VmRSS and VmHWM: %s\n", yes(rss > 0 && hwm >= rss));
    printf("/proc/PID/status is the same process: %s\n",
           yes(field(path, "Pid", NULL, 0) == getpid()));
    /* statm: the same memory in pages (size and resident first) */
    long vsize = -1, res = -1;
    FILE *sm = fopen("/proc/self/statm", "r");
    if (!sm || fscanf(sm, "%ld %ld", &vsize, &res) != 2)
        vsize = res = -1;
    if (sm)
        fclose(sm);
    long page = sysconf(_SC_PAGESIZE);
    long res_kb = res * (page / 1024);       /* Linux's may move between the reads */
    printf("statm resident is status VmRSS: %s\n",
           yes(vsize >= res && res > 0 && labs(res_kb - rss) <= rss / 10));
    printf("status Threads %ld", field("/proc/self/status", "Threads", NULL, 0));
    pthread_t t;
    pthread_barrier_init(&two, NULL, 2);
    if (pthread_create(&t, NULL, second, NULL) == 0) {
        pthread_barrier_wait(&two);
        printf(", with a second %ld\n", field("/proc/self/status", "Threads", NULL, 0));
        pthread_barrier_wait(&two);
        pthread_join(t, NULL);
    } else {
        printf(", no second thread\n");
    }

    /* The map: ascending lines that do not overlap; which line holds what. */
    /* The break moved by hand: musl's sbrk moves it only by 0. */
    uintptr_t cur = (uintptr_t)syscall(SYS_brk, 0);
    if ((uintptr_t)syscall(SYS_brk, cur + 4096) != cur + 4096)
        return 1;
    uintptr_t brk_in = cur + 4095, me = (uintptr_t)&local,
              code = (uintptr_t)(void *)main;
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int ordered = 1, lines = 0;
    const char *stack = "no line", *text = "no line", *heap = "no line";
    static char names[3][128];
    uintptr_t last = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long from, to;
        char perms[8];
        int at = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s%n", &from, &to, perms, &at) != 3)
            continue;
        lines++;
        ordered &= from >= last && to > from;
        last = to;
        char *nm = line + at;
        nm += strspn(nm, " ");
        nm[strcspn(nm, "\n")] = 0;
        const char *show = nm[0] ? nm : "(anonymous)";
        if (from <= me && me < to)
            stack = strcpy(names[0], show);
        if (from <= code && code < to)
            text = strcpy(names[1], show);
        if (from <= brk_in && brk_in < to)
            heap = strcpy(names[2], show);
    }
    const char *tb = strrchr(text, '/') ? strrchr(text, '/') + 1 : text;
    printf("maps %s lines ascending, none overlapping: %s\n", lines > 2 ? "3 or more" : "few",
           yes(ordered));
    printf("maps a local variable is in %s\n", stack);
    printf("maps main is in the program's line: %s\n", yes(!strcmp(tb, base)));
    printf("maps the break is in %s\n", heap);

    char exe[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    char byid[512], idpath[64];
    snprintf(idpath, sizeof idpath, "/proc/%d/exe", (int)getpid());
    n = readlink(idpath, byid, sizeof byid - 1);
    byid[n > 0 ? n : 0] = 0;
    if (argv[0][0] == '/')
        printf("/proc/self/exe is argv[0]: %s, /proc/PID/exe too: %s\n",
               yes(!strcmp(exe, argv[0])), yes(!strcmp(byid, argv[0])));
    else
        printf("/proc/self/exe: run me by my absolute path\n");

    printf("cmdline is argv: %s\n", yes(holds("/proc/self/cmdline", argv)));
    printf("environ is envp: %s\n", yes(holds("/proc/self/environ", envp)));

    pthread_attr_t a;
    void *lo;
    size_t size;
    int e = pthread_getattr_np(pthread_self(), &a);
    if (e) {
        printf("pthread_getattr_np: %s\n", strerror(e));
    } else {
        pthread_attr_getstack(&a, &lo, &size);
        printf("pthread_getattr_np: the first thread's stack holds a local: %s\n",
               yes((uintptr_t)lo <= me && me < (uintptr_t)lo + size));
    }
    return 0;
}
