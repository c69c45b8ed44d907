/*
 * tern-svc: talk to the allocator from the command line.
 *
 *   tern-svc status
 *   tern-svc alloc JOB N | alloc JOB -list 3..7,12
 *   tern-svc release JOB
 *   tern-svc register MAC NID [--stay SECONDS [--holds|--ending JOB SECONDS]]
 *                                   (what a booting node sends; --holds: it
 *                                   says it holds JOB for that long, as a
 *                                   node that has not cleaned up would;
 *                                   --ending: that it is cleaning up after
 *                                   JOB)
 *
 * Environment: TERN_IFACE (and portals/host/linux/ptl_linux.h),
 * TERN_ALLOC_NID (default 0), TERN_MUNGE_SOCKET (docs/security.md).  Exit status: 0 done,
 * 1 refused (the allocator says why), 2 allocator unreachable or bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include <tern/nodedb.h>
#include <tern/cred.h>
#include <tern/yod_proto.h>
#include <tern/svc_portals.h>
#include <tern/tern_proto.h>
#include "ptl_linux.h"
#include "ptl_me.h"

static struct svc svc;
static union {
    struct tern_hdr h;
    struct tern_register reg;
    struct tern_alloc alloc;
    struct tern_release rel;
} req;
static struct tern_reply rep;

static int usage(void)
{
    fprintf(stderr, "usage: tern-svc status | alloc JOB N | alloc JOB -list LIST | release JOB |"
                    " register MAC NID [--stay SECONDS [--holds|--ending JOB SECONDS]]\n");
    return 2;
}

/* Sends the request, waits for the answer; returns the exit status. */
static int transact(uint32_t type, size_t len)
{
    char err[256];
    uint32_t alloc_nid = getenv("TERN_ALLOC_NID") ? (uint32_t)atoi(getenv("TERN_ALLOC_NID")) : 0;
    /* register stands in for a node kernel, whose pid it takes. */
    if (svc_open(&svc, type == TERN_REGISTER ? YOD_NODE_PID : PTL_PID_ANY, TERN_PT_REPLY, err,
                 sizeof err)) {
        fprintf(stderr, "tern-svc: %s\n", err);
        return 2;
    }
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    req.h.magic = TERN_MAGIC;
    req.h.version = TERN_PROTO_VERSION;
    req.h.type = (uint16_t)type;
    req.h.request_id = ((uint64_t)t.tv_nsec << 20) ^ (uint64_t)getpid() ^ ((uint64_t)t.tv_sec << 40);
    req.h.reply_pid = svc.me.phys.pid;
    req.h.reply_pt = TERN_PT_REPLY;
    if (type != TERN_REGISTER && cred_sign(&req.h, len, err, sizeof err)) {
        fprintf(stderr, "tern-svc: %s\n", err);
        return 2;
    }
    svc_post(&svc, TERN_PT_REPLY, &rep, sizeof rep, req.h.request_id, 0);
    int rc = svc_put(&svc, &req, len, alloc_nid, TERN_ALLOC_PID, TERN_PT_SERVICE, 0, 10.0);
    if (rc != 0) {
        fprintf(stderr, "tern-svc: the allocator (nid %u) is unreachable%s: is allocd running "
                "on the service node?\n", alloc_nid,
                rc == PTL_NI_UNDELIVERABLE ? " (no answer)" : rc > 0 ? " (request dropped)" : "");
        return 2;
    }
    ptl_event_t ev;
    if (svc_wait(&svc, PTL_EVENT_PUT, &ev, 10.0)) {
        fprintf(stderr, "tern-svc: no answer from the allocator within 10 s\n");
        return 2;
    }
    if (rep.status) {
        fprintf(stderr, "tern-svc: refused: %s\n", rep.message);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    const char *cmd = argv[1];
    char err[256];
    int rc;
    if (!strcmp(cmd, "status") && argc == 2) {
        if ((rc = transact(TERN_STATUS, sizeof req.h)))
            return rc;
        printf("%6s  %-17s  %-9s  %-6s  %s\n", "nid", "MAC", "state", "job", "cores");
        for (uint32_t i = 0; i < rep.n; i++) {
            const struct tern_node_status *s = &rep.u.nodes[i];
            char mac[18], job[16] = "-", cores[8];
            format_mac(s->mac, mac);
            if (s->state == NODE_ALLOCATED)
                snprintf(job, sizeof job, "%u", s->job);
            printf("%6u  %-17s  %-9s  %-6s  %s\n", s->nid, mac,
                   node_state_name((enum node_state)(s->state & 3)), job,
                   format_cores(s->cores, cores));
        }
        return 0;
    }
    if (!strcmp(cmd, "alloc") && (argc == 4 || argc == 5)) {
        req.alloc.job = (uint32_t)strtoul(argv[2], NULL, 10);
        if (argc == 5 && !strcmp(argv[3], "-list")) {
            int n = parse_node_list(argv[4], req.alloc.list, TERN_MAX_LIST, err, sizeof err);
            if (n < 0) {
                fprintf(stderr, "tern-svc: %s\n", err);
                return 2;
            }
            req.alloc.nlist = (uint32_t)n;
        } else if (argc == 4) {
            req.alloc.count = atoi(argv[3]);
        } else {
            return usage();
        }
        if ((rc = transact(TERN_ALLOC, sizeof req.alloc)))
            return rc;
        for (uint32_t i = 0; i < rep.n; i++)
            printf("%u%c", rep.u.nids[i], i + 1 == rep.n ? '\n' : ' ');
        return 0;
    }
    if (!strcmp(cmd, "release") && argc == 3) {
        req.rel.job = (uint32_t)strtoul(argv[2], NULL, 10);
        if ((rc = transact(TERN_RELEASE, sizeof req.rel)))
            return rc;
        printf("%s\n", rep.message);
        return 0;
    }
    if (!strcmp(cmd, "register") && (argc == 4 || argc == 6 || argc == 9)) {
        bool ending = argc == 9 && !strcmp(argv[6], "--ending");
        bool holds = argc == 9 && (ending || !strcmp(argv[6], "--holds"));
        if ((argc == 9 && !holds) || (argc >= 6 && strcmp(argv[4], "--stay")))
            return usage();
        if (ptl_linux_parse_mac(argv[2], req.reg.mac))
            return usage();
        req.reg.nid = (uint32_t)strtoul(argv[3], NULL, 10);
        if ((rc = transact(TERN_REGISTER, sizeof req.reg)))
            return rc;
        printf("%s\n", rep.message);
        fflush(stdout);
        if (argc >= 6 && !strcmp(argv[4], "--stay")) {
            /* Stay reachable (answer pings) like a node would, for a while;
             * with --holds or --ending, saying what a node says of itself. */
            static struct tern_node_state state = {TERN_MAGIC, 0, 0};
            double now = svc_now(), end = now + atof(argv[5]);
            double let_go = holds ? now + atof(argv[8]) : 0;
            if (holds) {
                *(ending ? &state.ending : &state.job) = (uint32_t)strtoul(argv[7], NULL, 10);
                ptl_pt_index_t got;
                ptl_me_t me = ptl_me_phys(&state, sizeof state,
                                          PTL_ME_OP_GET | PTL_ME_EVENT_COMM_DISABLE |
                                          PTL_ME_EVENT_LINK_DISABLE |
                                          PTL_ME_EVENT_UNLINK_DISABLE, TERN_STATE_BITS);
                ptl_handle_me_t h;
                if (PtlPTAlloc(svc.ni, 0, svc.eq, TERN_PT_SERVICE, &got) != PTL_OK ||
                    PtlMEAppend(svc.ni, TERN_PT_SERVICE, &me, PTL_PRIORITY_LIST, NULL, &h) !=
                        PTL_OK) {
                    fprintf(stderr, "tern-svc: cannot publish the node's state\n");
                    return 2;
                }
            }
            ptl_event_t ev;
            while ((now = svc_now()) < end) {
                double until = holds && (state.job || state.ending) ? let_go : end;
                if (now >= until) {
                    state.job = state.ending = 0;   /* clean now */
                    continue;
                }
                svc_wait(&svc, PTL_EVENT_ACK, &ev, until - now);
            }
        }
        return 0;
    }
    return usage();
}
