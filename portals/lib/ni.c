/* Library init, network interfaces, logical maps, identity, status
 * registers.  One NI slot per (interface, matching?, logical?) as the spec
 * allows at most one NI of each kind per interface and process. */
#include "ptl_api.h"
#include "ptl_wait.h"

static const struct ptl_lib_tunables default_tun = {
    .rto_init_ns = 10000000,     /* 10 ms: until a round trip is measured */
    .rto_max_ns = 200000000,     /* 200 ms */
    .giveup_ns = 5000000000ull,  /* 5 s without progress */
    .ack_delay_ns = 200000,      /* 200 us */
    .rto_min_ns = 1000000,       /* 1 ms: scheduler noise on a busy node */
    /* A Tern node's ACK waits for its program's answer (reliable.c); a
     * Linux process's goes at once: yod and fyod do not answer puts. */
    .ack_hold_ns = PTL_ACK_LAZY ? 200000 : 0,
    .park_frames = PTL_PARK_EARLY ? PTL_PARK_MAX : 0,
};

int PtlInit(void)
{
    ptl_host_lock();
    if (ptl_g.init_refs++ == 0) {
        for (unsigned i = 0; i < PTL_MAX_NIS; i++)
            ptl_g.nis[i].in_use = false;
        memset(ptl_g.live, 0, sizeof(ptl_g.live));
        ptl_g.n_acks_later = 0;
        ptl_g.exact_due = UINT64_MAX;
        for (unsigned i = 0; i < PTL_MAX_IFACES; i++)
            ptl_park_drop_iface(i);     /* kept by a library since finished */
        memset(ptl_g.stats, 0, sizeof(ptl_g.stats));
        if (!ptl_g.tun.rto_init_ns)
            ptl_g.tun = default_tun;
        ptl_g.session_seed ^= (uint32_t)ptl_host_now_ns() * 2654435761u;
    }
    ptl_host_unlock();
    return PTL_OK;
}

static void ni_release(struct ptl_ni *ni);

void PtlFini(void)
{
    ptl_host_lock();
    if (ptl_g.init_refs && --ptl_g.init_refs == 0) {
        for (unsigned i = 0; i < PTL_MAX_NIS; i++)
            if (ptl_g.nis[i].in_use)
                ni_release(&ptl_g.nis[i]);
    }
    ptl_host_unlock();
}

void ptl_lib_get_tunables(struct ptl_lib_tunables *t)
{
    ptl_host_lock();
    *t = ptl_g.tun.rto_init_ns ? ptl_g.tun : default_tun;
    ptl_host_unlock();
}

void ptl_lib_set_tunables(const struct ptl_lib_tunables *t)
{
    ptl_host_lock();
    ptl_g.tun = *t;
    ptl_host_unlock();
}

int ptl_lib_get_stats(unsigned iface, struct ptl_lib_stats *out)
{
    if (iface >= PTL_MAX_IFACES || !out)
        return -1;
    ptl_host_lock();
    *out = ptl_g.stats[iface];
    ptl_host_unlock();
    return 0;
}

/* modest: a request above the default gets the default (the retry after
 * the asked-for tables did not fit: see PtlNIInit). */
static int clamp(int want, int dflt, int max, bool modest)
{
    if (want <= 0)
        return dflt;
    if (modest && dflt < max)
        max = dflt;
    return want > max ? max : want;
}

/* An atomic size limit: what was asked for if it is smaller than what the
 * NI can do, never below 8 bytes. */
static ptl_size_t size_limit(ptl_size_t want, ptl_size_t can)
{
    if (!want || want >= can)
        return can;
    return want < 8 ? 8 : want;
}

static void set_limits(struct ptl_ni *ni, const ptl_ni_limits_t *d, bool modest)
{
    ptl_ni_limits_t z;
    memset(&z, 0, sizeof(z));
    if (!d)
        d = &z;
    ptl_ni_limits_t *l = &ni->lim;
    l->max_entries = clamp(d->max_entries, 2048, PTL_HIDX_MAX - 1, modest);
    l->max_unexpected_headers = clamp(d->max_unexpected_headers, 2048, 1 << 20, modest);
    l->max_mds = clamp(d->max_mds, 1024, PTL_HIDX_MAX - 1, modest);
    l->max_cts = clamp(d->max_cts, 512, PTL_HIDX_MAX - 1, modest);
    l->max_eqs = clamp(d->max_eqs, 64, PTL_HIDX_MAX - 1, modest);
    l->max_pt_index = clamp(d->max_pt_index, 63, 255, modest);
    l->max_iovecs = clamp(d->max_iovecs, 256, 1 << 16, modest);
    /* A list cannot hold more entries than the NI has. */
    l->max_list_size = clamp(d->max_list_size, l->max_entries, l->max_entries, modest);
    l->max_triggered_ops = clamp(d->max_triggered_ops, 1024, 1 << 20, modest);
    l->max_msg_size = (ptl_size_t)1 << 30;
    if (d->max_msg_size && d->max_msg_size < l->max_msg_size)
        l->max_msg_size = d->max_msg_size;
    /* Atomics travel in one frame; fetching ones return their old data
     * from a buffer of PTL_INLINE_MAX.  Smaller requests are honoured, down
     * to one element of the widest type (the spec's minimum, 8 bytes). */
    ptl_size_t amax = ni->frame_max - PTL_WIRE_HDR_LEN;
    if (amax > PTL_ATOMIC_MAX)
        amax = PTL_ATOMIC_MAX;
    amax &= ~(ptl_size_t)15;
    ptl_size_t fmax = amax < PTL_INLINE_MAX ? amax : PTL_INLINE_MAX;
    l->max_atomic_size = size_limit(d->max_atomic_size, amax);
    l->max_fetch_atomic_size = size_limit(d->max_fetch_atomic_size, fmax);
    /* Frames of one peer are processed strictly in order, so every message
     * is ordered after the previous one. */
    l->max_waw_ordered_size = l->max_msg_size;
    l->max_war_ordered_size = l->max_msg_size;
    l->max_volatile_size = 0;
    l->features = PTL_TOTAL_DATA_ORDERING;
}

static int ni_alloc_tables(struct ptl_ni *ni)
{
    ptl_ni_limits_t *l = &ni->lim;
    ni->pts = ptl_zalloc(sizeof(struct ptl_pt) * (size_t)(l->max_pt_index + 1));
    ni->eqs = ptl_zalloc(sizeof(struct ptl_eq) * (size_t)l->max_eqs);
    ni->cts = ptl_zalloc(sizeof(struct ptl_ct) * (size_t)l->max_cts);
    ni->mds = ptl_zalloc(sizeof(struct ptl_md) * (size_t)l->max_mds);
    ni->entries = ptl_zalloc(sizeof(struct ptl_entry) * (size_t)l->max_entries);
    ni->uh_pool = ptl_zalloc(sizeof(struct ptl_uh) *
                             (size_t)l->max_unexpected_headers);
    /* Outstanding initiator operations: one per MD on average; PtlPut and
     * friends return PTL_NO_SPACE beyond that. */
    ni->n_ops = (uint32_t)l->max_mds;
    ni->ops = ptl_zalloc(sizeof(struct ptl_op) * ni->n_ops);
    ni->trig_pool = ptl_zalloc(sizeof(struct ptl_trig) *
                               (size_t)l->max_triggered_ops);
    ni->peer_tab = ptl_zalloc(sizeof(struct ptl_peer *) * PTL_PEER_SLOTS);
    if (!ni->pts || !ni->eqs || !ni->cts || !ni->mds || !ni->entries ||
        !ptl_freeq_init(&ni->md_free, (uint32_t)l->max_mds) ||
        !ptl_freeq_init(&ni->entry_free, (uint32_t)l->max_entries) ||
        !ptl_freeq_init(&ni->ct_free, (uint32_t)l->max_cts) ||
        !ptl_freeq_init(&ni->eq_free, (uint32_t)l->max_eqs) ||
        !ni->uh_pool || !ni->ops || !ni->trig_pool || !ni->peer_tab ||
        !ptl_resp_grow(ni))
        return PTL_NO_SPACE;
    ni->uh_free = NULL;
    for (int i = l->max_unexpected_headers - 1; i >= 0; i--) {
        ni->uh_pool[i].next = ni->uh_free;
        ni->uh_free = &ni->uh_pool[i];
    }
    ni->op_free = NULL;
    for (int i = (int)ni->n_ops - 1; i >= 0; i--) {
        ni->ops[i].next_free = ni->op_free;
        ni->op_free = &ni->ops[i];
    }
    ni->trig_free = NULL;
    for (int i = l->max_triggered_ops - 1; i >= 0; i--) {
        ni->trig_pool[i].next = ni->trig_free;
        ni->trig_free = &ni->trig_pool[i];
    }
    return PTL_OK;
}

static void ni_release(struct ptl_ni *ni)
{
    ptl_rel_send_owed_acks(ni);
    ptl_ct_forget_waiters(ni);
    if (ni->eqs)
        for (int i = 0; i < ni->lim.max_eqs; i++)
            ptl_host_free(ni->eqs[i].ring);
    ptl_host_free(ni->pts);
    ptl_host_free(ni->eqs);
    ptl_host_free(ni->cts);
    ptl_host_free(ni->mds);
    ptl_host_free(ni->entries);
    ptl_freeq_fini(&ni->md_free);
    ptl_freeq_fini(&ni->entry_free);
    ptl_freeq_fini(&ni->ct_free);
    ptl_freeq_fini(&ni->eq_free);
    ptl_host_free(ni->uh_pool);
    ptl_host_free(ni->ops);
    while (ni->resp_chunks) {
        struct ptl_resp_chunk *c = ni->resp_chunks;
        ni->resp_chunks = c->next;
        ptl_host_free(c);
    }
    ptl_host_free(ni->trig_pool);
    while (ni->peer_list) {
        struct ptl_peer *p = ni->peer_list;
        ni->peer_list = p->next;
        ptl_host_free(p->win);
        ptl_host_free(p);
    }
    ptl_host_free(ni->peer_tab);
    ptl_host_free(ni->map);
    if (ni->in_use)
        ptl_g.live[ni->idx / 64] &= ~(1ull << (ni->idx % 64));
    uint8_t gen = ni->gen;
    memset(ni, 0, sizeof(*ni));
    ni->gen = gen;
}

int PtlNIInit(ptl_interface_t iface, unsigned int options, ptl_pid_t pid,
              const ptl_ni_limits_t *desired, ptl_ni_limits_t *actual,
              ptl_handle_ni_t *out)
{
    if (iface == PTL_IFACE_DEFAULT)
        iface = 0;
    bool m = options & PTL_NI_MATCHING, nm = options & PTL_NI_NO_MATCHING;
    bool lg = options & PTL_NI_LOGICAL, ph = options & PTL_NI_PHYSICAL;
    if (!ptl_api_ready())
        return PTL_NO_INIT;
    if (!out || iface >= PTL_MAX_IFACES || !ptl_iface_allowed(iface) || m == nm || lg == ph ||
        (options & ~PTL_NI_INIT_OPTIONS_MASK))
        return PTL_ARG_INVALID;
    struct ptl_host_iface_info info;
    if (ptl_host_iface_info(iface, &info) != 0 || info.frame_max < 256)
        return PTL_ARG_INVALID;
    if (pid == PTL_PID_ANY)
        pid = info.pid;

    API_ENTER();
    unsigned idx = iface * 4 + (m ? 0 : 1) + (lg ? 2 : 0);
    struct ptl_ni *ni = &ptl_g.nis[idx];
    if (ni->in_use) {
        ni->refs++;
    } else {
        for (unsigned k = iface * 4; k < iface * 4 + 4; k++)
            if (ptl_g.nis[k].in_use && ptl_g.nis[k].id.phys.pid != pid)
                API_RETURN(PTL_PID_IN_USE);
        /* Desired limits are a wish (spec 3.6.1: `actual` says what was
         * given): tables that do not fit as asked (a node's kernel heap is
         * a few MiB; a program that leaves fields uninitialised asks for
         * anything) are tried once more with every request above the
         * default brought down to it. */
        int rc = PTL_NO_SPACE;
        for (int modest = 0; modest < 2 && rc == PTL_NO_SPACE; modest++) {
            uint8_t gen = ni->gen;
            memset(ni, 0, sizeof(*ni));
            ni->gen = ptl_gen_next(gen);
            ni->idx = idx;
            ni->iface = iface;
            ni->options = options;
            ni->wni = (m ? PTL_WNI_MATCHING : 0) | (lg ? PTL_WNI_LOGICAL : 0);
            ni->id.phys.nid = info.nid;
            ni->id.phys.pid = pid;
            ni->rank = PTL_RANK_ANY;
            ni->uid = info.uid;
            ni->jid = info.jid;
            ni->frame_max = info.frame_max;
            ni->link_checks_payload = info.link_checks_payload != 0;
            set_limits(ni, desired, modest);
            ni->in_use = true;
            ptl_g.live[idx / 64] |= 1ull << (idx % 64);
            ni->refs = 1;
            rc = ni_alloc_tables(ni);
            if (rc != PTL_OK)
                ni_release(ni);
        }
        if (rc != PTL_OK)
            API_RETURN(rc);
    }
    if (actual)
        *actual = ni->lim;
    *out = ptl_mkhandle(PTL_OBJ_NI, idx, 0, ni->gen);
    API_EXIT(PTL_OK);
}

void ptl_lib_iface_reset(unsigned iface)
{
    if (iface >= PTL_MAX_IFACES)
        return;
    ptl_host_lock();
    for (unsigned k = iface * 4; k < iface * 4 + 4; k++)
        if (ptl_g.nis[k].in_use)
            ni_release(&ptl_g.nis[k]);
    ptl_park_drop_iface(iface);
    ptl_host_unlock();
}

/* Nothing of ours to any peer unsent or unacknowledged. */
static bool ni_quiet(const struct ptl_ni *ni)
{
    for (const struct ptl_peer *p = ni->peer_list; p; p = p->next)
        if (p->q_head || p->snd_una != p->snd_nxt)
            return false;
    return true;
}

static int linger_cond(void *arg)
{
    struct ptl_ni *ni = ptl_ni_get(*(ptl_handle_ni_t *)arg);
    return !ni || ni_quiet(ni) ? PTL_OK : PTL_WAIT_AGAIN;
}

/* Before the last PtlNIFini of an NI releases it: its last frames may
 * still need a resend (the answer to a peer's last message, lost or
 * dropped out of order), and a peer waiting for that answer would wait in
 * vain once the NI is gone.  So wait, boundedly, until everything sent is
 * acknowledged, as a socket lingers on close. */
static void ni_linger(ptl_handle_ni_t h)
{
    ptl_host_lock();
    struct ptl_ni *ni = ptl_ni_get(h);
    bool wait = ni && ni->refs == 1 && !ni_quiet(ni);
    ptl_host_unlock();
    if (wait)
        ptl_wait(linger_cond, &h, ptl_host_now_ns() + PTL_FINI_LINGER_NS);
}

int PtlNIFini(ptl_handle_ni_t h)
{
    ni_linger(h);
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(h);
    API_CHECK(ni);
    if (--ni->refs == 0)
        ni_release(ni);
    API_EXIT(PTL_OK);
}

int PtlNIStatus(ptl_handle_ni_t h, ptl_sr_index_t reg, ptl_sr_value_t *v)
{
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(h);
    API_CHECK(ni && v && (unsigned)reg < PTL_SR_LAST);
    ptl_progress_locked();
    *v = ni->sr[reg];
    API_EXIT(PTL_OK);
}

int PtlSetMap(ptl_handle_ni_t h, ptl_size_t n, const ptl_process_t *map)
{
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(h);
    API_CHECK(ni);
    if (!(ni->wni & PTL_WNI_LOGICAL))
        API_RETURN(PTL_NI_NOT_LOGICAL);
    API_CHECK(map && n > 0 && n < (1u << 24));
    ptl_process_t *copy = ptl_zalloc(sizeof(*copy) * (size_t)n);
    if (!copy)
        API_RETURN(PTL_NO_SPACE);
    memcpy(copy, map, sizeof(*copy) * (size_t)n);
    ptl_host_free(ni->map);
    ni->map = copy;
    ni->map_size = n;
    ni->rank = PTL_RANK_ANY;
    for (ptl_size_t r = 0; r < n; r++)
        if (copy[r].phys.nid == ni->id.phys.nid &&
            copy[r].phys.pid == ni->id.phys.pid) {
            ni->rank = (ptl_rank_t)r;
            break;
        }
    API_EXIT(PTL_OK);
}

int PtlGetMap(ptl_handle_ni_t h, ptl_size_t n, ptl_process_t *map,
              ptl_size_t *actual)
{
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(h);
    API_CHECK(ni);
    if (!(ni->wni & PTL_WNI_LOGICAL))
        API_RETURN(PTL_NI_NOT_LOGICAL);
    API_CHECK(ni->map && (map || !n));
    ptl_size_t k = n < ni->map_size ? n : ni->map_size;
    if (k)
        memcpy(map, ni->map, sizeof(*map) * (size_t)k);
    if (actual)
        *actual = ni->map_size;
    API_EXIT(PTL_OK);
}

static int get_id(ptl_handle_ni_t h, ptl_process_t *id, bool phys)
{
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(h);
    API_CHECK(ni && id);
    if (!phys && (ni->wni & PTL_WNI_LOGICAL)) {
        id->rank = ni->rank;
        API_RETURN(ni->rank == PTL_RANK_ANY ? PTL_FAIL : PTL_OK);
    }
    *id = ni->id;
    API_EXIT(PTL_OK);
}

int PtlGetId(ptl_handle_ni_t h, ptl_process_t *id) { return get_id(h, id, false); }
int PtlGetPhysId(ptl_handle_ni_t h, ptl_process_t *id) { return get_id(h, id, true); }

int PtlGetUid(ptl_handle_ni_t h, ptl_uid_t *uid)
{
    API_ENTER();
    struct ptl_ni *ni = ptl_ni_get(h);
    API_CHECK(ni && uid);
    *uid = ni->uid;
    API_EXIT(PTL_OK);
}

/* Bundling is only a hint; frames already leave as soon as possible. */
static int bundle(ptl_handle_ni_t h)
{
    API_ENTER();
    API_CHECK(ptl_ni_get(h));
    API_EXIT(PTL_OK);
}
int PtlStartBundle(ptl_handle_ni_t h) { return bundle(h); }
int PtlEndBundle(ptl_handle_ni_t h) { return bundle(h); }

/* Atomics are applied by the CPU under the library lock, so host accesses
 * after the target event are already coherent. */
int PtlAtomicSync(void) { return ptl_api_ready() ? PTL_OK : PTL_NO_INIT; }
