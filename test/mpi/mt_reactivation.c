/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Selective reactivation (models hclhub-usc and hclhub-ksc, and any model
 * with MPIR_CVAR_CH4_CX_WAIT=usc|ksc, or auto once more threads wait than
 * its limit; the others must pass too, with the pvars showing nothing):
 *   1. NT threads of rank 1 block in MPI_Wait, one receive each, arriving one
 *      after another (the first becomes the polling server); in even rounds
 *      rank 0 sends in the reverse order, so the waiters' requests complete
 *      while another thread polls;
 *   2. in odd rounds the server's own message comes first while the others
 *      still wait: the role passes on (a forced wake-up under usc; under ksc
 *      a waiter whose sleep times out takes it) and the rest still complete;
 *   3. one more thread blocks in MPI_Waitall on two receives whose messages
 *      come far apart: a partial completion must neither wake it for good
 *      nor lose it (notes: "Waitall losing its server");
 *   4. MPI's progress rule: a thread blocked in MPI_Recv from its own rank
 *      completes when another thread sends it the message later.
 * Every receive checks its data; a lost wake-up hangs and the time limit of
 * the test runner reports it.  Under a reactivation model the MPI_T pvars
 * cx_server_elections and cx_counted_wakeups must be positive.
 */
#include "mpitest.h"
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#define NT 4
#define ROUNDS 4
#define TAG_ALL 100

static int rank;

typedef struct {
    int id;
    int round;
} arg_t;

static void *wait_one(void *p)
{
    arg_t *a = p;
    int got = -1;
    MPI_Request r;
    usleep(20000 * a->id);      /* arrive in id order: 0 serves, the rest wait in FIFO */
    MPI_Irecv(&got, 1, MPI_INT, 0, a->id, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MT_CHECK(got == 1000 * a->round + a->id, "round %d thread %d received %d", a->round, a->id,
             got);
    return NULL;
}

static void *wait_all(void *p)
{
    arg_t *a = p;
    int got[2] = { -1, -1 };
    MPI_Request r[2];
    usleep(20000 * a->id);      /* arrives last: a waiter, not the server */
    MPI_Irecv(&got[0], 1, MPI_INT, 0, TAG_ALL, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&got[1], 1, MPI_INT, 0, TAG_ALL + 1, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    MT_CHECK(got[0] == 1000 * a->round + TAG_ALL && got[1] == 1000 * a->round + TAG_ALL + 1,
             "round %d waitall received %d %d", a->round, got[0], got[1]);
    return NULL;
}

static void *send_self_later(void *p)
{
    int v = 77;
    usleep(50000);      /* the receiver is blocked by now, perhaps as the server */
    MPI_Send(&v, 1, MPI_INT, rank, 7, MPI_COMM_WORLD);
    return NULL;
}

/* How blocked threads wait here (doc/user/thread-safety.md, "How blocked threads wait"). */
static const char *expected_wait(void)
{
    const char *w = getenv("MPIR_CVAR_CH4_CX_WAIT");
    if (w && *w)
        return w;
    if (!strcmp(mt_model(), "lockq"))
        return "auto";
    if (!strcmp(mt_model(), "hclhub-usc"))
        return "usc";
    if (!strcmp(mt_model(), "hclhub-ksc"))
        return "ksc";
    return "poll";
}

static void send_val(int round, int tag)
{
    int v = 1000 * round + tag;
    MPI_Send(&v, 1, MPI_INT, 1, tag, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);

    for (int round = 0; round < ROUNDS; round++) {
        if (rank == 1) {
            pthread_t t[NT + 1];
            arg_t a[NT + 1];
            for (int i = 0; i < NT; i++) {
                a[i] = (arg_t) {
                .id = i,.round = round};
                pthread_create(&t[i], NULL, wait_one, &a[i]);
            }
            a[NT] = (arg_t) {
            .id = NT,.round = round};
            pthread_create(&t[NT], NULL, wait_all, &a[NT]);
            MPI_Barrier(MPI_COMM_WORLD);        /* the threads are (about to be) waiting */
            for (int i = 0; i <= NT; i++)
                pthread_join(t[i], NULL);
        } else if (rank == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            usleep(20000 * NT + 50000); /* every receiver is blocked by now */
            send_val(round, TAG_ALL);   /* half of the Waitall */
            for (int k = 0; k < NT; k++) {
                /* even rounds: the waiters first, the server last; odd: the reverse */
                int i = (round % 2 == 0) ? NT - 1 - k : k;
                usleep(10000);
                send_val(round, i);
            }
            usleep(10000);
            send_val(round, TAG_ALL + 1);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* the progress rule, on each rank: receive from self, sent later */
    {
        pthread_t t;
        int got = -1;
        pthread_create(&t, NULL, send_self_later, NULL);
        MPI_Recv(&got, 1, MPI_INT, rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        pthread_join(t, NULL);
        MT_CHECK(got == 77, "self receive got %d", got);
    }

    if (rank == 1) {
        long long elections = mt_pvar_read("cx_server_elections");
        long long counted = mt_pvar_read("cx_counted_wakeups");
        long long forced = mt_pvar_read("cx_forced_wakeups");
        long long timeouts = mt_pvar_read("cx_handover_timeouts");
        printf("# %s: cx_server_elections %lld, cx_counted_wakeups %lld, cx_forced_wakeups %lld, "
               "cx_handover_timeouts %lld\n", mt_model(), elections, counted, forced, timeouts);
        const char *wait = expected_wait();
        if (!strcmp(wait, "usc") || !strcmp(wait, "ksc")) {
            MT_CHECK(elections >= ROUNDS, "%lld server elections in %d rounds", elections, ROUNDS);
            MT_CHECK(counted >= 1, "no waiter was woken by its completion (%lld)", counted);
            /* usc: a leaving server wakes the oldest waiter; ksc: it wakes
             * nobody, and a waiter takes the role when its sleep times out */
            if (!strcmp(wait, "usc"))
                MT_CHECK(forced >= 1, "the server role never passed to a waiter (%lld)", forced);
            else
                MT_CHECK(timeouts >= 1, "no waiter looked for the server role by itself (%lld)",
                         timeouts);
        } else if (!strcmp(wait, "auto") && NT + 1 > mt_auto_limit()) {
            /* more threads wait than poll under auto: it must reactivate */
            MT_CHECK(elections >= 1 && counted >= 1,
                     "auto with %d waiting threads, limit %d: %lld elections, %lld counted wake-ups",
                     NT + 1, mt_auto_limit(), elections, counted);
        } else {
            MT_CHECK(elections == 0 && counted == 0 && forced == 0 && timeouts == 0,
                     "reactivation acted under model %s, wait %s", mt_model(), wait);
        }
    }
    return mt_finish();
}
