/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX constant-time tag matching: the hash tables and the four-structure
 * matcher (see cx_match.h).
 */
#include "cx_match.h"
#include <stdlib.h>
#include <string.h>

/* Bucket counts: primes, each about twice the one before. */
static const size_t primes[] = {
    13, 29, 59, 127, 257, 521, 1049, 2099, 4201, 8419, 16843, 33703, 67409, 134837,
    269683, 539389, 1078787, 2157587, 4315183, 8630387, 17260781, 34521589, 69043189,
    138086407, 276172823, 552345671, 1104691373
};

#define NUM_PRIMES ((int) (sizeof(primes) / sizeof(primes[0])))

/* Unit tests inject allocation failures through these. */
#ifdef CX_MATCH_TEST_ALLOC
void *cx_match_test_malloc(size_t n);
void *cx_match_test_calloc(size_t n, size_t size);
#define malloc cx_match_test_malloc
#define calloc cx_match_test_calloc
#endif

#define list_append cx_match_list_append
#define list_unlink cx_match_list_unlink
#define cell_of cx_match_cell_of

/* ---- keys and hashing ---------------------------------------------------- */

/* The key a pattern or a message has in structure `kind`: the fields that
 * structure does not use are fixed, so equal keys mean the same list. */
static inline cx_match_key_t make_key(int kind, uint32_t ctx, int src, int tag)
{
    cx_match_key_t k = {.ctx = ctx,.src = -1,.tag = -1 };
    if (kind == CX_MATCH_SPEC || kind == CX_MATCH_SRC)
        k.src = src;
    if (kind == CX_MATCH_SPEC || kind == CX_MATCH_TAG)
        k.tag = tag;
    return k;
}

static inline bool key_equal(cx_match_key_t a, cx_match_key_t b)
{
    return a.ctx == b.ctx && a.src == b.src && a.tag == b.tag;
}

/* Multiply-xorshift mixing of the 96-bit key (cheaper than the paper's
 * one-at-a-time hash on a hot path; the bucket count is prime, so the low
 * bits need not be perfect either). */
#ifdef CX_MATCH_TEST_HASH
/* unit tests: a degenerate hash forces collisions */
static inline uint32_t key_hash(cx_match_key_t k)
{
    return CX_MATCH_TEST_HASH(k);
}
#else
static inline uint32_t key_hash(cx_match_key_t k)
{
    uint64_t h = ((uint64_t) k.ctx << 32) ^ (uint32_t) k.src;
    h ^= (uint64_t) (uint32_t) k.tag * 0x9e3779b97f4a7c15ULL;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    return (uint32_t) h;
}
#endif

/* ---- hash table ----------------------------------------------------------- */

static int table_init(cx_match_table_t * t)
{
    memset(t, 0, sizeof(*t));
    t->nbuckets = primes[0];
    t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
    return t->buckets ? 0 : -1;
}

static void free_chain(cx_match_entry_t * e)
{
    while (e) {
        cx_match_entry_t *next = e->chain;
        free(e);
        e = next;
    }
}

static void table_destroy(cx_match_table_t * t)
{
    for (size_t i = 0; i < t->nbuckets; i++)
        free_chain(t->buckets[i]);
    if (t->old) {
        for (size_t i = t->migrate_pos; i < t->nold; i++)
            free_chain(t->old[i]);
        free(t->old);
    }
    free(t->buckets);
    memset(t, 0, sizeof(*t));
}

/* Moves at most CX_MATCH_REHASH_STEP units of work (an entry moved or an
 * empty old bucket passed) from the old array to the new one. */
static void migrate_step(cx_match_table_t * t)
{
    int budget = CX_MATCH_REHASH_STEP;
    while (t->old && budget-- > 0) {
        cx_match_entry_t *e = t->old[t->migrate_pos];
        if (e) {
            t->old[t->migrate_pos] = e->chain;
            size_t i = e->hash % t->nbuckets;
            e->chain = t->buckets[i];
            t->buckets[i] = e;
        } else if (++t->migrate_pos == t->nold) {
            free(t->old);
            t->old = NULL;
            t->nold = t->migrate_pos = 0;
        }
    }
}

/* Past 75% load (and not migrating already): a new array of the next prime
 * size; the old one drains incrementally.  Out of memory: keep chaining. */
static void maybe_grow(cx_matcher_t * m, cx_match_table_t * t)
{
    if (t->old || t->count * 4 < t->nbuckets * 3 || t->prime_index + 1 >= NUM_PRIMES)
        return;
    size_t n = primes[t->prime_index + 1];
    cx_match_entry_t **b = calloc(n, sizeof(*b));
    if (!b)
        return;
    t->old = t->buckets;
    t->nold = t->nbuckets;
    t->migrate_pos = 0;
    t->buckets = b;
    t->nbuckets = n;
    t->prime_index++;
    m->rehashes++;
}

static cx_match_entry_t *chain_find(cx_matcher_t * m, cx_match_entry_t * e,
                                    cx_match_key_t key, uint32_t hash)
{
    size_t walked = 0;
    for (; e; e = e->chain) {
        walked++;
        if (e->hash == hash && key_equal(e->key, key))
            break;
    }
    if (walked > m->max_chain)
        m->max_chain = walked;
    return e;
}

static cx_match_entry_t *table_find(cx_matcher_t * m, cx_match_table_t * t,
                                    cx_match_key_t key, uint32_t hash)
{
    migrate_step(t);
    cx_match_entry_t *e = chain_find(m, t->buckets[hash % t->nbuckets], key, hash);
    if (!e && t->old) {
        size_t i = hash % t->nold;
        if (i >= t->migrate_pos) {      /* buckets below migrate_pos are moved */
            e = chain_find(m, t->old[i], key, hash);
            if (e)
                m->old_hits++;
        }
    }
    return e;
}

static void table_insert(cx_matcher_t * m, cx_match_table_t * t, cx_match_entry_t * e)
{
    maybe_grow(m, t);
    size_t i = e->hash % t->nbuckets;
    e->chain = t->buckets[i];
    t->buckets[i] = e;
    t->count++;
}

static bool unlink_from(cx_match_entry_t ** slot, cx_match_entry_t * e)
{
    for (; *slot; slot = &(*slot)->chain) {
        if (*slot == e) {
            *slot = e->chain;
            return true;
        }
    }
    return false;
}

static void table_remove(cx_match_table_t * t, cx_match_entry_t * e)
{
    migrate_step(t);
    bool found = unlink_from(&t->buckets[e->hash % t->nbuckets], e);
    if (!found && t->old)
        found = unlink_from(&t->old[e->hash % t->nold], e);
    (void) found;       /* an entry in a table is always found */
    t->count--;
}

/* ---- entries ----------------------------------------------------------- */

/* The table's entry for `key`, or NULL.  The entry found last is checked
 * first: a burst with one key (or a message entering its four tables after
 * an equal one) hashes nothing. */
static cx_match_entry_t *entry_lookup(cx_matcher_t * m, int kind, cx_match_key_t key)
{
    cx_match_entry_t *e = m->last[kind];
    if (e && key_equal(e->key, key))
        return e;
    e = table_find(m, &m->table[kind], key, key_hash(key));
    if (e)
        m->last[kind] = e;
    return e;
}

static cx_match_entry_t *entry_get(cx_matcher_t * m, int kind, cx_match_key_t key)
{
    cx_match_entry_t *e = entry_lookup(m, kind, key);
    if (e)
        return e;
    cx_match_table_t *t = &m->table[kind];
    if (m->free_entries) {
        e = m->free_entries;
        m->free_entries = e->chain;
        m->nfree--;
    } else {
        e = malloc(sizeof(*e));
        if (!e)
            return NULL;
    }
    e->key = key;
    e->hash = key_hash(key);
    e->posted.head = e->posted.tail = NULL;
    e->unexp.head = e->unexp.tail = NULL;
    table_insert(m, t, e);
    m->last[kind] = e;
    return e;
}

/* Both lists empty: out of the table, onto the free list.  Reclaimed
 * entries are kept for reuse, never given back to malloc before
 * cx_match_destroy: their number is the most entries ever live at once
 * (not the number of keys ever used), and freeing tens of thousands after
 * each drain cost more in malloc than the lookups themselves. */
static void entry_reclaim(cx_matcher_t * m, int kind, cx_match_entry_t * e)
{
    if (e->posted.head || e->unexp.head)
        return;
    table_remove(&m->table[kind], e);
    if (m->last[kind] == e)
        m->last[kind] = NULL;
    e->chain = m->free_entries;
    m->free_entries = e;
    m->nfree++;
}

/* ---- the matcher --------------------------------------------------------- */

int cx_match_init(cx_matcher_t * m, size_t list_max)
{
    memset(m, 0, sizeof(*m));
    if (list_max > UINT32_MAX)
        list_max = UINT32_MAX;  /* longer lists than any hash table would be */
    m->list_max = (uint32_t) list_max;
    m->calm_need = CX_MATCH_CALM_ADDS * list_max;
    m->hashed = (list_max == 0);
    for (int k = 0; k < CX_MATCH_NKINDS; k++) {
        if (table_init(&m->table[k]) != 0) {
            cx_match_destroy(m);
            return -1;
        }
    }
    return 0;
}

void cx_match_destroy(cx_matcher_t * m)
{
    for (int k = 0; k < CX_MATCH_NKINDS; k++)
        table_destroy(&m->table[k]);
    free_chain(m->free_entries);
    memset(m, 0, sizeof(*m));
}

/* A posted receive (key and seq set) enters its entry's list. */
static int post_to_table(cx_matcher_t * m, cx_match_cell_t * cell)
{
    int kind = cx_match_kind(cell->key.src, cell->key.tag);
    cx_match_entry_t *e = entry_get(m, kind, make_key(kind, cell->key.ctx, cell->key.src,
                                                      cell->key.tag));
    if (!e)
        return -1;
    cell->entry[0] = e;
    list_append(&e->posted, &cell->link[0]);
    return 0;
}

/* An unexpected message (key set) enters all four structures, or none. */
static int unexp_to_tables(cx_matcher_t * m, cx_match_cell_t * cell)
{
    cx_match_key_t key = cell->key;
    for (int k = 0; k < CX_MATCH_NKINDS; k++) {
        cx_match_entry_t *e = entry_get(m, k, make_key(k, key.ctx, key.src, key.tag));
        if (!e) {
            while (--k >= 0) {
                list_unlink(&cell->entry[k]->unexp, &cell->link[k]);
                entry_reclaim(m, k, cell->entry[k]);
                cell->entry[k] = NULL;
            }
            return -1;
        }
        cell->entry[k] = e;
        list_append(&e->unexp, &cell->link[k]);
    }
    return 0;
}

/* Short mode -> tables.  Entries for every element are reserved first, so
 * the move itself cannot fail; without memory for them the matcher stays in
 * short mode (slower, still correct) and -1 is returned. */
static int move_to_tables(cx_matcher_t * m)
{
    size_t need = m->nposted_all + CX_MATCH_NKINDS * m->nunexp;
    while (m->nfree < need) {
        cx_match_entry_t *e = malloc(sizeof(*e));
        if (!e)
            return -1;
        e->chain = m->free_entries;
        m->free_entries = e;
        m->nfree++;
    }
    cx_match_link_t *l = m->short_posted.head, *next;
    m->short_posted.head = m->short_posted.tail = NULL;
    for (; l; l = next) {       /* posting order: each entry's list stays sorted */
        next = l->next;
        cx_match_cell_t *c = cell_of(l, 0);
        c->seq = m->next_seq++;
        m->nposted[cx_match_kind(c->key.src, c->key.tag)]++;
        post_to_table(m, c);
    }
    l = m->short_unexp.head;
    m->short_unexp.head = m->short_unexp.tail = NULL;
    for (; l; l = next) {       /* arrival order */
        next = l->next;
        unexp_to_tables(m, cell_of(l, 0));
    }
    m->short_wild = 0;
    m->hashed = true;
    m->calm = 0;
    m->migrations++;
    return 0;
}

/* Both queues empty after a calm stretch: back to short mode (the tables
 * hold no entry now). */
static inline void maybe_leave_tables(cx_matcher_t * m)
{
    if (m->list_max && !m->nposted_all && !m->nunexp && m->calm >= m->calm_need)
        m->hashed = false;
}

/* After a post or an arrival in the tables. */
static inline void note_calm(cx_matcher_t * m)
{
    if (m->nposted_all > m->list_max || m->nunexp > m->list_max)
        m->calm = 0;
    else
        m->calm++;
}

/* The call that would make a short-mode queue longer than list_max moves
 * everything to the tables first.  true when the element goes into the
 * tables (false: the move failed for lack of memory, stay in short mode). */
static bool use_tables(cx_matcher_t * m)
{
    if (!m->hashed)
        move_to_tables(m);
    return m->hashed;
}

int cx_match_post_tables(cx_matcher_t * m, cx_match_cell_t * cell, uint32_t ctx, int src, int tag)
{
    cell->key = (cx_match_key_t) {
    .ctx = ctx,.src = src,.tag = tag};
    if (use_tables(m)) {
        if (post_to_table(m, cell))
            return -1;
        cell->seq = m->next_seq++;
        m->nposted[cx_match_kind(src, tag)]++;
    } else {
        list_append(&m->short_posted, &cell->link[0]);
        m->short_wild += cx_match_has_wildcard(src, tag);
    }
    cell->state = CX_MATCH_CELL_POSTED;
    m->nposted_all++;
    note_calm(m);
    return 0;
}

cx_match_cell_t *cx_match_posted_find_tables(cx_matcher_t * m, uint32_t ctx, int src, int tag)
{
    cx_match_cell_t *best = NULL;
    for (int k = 0; k < CX_MATCH_NKINDS; k++) {
        if (!m->nposted[k])
            continue;   /* no receive of this class anywhere: no lookup */
        cx_match_entry_t *e = entry_lookup(m, k, make_key(k, ctx, src, tag));
        if (e && e->posted.head) {
            cx_match_cell_t *c = cell_of(e->posted.head, 0);
            if (!best || c->seq < best->seq)
                best = c;
        }
    }
    return best;
}

void cx_match_unpost_tables(cx_matcher_t * m, cx_match_cell_t * cell)
{
    int kind = cx_match_kind(cell->key.src, cell->key.tag);
    cx_match_entry_t *e = cell->entry[0];
    list_unlink(&e->posted, &cell->link[0]);
    cell->entry[0] = NULL;
    entry_reclaim(m, kind, e);
    cell->state = CX_MATCH_CELL_NONE;
    m->nposted[kind]--;
    m->nposted_all--;
    maybe_leave_tables(m);
}

int cx_match_unexp_add_tables(cx_matcher_t * m, cx_match_cell_t * cell, uint32_t ctx, int src,
                              int tag)
{
    cell->key = (cx_match_key_t) {
    .ctx = ctx,.src = src,.tag = tag};
    if (use_tables(m)) {
        if (unexp_to_tables(m, cell))
            return -1;  /* out of memory: nothing half-linked */
    } else {
        list_append(&m->short_unexp, &cell->link[0]);
    }
    cell->state = CX_MATCH_CELL_UNEXP;
    m->nunexp++;
    note_calm(m);
    return 0;
}

cx_match_cell_t *cx_match_unexp_find_tables(cx_matcher_t * m, uint32_t ctx, int src, int tag)
{
    int kind = cx_match_kind(src, tag);
    cx_match_entry_t *e = entry_lookup(m, kind, make_key(kind, ctx, src, tag));
    return (e && e->unexp.head) ? cell_of(e->unexp.head, kind) : NULL;
}

void cx_match_unexp_remove_tables(cx_matcher_t * m, cx_match_cell_t * cell)
{
    for (int k = 0; k < CX_MATCH_NKINDS; k++) {
        cx_match_entry_t *e = cell->entry[k];
        list_unlink(&e->unexp, &cell->link[k]);
        cell->entry[k] = NULL;
        entry_reclaim(m, k, e);
    }
    cell->state = CX_MATCH_CELL_NONE;
    m->nunexp--;
    maybe_leave_tables(m);
}

void cx_match_get_stats(const cx_matcher_t * m, cx_match_stats_t * s)
{
    memset(s, 0, sizeof(*s));
    s->posted = m->nposted_all;
    for (int k = 0; k < CX_MATCH_NKINDS; k++) {
        s->entries += m->table[k].count;
        s->buckets += m->table[k].nbuckets + m->table[k].nold;
    }
    s->unexp = m->nunexp;
    s->free_entries = m->nfree;
    s->migrations = m->migrations;
    s->hashed = m->hashed;
    s->max_chain = m->max_chain;
    s->rehashes = m->rehashes;
    s->old_hits = m->old_hits;
}
