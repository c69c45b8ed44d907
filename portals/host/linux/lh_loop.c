/* Frames a process sends to itself (destination = own nid and pid).  They
 * never reach the wire (AF_PACKET does not hand a socket its own frames),
 * and ptl_host_send runs under the library lock so it cannot deliver them
 * at once: they are copied here and handed to ptl_lib_rx from the next
 * drain, like frames from the ring. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "lh_internal.h"
#include "ptl_host.h"
#include "ptl_lib.h"

struct loop_frame {
    struct loop_frame *next;
    size_t len;
    uint8_t data[];
};

static pthread_mutex_t loop_m = PTHREAD_MUTEX_INITIALIZER;
static struct loop_frame *head, **tail = &head;
static size_t queued;

#define LH_LOOP_MAX 4096 /* beyond this: "not sent", the library resends */

int lh_loop_send(const struct ptl_sg *sg, int n_sg)
{
    size_t len = 0;
    for (int i = 0; i < n_sg; i++)
        len += sg[i].len;
    if (__atomic_load_n(&queued, __ATOMIC_RELAXED) >= LH_LOOP_MAX)
        return -1;
    struct loop_frame *f = malloc(sizeof(*f) + len);
    if (!f)
        return -1;
    f->next = NULL;
    f->len = 0;
    for (int i = 0; i < n_sg; i++) {
        memcpy(f->data + f->len, sg[i].base, sg[i].len);
        f->len += sg[i].len;
    }
    pthread_mutex_lock(&loop_m);
    *tail = f;
    tail = &f->next;
    __atomic_fetch_add(&queued, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&loop_m);
    lh_progress_kick();
    return 0;
}

bool lh_loop_ready(void) { return __atomic_load_n(&queued, __ATOMIC_RELAXED); }

int lh_loop_drain(int max)
{
    int n = 0;
    while (n < max) {
        pthread_mutex_lock(&loop_m);
        struct loop_frame *f = head;
        if (f) {
            head = f->next;
            if (!head)
                tail = &head;
            __atomic_fetch_sub(&queued, 1, __ATOMIC_RELAXED);
        }
        pthread_mutex_unlock(&loop_m);
        if (!f)
            break;
        ptl_lib_rx(0, f->data, f->len);
        free(f);
        n++;
    }
    return n;
}
