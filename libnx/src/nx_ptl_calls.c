/*
 * NX point-to-point work on the message engine: argument checks, message
 * ids (an engine request's index), info, probes.  nx_calls.c makes the NX
 * calls of the nx_do_* functions.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nx.h"
#include "nx_impl.h"
#include "nx_ptl.h"

static int user_mids; /* requests behind message ids the program holds */

/* ---- argument checks (the same conditions and words as libnx-mpi) ---- */

static int check_node(const char *call, long node, bool any_ok)
{
    if ((any_ok && node == -1) || (node >= 0 && node < msg_size()))
        return 0;
    return nx_fail(call, EQNODE, "node %ld is not in 0..%ld", node, msg_size() - 1);
}

static int check_buf(const char *call, const void *buf, long count)
{
    if (count < 0)
        return nx_fail(call, EQLEN, "negative length %ld", count);
    if (count > 0 && !buf)
        return nx_fail(call, EQPBUF, "NULL buffer for %ld bytes", count);
    if (count > NX_MAX_LEN)
        return nx_fail(call, EQLEN, "length %ld exceeds this build's limit of %ld", count,
                       NX_MAX_LEN);
    return 0;
}

/* Types below 2^61: the match bits above are the library's and the
 * engine's (MB_INTERNAL, MSG_BIT_PUSHED). */
static int check_type(const char *call, long type, bool sel)
{
    if ((type >= 0 && (uint64_t)type < MSG_BIT_PUSHED) || (sel && type == -1))
        return 0;
    if (type >= 0)
        return nx_fail(call, EQTYPE, "type %ld is above 2^61 - 1", type);
    return nx_fail(call, EQTYPE, "type %ld is negative", type);
}

static void sel_bits(long typesel, uint64_t *bits, uint64_t *ignore)
{
    *bits = typesel == -1 ? 0 : (uint64_t)typesel;
    *ignore = typesel == -1 ? MB_TYPES : 0; /* never the library's own */
}

static struct msg_req *new_req(const char *call, bool user)
{
    if (user && user_mids >= NX_MAX_MIDS) {
        nx_fail(call, EQNOMID, "all %d message ids in use", NX_MAX_MIDS);
        return NULL;
    }
    struct msg_req *r = msg_req_new(!user);
    if (!r) {
        nx_fail(call, EQNOMID, "no request slot left");
        return NULL;
    }
    if (user)
        user_mids++;
    return r;
}

static void free_req(struct msg_req *r)
{
    if (!r->internal)
        user_mids--;
    msg_req_free(r);
}

/* Completion seen by the caller: report the error, if any, or the info. */
static long complete_user(const char *call, struct msg_req *r)
{
    long v[4] = {(long)(r->mbits & MB_TYPES), (long)r->len, r->src, 0};
    bool recv = r->is_recv;
    int err = r->error;
    long *info_out = r->owner, count = (long)r->count;
    free_req(r);
    if (err)
        return nx_fail(call, EQMSGLONG,
                       "message of %ld bytes (type %ld from node %ld) is longer than the buffer "
                       "of %ld", v[1], v[0], v[2], count);
    if (recv) {
        memcpy(nx_info_last, v, sizeof v);
        if (info_out)
            memcpy(info_out, v, sizeof v);
    }
    return 1;
}

/* ---- the NX calls' work -------------------------------------------------- */

static long do_isend(const char *call, long type, void *buf, long count, long node, long ptype,
                     bool user)
{
    if (check_type(call, type, false) || check_node(call, node, false) ||
        check_buf(call, buf, count))
        return -1;
    if (ptype != 0 && ptype != -1)
        return nx_fail(call, EQPID, "ptype %ld (only 0 exists)", ptype);
    struct msg_req *r = new_req(call, user);
    if (!r)
        return -1;
    msg_isend(r, node, (uint64_t)type, buf, (uint64_t)count, 0);
    return msg_req_index(r);
}

long nx_do_send(const char *call, long type, void *buf, long count, long node, long ptype)
{
    long i = do_isend(call, type, buf, count, node, ptype, false);
    if (i < 0)
        return -1;
    struct msg_req *r = msg_req_at(i);
    msg_wait(r);
    free_req(r);
    return 0;
}

static long do_irecv(const char *call, long typesel, void *buf, long count, long nodesel,
                     long *info, bool user)
{
    if (check_type(call, typesel, true) || check_node(call, nodesel, true) ||
        check_buf(call, buf, count))
        return -1;
    struct msg_req *r = new_req(call, user);
    if (!r)
        return -1;
    r->owner = info;
    uint64_t bits, ignore;
    sel_bits(typesel, &bits, &ignore);
    msg_irecv(r, nodesel == -1 ? MSG_ANY_SOURCE : nodesel, bits, ignore, buf, (uint64_t)count);
    return msg_req_index(r);
}

long nx_do_isend(const char *call, long type, void *buf, long count, long node, long ptype)
{
    return do_isend(call, type, buf, count, node, ptype, true);
}

long nx_do_irecv(const char *call, long typesel, void *buf, long count, long nodesel,
                 long *info)
{
    return do_irecv(call, typesel, buf, count, nodesel, info, true);
}

long nx_do_recv(const char *call, long typesel, void *buf, long count, long nodesel, long *info)
{
    long i = do_irecv(call, typesel, buf, count, nodesel, info, false);
    if (i < 0)
        return -1;
    struct msg_req *r = msg_req_at(i);
    msg_wait(r);
    return complete_user(call, r) < 0 ? -1 : 0;
}

static struct msg_req *get_mid(const char *call, long mid)
{
    struct msg_req *r = msg_req_at(mid);
    if (!r || r->internal || r->ignored) {
        nx_fail(call, EQMID, "message id %ld is not active", mid);
        return NULL;
    }
    return r;
}

long msgdone(long mid)
{
    struct msg_req *r = get_mid("msgdone", mid);
    if (!r)
        return -1;
    return msg_test(r) ? complete_user("msgdone", r) : 0;
}

long nx_do_wait(const char *call, long mid)
{
    struct msg_req *r = get_mid(call, mid);
    if (!r)
        return -1;
    msg_wait(r);
    return complete_user(call, r) < 0 ? -1 : 0;
}

void msgignore(long mid)
{
    struct msg_req *r = get_mid("msgignore", mid);
    if (!r)
        return;
    user_mids--; /* the id is the program's no more */
    r->internal = true;
    msg_ignore(r);
}

long msgcancel(long mid)
{
    struct msg_req *r = get_mid("msgcancel", mid);
    if (!r)
        return -1;
    /* A receive nothing matched yet comes off the list.  A send's message
     * no receive has taken yet is taken back from its receiver: the engine
     * asks it and waits for the answer (libmsg/msg_cancel.c), which comes
     * when that node is in an NX call.  Anything already matched runs to
     * completion first. */
    user_mids--;
    if (msg_cancel_recv(r))
        return 0;
    msg_cancel_send(r); /* nothing for a receive: each takes only its kind */
    msg_wait(r);
    msg_req_free(r);
    return 0;
}

long nx_do_probe(const char *call, long typesel, long nodesel, long *info, bool block)
{
    if (check_type(call, typesel, true) || check_node(call, nodesel, true))
        return -1;
    uint64_t bits, ignore;
    sel_bits(typesel, &bits, &ignore);
    struct msg_probe_info p;
    if (!msg_probe(nodesel == -1 ? MSG_ANY_SOURCE : nodesel, bits, ignore, block, &p))
        return 0;
    long v[4] = {(long)(p.bits & MB_TYPES), (long)p.len, p.src, 0};
    memcpy(nx_info_last, v, sizeof v);
    if (info)
        memcpy(info, v, sizeof v);
    return 1;
}

/* ---- for the global operations (nx_ptl_coll.c) ------------------------ */

struct msg_req *nx_coll_isend(long node, uint64_t bits, const void *buf, long len)
{
    struct msg_req *r = msg_req_new(true);
    if (!r)
        msg_fatal("global operation: no request slot");
    msg_isend(r, node, bits, buf, (uint64_t)len, 0);
    return r;
}

struct msg_req *nx_coll_irecv(long node, uint64_t bits, void *buf, long len)
{
    struct msg_req *r = msg_req_new(true);
    if (!r)
        msg_fatal("global operation: no request slot");
    msg_irecv(r, node, bits, 0, buf, (uint64_t)len);
    return r;
}

void nx_coll_wait(struct msg_req *r)
{
    msg_wait(r);
    if (r->error)
        msg_fatal("global operation: a message of %llu bytes from node %ld is longer than "
                  "the %llu expected (do all nodes call the same global operations with the "
                  "same lengths?)",
                  (unsigned long long)r->len, r->src, (unsigned long long)r->count);
    msg_req_free(r);
}
