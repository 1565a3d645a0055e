/*
 * MPICH-CX constant-time tag matching (A. Denis, "Scalability of the
 * NewMadeleine Communication Library for Large Numbers of MPI Point-to-Point
 * Requests", CCGrid'19, §IV; corrected pseudo-code in shared/notes).
 *
 * One matcher per VCI.  Four structures, each keyed on the communicator's
 * context id:
 *   SPEC  (ctx, source, tag)  fully specified receives
 *   TAG   (ctx, tag)          MPI_ANY_SOURCE receives
 *   SRC   (ctx, source)       MPI_ANY_TAG receives
 *   WILD  (ctx)               MPI_ANY_SOURCE + MPI_ANY_TAG receives
 * Each entry holds an ordered list of posted receives and an ordered list of
 * unexpected messages.  A posted receive sits in exactly one list (its
 * class's); an unexpected message sits in all four through one shared cell,
 * so consuming it unlinks it everywhere in O(1).  Every posted receive gets a
 * 64-bit sequence number when it enters its list; an arriving message takes
 * the lowest-numbered head among its four candidate lists (the oldest
 * matching receive).
 *
 * The cell is embedded in the caller's request object (no allocation per
 * message); entries are created when a list gets its first element and
 * reclaimed when both their lists are empty, so memory follows the number of
 * outstanding requests, not the number of (source, tag) pairs ever used.
 *
 * No MPI dependency (unit-tested standalone): a negative source or tag is a
 * wildcard (MPI_ANY_SOURCE and MPI_ANY_TAG are negative in MPICH).  Not
 * thread-safe: the caller holds the VCI lock.
 */
#ifndef CX_MATCH_H_INCLUDED
#define CX_MATCH_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    int32_t tag;
} cx_match_key_t;

typedef struct cx_match_entry {
    struct cx_match_entry *chain;       /* next in the bucket */
    cx_match_key_t key;
    uint32_t hash;
    cx_match_list_t posted;     /* cells through link[0], ascending seq */
    cx_match_list_t unexp;      /* cells through link[kind], arrival order */
} cx_match_entry_t;

/* Embedded in a request.  Posted: link[0] and entry[0], seq.  Unexpected:
 * link[k] and entry[k] for each structure k. */
typedef struct cx_match_cell {
    cx_match_link_t link[CX_MATCH_NKINDS];
    cx_match_entry_t *entry[CX_MATCH_NKINDS];
    uint64_t seq;
    int state;                  /* CX_MATCH_CELL_* */
    cx_match_key_t key;         /* what it was posted or received with */
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
    size_t buckets;             /* bucket slots in all four tables now */
    size_t max_chain;           /* longest bucket chain a lookup walked */
    uint64_t rehashes;          /* tables grown */
    uint64_t old_hits;          /* lookups found in the array being migrated */
} cx_match_stats_t;

typedef struct cx_matcher {
    cx_match_table_t table[CX_MATCH_NKINDS];
    size_t nposted[CX_MATCH_NKINDS];    /* posted receives per class: skip empty classes */
    size_t nunexp;
    uint64_t next_seq;
    cx_match_entry_t *free_entries;     /* reclaimed entries, reused before malloc */
    size_t nfree;
    size_t max_chain;
    uint64_t rehashes;
    uint64_t old_hits;
} cx_matcher_t;

/* 0 on success, -1 when out of memory. */
int cx_match_init(cx_matcher_t * m);
void cx_match_destroy(cx_matcher_t * m);

/* A receive (source/tag may be wildcards) enters its class's list, behind
 * every earlier receive.  The caller has checked the unexpected messages
 * first (cx_match_unexp_find).  -1 when out of memory (nothing changed). */
int cx_match_post(cx_matcher_t * m, cx_match_cell_t * cell, uint32_t ctx, int src, int tag);

/* An arriving message (concrete source and tag): the oldest posted receive
 * that matches it, or NULL.  Left in its list; cx_match_unpost removes it. */
cx_match_cell_t *cx_match_posted_find(cx_matcher_t * m, uint32_t ctx, int src, int tag);

/* Removes a posted receive (matched, cancelled, or its ANY_SOURCE partner
 * matched elsewhere).  O(1). */
void cx_match_unpost(cx_matcher_t * m, cx_match_cell_t * cell);

/* An arriving message nobody waits for enters all four structures.  -1 when
 * out of memory (nothing changed). */
int cx_match_unexp_add(cx_matcher_t * m, cx_match_cell_t * cell, uint32_t ctx, int src, int tag);

/* A receive or probe pattern (wildcards allowed): the oldest unexpected
 * message it matches, or NULL; left in place (cx_match_unexp_remove). */
cx_match_cell_t *cx_match_unexp_find(cx_matcher_t * m, uint32_t ctx, int src, int tag);

/* Consumes an unexpected message: unlinked from all four lists.  O(1). */
void cx_match_unexp_remove(cx_matcher_t * m, cx_match_cell_t * cell);

void cx_match_get_stats(const cx_matcher_t * m, cx_match_stats_t * s);

/* The structure a pattern belongs to. */
static inline int cx_match_kind(int src, int tag)
{
    if (src >= 0)
        return tag >= 0 ? CX_MATCH_SPEC : CX_MATCH_SRC;
    return tag >= 0 ? CX_MATCH_TAG : CX_MATCH_WILD;
}

#endif /* CX_MATCH_H_INCLUDED */
