/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Unit test of pip_win_reach.h (no MPI): which windows get direct access
 * between PiP tasks, on made-up tables of address spaces, read through a
 * stride as ipc_win.c's exchanged table is.
 */
#include "pip_win_reach.h"
#include <stdio.h>

/* ipc_win.c's table entry: other fields around the PiP part */
typedef struct {
    long size;
    int disp_unit;
    MPIDI_PIP_win_info_t pip;
    char pad[24];
} entry_t;

static int errors;

/* spaces[i]: the process id of rank i's host, 0 for a rank that is no task */
static void check(const char *what, const unsigned *spaces, int n, MPIDI_PIP_win_reach_t want)
{
    entry_t t[32];
    for (int i = 0; i < n; i++) {
        t[i].size = 4096;
        t[i].disp_unit = 1;
        t[i].pip.space.tgid = spaces[i];
        t[i].pip.space.pidns = 4026531836u;
        t[i].pip.base = &t[i];
    }
    MPIDI_PIP_win_reach_t got = MPIDI_PIP_win_reach(&t[0].pip, sizeof(entry_t), n);
    if (got != want) {
        printf("FAIL %s: reach %d, expected %d\n", what, (int) got, (int) want);
        errors++;
    }
}

int main(void)
{
    const unsigned one[] = { 7 }, pair[] = { 7, 7 }, lone_tasks[] = { 7, 8, 9 };
    const unsigned mpmd[] = { 7, 7, 8, 8 }, hosts_15_1[16] = {
        7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8
    };
    const unsigned processes[] = { 0, 0, 0 }, mixed[] = { 0, 7, 0, 7 }, last_pair[] =
        { 5, 6, 9, 9 };
    check("one task alone", one, 1, MPIDI_PIP_WIN_ALL);
    check("two tasks of one host", pair, 2, MPIDI_PIP_WIN_ALL);
    check("16 ranks, hosts of 15 and 1", hosts_15_1, 16, MPIDI_PIP_WIN_SOME);
    check("MPMD, two hosts of 2", mpmd, 4, MPIDI_PIP_WIN_SOME);
    check("a pair at the end", last_pair, 4, MPIDI_PIP_WIN_SOME);
    check("a PiP pair among processes", mixed, 4, MPIDI_PIP_WIN_SOME);
    check("three hosts of one task", lone_tasks, 3, MPIDI_PIP_WIN_NONE);
    check("processes (no PiP)", processes, 3, MPIDI_PIP_WIN_NONE);
    check("no ranks", one, 0, MPIDI_PIP_WIN_NONE);

    /* the same tgid in another PID namespace is another process */
    entry_t t[2] = { {.pip = {{7, 1}, 0}}, {.pip = {{7, 2}, 0}} };
    if (MPIDI_PIP_win_reach(&t[0].pip, sizeof(entry_t), 2) != MPIDI_PIP_WIN_NONE) {
        printf("FAIL: one tgid in two PID namespaces counted as one process\n");
        errors++;
    }
    if (!errors)
        printf("No Errors\n");
    return errors != 0;
}
