/*
 * yod: launch a parallel job on Tern compute nodes.
 *
 *   yod [options] program [args...]
 *   yod [options] -F loadfile       lines: -sz N [-list L] program args
 *   yod -show | -kill JOB | -help
 *
 * Exit status: 0 every rank exited 0; 1 the application failed (yod says
 * which ranks and why); 2 the job could not be loaded.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tern/nodedb.h>
#include <tern/tern_proto.h>
#include "yod.h"

struct yod Y;
int post_receive_buffers(void);

static const char usage_text[] =
    "usage: yod [options] program [args...]\n"
    "       yod [options] -F loadfile\n"
    "       yod -show | -kill JOB | -help\n"
    "options:\n"
    "  -sz N            run N ranks (default 1)\n"
    "  -n N, -np N      the same, as mpiexec spells it\n"
    "  -ppn K           K ranks on each node, one per core, each in memory of its own\n"
    "                   (ceil(N/K) nodes, or those of -list; with -F, each line's\n"
    "                   ranks on nodes of their own; at most 31 per node for\n"
    "                   programs that use Portals).  Default: a rank\n"
    "                   per core of the nodes (up to 31) for a program that starts no\n"
    "                   threads, one per node for one that may (-v says which;\n"
    "                   docs/yod.md)\n"
    "  -list L          on exactly these nodes, e.g. 3..7,12\n"
    "  -heap SIZE       heap of each rank (e.g. 256M); default: all memory left\n"
    "  -stack SIZE      stack of each rank (e.g. 8M); default: the node's\n"
    "  -timeout SECONDS kill the job after this long\n"
    "  -label           prefix every output line with [rank]\n"
    "  -quiet           no messages from yod itself, only the exit status\n"
    "  -v               on stderr: the job id once the nodes are allocated, and\n"
    "                   timings of the load and the run\n"
    "  -fanout K        load tree fan-out (default 2)\n"
    "  -F loadfile      one job of several programs: lines '-sz N [-list L] program args'\n"
    "  -show            list the nodes and the jobs on them\n"
    "  -kill JOB        kill a running job\n"
    "environment: TERN_IFACE, TERN_MUNGE_SOCKET, TERN_ALLOC_NID (see docs/yod.md);\n"
    "the program gets yod's environment plus TERN_RANK, TERN_SIZE, TERN_JOB, TERN_MAP.\n";

double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "yod: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}

static bool parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return false;
    uint64_t mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mult = 1ULL << 10; end++; break;
    case 'M': mult = 1ULL << 20; end++; break;
    case 'G': mult = 1ULL << 30; end++; break;
    case 0: break;
    default: return false;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return false;
    *out = (uint64_t)(v * (double)mult);
    return true;
}

static bool parse_count(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end || v < 1 || v > YOD_MAX_RANKS)
        return false;
    *out = (int)v;
    return true;
}

/* -sz N, or -n N / -np N as MPI launchers spell it. */
static bool is_size_opt(const char *o)
{
    return !strcmp(o, "-sz") || !strcmp(o, "-n") || !strcmp(o, "-np");
}

/* An option that takes the next word as its value, as the line's last word. */
static int no_value(const char *o)
{
    return fail(2, "%s wants a value (yod -help)", o);
}

/* The nodes `ranks` ranks take, Y.opt.ppn (at least 1) on each. */
static int nodes_for(int ranks)
{
    int k = Y.opt.ppn > 1 ? Y.opt.ppn : 1;
    return (ranks + k - 1) / k;
}

/* Each group's ranks onto nodes of their own, Y.opt.ppn on each (a group's
 * last node fewer): a node runs one program.  The job's node count. */
static int place_ranks(void)
{
    int k = Y.opt.ppn > 1 ? Y.opt.ppn : 1, node = 0;
    for (int g = 0; g < Y.ngroups; g++) {
        const struct group *gr = &Y.groups[g];
        for (int i = 0; i < gr->count; i++) {
            struct rank *rk = &Y.ranks[gr->first_rank + i];
            rk->node = node + i / k;
            rk->local = i % k;
            rk->nlocal = gr->count - (i - i % k) < k ? gr->count - (i - i % k) : k;
        }
        node += nodes_for(gr->count);
    }
    return node;
}

/* One group (a program and its ranks) from words: [-sz N] [-list L] prog args. */
static int parse_group(char **w, int n, int sz, const char *list, const char *where)
{
    if (Y.ngroups >= YOD_MAX_GROUPS)
        return fail(2, "%s: more than %d programs", where, YOD_MAX_GROUPS);
    int i = 0;
    while (i < n && w[i][0] == '-') {
        if (is_size_opt(w[i]) && i + 1 < n) {
            if (!parse_count(w[i + 1], &sz))
                return fail(2, "%s: %s wants a number of nodes from 1 to %d", where, w[i],
                            YOD_MAX_RANKS);
            i += 2;
        } else if (!strcmp(w[i], "-list") && i + 1 < n) {
            list = w[i + 1];
            i += 2;
        } else {
            return fail(2, "%s: unknown option %s (yod -help)", where, w[i]);
        }
    }
    if (i >= n)
        return fail(2, "%s: no program given (yod -help)", where);
    struct group *g = &Y.groups[Y.ngroups];
    memset(g, 0, sizeof *g);
    g->argv = &w[i];
    g->argc = n - i;
    g->count = sz;
    if (list) {
        char err[256];
        g->nlist = parse_node_list(list, g->list, YOD_MAX_RANKS, err, sizeof err);
        if (g->nlist < 0)
            return fail(2, "%s: -list %s: %s", where, list, err);
        if (Y.opt.ppn > 1) {
            /* -ppn K -list L: K ranks on each listed node (-sz N: the last
             * node fewer), so N must need exactly the nodes listed. */
            int k = Y.opt.ppn, ranks = sz ? sz : g->nlist * k, need = nodes_for(ranks);
            if (need != g->nlist)
                return fail(2, "%s: -sz %d -ppn %d needs %d node%s, but -list names %d", where,
                            ranks, k, need, need == 1 ? "" : "s", g->nlist);
            g->count = ranks;
        } else {
            if (sz && sz != g->nlist && sz != 1)
                return fail(2, "%s: -sz %d but -list names %d nodes", where, sz, g->nlist);
            g->count = g->nlist;
        }
    }
    if (g->count == 0)
        g->count = 1;
    Y.ngroups++;
    return 0;
}

static int read_loadfile(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(2, "%s: %s", path, strerror(errno));
    char line[4096];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char **w = calloc(512, sizeof *w);
        int n = 0;
        for (char *tok = strtok(line, " \t\r\n"); tok && n < 511; tok = strtok(NULL, " \t\r\n"))
            w[n++] = strdup(tok);
        if (n == 0) {
            free(w);
            continue;
        }
        char where[600];
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        int rc = parse_group(w, n, 0, NULL, where);
        if (rc) {
            fclose(f);
            return rc;
        }
    }
    fclose(f);
    if (Y.ngroups == 0)
        return fail(2, "%s: no programs in the load file", path);
    return 0;
}

static struct tern_reply rep;

/* The allocator's table of nodes (state, job, cores) into *st. */
static int node_status(struct tern_reply *st, char *err, size_t errlen)
{
    struct tern_hdr h;
    memset(&h, 0, sizeof h);
    return alloc_request(&h, sizeof h, TERN_STATUS, st, err, errlen);
}

static int show(void)
{
    char err[512];
    if (node_status(&rep, err, sizeof err))
        return fail(2, "%s", err);
    int nfree = 0;
    printf("%6s  %-17s  %-9s  %-6s  %s\n", "nid", "MAC", "state", "job", "cores");
    for (uint32_t i = 0; i < rep.n; i++) {
        const struct tern_node_status *s = &rep.u.nodes[i];
        char mac[18], job[16] = "-", cores[8];
        format_mac(s->mac, mac);
        if (s->state == NODE_ALLOCATED)
            snprintf(job, sizeof job, "%u", s->job);
        nfree += s->state == NODE_FREE;
        printf("%6u  %-17s  %-9s  %-6s  %s\n", s->nid, mac,
               node_state_name((enum node_state)(s->state & 3)), job, format_cores(s->cores, cores));
    }
    /* Jobs: each with its nodes. */
    uint32_t seen[TERN_MAX_LIST];
    int nseen = 0;
    for (uint32_t i = 0; i < rep.n; i++) {
        const struct tern_node_status *s = &rep.u.nodes[i];
        if (s->state != NODE_ALLOCATED)
            continue;
        bool dup = false;
        for (int k = 0; k < nseen; k++)
            dup |= seen[k] == s->job;
        if (dup || nseen == TERN_MAX_LIST)
            continue;
        seen[nseen++] = s->job;
        int count = 0;
        for (uint32_t k = 0; k < rep.n; k++)
            count += rep.u.nodes[k].state == NODE_ALLOCATED && rep.u.nodes[k].job == s->job;
        printf("job %u: %d node%s\n", s->job, count, count == 1 ? "" : "s");
    }
    printf("%u nodes, %d free, %d job%s\n", rep.n, nfree, nseen, nseen == 1 ? "" : "s");
    return 0;
}

static int kill_job(const char *arg)
{
    char err[512], *end;
    unsigned long j = strtoul(arg, &end, 10);
    if (*arg == 0 || *end || j == 0 || j > 0xFFFFFFFFUL)
        return fail(2, "-kill wants a job number (yod -show lists them)");
    struct tern_release r;
    memset(&r, 0, sizeof r);
    r.job = (uint32_t)j;
    if (alloc_request(&r, sizeof r, TERN_KILL, &rep, err, sizeof err))
        return fail(2, "%s", err);
    if (rep.status)
        return fail(1, "job %lu: %s", j, rep.message);
    printf("job %lu: %s\n", j, rep.message);
    return 0;
}

/* The nodes go back; those whose end yod did not see (lost, or never
 * answered the load) the allocator frees when they say so themselves.
 * before_load: no node has been sent anything. */
static void release_nodes(bool before_load)
{
    char err[512];
    static struct tern_release r;
    memset(&r, 0, sizeof r);
    r.job = Y.job;
    for (int i = 0; i < Y.size && !before_load; i++) {
        bool listed = false;            /* -ppn: a node's ranks share its nid */
        for (uint32_t k = 0; k < r.n_unsure; k++)
            listed |= r.unsure[k] == Y.ranks[i].nid;
        if (Y.ranks[i].state != R_EXITED && Y.ranks[i].state != R_FAILED_LOAD && !listed &&
            r.n_unsure < TERN_MAX_LIST)
            r.unsure[r.n_unsure++] = Y.ranks[i].nid;
    }
    if (alloc_request(&r, offsetof(struct tern_release, unsure) + r.n_unsure * sizeof(uint32_t),
                      TERN_RELEASE, &rep, err, sizeof err))
        fprintf(stderr, "yod: could not give the nodes back: %s\n", err);
}

static void release(void) { release_nodes(false); }

/* With -ppn K a node's C cores are shared out, C/K to a rank: its first
 * thread's and the threads it makes (docs/yod.md).  An OpenMP program sizes
 * its team by them, unless OMP_NUM_THREADS asks for more: then the extra
 * threads take turns on the rank's last core, and the program runs slower
 * than it would with a core for each.  Said before the load; not refused (a
 * program may carry a thread starter it never calls, or want it so). */
static bool warn_threads_past_cores(uint32_t nid, unsigned cores, int nlocal, int group)
{
    const char *omp = getenv("OMP_NUM_THREADS");
    const char *why, *path = Y.groups[group].prog.path, *base = strrchr(path, '/');
    unsigned per = cores / (unsigned)nlocal;
    if (Y.opt.quiet || !omp || atoi(omp) <= (int)per ||
        !program_may_start_threads(&Y.groups[group].prog, &why))
        return false;
    fprintf(stderr, "yod: warning: OMP_NUM_THREADS=%s, but a rank of %s on nid %u has %u core%s "
            "(%d ranks on %u cores): its threads past %u will take turns on its last core\n",
            omp, base ? base + 1 : path, nid, per, per == 1 ? "" : "s", nlocal, cores, per);
    return true;
}

/* -ppn K: every node of the job must have K cores (as registered); a node
 * that did not say how many is left to refuse the load itself.  Warns, once,
 * where OMP_NUM_THREADS asks a rank for more threads than it has cores. */
static int check_cores(void)
{
    bool warned = false;
    char err[512];
    static struct tern_reply st;
    if (node_status(&st, err, sizeof err)) {
        release_nodes(true);
        return fail(2, "%s", err);
    }
    for (int r = 0; r < Y.size; r += Y.ranks[r].nlocal)
        for (uint32_t i = 0; i < st.n; i++) {
            unsigned c = st.u.nodes[i].cores;
            if (st.u.nodes[i].nid != Y.ranks[r].nid || !c)
                continue;
            if (c < (unsigned)Y.opt.ppn) {
                release_nodes(true);
                return fail(2, "-ppn %d: node nid %u has %u core%s, and a rank needs a core of "
                            "its own", Y.opt.ppn, Y.ranks[r].nid, c, c == 1 ? "" : "s");
            }
            if (Y.ranks[r].nlocal > 1 && !warned)       /* once: the first node it applies to */
                warned = warn_threads_past_cores(Y.ranks[r].nid, c, Y.ranks[r].nlocal,
                                                 Y.ranks[r].group);
        }
    return 0;
}

/* Ranks per node when -ppn is not given: as many as a node has cores for a
 * program that starts no threads (as Catamount's virtual-node mode), one
 * for a program that may (its threads take the cores).  The cores are the
 * fewest any node registered, so every node the allocator may give has
 * them; a node that did not say counts as one.  -list and -F place ranks
 * by node: one each. */
static int choose_ppn(void)
{
    char err[512];
    const char *why = NULL;
    Y.opt.ppn = 1;
    if (Y.size < 2 || Y.opt.list || Y.opt.loadfile || Y.ngroups != 1)
        return 0;
    if (program_may_start_threads(&Y.groups[0].prog, &why)) {
        if (Y.opt.verbose)
            fprintf(stderr, "yod: one rank per node: the program may start threads (%s)\n",
                    why);
        return 0;
    }
    static struct tern_reply st;
    if (node_status(&st, err, sizeof err))
        return fail(2, "%s", err);
    unsigned fewest = 0;
    for (uint32_t i = 0; i < st.n; i++) {
        unsigned c = st.u.nodes[i].cores ? st.u.nodes[i].cores : 1;
        if (!fewest || c < fewest)
            fewest = c;
    }
    if (fewest > TERN_PORTALS_RANKS_PER_NODE)
        fewest = TERN_PORTALS_RANKS_PER_NODE;     /* NX and MPI ranks need an interface */
    Y.opt.ppn = fewest < 1 ? 1 : fewest > (unsigned)Y.size ? Y.size : (int)fewest;
    if (Y.opt.verbose)
        fprintf(stderr, "yod: %d rank%s per node: a rank per core, the program starts no "
                "threads (-ppn 1: one per node)\n", Y.opt.ppn, Y.opt.ppn == 1 ? "" : "s");
    return 0;
}

static int allocate(void)
{
    static struct tern_alloc a;
    char err[512];
    int rc;
    if (!Y.opt.ppn && (rc = choose_ppn()))
        return rc;
    int nodes = place_ranks();
    memset(&a, 0, sizeof a);
    bool any_list = false, all_list = true;
    for (int g = 0; g < Y.ngroups; g++) {
        any_list |= Y.groups[g].nlist > 0;
        all_list &= Y.groups[g].nlist > 0;
    }
    if (any_list && !all_list)
        return fail(2, "give -list for every program of the load file, or for none");
    if (Y.size > TERN_MAX_LIST)
        return fail(2, "%d ranks: at most %d", Y.size, TERN_MAX_LIST);
    if (all_list) {
        for (int g = 0; g < Y.ngroups; g++)
            for (int i = 0; i < Y.groups[g].nlist; i++)
                a.list[a.nlist++] = Y.groups[g].list[i];
    } else {
        a.count = nodes;
    }
    /* The nodes are there but still finishing a job that ended (its
     * launcher gone, or a load that failed); each is freed as soon as it
     * says it is clean, so the request is made again until then. */
    double t0 = now_s();
    bool said = false;
    for (;;) {
        if (alloc_request(&a, offsetof(struct tern_alloc, list) + a.nlist * sizeof(uint32_t),
                          TERN_ALLOC, &rep, err, sizeof err))
            return fail(2, "%s", err);
        if (rep.status != TERN_STATUS_NODES_ENDING || now_s() - t0 > YOD_ALLOC_WAIT_S)
            break;
        if (yod_interrupted || yod_terminated)
            return fail(1, "%s while waiting for nodes", yod_interrupted ? "interrupted" :
                        "terminated");
        if (!said && now_s() - t0 > 1.0) {
            fprintf(stderr, "yod: waiting for nodes: %s\n", rep.message);
            said = true;
        }
        struct timespec gap = {0, 100 * 1000000L};
        nanosleep(&gap, NULL);
    }
    if (rep.status)
        return fail(2, "cannot have the nodes: %s (yod -show lists them)", rep.message);
    if ((int)rep.n != nodes) {
        Y.job = rep.job;
        release_nodes(true);
        return fail(2, "the allocator gave %u nodes for %d ranks", rep.n, Y.size);
    }
    Y.job = rep.job;
    memcpy(Y.job_key, rep.key, sizeof Y.job_key);
    for (int r = 0; r < Y.size; r++)
        Y.ranks[r].nid = rep.u.nids[Y.ranks[r].node];
    if (Y.opt.ppn > 1 && (rc = check_cores()))
        return rc;
    /* Before the load: a program outside the job (a Linux process that
     * joins it, stamped with this id) can start now. */
    if (Y.opt.verbose)
        fprintf(stderr, "yod: job %u: %d nodes allocated\n", Y.job, nodes);
    return 0;
}

/* What the command line asks for besides the job's programs. */
struct cmdline {
    const char *show_or_kill, *kill_arg;
    int first_word;              /* argv index of the program (or of nothing, with -F) */
    int sz;
};

/* yod's options into Y.opt and c: -1 to go on, else the exit status (help
 * was printed, or an option was wrong and said so). */
static int parse_options(int argc, char **argv, struct cmdline *c)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-help") || !strcmp(o, "--help") || !strcmp(o, "-h")) {
            fputs(usage_text, stdout);
            return 0;
        } else if (!strcmp(o, "-show")) {
            c->show_or_kill = o;
        } else if (!strcmp(o, "-label")) {
            Y.opt.label = true;
        } else if (!strcmp(o, "-quiet")) {
            Y.opt.quiet = true;
        } else if (!strcmp(o, "-v")) {
            Y.opt.verbose = true;
        } else if (is_size_opt(o)) {
            if (!v)
                return no_value(o);
            if (!parse_count(v, &c->sz))
                return fail(2, "%s wants a number of nodes from 1 to %d", o, YOD_MAX_RANKS);
            i++;
        } else if (!strcmp(o, "-ppn")) {
            if (!v)
                return no_value(o);
            if (!parse_count(v, &Y.opt.ppn) || Y.opt.ppn > 255)
                return fail(2, "-ppn wants a number of ranks per node from 1 to 255");
            i++;
        } else if (!strcmp(o, "-list")) {
            if (!v)
                return no_value(o);
            Y.opt.list = argv[++i];
        } else if (!strcmp(o, "-heap") || !strcmp(o, "-stack")) {
            if (!v)
                return no_value(o);
            if (!parse_bytes(v, o[1] == 'h' ? &Y.opt.heap : &Y.opt.stack))
                return fail(2, "%s wants a size such as 64M", o);
            i++;
        } else if (!strcmp(o, "-timeout")) {
            if (!v)
                return no_value(o);
            char *end;
            Y.opt.timeout = strtod(v, &end);
            if (*end || Y.opt.timeout <= 0)
                return fail(2, "-timeout wants seconds");
            i++;
        } else if (!strcmp(o, "-fanout")) {
            if (!v)
                return no_value(o);
            if (!parse_count(v, &Y.opt.fanout))
                return fail(2, "-fanout wants a number");
            i++;
        } else if (!strcmp(o, "-F")) {
            if (!v)
                return no_value(o);
            Y.opt.loadfile = argv[++i];
        } else if (!strcmp(o, "-kill")) {
            if (!v)
                return no_value(o);
            c->show_or_kill = o;
            c->kill_arg = argv[++i];
        } else {
            return fail(2, "unknown option %s (yod -help)", o);
        }
    }
    c->first_word = i;
    return -1;
}

/* The job's programs (from the line or the load file), read and hashed,
 * and its ranks: 0, or the exit status. */
static int read_programs(int argc, char **argv, const struct cmdline *c)
{
    char err[512];
    int rc, i = c->first_word;
    if (Y.opt.loadfile) {
        if (i < argc)
            return fail(2, "-F takes the programs from the load file; no program on the line");
        if ((rc = read_loadfile(Y.opt.loadfile)))
            return rc;
    } else {
        if (i >= argc)
            return fail(2, "no program given (yod -help)");
        if ((rc = parse_group(&argv[i], argc - i, c->sz, Y.opt.list, "command line")))
            return rc;
    }
    for (int g = 0; g < Y.ngroups; g++) {
        struct group *gr = &Y.groups[g];
        if (program_read(&gr->prog, gr->argv[0], err, sizeof err))
            return fail(2, "%s", err);
        gr->first_rank = Y.size;
        if (Y.size + gr->count > YOD_MAX_RANKS)
            return fail(2, "more than %d ranks", YOD_MAX_RANKS);
        for (int k = 0; k < gr->count; k++)
            Y.ranks[Y.size++].group = g;
    }
    return 0;
}

/* Nodes, launch, the job's life, the end: yod's exit status. */
static int run_job(void)
{
    char err[512];
    int rc;
    if (yod_portals_open(err, sizeof err))
        return fail(2, "%s", err);
    yod_install_signals();
    if (files_setup(err, sizeof err))
        return fail(2, "cannot serve files: %s", err);
    if ((rc = allocate()))
        return rc;
    files_mounts();
    if (post_receive_buffers()) {
        release_nodes(true);
        return fail(2, "out of memory");
    }
    if (launch()) {
        send_ctl_all(YOD_ABORT, 0);
        /* The aborts reach the nodes before yod goes (its Portals would
         * stop resending them); the nodes that took the job are given back
         * as unsure, freed when they say they have dropped it. */
        double end = now_s() + 2.0;
        while (ctl_unacked > 0 && now_s() < end) {
            ptl_event_t ev;
            unsigned which;
            if (PtlEQPoll(&Y.eq, 1, 50, &ev, &which) == PTL_OK)
                handle_event(&ev);
        }
        release();
        return yod_interrupted || yod_terminated ? 1 : 2;
    }
    rc = monitor();
    signal(SIGTSTP, SIG_DFL);
    files_end();
    release();
    output_drain();               /* every line reaches yod's reader before yod ends */
    PtlNIFini(Y.ni);
    PtlFini();
    return rc;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    Y.t_start = now_s();
    Y.opt.fanout = 2;
    struct cmdline c = {0};
    int rc = parse_options(argc, argv, &c);
    if (rc >= 0)
        return rc;
    if (c.show_or_kill) {
        char err[512];
        if (yod_portals_open(err, sizeof err))
            return fail(2, "%s", err);
        return c.kill_arg ? kill_job(c.kill_arg) : show();
    }
    if ((rc = read_programs(argc, argv, &c)))
        return rc;
    return run_job();
}
