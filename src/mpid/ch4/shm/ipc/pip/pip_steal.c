/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX CAB-MPI: local ranks idle in a blocking MPI call take chunks of
 * the copies and reductions of busy local ranks that share their address
 * space (PiP).  The owner of the work publishes a task only once MPI's
 * rules allow the work to start (a matched receive, a window's mutex held)
 * and completes only when every chunk is done.  Here: the CVARs, the
 * exchange of per-rank state at init, the tasks MPI operations make, the
 * idle-rank hook and the pvars.  Design: doc/design/cab-stealing.md.
 */
#include "mpidimpl.h"
#include "cx_cvar.h"
#include "pip_post.h"
#include "pip_steal_victim.h"
#include "cx_topology.h"
#include "mpichcx_pip.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : CH4_CX_STEAL
      description : MPICH-CX CAB-MPI work stealing between PiP tasks

cvars:
    - name        : MPIR_CVAR_CH4_CX_STEAL
      category    : CH4_CX_STEAL
      type        : string
      default     : "throughput"
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Under mpiexec -pip: which busy local rank a rank idle in a blocking
        MPI call takes a chunk of copy or reduction work from. off: none
        (the owner does all its work). localized: one random rank of its own
        NUMA node per attempt. mixed: then, if that one had nothing, one
        random rank of another NUMA node. throughput: like mixed, but a
        remote node only while fewer of its ranks are possibly active than
        MPIR_CVAR_CH4_CX_STEAL_NSATURATE.

    - name        : MPIR_CVAR_CH4_CX_STEAL_THRESHOLD
      category    : CH4_CX_STEAL
      type        : int
      default     : 262144
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Copies and reductions of fewer bytes than this are done by their
        owner alone, without publishing a task (0: every one is published).

    - name        : MPIR_CVAR_CH4_CX_STEAL_CHUNK_SMALL
      category    : CH4_CX_STEAL
      type        : int
      default     : 16384
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Chunk size in bytes of tasks smaller than
        MPIR_CVAR_CH4_CX_STEAL_CHUNK_MEDIUM_FROM.

    - name        : MPIR_CVAR_CH4_CX_STEAL_CHUNK_MEDIUM
      category    : CH4_CX_STEAL
      type        : int
      default     : 32768
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Chunk size in bytes of tasks from MPIR_CVAR_CH4_CX_STEAL_CHUNK_MEDIUM_FROM
        bytes up to MPIR_CVAR_CH4_CX_STEAL_CHUNK_LARGE_FROM.

    - name        : MPIR_CVAR_CH4_CX_STEAL_CHUNK_LARGE
      category    : CH4_CX_STEAL
      type        : int
      default     : 65536
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Chunk size in bytes of tasks of at least
        MPIR_CVAR_CH4_CX_STEAL_CHUNK_LARGE_FROM bytes.

    - name        : MPIR_CVAR_CH4_CX_STEAL_CHUNK_MEDIUM_FROM
      category    : CH4_CX_STEAL
      type        : int
      default     : 98304
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Task size in bytes from which chunks are
        MPIR_CVAR_CH4_CX_STEAL_CHUNK_MEDIUM bytes.

    - name        : MPIR_CVAR_CH4_CX_STEAL_CHUNK_LARGE_FROM
      category    : CH4_CX_STEAL
      type        : int
      default     : 524288
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Task size in bytes from which chunks are
        MPIR_CVAR_CH4_CX_STEAL_CHUNK_LARGE bytes.

    - name        : MPIR_CVAR_CH4_CX_STEAL_CHUNKS_PER_RANK
      category    : CH4_CX_STEAL
      type        : int
      default     : 4
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        On-demand chunking by the number of copiers: a task is cut into no
        more than this many chunks per rank that could take one (the ranks
        sharing the address space), so that with few ranks each claim
        copies more; chunks are never smaller than the size classes above.
        0: the size classes alone.

    - name        : MPIR_CVAR_CH4_CX_STEAL_NSATURATE
      category    : CH4_CX_STEAL
      type        : int
      default     : 4
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Throughput-aware stealing: the number of ranks copying at once that
        saturates a NUMA node's memory bandwidth; no rank of another node
        adds work to a node with this many possibly active ranks. Measure
        it with benchmarks/memcpy_saturation (doc/user/cab-stealing.md).

    - name        : MPIR_CVAR_CH4_CX_STEAL_ORDER
      category    : CH4_CX_STEAL
      type        : string
      default     : "lo-to-hi"
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        How the application reads data right after it arrived, so that the
        chunks it reads first are the last written and still in cache:
        lo-to-hi (chunks are run from the high end down), hi-to-lo (from
        the low end up), random (no preference: low end up). The info key
        post_comm_access of a communicator or window, same values,
        overrides it for that object's receives and accumulates.

    - name        : MPIR_CVAR_CH4_CX_STEAL_STREAM
      category    : CH4_CX_STEAL
      alt-env     : MPIR_CVAR_CH4_CX_PIP_SHARE_STREAM
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Copy tasks write the destination with non-temporal (streaming)
        stores, x86-64 only: much faster when another core holds the
        destination's cache lines, slower when none does, and the data
        lands in memory, not in the receiver's cache.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

bool MPIDI_PIP_steal_on;

/* What the peers read (a static: PiP never unloads a rank's namespace, so
 * a peer that finalized still shows an empty queue). */
static MPIDI_PIPI_steal_rank_t my_share;

static struct {
    MPIDI_PIPI_steal_world_t world;
    MPIDI_PIPI_chunking_t chunking;
    size_t threshold;
    int chunks_per_rank;
    int comm_hint;              /* MPIR_Comm hints slot of post_comm_access */
    int strategy;
    int reverse, stream;
    /* counters behind the pvars */
    unsigned long long tasks, owner_chunks, local_chunks, remote_chunks, bytes, empty, denied;
    unsigned long long waiter_runs;
} steal;

static unsigned steal_rng = 2463534242u;        /* xorshift state, never 0 */

/* The waiter id of the fence this thread waits in, or MPIDI_PIPI_NO_WAITER. */
static _Thread_local int fence_waiting = MPIDI_PIPI_NO_WAITER;

static const char *const strategy_names[] = { "off", "localized", "mixed", "throughput" };

static void register_pvars(void);

int MPIDI_PIP_steal_init_local(void)
{
    int mpi_errno = MPI_SUCCESS;
    unsigned v;

    register_pvars();
    steal.strategy = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp(MPIR_CVAR_CH4_CX_STEAL, strategy_names[i]))
            steal.strategy = i;
    if (steal.strategy < 0)
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_STEAL", MPIR_CVAR_CH4_CX_STEAL,
                                     "off, localized, mixed or throughput");
#ifndef MPIDI_CX_STEAL
    if (steal.strategy != MPIDI_PIPI_STEAL_OFF && getenv("MPIR_CVAR_CH4_CX_STEAL"))
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_STEAL", MPIR_CVAR_CH4_CX_STEAL,
                                     "off (this MPICH-CX was configured with --disable-cx-steal)");
    steal.strategy = MPIDI_PIPI_STEAL_OFF;
#endif
    if (MPIR_CVAR_CH4_CX_STEAL_CHUNKS_PER_RANK < 0)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_STEAL_CHUNKS_PER_RANK",
                                         MPIR_CVAR_CH4_CX_STEAL_CHUNKS_PER_RANK,
                                         "a number of chunks, or 0 for the size classes alone");
    steal.chunks_per_rank = MPIR_CVAR_CH4_CX_STEAL_CHUNKS_PER_RANK;
    if (MPIR_CVAR_CH4_CX_STEAL_THRESHOLD < 0)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_STEAL_THRESHOLD",
                                         MPIR_CVAR_CH4_CX_STEAL_THRESHOLD,
                                         "a size in bytes, 0 or more");
    steal.threshold = (size_t) MPIR_CVAR_CH4_CX_STEAL_THRESHOLD;
#define POSITIVE(cvar_, field_) \
    mpi_errno = MPIDI_CX_cvar_positive(#cvar_, cvar_, &v); \
    if (mpi_errno) return mpi_errno; \
    steal.field_ = v
    POSITIVE(MPIR_CVAR_CH4_CX_STEAL_CHUNK_SMALL, chunking.small);
    POSITIVE(MPIR_CVAR_CH4_CX_STEAL_CHUNK_MEDIUM, chunking.medium);
    POSITIVE(MPIR_CVAR_CH4_CX_STEAL_CHUNK_LARGE, chunking.large);
    POSITIVE(MPIR_CVAR_CH4_CX_STEAL_CHUNK_MEDIUM_FROM, chunking.medium_from);
    POSITIVE(MPIR_CVAR_CH4_CX_STEAL_CHUNK_LARGE_FROM, chunking.large_from);
    POSITIVE(MPIR_CVAR_CH4_CX_STEAL_NSATURATE, world.n_saturate);
#undef POSITIVE
    if (steal.chunking.large_from < steal.chunking.medium_from)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_STEAL_CHUNK_LARGE_FROM",
                                         MPIR_CVAR_CH4_CX_STEAL_CHUNK_LARGE_FROM,
                                         "a size no smaller than MPIR_CVAR_CH4_CX_STEAL_CHUNK_MEDIUM_FROM");
    int order = MPIDI_PIP_steal_order_of(MPIR_CVAR_CH4_CX_STEAL_ORDER);
    steal.reverse = order == 1;
    if (!order)
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_STEAL_ORDER", MPIR_CVAR_CH4_CX_STEAL_ORDER,
                                     "lo-to-hi, hi-to-lo or random");
#if defined(__x86_64__)
    steal.stream = MPIR_CVAR_CH4_CX_STEAL_STREAM;
#endif
    /* a hints slot without a key: MPICH's own parsing takes only numbers */
    if (!steal.comm_hint)
        steal.comm_hint = MPIR_Comm_register_hint(0, NULL, NULL, MPIR_COMM_HINT_TYPE_INT, 0, 0);
    return MPI_SUCCESS;
}

int MPIDI_PIP_steal_order_of(const char *value)
{
    static const char *const orders[] = { "lo-to-hi", "hi-to-lo", "random" };
    for (int i = 0; i < 3; i++)
        if (value && !strcmp(value, orders[i]))
            return i + 1;
    return 0;
}

void MPIDI_PIP_steal_comm_hints(MPIR_Comm * comm, MPIR_Info * info)
{
    for (MPIR_Info * i = info; i && steal.comm_hint; i = i->next)
        if (i->key && !strcmp(i->key, "post_comm_access")) {
            int order = MPIDI_PIP_steal_order_of(i->value);
            if (order)
                comm->hints[steal.comm_hint] = order;
        }
}

/* Chunks run high to low for an application that reads low to high. */
static int reverse_for(int order)
{
    return order ? order == 1 : steal.reverse;
}

/* On-demand chunking: the size class's chunk, or larger when few ranks could
 * share the task (whole pages). */
static size_t chunk_for(size_t size)
{
    size_t c = MPIDI_PIPI_chunk_for(&steal.chunking, size);
    if (steal.chunks_per_rank && steal.world.n > 0) {
        size_t fair = size / ((size_t) steal.chunks_per_rank * (size_t) steal.world.n);
        fair &= ~(size_t) 4095;
        if (fair > c)
            c = fair;
    }
    return c;
}

/* This rank's NUMA node: MPICH_CX_FAKE_NUMA_NODES=n splits the local ranks
 * into n blocks (tests on one-node machines), else hwloc's node of the CPU
 * this rank runs on now (bind ranks for a stable answer). Daps's too. */
int MPIDI_PIP_numa_node_self(void)
{
    const char *fake = getenv("MPICH_CX_FAKE_NUMA_NODES");
    int n = fake ? atoi(fake) : 0;
    if (n >= 1)
        return MPIR_Process.local_rank * n / MPIR_Process.local_size;
    return MPIR_CX_numa_node_self();
}

/* Before MPIDI_PIP_init_world's exchange: reset what the peers will read
 * and return its address, which that exchange publishes.  The NUMA node
 * (hwloc) only for PiP tasks that may steal. */
uintptr_t MPIDI_PIP_steal_prepare(void)
{
    memset(&my_share, 0, sizeof(my_share));
    my_share.active = 1;
    if (steal.strategy != MPIDI_PIPI_STEAL_OFF && MPIR_CVAR_CH4_CX_PIP_ENABLE &&
        MPIR_CX_pip_shares_process())
        my_share.numa = MPIDI_PIP_numa_node_self();
    return (uintptr_t) & my_share;
}

/* After that exchange: peers[i] is local rank i's state if it shares this
 * address space, else 0.  Builds this rank's view of them. */
int MPIDI_PIP_steal_init_world(const uintptr_t * peers)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_PIPI_steal_world_t *w = &steal.world;
    int n = 0, self = -1, nl = MPIR_Process.local_size;

    w->ranks = MPL_malloc(nl * sizeof(*w->ranks), MPL_MEM_SHM);
    w->numa_host = MPL_malloc(nl * sizeof(*w->numa_host), MPL_MEM_SHM);
    w->local = MPL_malloc(nl * sizeof(int), MPL_MEM_SHM);
    w->remote = MPL_malloc(nl * sizeof(int), MPL_MEM_SHM);
    MPIR_ERR_CHKANDJUMP(!w->ranks || !w->numa_host || !w->local || !w->remote, mpi_errno,
                        MPI_ERR_OTHER, "**nomem");
    for (int i = 0; i < nl; i++) {
        if (i == MPIR_Process.local_rank) {
            self = n;
            w->ranks[n++] = &my_share;
        } else if (peers[i])
            w->ranks[n++] = (MPIDI_PIPI_steal_rank_t *) peers[i];
    }
    MPIDI_PIPI_steal_world_init(w, steal.strategy, w->n_saturate, w->ranks, n, self, w->local,
                                w->remote, w->numa_host);
    w->me = MPIR_Process.rank;  /* tasks name their waiter by world rank */
    steal_rng = 2463534242u + 2654435761u * (unsigned) MPIR_Process.local_rank;
    if (!steal_rng)
        steal_rng = 1;  /* ranks pick different victims */
    MPIDI_PIP_steal_on = steal.strategy != MPIDI_PIPI_STEAL_OFF && n > 1;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_PIP_steal_finalize(void)
{
    MPIDI_PIP_steal_on = false;
    __atomic_store_n(&my_share.active, 1, __ATOMIC_RELAXED);
    MPL_free(steal.world.ranks);
    MPL_free(steal.world.numa_host);
    MPL_free(steal.world.local);
    MPL_free(steal.world.remote);
    steal.world.ranks = steal.world.numa_host = NULL;
    steal.world.local = steal.world.remote = NULL;
    steal.world.n = steal.world.n_local = steal.world.n_remote = 0;
}

/* For the extensions line of MPI_Get_library_version. */
const char *MPIDI_PIP_steal_describe(void)
{
    static char buf[96];
    if (!MPIDI_PIP_steal_on)
        return "";
    snprintf(buf, sizeof(buf), ", %s stealing from %zu bytes", strategy_names[steal.strategy],
             steal.threshold);
    return buf;
}

/* The owner's side of every task: publish, run chunks, wait for the
 * workers' last ones, unpublish. */
static void run_task(MPIDI_PIPI_task_t * t)
{
    __atomic_store_n(&my_share.active, 1, __ATOMIC_RELAXED);
    MPIDI_PIPI_taskq_publish(&my_share.q, t);
    size_t chunks = MPIDI_PIPI_task_work(t);
    MPIDI_PIPI_task_wait(t);
    MPIDI_PIPI_taskq_unpublish(&my_share.q, t);
    __atomic_fetch_add(&steal.tasks, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&steal.owner_chunks, chunks, __ATOMIC_RELAXED);
}

/* Copies whose pieces average fewer bytes than this are not worth sharing:
 * a worker would spend a chunk's time finding its pieces. */
#define MIN_SEG_BYTES 256

/* The first size bytes of count elements of dt at buf as segments: *segs
 * is one when the layout is contiguous, else allocated (free with
 * MPL_free).  Returns false when too fragmented or on failure. */
static bool layout(const void *buf, MPI_Aint count, MPI_Datatype dt, size_t size,
                   MPIDI_PIPI_seg_t * one, MPIDI_PIPI_seg_t ** segs, int *nseg)
{
    int contig;
    size_t dt_sz;
    MPIR_Datatype *dt_ptr;
    MPI_Aint true_lb, iov_len, actual_len, actual_bytes;

    MPIDI_Datatype_get_info(count, dt, contig, dt_sz, dt_ptr, true_lb);
    (void) dt_sz;
    if (contig) {
        one->base = (char *) buf + true_lb;
        one->end = size;
        *segs = one;
        *nseg = 1;
        return true;
    }
    if ((size_t) (dt_ptr->typerep.num_contig_blocks * count) > size / MIN_SEG_BYTES)
        return false;
    if (MPIR_Typerep_iov_len(count, dt, size, &iov_len) != MPI_SUCCESS || iov_len <= 0 ||
        iov_len > INT_MAX)
        return false;
    struct iovec *iov = MPL_malloc(iov_len * sizeof(*iov), MPL_MEM_OTHER);
    MPIDI_PIPI_seg_t *s = MPL_malloc(iov_len * sizeof(*s), MPL_MEM_OTHER);
    bool ok = iov && s && MPIR_Typerep_to_iov(buf, count, dt, 0, iov, iov_len, size, &actual_len,
                                              &actual_bytes) == MPI_SUCCESS &&
        (size_t) actual_bytes == size;
    size_t end = 0;
    for (MPI_Aint i = 0; ok && i < actual_len; i++) {
        end += iov[i].iov_len;
        s[i].base = iov[i].iov_base;
        s[i].end = end;
    }
    MPL_free(iov);
    if (!ok) {
        MPL_free(s);
        return false;
    }
    *segs = s;
    *nseg = (int) actual_len;
    return true;
}

bool MPIDI_PIP_steal_recv(const MPIDI_IPC_hdr * hdr, MPIR_Request * rreq, size_t recv_data_sz)
{
    MPIDI_PIPI_seg_t s1, d1, *src = NULL, *dst = NULL;
    int nsrc, ndst;
    bool done = false;
    MPIR_Datatype *sdt = NULL;

    if (!MPIDI_PIP_steal_on || recv_data_sz < steal.threshold || !recv_data_sz)
        return false;
    if (!layout(MPIDIG_REQUEST(rreq, buffer), MPIDIG_REQUEST(rreq, count),
                MPIDIG_REQUEST(rreq, datatype), recv_data_sz, &d1, &dst, &ndst))
        return false;
    if (hdr->is_contig) {
        s1.base = (char *) hdr->ipc_handle.pip.addr;
        s1.end = recv_data_sz;
        src = &s1;
        nsrc = 1;
    } else {
        /* the sender's layout came flattened after the header */
        sdt = (MPIR_Datatype *) MPIR_Handle_obj_alloc(&MPIR_Datatype_mem);
        if (!sdt || MPIR_Typerep_unflatten(sdt, (void *) (hdr + 1)) != MPI_SUCCESS)
            goto fn_exit;
        if (!layout((void *) hdr->ipc_handle.pip.addr, hdr->count, sdt->handle, recv_data_sz,
                    &s1, &src, &nsrc))
            goto fn_exit;
    }

    MPIDI_PIPI_task_t t;
    MPIDI_PIPI_task_init(&t, MPIDI_PIPI_TASK_COPY, recv_data_sz, chunk_for(recv_data_sz), src,
                         nsrc, dst, ndst);
    t.reverse = reverse_for(rreq->comm ? rreq->comm->hints[steal.comm_hint] : 0);
    t.stream = steal.stream;
    /* the sender's send completes only after this copy: if it waits, it
     * helps to the end (world ranks; -1 for a dynamic process) */
    if (rreq->comm)
        t.waiter = MPIDIU_rank_to_lpid(rreq->status.MPI_SOURCE, rreq->comm);
    run_task(&t);
    done = true;

  fn_exit:
    if (src && src != &s1)
        MPL_free(src);
    if (dst != &d1)
        MPL_free(dst);
    if (sdt)
        MPIR_Datatype_free(sdt);
    return done;
}

/* Between a user buffer's layout and a contiguous pack buffer. */
static bool pack_task(void *user, MPI_Aint count, MPI_Datatype dt, void *packed, size_t bytes,
                      int pack, int order)
{
    MPIDI_PIPI_seg_t u1, p1 = { packed, bytes }, *u;
    int nu;

    if (!MPIDI_PIP_steal_on || bytes < steal.threshold || !bytes ||
        !layout(user, count, dt, bytes, &u1, &u, &nu))
        return false;
    MPIDI_PIPI_task_t t;
    MPIDI_PIPI_task_init(&t, MPIDI_PIPI_TASK_COPY, bytes, chunk_for(bytes), pack ? u : &p1,
                         pack ? nu : 1, pack ? &p1 : u, pack ? 1 : nu);
    t.reverse = reverse_for(order);
    run_task(&t);
    if (u != &u1)
        MPL_free(u);
    return true;
}

bool MPIDI_PIP_steal_pack(const void *buf, MPI_Aint count, MPI_Datatype dt, void *packed,
                          MPI_Aint bytes, MPI_Aint * actual)
{
    if (bytes <= 0 || !pack_task((void *) buf, count, dt, packed, (size_t) bytes, 1, 0))
        return false;
    *actual = bytes;
    return true;
}

bool MPIDI_PIP_steal_unpack(const void *packed, MPI_Aint bytes, void *buf, MPI_Aint count,
                            MPI_Datatype dt, MPIR_Comm * comm, MPI_Aint * actual)
{
    MPI_Aint dt_size;
    MPIR_Datatype_get_size_macro(dt, dt_size);
    if (bytes <= 0 || bytes > dt_size * count ||
        !pack_task(buf, count, dt, (void *) packed, (size_t) bytes, 0,
                   comm ? comm->hints[steal.comm_hint] : 0))
        return false;
    *actual = bytes;
    return true;
}

typedef struct {
    MPIR_op_function *fn;
    MPI_Datatype type;
    int type_size;
} reduce_arg_t;

/* A chunk of an accumulate: the op's function in the owner's library. */
static void reduce_chunk(const void *in, void *inout, size_t bytes, const void *arg)
{
    const reduce_arg_t *a = arg;
    MPI_Aint len = (MPI_Aint) (bytes / (size_t) a->type_size);
    MPI_Datatype type = a->type;
    a->fn((void *) in, inout, &len, &type);
}

/* A window's fence epoch as a task's waiter: an id below -1, apart from
 * world ranks, the same on every rank of the window (its communicator's
 * context id; windows of disjoint groups may share one, which costs only
 * chunks taken by a rank that could have re-checked its wait). */
static int fence_waiter_id(MPIR_Win * win)
{
    return -2 - (int) win->comm_ptr->context_id;
}

void MPIDI_PIP_steal_fence_begin(MPIR_Win * win)
{
    fence_waiting = fence_waiter_id(win);
}

void MPIDI_PIP_steal_fence_end(void)
{
    fence_waiting = MPIDI_PIPI_NO_WAITER;
}

bool MPIDI_PIP_steal_accumulate(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, void *result_addr,
                                int result_count, MPI_Datatype result_datatype,
                                void *target_addr, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op, int mapped_device,
                                MPIR_Win * win)
{
    MPI_Aint size, extent;

    /* a predefined type at every end, with no holes; a predefined op */
    if (!MPIDI_PIP_steal_on || mapped_device >= 0 || !HANDLE_IS_BUILTIN(op) ||
        op == MPI_NO_OP || !MPIR_DATATYPE_IS_PREDEFINED(origin_datatype) ||
        target_datatype != origin_datatype || target_count != origin_count ||
        (result_addr && (result_datatype != origin_datatype || result_count != origin_count)))
        return false;
    MPIR_Datatype_get_size_macro(origin_datatype, size);
    MPIR_Datatype_get_extent_macro(origin_datatype, extent);
    if (size != extent || size <= 0 || (size_t) size * origin_count < steal.threshold)
        return false;

    size_t bytes = (size_t) size * origin_count;
    MPIDI_PIPI_seg_t s1 = { (char *) origin_addr, bytes }, d1 = { target_addr, bytes };
    reduce_arg_t arg = { MPIR_OP_HDL_TO_FN(op), origin_datatype, (int) size };
    MPIDI_PIPI_task_t t;
    MPIDI_PIPI_task_init(&t, result_addr ? MPIDI_PIPI_TASK_GET_ACC : MPIDI_PIPI_TASK_ACC, bytes,
                         chunk_for(bytes), &s1, 1, &d1, 1);
    MPIDI_PIPI_task_set_reduce(&t, reduce_chunk, &arg, (int) size, result_addr);
    t.reverse = reverse_for(MPIDIG_WIN(win, info_args).cx_post_comm_access);
    /* in a fence epoch, the ranks in the window's closing fence cannot leave
     * it before this origin has finished its operations and entered it too */
    if (MPIDIG_WIN(win, sync).access_epoch_type == MPIDIG_EPOTYPE_FENCE)
        t.waiter = fence_waiter_id(win);
    run_task(&t);
    return true;
}

/* Called on every idle poll, so it touches nothing shared when there is
 * nothing to steal: no store unless the flag changes, no locked adds (the
 * random state and the miss counter may lose an update when threads of a
 * rank race; neither needs to be exact). */
bool MPIDI_PIP_steal_idle(void)
{
    if (__atomic_load_n(&my_share.active, __ATOMIC_RELAXED))
        __atomic_store_n(&my_share.active, 0, __ATOMIC_RELAXED);
    unsigned rng = __atomic_load_n(&steal_rng, __ATOMIC_RELAXED);
    int me = fence_waiting != MPIDI_PIPI_NO_WAITER ? fence_waiting : steal.world.me;
    MPIDI_PIPI_steal_result_t r = MPIDI_PIPI_steal_once(&steal.world, me, &rng);
    __atomic_store_n(&steal_rng, rng, __ATOMIC_RELAXED);
    if (r.bytes) {
        __atomic_fetch_add(r.remote ? &steal.remote_chunks : &steal.local_chunks, r.chunks,
                           __ATOMIC_RELAXED);
        __atomic_fetch_add(&steal.bytes, r.bytes, __ATOMIC_RELAXED);
        if (r.chunks > 1)
            __atomic_fetch_add(&steal.waiter_runs, 1, __ATOMIC_RELAXED);
        return true;
    }
    unsigned long long *miss = r.denied ? &steal.denied : &steal.empty;
    __atomic_store_n(miss, __atomic_load_n(miss, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    return false;
}

void MPIDI_PIP_steal_wait_done(void)
{
    if (!__atomic_load_n(&my_share.active, __ATOMIC_RELAXED))
        __atomic_store_n(&my_share.active, 1, __ATOMIC_RELAXED);
}

static void register_pvars(void)
{
    static int registered;
    static const MPIDI_PIP_pvar_t pvars[] = {
        {"cx_steal_tasks", &steal.tasks,
         "CAB-MPI: copy and reduction tasks this rank published for idle local ranks"},
        {"cx_steal_owner_chunks", &steal.owner_chunks,
         "CAB-MPI: chunks of its own tasks this rank ran"},
        {"cx_steal_local_chunks", &steal.local_chunks,
         "CAB-MPI: chunks this rank stole from ranks of its NUMA node while idle in MPI"},
        {"cx_steal_remote_chunks", &steal.remote_chunks,
         "CAB-MPI: chunks this rank stole from ranks of other NUMA nodes while idle in MPI"},
        {"cx_steal_bytes", &steal.bytes,
         "CAB-MPI: bytes of the chunks this rank stole"},
        {"cx_steal_waiter_runs", &steal.waiter_runs,
         "CAB-MPI: steals in which this rank, waiting on the task (the sender of the message, "
         "a rank in the window's closing fence), ran more than one of its chunks"},
        {"cx_steal_empty", &steal.empty,
         "CAB-MPI: steal attempts of this rank that found no chunk"},
        {"cx_steal_denied", &steal.denied,
         "CAB-MPI: remote steal attempts of this rank refused because the node was saturated"},
    };
    if (!registered++)
        MPIDI_PIP_register_counters("CH4_CX_STEAL", pvars, sizeof(pvars) / sizeof(pvars[0]));
}
