/* The allocator's grants: which job this node may run, for whom, loaded by
 * which launcher, and the job's key that proves the launcher's messages
 * (include/tern/tern_proto.h TERN_GRANT, docs/security.md).  Grants arrive
 * on the kernel's TERN_PT_SERVICE from the allocator only: the entry
 * matches nothing else, and no program's frame reaches the kernel's
 * interface (it carries the program's job id, the kernel's is 0).  A few
 * are kept: a node may be granted its next job while the last one ends. */
#include "boot.h"
#include "job.h"
#include "kmalloc.h"
#include "time.h"
#include <tern/tern_proto.h>
#include "ptl_me.h"

#define GRANTS 4
#define GRANT_BUF 8192

static struct job_grant grants[GRANTS];
static unsigned next_slot;
static struct { void *buf; } grant_tag;
static unsigned long refused;

static int post_grant_buf(void)
{
    ptl_me_t me = ptl_me_phys(grant_tag.buf, GRANT_BUF,
                              PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL | PTL_ME_NO_TRUNCATE |
                              PTL_ME_EVENT_LINK_DISABLE,
                              TERN_MB_GRANT);
    me.min_free = sizeof(struct tern_grant);
    me.match_id.phys.nid = options.alloc_nid;
    me.match_id.phys.pid = TERN_ALLOC_PID;
    ptl_handle_me_t h;
    return PtlMEAppend(knode.ni, TERN_PT_SERVICE, &me, PTL_PRIORITY_LIST, &grant_tag, &h);
}

int job_grants_open(void)
{
    grant_tag.buf = kmalloc(GRANT_BUF);
    return grant_tag.buf ? post_grant_buf() : -1;
}

bool job_is_grant_buf(const void *p) { return p == &grant_tag; }

void job_on_grant_put(const ptl_event_t *ev)
{
    if (ev->type == PTL_EVENT_AUTO_UNLINK) {
        post_grant_buf();
        return;
    }
    const struct tern_grant *g = ev->start;
    if (ev->mlength != sizeof *g || g->h.magic != TERN_MAGIC ||
        g->h.version != TERN_PROTO_VERSION ||
        (g->h.type != TERN_GRANT && g->h.type != TERN_REVOKE) ||
        ev->initiator.phys.nid != options.alloc_nid ||
        ev->initiator.phys.pid != TERN_ALLOC_PID || g->job == 0)
        return;
    if (g->h.type == TERN_REVOKE) {
        job_grant_drop(g->job);
        job_revoked(g->job);
        return;
    }
    struct job_grant *slot = NULL;
    for (unsigned i = 0; i < GRANTS; i++)
        if (grants[i].valid && grants[i].job == g->job)
            slot = &grants[i];
    if (!slot) {               /* the oldest goes: its job never came, or is over */
        slot = &grants[next_slot];
        next_slot = (next_slot + 1) % GRANTS;
    }
    *slot = (struct job_grant){true, g->job, g->uid, g->gid, g->launcher_nid,
                               g->launcher_pid, {0}, {0}};
    memcpy(slot->key, g->key, sizeof slot->key);
    memcpy(slot->fio_token, g->fio_token, sizeof slot->fio_token);
}

static const struct job_grant *lookup(uint32_t job)
{
    for (unsigned i = 0; i < GRANTS; i++)
        if (grants[i].valid && grants[i].job == job)
            return &grants[i];
    return NULL;
}

/* The allocator puts the grant before it answers the launcher, but the
 * two travel apart: the launcher's descriptor may come first. */
const struct job_grant *job_grant_find(uint32_t job, uint64_t wait_ns)
{
    uint64_t until = time_monotonic_ns() + wait_ns;
    const struct job_grant *g;
    while (!(g = lookup(job)) && time_monotonic_ns() < until)
        knode_wait(NULL, until);
    return g;
}

void job_grant_drop(uint32_t jobid)
{
    for (unsigned i = 0; i < GRANTS; i++)
        if (grants[i].valid && grants[i].job == jobid)
            grants[i].valid = false;
}

void job_refused(const char *what, uint32_t nid, uint32_t pid, const char *why)
{
    refused++;
    kprintf("refused %s from nid %u pid %u: %s (%lu refused since boot)\n", what, nid, pid, why,
            refused);
}

/* Requests the kernel's own interface refused as from outside its trust
 * (a program's frames carry its job's id): said on the console when the
 * count has grown, from the idle loop. */
void job_refusals_report(void)
{
    static ptl_sr_value_t said;
    ptl_sr_value_t n = 0;
    if (PtlNIStatus(knode.ni, PTL_SR_PERMISSIONS_VIOLATIONS, &n) == PTL_OK && n != said) {
        kprintf("refused %lu Portals requests from jobs' programs since boot\n",
                (unsigned long)n);
        said = n;
    }
}
