/*
 * MPICH-CX: a PiP single copy shared between its receiver and its sender.
 * No MPI in here, so test/unit/pipshare drives it with plain threads.
 *
 * On one core a large copy runs at that core's memcpy speed, while the
 * sender of a blocking or waited-for send sits in MPI's progress loop with
 * nothing to do.  So for a large contiguous message:
 *   - the sender opens a share (source address) and lists it;
 *   - the receiver, once matched, offers it: destination, size, smallest
 *     chunk, then READY (release);
 *   - the receiver and, from its progress loop, the sender take chunks off
 *     one offset and copy them; a chunk's bytes count as done after its copy;
 *   - the receiver waits until every byte is done, then acknowledges;
 *   - the sender unlinks and frees the share when the acknowledgement
 *     arrives.  Helping happens under the list's lock, and unlinking takes
 *     it too, so a share is never freed while one of its helpers still
 *     reads it.
 * A sender that is not in MPI just never helps: the receiver takes every
 * chunk.  Helpers never wait for anything, so the receiver's wait is at most
 * one chunk copy long.
 *
 * With streaming on (the receiver's choice, MPIR_CVAR_CH4_CX_PIP_SHARE_STREAM)
 * both copiers write the destination with non-temporal stores, which do not
 * need the destination's lines in their cache: writing lines that the other
 * core holds (a buffer it read or sent before) costs several times a plain
 * copy, streaming costs the same whatever the lines' state, at the price of
 * leaving the data in memory (doc/design/pip-single-copy.md).
 *
 * Chunks shrink as the message is used up (guided self-scheduling, each
 * chunk a quarter of what is left: half of a fair share for two copiers),
 * so the copiers start with few large chunks, each costing both sides the
 * offset's cache line, and end with small ones, so that neither waits long
 * for the other's last chunk.
 */
#ifndef PIP_SHARE_H_INCLUDED
#define PIP_SHARE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sched.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#define MPIDI_PIPI_SHARE_OPEN  0
#define MPIDI_PIPI_SHARE_READY 1

typedef struct MPIDI_PIPI_share {
    /* the sender's, set at open */
    const char *src;
    struct MPIDI_PIPI_share *prev, *next;       /* the sender's list */
    /* the receiver's, set before READY and read-only after */
    char *dst;
    size_t size, min_chunk;
    int stream;                 /* copy with non-temporal stores */
    int state;
    /* bytes taken and bytes copied: both sides write them, so a line apart */
    size_t taken __attribute__((aligned(64)));
    size_t done;
} __attribute__((aligned(64))) MPIDI_PIPI_share_t;

typedef struct {
    MPIDI_PIPI_share_t *head;
    int lock;
} MPIDI_PIPI_share_list_t;

static inline void MPIDI_PIPI_share_init(MPIDI_PIPI_share_t * s, const void *src)
{
    memset(s, 0, sizeof(*s));
    s->src = (const char *) src;
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

/* The next chunk when rem bytes are left: a quarter of them in whole pages,
 * at least min_chunk, and all of them when less than min_chunk would remain. */
static inline size_t MPIDI_PIPI_share_next_chunk(size_t rem, size_t min_chunk)
{
    size_t c = (rem / 4 + 4095) & ~(size_t) 4095;
    if (c < min_chunk)
        c = min_chunk;
    return c >= rem || rem - c < min_chunk ? rem : c;
}

/* Receiver: publish where size bytes go (size may be less than the sender's
 * message when the receive is truncated); min_chunk > 0; stream: both
 * copiers use non-temporal stores. */
static inline void MPIDI_PIPI_share_offer(MPIDI_PIPI_share_t * s, void *dst, size_t size,
                                          size_t min_chunk, int stream)
{
    s->dst = (char *) dst;
    s->size = size;
    s->min_chunk = min_chunk;
    s->stream = stream;
    __atomic_store_n(&s->state, MPIDI_PIPI_SHARE_READY, __ATOMIC_RELEASE);
}

/* Either side: copy chunks until none is left; returns the bytes this call
 * copied and adds the chunks to *chunks.  The helper calls it only once
 * MPIDI_PIPI_share_ready() said so (that load orders the offer before this). */
static inline size_t MPIDI_PIPI_share_work(MPIDI_PIPI_share_t * s, size_t *chunks)
{
    size_t bytes = 0;
    size_t off = __atomic_load_n(&s->taken, __ATOMIC_RELAXED);
    while (off < s->size) {
        size_t len = MPIDI_PIPI_share_next_chunk(s->size - off, s->min_chunk);
        /* on failure off is reloaded: the other side took a chunk */
        if (!__atomic_compare_exchange_n(&s->taken, &off, off + len, 1, __ATOMIC_RELAXED,
                                         __ATOMIC_RELAXED))
            continue;
        if (s->stream)
            MPIDI_PIPI_copy_stream(s->dst + off, s->src + off, len);
        else
            memcpy(s->dst + off, s->src + off, len);
        __atomic_fetch_add(&s->done, len, __ATOMIC_RELEASE);
        bytes += len;
        (*chunks)++;
        off += len;
    }
    return bytes;
}

/* Receiver, after its own MPIDI_PIPI_share_work: wait for chunks a helper is
 * still copying.  Afterwards every byte is in place and visible here. */
static inline void MPIDI_PIPI_share_wait(MPIDI_PIPI_share_t * s)
{
    for (unsigned spins = 0; __atomic_load_n(&s->done, __ATOMIC_ACQUIRE) < s->size; spins++) {
        if (spins >= 1000)
            sched_yield();      /* the helper may have been descheduled */
#if defined(__x86_64__) || defined(__i386__)
        else
            __builtin_ia32_pause();
#endif
    }
}

static inline int MPIDI_PIPI_share_ready(MPIDI_PIPI_share_t * s)
{
    return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == MPIDI_PIPI_SHARE_READY &&
        __atomic_load_n(&s->taken, __ATOMIC_RELAXED) < s->size;
}

static inline int MPIDI_PIPI_share_trylock(MPIDI_PIPI_share_list_t * l)
{
    return !__atomic_exchange_n(&l->lock, 1, __ATOMIC_ACQUIRE);
}

static inline void MPIDI_PIPI_share_lock(MPIDI_PIPI_share_list_t * l)
{
    while (!MPIDI_PIPI_share_trylock(l))
        while (__atomic_load_n(&l->lock, __ATOMIC_RELAXED))
            sched_yield();
}

static inline void MPIDI_PIPI_share_unlock(MPIDI_PIPI_share_list_t * l)
{
    __atomic_store_n(&l->lock, 0, __ATOMIC_RELEASE);
}

/* Sender: list a share opened for a send. */
static inline void MPIDI_PIPI_share_add(MPIDI_PIPI_share_list_t * l, MPIDI_PIPI_share_t * s)
{
    MPIDI_PIPI_share_lock(l);
    s->prev = NULL;
    s->next = l->head;
    if (l->head)
        l->head->prev = s;
    __atomic_store_n(&l->head, s, __ATOMIC_RELAXED);
    MPIDI_PIPI_share_unlock(l);
}

/* Sender, once acknowledged: unlink; the caller may free s afterwards. */
static inline void MPIDI_PIPI_share_remove(MPIDI_PIPI_share_list_t * l, MPIDI_PIPI_share_t * s)
{
    MPIDI_PIPI_share_lock(l);
    if (s->prev)
        s->prev->next = s->next;
    else
        __atomic_store_n(&l->head, s->next, __ATOMIC_RELAXED);
    if (s->next)
        s->next->prev = s->prev;
    MPIDI_PIPI_share_unlock(l);
}

/* Sender, from its progress loop: copy what its receivers offered.  Cheap
 * when nothing is listed; skips if another thread of the sender helps. */
static inline size_t MPIDI_PIPI_share_help(MPIDI_PIPI_share_list_t * l, size_t *chunks)
{
    size_t bytes = 0;
    if (!__atomic_load_n(&l->head, __ATOMIC_RELAXED))
        return 0;
    if (!MPIDI_PIPI_share_trylock(l))
        return 0;
    for (MPIDI_PIPI_share_t * s = l->head; s; s = s->next)
        if (MPIDI_PIPI_share_ready(s))
            bytes += MPIDI_PIPI_share_work(s, chunks);
    MPIDI_PIPI_share_unlock(l);
    return bytes;
}

#endif /* PIP_SHARE_H_INCLUDED */
