/* A small MPI-like protocol on Portals, in the spirit of the spec's usage
 * examples: eager sends land in posted receives or in overflow buffers
 * (unexpected messages, found again when the receive is posted);
 * long messages use rendezvous: a zero-byte put announces the size and the
 * receiver pulls the data with a get from an ME the sender exposed. */
#include "tp.h"

#define EAGER_MAX 4096
#define NMSG 24
#define OVF_SZ (64 * 1024)

static struct node S, R;
static ptl_pt_index_t R_PT, S_PT;
static unsigned char sbuf[NMSG][20000];
static unsigned char rbuf[NMSG][20000];
static size_t len[NMSG];
static unsigned char ovf[2][OVF_SZ];
static ptl_handle_md_t rmd; /* receiver's MD over rbuf, for gets */

static ptl_match_bits_t tag(int i) { return 0x1000 + (ptl_match_bits_t)i; }

static void send_msg(int i, ptl_handle_md_t smd)
{
    if (len[i] <= EAGER_MAX) {
        OK(PtlPut(smd, (ptl_size_t)i * 20000, len[i], PTL_NO_ACK_REQ, R.id,
                  R_PT, tag(i), 0, (void *)(long)i, len[i]));
        return;
    }
    /* Rendezvous: expose the buffer, then announce it. */
    ptl_me_t me = tp_me(sbuf[i], len[i], PTL_ME_OP_GET | PTL_ME_USE_ONCE |
                        PTL_ME_EVENT_LINK_DISABLE, tag(i), 0);
    ptl_handle_me_t h;
    OK(PtlMEAppend(S.ni, S_PT, &me, PTL_PRIORITY_LIST, NULL, &h));
    OK(PtlPut(smd, 0, 0, PTL_NO_ACK_REQ, R.id, R_PT, tag(i), 0,
              (void *)(long)i, len[i]));
}

/* Handle a PUT (posted receive) or PUT_OVERFLOW (unexpected) event. */
static int complete_recv(const ptl_event_t *ev, int *pending_gets)
{
    int i = (int)(ev->match_bits - 0x1000);
    CHECK(i >= 0 && i < NMSG);
    size_t n = (size_t)ev->hdr_data;
    CHECK(n == len[i]);
    if (n > EAGER_MAX) {
        OK(PtlGet(rmd, (ptl_size_t)i * 20000, n, S.id, S_PT, tag(i), 0,
                  (void *)(long)i));
        (*pending_gets)++;
        return 0;
    }
    if (ev->type == PTL_EVENT_PUT_OVERFLOW) /* copy out of the bounce buffer */
        memcpy(rbuf[i], ev->start, n);
    return 1;
}

int main(void)
{
    ptl_test_host_init(2, 1500);
    struct ptl_test_wire w = { .seed = 99, .loss_pct = 5, .reorder_pct = 5,
                               .latency_ns = 3000 };
    ptl_test_wire_config(&w);
    OK(PtlInit());
    tp_node(&S, 0, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    tp_node(&R, 1, PTL_NI_MATCHING | PTL_NI_PHYSICAL);
    R_PT = tp_pt(&R, 0);
    S_PT = tp_pt(&S, 0);
    for (int i = 0; i < NMSG; i++) {
        len[i] = i % 3 == 2 ? 5000 + (size_t)i * 500 : (size_t)(i * 97) % 3000;
        tp_fill(sbuf[i], len[i], (unsigned)i);
    }
    /* Overflow buffers, each retired when less than EAGER_MAX is left. */
    for (int k = 0; k < 2; k++) {
        ptl_me_t o = tp_me(ovf[k], OVF_SZ, PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL |
                           PTL_ME_EVENT_LINK_DISABLE, 0, ~0ull);
        o.min_free = EAGER_MAX;
        ptl_handle_me_t h;
        OK(PtlMEAppend(R.ni, R_PT, &o, PTL_OVERFLOW_LIST, NULL, &h));
    }
    ptl_handle_md_t smd = tp_md(&S, sbuf, sizeof(sbuf), 0, PTL_CT_NONE);
    rmd = tp_md(&R, rbuf, sizeof(rbuf), 0, PTL_CT_NONE);

    /* The first half is sent before any receive is posted (unexpected). */
    for (int i = 0; i < NMSG / 2; i++)
        send_msg(i, smd);
    for (int i = 0; i < 200; i++) { /* let them arrive */
        ptl_event_t ev;
        unsigned wch;
        if (PtlEQPoll(&S.eq, 1, 5, &ev, &wch) == PTL_EQ_EMPTY && i > 50)
            break;
    }
    int done = 0, gets = 0, unexpected = 0;
    /* Post all receives (eager ones point at their final buffer). */
    for (int i = 0; i < NMSG; i++) {
        ptl_me_t me = tp_me(len[i] > EAGER_MAX ? NULL : rbuf[i],
                            len[i] > EAGER_MAX ? 0 : EAGER_MAX,
                            PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
                            PTL_ME_EVENT_LINK_DISABLE |
                            PTL_ME_EVENT_UNLINK_DISABLE, tag(i), 0);
        ptl_handle_me_t h;
        OK(PtlMEAppend(R.ni, R_PT, &me, PTL_PRIORITY_LIST, NULL, &h));
        ptl_event_t ev;
        while (PtlEQGet(R.eq, &ev) == PTL_OK) {
            if (ev.type == PTL_EVENT_PUT_OVERFLOW) {
                unexpected++;
                done += complete_recv(&ev, &gets);
            } else if (ev.type == PTL_EVENT_REPLY) {
                done++;
                gets--;
            }
        }
    }
    /* The second half goes to posted receives. */
    for (int i = NMSG / 2; i < NMSG; i++)
        send_msg(i, smd);
    for (int guard = 0; guard < 10000 && (done < NMSG || gets); guard++) {
        ptl_event_t ev;
        unsigned wch;
        OK(PtlEQPoll(&R.eq, 1, 20000, &ev, &wch));
        CHECK(ev.ni_fail_type == PTL_NI_OK);
        if (ev.type == PTL_EVENT_PUT && ev.match_bits >= 0x1000) {
            done += complete_recv(&ev, &gets);
        } else if (ev.type == PTL_EVENT_PUT_OVERFLOW) {
            unexpected++;
            done += complete_recv(&ev, &gets);
        } else if (ev.type == PTL_EVENT_REPLY) {
            done++;
            gets--;
        }
    }
    CHECK(done == NMSG && gets == 0);
    CHECK(unexpected == NMSG / 2);
    for (int i = 0; i < NMSG; i++)
        if (memcmp(rbuf[i], sbuf[i], len[i]) != 0) {
            fprintf(stderr, "message %d (%zu bytes) corrupted\n", i, len[i]);
            exit(1);
        }
    printf("%d messages (%d unexpected, rendezvous above %d bytes)\n", NMSG,
           unexpected, EAGER_MAX);
    PtlFini();
    printf("test_conformance: PASS\n");
    return 0;
}
