/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: per-thread cache of 64-byte queue-lock
 * nodes (MCS, CLH). Nodes are never returned to the system (CLH's try-lock may
 * read a node being recycled); a thread's free list moves to a process-wide pool
 * when it exits. Header-only: each translation unit has its own cache, which is
 * harmless. Design: doc/design/vci-locks.md.
 */
#ifndef CX_NODE_CACHE_H_INCLUDED
#define CX_NODE_CACHE_H_INCLUDED

#include "cx_sync_common.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CX_NODE_SIZE CX_CACHELINE_SIZE

/* The free-list link lives in the last word of the block, away from the lock
 * state at its start: a CLH tryacquire may still read the state word of a
 * node that its new owner is pushing onto a free list. Lock node types must
 * fit in the first CX_NODE_USABLE bytes. */
#define CX_NODE_USABLE (CX_NODE_SIZE - sizeof(void *))

typedef struct cx_node_link {
    struct cx_node_link *next;
} cx_node_link_t;

static inline cx_node_link_t *cx_node_cache__link(void *node)
{
    return (cx_node_link_t *) ((char *) node + CX_NODE_USABLE);
}

static inline void *cx_node_cache__block(cx_node_link_t * link)
{
    return (char *) link - CX_NODE_USABLE;
}

typedef struct {
    cx_node_link_t *head;
    bool registered;            /* exit destructor installed for this thread */
} cx_node_cache_t;

static _Thread_local cx_node_cache_t cx_node_cache__tls;
static pthread_mutex_t cx_node_cache__pool_mutex = PTHREAD_MUTEX_INITIALIZER;
static cx_node_link_t *cx_node_cache__pool;
static pthread_once_t cx_node_cache__once = PTHREAD_ONCE_INIT;
static pthread_key_t cx_node_cache__key;

/* thread exit: hand the thread's nodes to the pool */
static void cx_node_cache__exit(void *arg)
{
    cx_node_cache_t *c = arg;
    cx_node_link_t *first = c->head, *last = first;
    c->registered = false;
    if (first == NULL)
        return;
    while (last->next != NULL)
        last = last->next;
    pthread_mutex_lock(&cx_node_cache__pool_mutex);
    last->next = cx_node_cache__pool;
    cx_node_cache__pool = first;
    pthread_mutex_unlock(&cx_node_cache__pool_mutex);
    c->head = NULL;
}

static void cx_node_cache__make_key(void)
{
    if (pthread_key_create(&cx_node_cache__key, cx_node_cache__exit) != 0) {
        fprintf(stderr, "cx_node_cache: pthread_key_create failed\n");
        abort();
    }
}

/* slow path: the thread's list is empty */
static void *cx_node_cache__refill(void)
{
    cx_node_cache_t *c = &cx_node_cache__tls;
    void *node = NULL;

    if (!c->registered) {
        pthread_once(&cx_node_cache__once, cx_node_cache__make_key);
        pthread_setspecific(cx_node_cache__key, c);
        c->registered = true;
    }
    pthread_mutex_lock(&cx_node_cache__pool_mutex);
    if (cx_node_cache__pool != NULL) {
        node = cx_node_cache__block(cx_node_cache__pool);
        cx_node_cache__pool = cx_node_cache__pool->next;
    }
    pthread_mutex_unlock(&cx_node_cache__pool_mutex);
    if (node == NULL)
        node = aligned_alloc(CX_CACHELINE_SIZE, CX_NODE_SIZE);
    if (node == NULL) {
        /* lock acquisition has no error path; 64 bytes missing is fatal */
        fprintf(stderr, "cx_node_cache: out of memory\n");
        abort();
    }
    return node;
}

/* A 64-byte, 64-byte-aligned block; contents undefined. */
static inline void *cx_node_cache_get(void)
{
    cx_node_cache_t *c = &cx_node_cache__tls;
    cx_node_link_t *n = c->head;
    if (n != NULL) {
        c->head = n->next;
        return cx_node_cache__block(n);
    }
    return cx_node_cache__refill();
}

/* Only a thread that has taken a node from the cache puts nodes back (the
 * lock protocols guarantee it), so the exit destructor is installed. */
static inline void cx_node_cache_put(void *node)
{
    cx_node_cache_t *c = &cx_node_cache__tls;
    cx_node_link_t *n = cx_node_cache__link(node);
    n->next = c->head;
    c->head = n;
}

/* Give a block to the process-wide pool (cx_clh_destroy: the lock's last
 * node). Not freed: a stale tail pointer of another CLH lock may still be
 * read by a concurrent tryacquire there. */
static inline void cx_node_cache_to_pool(void *node)
{
    cx_node_link_t *n = cx_node_cache__link(node);
    pthread_mutex_lock(&cx_node_cache__pool_mutex);
    n->next = cx_node_cache__pool;
    cx_node_cache__pool = n;
    pthread_mutex_unlock(&cx_node_cache__pool_mutex);
}

#endif /* CX_NODE_CACHE_H_INCLUDED */
