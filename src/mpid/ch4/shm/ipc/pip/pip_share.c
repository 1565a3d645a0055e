/*
 * MPICH-CX: PiP single copies shared between receiver and sender
 * (pip_share.h has the protocol).  Here: when a send opens a share, when a
 * receive splits its copy, the sender's help from its progress loop, and
 * the counters behind the pvars cx_pip_shared_copies and cx_pip_help_bytes.
 */
#include "mpidimpl.h"
#include "pip_post.h"

/* Sender: a share for a contiguous message of data_sz bytes at addr, listed
 * until the receiver's acknowledgement; 0 if the message is too small to be
 * split (or no memory: the receiver then copies alone). */
uintptr_t MPIDI_PIP_share_open(uintptr_t addr, size_t data_sz)
{
    size_t chunk = MPIDI_PIP_global.share_chunk;
    if (!chunk || data_sz < 2 * chunk)
        return 0;
    MPIDI_PIPI_share_t *s = MPL_aligned_alloc(64, sizeof(*s), MPL_MEM_SHM);
    if (!s)
        return 0;
    MPIDI_PIPI_share_init(s, (const void *) addr);
    MPIDI_PIPI_share_add(&MPIDI_PIP_global.shares, s);
    return (uintptr_t) s;
}

/* Sender, on the acknowledgement: the receiver is done with the share. */
void MPIDI_PIP_share_close(uintptr_t share)
{
    MPIDI_PIPI_share_t *s = (MPIDI_PIPI_share_t *) share;
    MPIDI_PIPI_share_remove(&MPIDI_PIP_global.shares, s);
    MPL_free(s);
}

/* Receiver, once matched: if the sender opened a share and the receive
 * buffer is contiguous too, copy recv_data_sz bytes together with the
 * sender and return true; false leaves the copy to the caller. */
bool MPIDI_PIP_share_copy(uintptr_t share, MPIR_Request * rreq, size_t recv_data_sz)
{
    int dt_contig;
    size_t data_sz;
    MPIR_Datatype *dt_ptr;
    MPI_Aint true_lb;
    size_t chunk = MPIDI_PIP_global.share_chunk;

    if (!share || !chunk || recv_data_sz < 2 * chunk)
        return false;
    MPIDI_Datatype_get_info(MPIDIG_REQUEST(rreq, count), MPIDIG_REQUEST(rreq, datatype),
                            dt_contig, data_sz, dt_ptr, true_lb);
    (void) data_sz;
    (void) dt_ptr;
    if (!dt_contig)
        return false;

    MPIDI_PIPI_share_t *s = (MPIDI_PIPI_share_t *) share;
    size_t chunks = 0;
    MPIDI_PIPI_share_offer(s, (char *) MPIDIG_REQUEST(rreq, buffer) + true_lb, recv_data_sz,
                           chunk, MPIDI_PIP_global.share_stream);
    MPIDI_PIPI_share_work(s, &chunks);
    MPIDI_PIPI_share_wait(s);
    __atomic_fetch_add(&MPIDI_PIP_global.shared_copies, 1, __ATOMIC_RELAXED);
    if (MPIDI_PIP_global.share_stream)
        __atomic_fetch_add(&MPIDI_PIP_global.stream_copies, 1, __ATOMIC_RELAXED);
    return true;
}

void MPIDI_PIP_share_help(void)
{
    size_t chunks = 0;
    size_t bytes = MPIDI_PIPI_share_help(&MPIDI_PIP_global.shares, &chunks);
    if (bytes)
        __atomic_fetch_add(&MPIDI_PIP_global.help_bytes, bytes, __ATOMIC_RELAXED);
}
