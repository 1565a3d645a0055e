/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX constant-time tag matching (A. Denis, CCGrid'19, §IV): one matcher
 * per VCI, four structures (SPEC, TAG, SRC, WILD) keyed on the context id,
 * an unexpected message in all four through one cell embedded in the request,
 * plain lists while the queues are short (list_max). No MPI dependency: a
 * negative source or tag is a wildcard. Not thread-safe: the caller holds the
 * VCI lock. Design and the paper's errata: doc/design/matching.md.
 */
#ifndef CX_MATCH_H_INCLUDED
#define CX_MATCH_H_INCLUDED

#define CX_MATCH_CALM_ADDS 4

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
    CX_MATCH_SPEC,
    CX_MATCH_TAG,
    CX_MATCH_SRC,
    CX_MATCH_WILD,
    CX_MATCH_NKINDS
};

typedef struct cx_match_link {
    struct cx_match_link *prev, *next;
} cx_match_link_t;

typedef struct {
    cx_match_link_t *head, *tail;
} cx_match_list_t;

typedef struct {
    uint32_t ctx;
    int32_t src;
    int32_t tag;                /* right after src: cx_match_src_tag reads both */
} cx_match_key_t;

_Static_assert(offsetof(cx_match_key_t, tag) == offsetof(cx_match_key_t, src) + sizeof(int32_t),
               "cx_match_src_tag reads src and tag as one 64-bit value");

/* A key's source and tag as one value: the short lists compare a specific
 * pattern with one comparison instead of two. */
static inline uint64_t cx_match_src_tag(const cx_match_key_t * k)
{
    uint64_t v;
    memcpy(&v, &k->src, sizeof(v));
    return v;
}

/* The same value built from a source and a tag in registers.  Not through
 * a key on the stack: two 32-bit stores read back by one 64-bit load defeat
 * the CPU's store forwarding (the load waits for both stores). */
static inline uint64_t cx_match_pack_src_tag(int src, int tag)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (uint64_t) (uint32_t) src << 32 | (uint32_t) tag;
#else
    return (uint64_t) (uint32_t) tag << 32 | (uint32_t) src;
#endif
}

typedef struct cx_match_entry {
    struct cx_match_entry *chain;       /* next in the bucket */
    cx_match_key_t key;
    uint32_t hash;
    cx_match_list_t posted;     /* cells through link[0], ascending seq */
    cx_match_list_t unexp;      /* cells through link[kind], arrival order */
} cx_match_entry_t;

/* Embedded in a request.  Posted: link[0] and entry[0], seq.  Unexpected:
 * link[k] and entry[k] for each structure k.  In short mode only link[0]
 * (and no seq: the list is in posting order).  What a short-mode walk reads
 * (key, state, link[0]) comes first, in 32 bytes, so that it takes one cache
 * line of a queued request rather than two. */
typedef struct cx_match_cell {
    cx_match_key_t key;         /* what it was posted or received with */
    int state;                  /* CX_MATCH_CELL_* */
    cx_match_link_t link[CX_MATCH_NKINDS];
    cx_match_entry_t *entry[CX_MATCH_NKINDS];
    uint64_t seq;
} cx_match_cell_t;

enum {
    CX_MATCH_CELL_NONE,         /* in no list */
    CX_MATCH_CELL_POSTED,
    CX_MATCH_CELL_UNEXP
};

/* Separate chaining, prime bucket counts, grown past 75% load by
 * incremental rehashing: while `old` is set, every table operation moves at
 * most CX_MATCH_REHASH_STEP entries and lookups search both arrays. */
#define CX_MATCH_REHASH_STEP 16

typedef struct {
    cx_match_entry_t **buckets;
    size_t nbuckets;
    size_t count;               /* entries in both arrays */
    cx_match_entry_t **old;     /* being migrated, or NULL */
    size_t nold;
    size_t migrate_pos;         /* old[0 .. migrate_pos) are moved */
    int prime_index;
} cx_match_table_t;

typedef struct {
    size_t posted;              /* posted receives now */
    size_t unexp;               /* unexpected messages now */
    size_t entries;             /* entries in all four tables now */
    size_t free_entries;        /* reclaimed entries kept for reuse */
    size_t buckets;             /* bucket slots in all four tables now */
    size_t max_chain;           /* longest bucket chain a lookup walked */
    uint64_t rehashes;          /* tables grown */
    uint64_t old_hits;          /* lookups found in the array being migrated */
    uint64_t migrations;        /* moves from short mode to the tables */
    bool hashed;                /* the tables are in use now */
} cx_match_stats_t;

typedef struct cx_matcher {
    /* What every short-mode call reads, first and in one cache line (the
     * struct is line-aligned): the queues' heads and lengths and the mode. */
    _Alignas(64) cx_match_list_t short_posted;  /* short mode: cells through link[0],
                                                 * ascending seq */
    cx_match_list_t short_unexp;        /* short mode: cells through link[0], arrival order */
    size_t nposted_all;
    size_t nunexp;
    size_t short_wild;          /* short mode: posted receives with a wildcard (none: an
                                 * arrival compares exactly) */
    uint32_t list_max;          /* short mode while both queues are at most this long */
    bool hashed;                /* false: short mode */
    cx_match_table_t table[CX_MATCH_NKINDS];
    size_t nposted[CX_MATCH_NKINDS];    /* tables: posted receives per class (skip empty classes) */
    uint64_t next_seq;
    size_t calm;                /* tables: posts and arrivals since a queue last
                                 * held more than list_max elements */
    size_t calm_need;           /* calm posts and arrivals before short mode again */
    cx_match_entry_t *last[CX_MATCH_NKINDS];    /* the entry found last per table: bursts
                                                 * with one key skip the hashing */
    uint64_t migrations;
    cx_match_entry_t *free_entries;     /* reclaimed entries, reused before malloc */
    size_t nfree;
    size_t max_chain;
    uint64_t rehashes;
    uint64_t old_hits;
} cx_matcher_t;

_Static_assert(offsetof(cx_matcher_t, hashed) < 64, "short mode's fields share one cache line");

/* 0 on success, -1 when out of memory.  list_max: see "short mode" (at most
 * UINT32_MAX). */
int cx_match_init(cx_matcher_t * m, size_t list_max);

void cx_match_destroy(cx_matcher_t * m);

/* ---- intrusive doubly linked lists (inline: short mode uses them) ---- */

static inline void cx_match_list_append(cx_match_list_t * l, cx_match_link_t * x)
{
    x->next = NULL;
    x->prev = l->tail;
    if (l->tail)
        l->tail->next = x;
    else
        l->head = x;
    l->tail = x;
}

static inline void cx_match_list_unlink(cx_match_list_t * l, cx_match_link_t * x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        l->head = x->next;
    if (x->next)
        x->next->prev = x->prev;
    else
        l->tail = x->prev;
    x->prev = x->next = NULL;
}

static inline cx_match_cell_t *cx_match_cell_of(cx_match_link_t * l, int kind)
{
    return (cx_match_cell_t *) ((char *) (l - kind) - offsetof(cx_match_cell_t, link));
}

/* 1 when the source or the tag is a wildcard (negative), else 0: one OR and
 * one shift, no branch. */
static inline size_t cx_match_has_wildcard(int src, int tag)
{
    return (uint32_t) (src | tag) >> 31;
}

/* The structure a pattern belongs to. */
static inline int cx_match_kind(int src, int tag)
{
    if (src >= 0)
        return tag >= 0 ? CX_MATCH_SPEC : CX_MATCH_SRC;
    return tag >= 0 ? CX_MATCH_TAG : CX_MATCH_WILD;
}

/* Short mode: the first cell of list l whose key is exactly (ctx, src, tag),
 * source and tag compared at once; for patterns and keys without wildcards. */
static inline cx_match_cell_t *cx_match_short_find_exact(const cx_match_list_t * l, uint32_t ctx,
                                                         int src, int tag)
{
    uint64_t st = cx_match_pack_src_tag(src, tag);
    for (cx_match_link_t * x = l->head; x; x = x->next) {
        cx_match_cell_t *c = cx_match_cell_of(x, 0);
        if (cx_match_src_tag(&c->key) == st && c->key.ctx == ctx)
            return c;
    }
    return NULL;
}

/* The table paths (cx_match.c); the calls below take them when the tables
 * are in use, and short mode inline otherwise. */
int cx_match_post_tables(cx_matcher_t * m, cx_match_cell_t * cell, uint32_t ctx, int src, int tag);
cx_match_cell_t *cx_match_posted_find_tables(cx_matcher_t * m, uint32_t ctx, int src, int tag);
void cx_match_unpost_tables(cx_matcher_t * m, cx_match_cell_t * cell);
int cx_match_unexp_add_tables(cx_matcher_t * m, cx_match_cell_t * cell, uint32_t ctx, int src,
                              int tag);
cx_match_cell_t *cx_match_unexp_find_tables(cx_matcher_t * m, uint32_t ctx, int src, int tag);
void cx_match_unexp_remove_tables(cx_matcher_t * m, cx_match_cell_t * cell);

/* A receive (source/tag may be wildcards) enters its class's list, behind
 * every earlier receive.  The caller has checked the unexpected messages
 * first (cx_match_unexp_find).  -1 when out of memory (nothing changed). */
static inline int cx_match_post(cx_matcher_t * m, cx_match_cell_t * cell, uint32_t ctx, int src,
                                int tag)
{
    if (m->hashed || m->nposted_all >= m->list_max)
        return cx_match_post_tables(m, cell, ctx, src, tag);    /* or the move there */
    /* the list order is the posting order: the sequence number and the
     * per-class counts are only given when the cells move to the tables */
    cell->key = (cx_match_key_t) {
    .ctx = ctx,.src = src,.tag = tag};
    cx_match_list_append(&m->short_posted, &cell->link[0]);
    cell->state = CX_MATCH_CELL_POSTED;
    m->nposted_all++;
    m->short_wild += cx_match_has_wildcard(src, tag);
    return 0;
}

/* An arriving message (concrete source and tag): the oldest posted receive
 * that matches it, or NULL.  Left in its list; cx_match_unpost removes it. */
static inline cx_match_cell_t *cx_match_posted_find(cx_matcher_t * m, uint32_t ctx, int src,
                                                    int tag)
{
    if (m->hashed)
        return cx_match_posted_find_tables(m, ctx, src, tag);
    if (!m->short_wild) /* every receive specific */
        return cx_match_short_find_exact(&m->short_posted, ctx, src, tag);
    for (cx_match_link_t * l = m->short_posted.head; l; l = l->next) {
        cx_match_cell_t *c = cx_match_cell_of(l, 0);
        if (c->key.ctx == ctx && (c->key.src < 0 || c->key.src == src) &&
            (c->key.tag < 0 || c->key.tag == tag))
            return c;
    }
    return NULL;
}

/* Removes a posted receive (matched, cancelled, or its ANY_SOURCE partner
 * matched elsewhere).  O(1). */
static inline void cx_match_unpost(cx_matcher_t * m, cx_match_cell_t * cell)
{
    if (m->hashed) {
        cx_match_unpost_tables(m, cell);
        return;
    }
    cx_match_list_unlink(&m->short_posted, &cell->link[0]);
    cell->state = CX_MATCH_CELL_NONE;
    m->nposted_all--;
    m->short_wild -= cx_match_has_wildcard(cell->key.src, cell->key.tag);
}

/* An arriving message nobody waits for enters all four structures.  -1 when
 * out of memory (nothing changed). */
static inline int cx_match_unexp_add(cx_matcher_t * m, cx_match_cell_t * cell, uint32_t ctx,
                                     int src, int tag)
{
    if (m->hashed || m->nunexp >= m->list_max)
        return cx_match_unexp_add_tables(m, cell, ctx, src, tag);
    cell->key = (cx_match_key_t) {
    .ctx = ctx,.src = src,.tag = tag};
    cx_match_list_append(&m->short_unexp, &cell->link[0]);
    cell->state = CX_MATCH_CELL_UNEXP;
    m->nunexp++;
    return 0;
}

/* A receive or probe pattern (wildcards allowed): the oldest unexpected
 * message it matches, or NULL; left in place (cx_match_unexp_remove). */
static inline cx_match_cell_t *cx_match_unexp_find(cx_matcher_t * m, uint32_t ctx, int src, int tag)
{
    if (!m->nunexp)
        return NULL;
    if (m->hashed)
        return cx_match_unexp_find_tables(m, ctx, src, tag);
    if (src >= 0 && tag >= 0)   /* a specific pattern */
        return cx_match_short_find_exact(&m->short_unexp, ctx, src, tag);
    for (cx_match_link_t * l = m->short_unexp.head; l; l = l->next) {
        cx_match_cell_t *c = cx_match_cell_of(l, 0);
        if (c->key.ctx == ctx && (src < 0 || c->key.src == src) && (tag < 0 || c->key.tag == tag))
            return c;
    }
    return NULL;
}

/* Consumes an unexpected message: unlinked from all four lists.  O(1). */
static inline void cx_match_unexp_remove(cx_matcher_t * m, cx_match_cell_t * cell)
{
    if (m->hashed) {
        cx_match_unexp_remove_tables(m, cell);
        return;
    }
    cx_match_list_unlink(&m->short_unexp, &cell->link[0]);
    cell->state = CX_MATCH_CELL_NONE;
    m->nunexp--;
}

void cx_match_get_stats(const cx_matcher_t * m, cx_match_stats_t * s);

#endif /* CX_MATCH_H_INCLUDED */
