/* Free slots of an object table (MEs/LEs, MDs, CTs, EQs), the one freed
 * longest ago taken first.
 *
 * A handle names its slot and the slot's generation, 6 bits (handle.c).
 * Taking the lowest free slot, as a scan from slot 0 did, gives the same
 * slot to every append (bind, alloc) in a row: 64 appends after an entry
 * was used up, a handle still kept for it (a receive whose message has
 * just come, its event not yet read) named the new entry, and unlinking it
 * unlinked that.
 * First in, first out, a slot comes back only after every other free one
 * has been used, 64 times the free slots' count before a kept handle can
 * name anything; and taking one no longer walks the slots in use. */
#include "ptl_api.h"

bool ptl_freeq_init(struct ptl_freeq *q, uint32_t n)
{
    q->next = ptl_zalloc(sizeof(uint32_t) * (size_t)(n ? n : 1));
    if (!q->next)
        return false;
    q->head = q->tail = PTL_FREEQ_NONE;
    for (uint32_t i = 0; i < n; i++)
        ptl_freeq_put(q, i);
    return true;
}

void ptl_freeq_fini(struct ptl_freeq *q)
{
    ptl_host_free(q->next);
    q->next = NULL;
}

uint32_t ptl_freeq_take(struct ptl_freeq *q)
{
    uint32_t i = q->head;
    if (i != PTL_FREEQ_NONE) {
        q->head = q->next[i];
        if (q->head == PTL_FREEQ_NONE)
            q->tail = PTL_FREEQ_NONE;
    }
    return i;
}

void ptl_freeq_put(struct ptl_freeq *q, uint32_t i)
{
    q->next[i] = PTL_FREEQ_NONE;
    if (q->tail == PTL_FREEQ_NONE)
        q->head = i;
    else
        q->next[q->tail] = i;
    q->tail = i;
}
