/* Forwarded file I/O on yod's side (docs/fileio.md): yod asks the allocator
 * which fyods serve which prefixes and hands that mount table, its working
 * directory and umask to every rank in the load descriptor; every path not
 * under an fyod prefix is served by yod itself, with fyod's code
 * (common/fileserver.c) running in yod's event loop as yod's user. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tern/fileserver.h>
#include <tern/tern_proto.h>
#include "yod.h"

static bool allow(uint32_t nid, uint32_t job, uint32_t rank)
{
    return job == Y.job && rank < (uint32_t)Y.size && Y.ranks[rank].nid == nid;
}

int files_setup(char *err, size_t errlen)
{
    struct fs_config cfg = {.root = "/", .confine = false, .ni = Y.ni, .eq = Y.eq,
                            .allow = allow, .name = "yod",
                            .job_share = FS_MAX_FILES};   /* one job: all of it */
    mode_t m = umask(0);
    umask(m);
    Y.umask = m;
    if (!getcwd(Y.cwd, sizeof Y.cwd))
        snprintf(Y.cwd, sizeof Y.cwd, "/");
    return fs_init(&cfg, err, (int)errlen);
}

void files_mounts(void)
{
    static struct tern_reply rep;
    struct tern_hdr h;
    char err[512];
    memset(&h, 0, sizeof h);
    if (alloc_request(&h, sizeof h, TERN_FYODS, &rep, err, sizeof err) || rep.status) {
        note("no fyods (the allocator did not list them): yod serves every path");
        return;
    }
    uint32_t max = sizeof rep.u.fyods / sizeof rep.u.fyods[0];
    for (uint32_t i = 0; i < rep.n && i < max && Y.nmounts < YOD_MOUNTS_MAX; i++) {
        const struct tern_fyod *f = &rep.u.fyods[i];
        struct yod_mount *m = &Y.mounts[Y.nmounts];
        if (strnlen(f->prefix, sizeof f->prefix) >= sizeof m->prefix)
            continue;
        memset(m, 0, sizeof *m);
        snprintf(m->prefix, sizeof m->prefix, "%s", f->prefix);
        m->nid = f->nid;
        m->pid = f->pid;
        Y.nmounts++;
        if (Y.opt.verbose)
            fprintf(stderr, "yod: %s is served by fyod at nid %u pid %u\n", m->prefix, m->nid,
                    m->pid);
    }
}

void files_end(void) { fs_close_job(Y.job); }
