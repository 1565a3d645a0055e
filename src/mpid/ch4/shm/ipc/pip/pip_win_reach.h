/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX: which local peers of a created or dynamic window a PiP task
 * accesses directly, decided from the table every rank of the node
 * exchanges at window creation.  No MPI in here (test/unit/pipsteal's
 * test_win_reach drives it); the window code is pip_win.c.
 */
#ifndef PIP_WIN_REACH_H_INCLUDED
#define PIP_WIN_REACH_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "pip_pre.h"

/* What each rank publishes at window creation. */
typedef struct {
    MPIDI_PIP_space_t space;    /* whose address space base is in; zero if not a PiP task */
    void *base;
} MPIDI_PIP_win_info_t;

typedef enum {
    MPIDI_PIP_WIN_NONE,         /* no two local ranks share a process: MPICH's own choice */
    MPIDI_PIP_WIN_SOME,         /* peers in one's own process directly, the others not */
    MPIDI_PIP_WIN_ALL           /* every local rank is a task of one process */
} MPIDI_PIP_win_reach_t;

static inline bool MPIDI_PIP_same_space(const MPIDI_PIP_space_t * a, const MPIDI_PIP_space_t * b)
{
    return a->tgid != 0 && a->tgid == b->tgid && a->pidns == b->pidns;
}

/* Over the exchanged table (n entries, stride bytes apart from first).
 * It depends on the table only, so every rank decides alike, which the
 * collective shared-memory setup after it needs. */
static inline MPIDI_PIP_win_reach_t MPIDI_PIP_win_reach(const MPIDI_PIP_win_info_t * first,
                                                        size_t stride, int n)
{
#define MPIDI_PIPI_INFO(i_) \
    ((const MPIDI_PIP_win_info_t *) ((const char *) first + (size_t) (i_) * stride))
    bool all = n > 0 && MPIDI_PIPI_INFO(0)->space.tgid != 0, some = false;
    for (int i = 1; i < n && all; i++)
        all = MPIDI_PIP_same_space(&MPIDI_PIPI_INFO(i)->space, &MPIDI_PIPI_INFO(0)->space);
    if (all)
        return MPIDI_PIP_WIN_ALL;
    for (int i = 0; i < n && !some; i++)
        for (int j = i + 1; j < n && !some; j++)
            some = MPIDI_PIP_same_space(&MPIDI_PIPI_INFO(i)->space, &MPIDI_PIPI_INFO(j)->space);
#undef MPIDI_PIPI_INFO
    return some ? MPIDI_PIP_WIN_SOME : MPIDI_PIP_WIN_NONE;
}

#endif /* PIP_WIN_REACH_H_INCLUDED */
