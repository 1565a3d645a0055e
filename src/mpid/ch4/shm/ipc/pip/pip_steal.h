/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX CAB-MPI core: tasks that local ranks idle in MPI steal chunks of.
 * No MPI in here (test/unit/pipsteal drives it with plain threads); the
 * MPI side is pip_steal.c, victim choice pip_steal_victim.h.
 * Design: doc/design/cab-stealing.md.
 */
#ifndef PIP_STEAL_H_INCLUDED
#define PIP_STEAL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "cx_sync_common.h"
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

/* What a chunk of a task does with its byte range [off, off + len). */
#define MPIDI_PIPI_TASK_COPY    0       /* src -> dst, both segment lists */
#define MPIDI_PIPI_TASK_ACC     1       /* dst = reduce(src, dst), contiguous */
#define MPIDI_PIPI_TASK_GET_ACC 2       /* result = dst, then dst = reduce(src, dst) */

#define MPIDI_PIPI_NO_WAITER (-1)

/* One contiguous piece of a buffer: bytes [previous end, end) of the
 * message are at base. */
typedef struct {
    char *base;
    size_t end;
} MPIDI_PIPI_seg_t;

/* in and inout hold bytes bytes, a whole number of elements. */
typedef void (*MPIDI_PIPI_reduce_fn_t)(const void *in, void *inout, size_t bytes, const void *arg);

/* The owner fills everything above prev/next, publishes the task and never
 * changes those fields again; chunks are claimed by index and counted done
 * after their bytes are written.  The owner unpublishes the task (under the
 * queue's lock) only once every byte is done, and a worker claims a chunk
 * only under that lock, so a worker holding an unfinished chunk always sees
 * the task alive. */
typedef struct MPIDI_PIPI_task {
    int kind;
    int reverse;                /* claim chunks from the high end down */
    int stream;                 /* COPY writes dst with non-temporal stores */
    int elem_size;              /* ACC/GET_ACC: chunks are whole elements */
    /* what a blocking wait that cannot end before this task does is known
     * by (the world rank of a single-copy message's sender, or an id below
     * -1 shared by the ranks in one window's closing fence), or
     * MPIDI_PIPI_NO_WAITER: such a worker keeps taking chunks of this task
     * instead of re-checking its wait after each one */
    int waiter;
    size_t size, chunk, nchunks;
    const MPIDI_PIPI_seg_t *src, *dst;
    int nsrc, ndst;
    char *result;               /* GET_ACC */
    MPIDI_PIPI_reduce_fn_t reduce;
    const void *reduce_arg;
    struct MPIDI_PIPI_task *prev, *next;        /* the owner's queue */
    /* claimed chunks and bytes done: written by every copier, a line apart */
    size_t claimed __attribute__((aligned(64)));
    size_t done __attribute__((aligned(64)));
} __attribute__((aligned(64))) MPIDI_PIPI_task_t;

/* A rank's published tasks. */
typedef struct {
    MPIDI_PIPI_task_t *head;
    atomic_int lock;            /* test-and-test-and-set */
} MPIDI_PIPI_taskq_t;

/* On-demand chunking: the chunk for a message of size bytes. */
typedef struct {
    size_t small, medium, large;        /* chunk sizes */
    size_t medium_from, large_from;     /* message sizes where they start */
} MPIDI_PIPI_chunking_t;

static inline size_t MPIDI_PIPI_chunk_for(const MPIDI_PIPI_chunking_t * c, size_t size)
{
    return size >= c->large_from ? c->large : size >= c->medium_from ? c->medium : c->small;
}

/* memcpy with non-temporal stores for the destination (x86-64; elsewhere a
 * plain memcpy).  Ends with a store fence, so a release store after it
 * publishes the data like one after memcpy. */
static inline void MPIDI_PIPI_copy_stream(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
    char *d = (char *) dst;
    const char *s = (const char *) src;
    size_t head = (16 - ((uintptr_t) d & 15)) & 15;
    if (n < head + 64) {
        memcpy(d, s, n);
        return;
    }
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; d += 64, s += 64, n -= 64) {
        __m128i a = _mm_loadu_si128((const __m128i *) s);
        __m128i b = _mm_loadu_si128((const __m128i *) (s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *) (s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *) (s + 48));
        _mm_stream_si128((__m128i *) d, a);
        _mm_stream_si128((__m128i *) (d + 16), b);
        _mm_stream_si128((__m128i *) (d + 32), c);
        _mm_stream_si128((__m128i *) (d + 48), e);
    }
    memcpy(d, s, n);
    _mm_sfence();
#else
    memcpy(dst, src, n);
#endif
}

/* Owner: set a task up; chunk > 0.  Contiguous buffers are one segment. */
static inline void MPIDI_PIPI_task_init(MPIDI_PIPI_task_t * t, int kind, size_t size, size_t chunk,
                                        const MPIDI_PIPI_seg_t * src, int nsrc,
                                        const MPIDI_PIPI_seg_t * dst, int ndst)
{
    memset(t, 0, sizeof(*t));
    t->waiter = MPIDI_PIPI_NO_WAITER;
    t->kind = kind;
    t->elem_size = 1;
    t->size = size;
    t->chunk = chunk;
    t->nchunks = (size + chunk - 1) / chunk;
    t->src = src;
    t->nsrc = nsrc;
    t->dst = dst;
    t->ndst = ndst;
}

/* Owner: a reduction task over whole elements of elem_size bytes. */
static inline void MPIDI_PIPI_task_set_reduce(MPIDI_PIPI_task_t * t, MPIDI_PIPI_reduce_fn_t fn,
                                              const void *arg, int elem_size, char *result)
{
    size_t chunk = t->chunk - t->chunk % (size_t) elem_size;
    t->reduce = fn;
    t->reduce_arg = arg;
    t->elem_size = elem_size;
    t->result = result;
    t->chunk = chunk ? chunk : (size_t) elem_size;
    t->nchunks = (t->size + t->chunk - 1) / t->chunk;
}

static inline size_t MPIDI_PIPI_task_chunks_left(MPIDI_PIPI_task_t * t)
{
    size_t c = __atomic_load_n(&t->claimed, __ATOMIC_RELAXED);
    return c < t->nchunks ? t->nchunks - c : 0;
}

/* Claim the next chunk: its byte range, or 0 when every chunk is taken. */
static inline size_t MPIDI_PIPI_task_claim(MPIDI_PIPI_task_t * t, size_t *off)
{
    if (!MPIDI_PIPI_task_chunks_left(t))
        return 0;
    size_t i = __atomic_fetch_add(&t->claimed, 1, __ATOMIC_RELAXED);
    if (i >= t->nchunks)
        return 0;
    size_t idx = t->reverse ? t->nchunks - 1 - i : i;
    *off = idx * t->chunk;
    return t->size - *off < t->chunk ? t->size - *off : t->chunk;
}

/* The first segment that holds byte off. */
static inline int MPIDI_PIPI_seg_find(const MPIDI_PIPI_seg_t * s, int n, size_t off)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s[mid].end > off)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static inline char *MPIDI_PIPI_seg_addr(const MPIDI_PIPI_seg_t * s, int i, size_t off)
{
    size_t start = i ? s[i - 1].end : 0;
    return s[i].base + (off - start);
}

/* Copy bytes [off, off + len) of the message between two segment lists. */
static inline void MPIDI_PIPI_seg_copy(const MPIDI_PIPI_seg_t * src, int nsrc,
                                       const MPIDI_PIPI_seg_t * dst, int ndst, size_t off,
                                       size_t len, int stream)
{
    int si = MPIDI_PIPI_seg_find(src, nsrc, off), di = MPIDI_PIPI_seg_find(dst, ndst, off);
    while (len) {
        size_t n = len;
        if (src[si].end - off < n)
            n = src[si].end - off;
        if (dst[di].end - off < n)
            n = dst[di].end - off;
        if (stream)
            MPIDI_PIPI_copy_stream(MPIDI_PIPI_seg_addr(dst, di, off),
                                   MPIDI_PIPI_seg_addr(src, si, off), n);
        else
            memcpy(MPIDI_PIPI_seg_addr(dst, di, off), MPIDI_PIPI_seg_addr(src, si, off), n);
        off += n;
        len -= n;
        if (off == src[si].end)
            si++;
        if (off == dst[di].end)
            di++;
    }
}

/* Run one claimed chunk's work; not yet counted done. */
static inline void MPIDI_PIPI_task_do(MPIDI_PIPI_task_t * t, size_t off, size_t len)
{
    switch (t->kind) {
        case MPIDI_PIPI_TASK_COPY:
            MPIDI_PIPI_seg_copy(t->src, t->nsrc, t->dst, t->ndst, off, len, t->stream);
            break;
        case MPIDI_PIPI_TASK_GET_ACC:
            memcpy(t->result + off, t->dst[0].base + off, len);
            /* fall through */
        case MPIDI_PIPI_TASK_ACC:
            t->reduce(t->src[0].base + off, t->dst[0].base + off, len, t->reduce_arg);
            break;
    }
}

/* Count a chunk done: the owner may unpublish t (on its stack) as soon as
 * every chunk is, so a worker touches t afterwards only while it holds
 * another claimed chunk. */
static inline void MPIDI_PIPI_task_done(MPIDI_PIPI_task_t * t, size_t len)
{
    __atomic_fetch_add(&t->done, len, __ATOMIC_RELEASE);
}

/* Run one claimed chunk and count it done (the last access to t). */
static inline void MPIDI_PIPI_task_run(MPIDI_PIPI_task_t * t, size_t off, size_t len)
{
    MPIDI_PIPI_task_do(t, off, len);
    MPIDI_PIPI_task_done(t, len);
}

/* Owner: run chunks until none is left; returns the chunks it ran. */
static inline size_t MPIDI_PIPI_task_work(MPIDI_PIPI_task_t * t)
{
    size_t off, len, chunks = 0;
    while ((len = MPIDI_PIPI_task_claim(t, &off))) {
        MPIDI_PIPI_task_run(t, off, len);
        chunks++;
    }
    return chunks;
}

/* Owner, after its own MPIDI_PIPI_task_work: wait for the chunks workers
 * still run (each at most one chunk long).  Afterwards every byte is in
 * place and visible here. */
static inline void MPIDI_PIPI_task_wait(MPIDI_PIPI_task_t * t)
{
    unsigned spins = 0;
    while (__atomic_load_n(&t->done, __ATOMIC_ACQUIRE) < t->size)
        cx_spin_pause(&spins);  /* yields now and then: the worker may be descheduled */
}

/* Owner: make a task visible to workers (its fields are final by now). */
static inline void MPIDI_PIPI_taskq_publish(MPIDI_PIPI_taskq_t * q, MPIDI_PIPI_task_t * t)
{
    cx_tas_acquire(&q->lock);
    t->prev = NULL;
    t->next = q->head;
    if (q->head)
        q->head->prev = t;
    __atomic_store_n(&q->head, t, __ATOMIC_RELEASE);
    cx_tas_release(&q->lock);
}

/* Owner, after MPIDI_PIPI_task_wait: no worker can reach t afterwards. */
static inline void MPIDI_PIPI_taskq_unpublish(MPIDI_PIPI_taskq_t * q, MPIDI_PIPI_task_t * t)
{
    cx_tas_acquire(&q->lock);
    if (t->prev)
        t->prev->next = t->next;
    else
        __atomic_store_n(&q->head, t->next, __ATOMIC_RELAXED);
    if (t->next)
        t->next->prev = t->prev;
    cx_tas_release(&q->lock);
}

static inline int MPIDI_PIPI_taskq_empty(MPIDI_PIPI_taskq_t * q)
{
    return !__atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
}

/* Worker me (what its wait is known by, or MPIDI_PIPI_NO_WAITER): run one
 * chunk of the first task of q with at least min_left chunks unclaimed, or,
 * when me is that task's waiter, every chunk of it it can claim.  Returns
 * the bytes run, 0 if there was none (or another worker held the queue:
 * one victim per attempt, so never wait); *chunks (if not NULL) gets the
 * number of chunks. */
static inline size_t MPIDI_PIPI_taskq_steal(MPIDI_PIPI_taskq_t * q, size_t min_left, int me,
                                            size_t *chunks)
{
    MPIDI_PIPI_task_t *t;
    size_t off = 0, len = 0, bytes = 0, n = 0;

    if (MPIDI_PIPI_taskq_empty(q) || !cx_tas_tryacquire(&q->lock))
        return 0;
    for (t = q->head; t; t = t->next)
        if (MPIDI_PIPI_task_chunks_left(t) >= min_left && (len = MPIDI_PIPI_task_claim(t, &off)))
            break;
    cx_tas_release(&q->lock);
    while (len) {
        size_t next_off = 0, next = 0;
        MPIDI_PIPI_task_do(t, off, len);
        /* the next claim before this chunk counts done keeps t alive */
        if (me != MPIDI_PIPI_NO_WAITER && t->waiter == me &&
            MPIDI_PIPI_task_chunks_left(t) >= min_left)
            next = MPIDI_PIPI_task_claim(t, &next_off);
        MPIDI_PIPI_task_done(t, len);
        bytes += len;
        n++;
        off = next_off;
        len = next;
    }
    if (chunks)
        *chunks = n;
    return bytes;
}

#endif /* PIP_STEAL_H_INCLUDED */
