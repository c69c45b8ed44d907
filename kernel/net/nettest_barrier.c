/* nettest=barrier -- RANK ITERS REPS MAC0 MAC1 ... : the floor of a barrier
 * (experiment 9, bench/ternbench/node_exps.py).  N nodes on one bridge, each
 * booted with its rank and every node's MAC, run the dissemination barrier
 * NX's gsync runs (libmsg/msg_barrier.c): in round k of ceil(log2 N), node i
 * sends a frame to node i + 2^k and waits for the one from node i - 2^k
 * (mod N).  Raw frames, with no protocol: no acknowledgement, no header but
 * the round's, no program; every node halts in netdev_wait between frames
 * as a Tern node waiting for a message does.  What N emulated nodes on this
 * host can do, against which the program's gsync on N nodes is held: on a
 * host with fewer cores than nodes the floor's shape is the host's, not
 * log2 N.
 *
 * A lost frame is not resent (the bridge loses none unless a node's
 * receive ring overflows, which the few frames a barrier has in flight to
 * a node cannot do): after BAR_SILENCE_NS of silence the run ends with an error
 * naming the round and the node it waited for.  The nodes boot at different
 * times, so first every node says READY to node 0 until node 0, having
 * heard them all, says GO (a round's frame counts as GO too).  Node 0 prints
 * "R barrier-floor N us V", one line a repetition after a first that warms
 * up, as nettest=ping prints its own.
 *
 * nettest=barrier -- ack RANK ...: the same, and every round's frame is
 * answered at once by a frame of its own back to its sender, as a Tern
 * node acknowledges a gsync round's put (in a dissemination barrier no
 * frame goes back for the acknowledgement to ride in): what the
 * acknowledgements alone cost N nodes on this host.  The sender does not
 * wait for them, as a put's sender does not.  Printed as
 * "R barrier-floor-acked N us V". */
#include "nettest.h"
#include "boot.h"
#include "kernel.h"
#include "time.h"

#define BAR_MAGIC 0x52414254u             /* "TBAR" */
#define BAR_MAX_NODES 64
#define BAR_MAX_ROUNDS 6                  /* ceil(log2 64) */
#define BAR_READY_EVERY_NS 50000000ULL    /* a waiting node says READY again */
#define BAR_START_NS 300000000000ULL      /* every node heard from by then */
#define BAR_SILENCE_NS 5000000000ULL      /* no round's frame this long: lost */

enum { BAR_READY = 1, BAR_GO, BAR_ROUND, BAR_DONE, BAR_ACK };

struct bar_payload {
    uint32_t magic;
    uint8_t kind, round;
    uint16_t from;             /* the sender's rank */
    uint64_t iter;             /* BAR_ROUND: the barrier's number from 0 */
} __attribute__((packed));

struct bar {
    unsigned me, n, rounds;
    uint8_t macs[BAR_MAX_NODES][ETH_ALEN];
    char **macs_text;
    bool go, go_sent, acks;
    bool ready[BAR_MAX_NODES];
    uint64_t got[BAR_MAX_ROUNDS];      /* round frames taken, per round */
    uint64_t out_of_order, strangers, acked;
};

/* wait: until the NIC has sent it, and every frame before it. */
static void bar_send(struct bar *b, unsigned to, uint8_t kind, uint8_t round, uint64_t iter,
                     bool wait)
{
    uint8_t frame[ETH_HLEN + 46] = {0};   /* the shortest frame, as a gsync's is short */
    memcpy(frame, b->macs[to], ETH_ALEN);
    memcpy(frame + ETH_ALEN, netdev_mac(), ETH_ALEN);
    frame[12] = ECHO_ETHERTYPE >> 8;
    frame[13] = ECHO_ETHERTYPE & 0xff;
    struct bar_payload p = {BAR_MAGIC, kind, round, (uint16_t)b->me, iter};
    memcpy(frame + ETH_HLEN, &p, sizeof p);
    /* Unless asked to wait, queued (the frame is copied), as a Portals
     * message's frame goes out: netdev_send's wait for the NIC's completion
     * cost a 4-node barrier here 3-4 times what gsync takes. */
    struct net_sg sg = {frame, sizeof frame};
    if (wait ? netdev_send(&sg, 1) : netdev_send_async(frame, sizeof frame, NULL, 0))
        load_error("nettest=barrier: the NIC did not send");
}

static void bar_take(const void *frame, size_t len, void *arg)
{
    struct bar *b = arg;
    const uint8_t *f = frame;
    struct bar_payload p;
    if (len < ETH_HLEN + sizeof p || memcmp(f, netdev_mac(), ETH_ALEN) ||
        ((f[12] << 8) | f[13]) != ECHO_ETHERTYPE)
        return;
    memcpy(&p, f + ETH_HLEN, sizeof p);
    if (p.magic != BAR_MAGIC || p.from >= b->n || memcmp(f + ETH_ALEN, b->macs[p.from], ETH_ALEN)) {
        b->strangers++;
        return;
    }
    switch (p.kind) {
    case BAR_READY:
        if (b->me == 0) {
            b->ready[p.from] = true;
            if (b->go_sent)            /* its GO was lost: again */
                bar_send(b, p.from, BAR_GO, 0, 0, false);
        }
        break;
    case BAR_GO:
        b->go = true;
        break;
    case BAR_DONE:
        break;
    case BAR_ROUND:
        /* One sender per round, whose frames the bridge keeps in order. */
        if (p.round >= b->rounds || p.from != (b->me + b->n - (1u << p.round)) % b->n ||
            p.iter != b->got[p.round])
            b->out_of_order++;
        if (p.round < b->rounds)
            b->got[p.round] = p.iter + 1;
        b->go = true;
        if (b->acks)
            bar_send(b, p.from, BAR_ACK, p.round, p.iter, false);
        break;
    case BAR_ACK:
        b->acked++;
        break;
    default:
        b->strangers++;
    }
}

static void bar_start(struct bar *b)
{
    uint64_t give_up = time_monotonic_ns() + BAR_START_NS;
    if (b->me == 0) {
        for (unsigned i = 1; i < b->n; i++) {
            while (!b->ready[i]) {
                if (time_monotonic_ns() > give_up)
                    load_error("nettest=barrier: nothing from node %u (%s) in %llu s", i,
                               b->macs_text[i], BAR_START_NS / 1000000000ULL);
                netdev_wait(time_monotonic_ns() + BAR_READY_EVERY_NS);
                netdev_poll(bar_take, b);
            }
        }
        b->go_sent = b->go = true;
        for (unsigned i = 1; i < b->n; i++)
            bar_send(b, i, BAR_GO, 0, 0, false);
        return;
    }
    while (!b->go) {
        if (time_monotonic_ns() > give_up)
            load_error("nettest=barrier: no GO from node 0 in %llu s",
                       BAR_START_NS / 1000000000ULL);
        bar_send(b, 0, BAR_READY, 0, 0, false);
        uint64_t again = time_monotonic_ns() + BAR_READY_EVERY_NS;
        while (!b->go && netdev_wait(again))
            netdev_poll(bar_take, b);
    }
}

__attribute__((noreturn)) void nettest_barrier(void)
{
    if (!netdev_present())
        load_error("nettest: no network device");
    char **av = options.envp;
    int ac = options.envc;
    static struct bar b;
    if (ac > 0 && !strcmp(av[0], "ack")) {
        b.acks = true;
        av++;
        ac--;
    }
    uint64_t me, iters, reps;
    int n = ac - 3;
    if (ac < 5 || n > BAR_MAX_NODES || !parse_size(av[0], &me) || me >= (uint64_t)n ||
        !parse_size(av[1], &iters) || !iters || iters > 10000000 || !parse_size(av[2], &reps) ||
        reps > 1000)
        load_error("usage: nettest=barrier -- [ack] RANK ITERS REPS MAC0 MAC1 ... (2..%u MACs, "
                   "RANK one of them)", BAR_MAX_NODES);
    b.me = (unsigned)me;
    b.macs_text = av + 3;
    b.n = (unsigned)n;
    for (int i = 0; i < n; i++)
        if (!nettest_parse_mac(av[3 + i], b.macs[i]))
            load_error("nettest=barrier: bad MAC '%s'", av[3 + i]);
    if (memcmp(b.macs[b.me], netdev_mac(), ETH_ALEN))
        load_error("nettest=barrier: MAC%u is %s, not this node's", b.me, av[3 + b.me]);
    while ((1u << b.rounds) < b.n)
        b.rounds++;
    kprintf("nettest: barrier, node %u of %u, %u rounds\n", b.me, b.n, b.rounds);
    bar_start(&b);
    for (uint64_t r = 0; r <= reps; r++) {    /* the first repetition warms up */
        uint64_t t0 = time_monotonic_ns();
        for (uint64_t i = r * iters; i < (r + 1) * iters; i++) {
            for (unsigned k = 0; k < b.rounds; k++) {
                bar_send(&b, (b.me + (1u << k)) % b.n, BAR_ROUND, (uint8_t)k, i, false);
                while (b.got[k] <= i) {
                    if (!netdev_wait(time_monotonic_ns() + BAR_SILENCE_NS))
                        load_error("nettest=barrier: barrier %lu, round %u: nothing from "
                                   "node %u in %llu s", i, k, (b.me + b.n - (1u << k)) % b.n,
                                   BAR_SILENCE_NS / 1000000000ULL);
                    netdev_poll(bar_take, &b);
                }
            }
        }
        uint64_t ns = time_monotonic_ns() - t0;
        if (r && b.me == 0)
            nettest_result(b.acks ? "barrier-floor-acked" : "barrier-floor", b.n, "us",
                           ns / 10 / iters);
    }
    if (b.out_of_order || b.strangers)
        load_error("nettest=barrier: %lu round frames out of order, %lu frames not the "
                   "barrier's", b.out_of_order, b.strangers);
    /* The last round's frame may still be queued: a node that ended now
     * would take it with it, and its peer would wait for it in vain.  One
     * more frame, waited for, sends them all. */
    bar_send(&b, 0, BAR_DONE, 0, 0, true);
    kprintf("nettest: barrier done, %lu barriers, %lu acknowledgements taken\n",
            (reps + 1) * iters, b.acked);
    node_end(END_EXIT, 0);
}
