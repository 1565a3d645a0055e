/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * mt_msgrate: multithreaded message rate. Thread t of rank 0 sends windows of W
 * nonblocking S-byte messages to thread t of rank 1 (a communicator or tag
 * each), each window acknowledged; aggregate messages per second. --peer self:
 * rank 0's threads send to themselves while rank 1 sleeps (contention without
 * oversubscription). doc/user/benchmarks.md.
 */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    long size;
    double t_start, t_end;      /* written by thread 0 */
    long long instructions;     /* thread 0's timed loop; -1 if not counted */
} run_t;

static void thread_fn(bench_thread_ctx_t * c)
{
    const bench_opts_t *o = c->o;
    run_t *run = c->arg;
    /* Acks use tags above every thread's data tag. */
    int peer = 1 - o->rank, ack_tag = o->threads + c->tag;
    char *buf = bench_alloc((size_t) run->size * (size_t) o->window);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t) o->window);

    int self = !strcmp(o->peer, "self");
    MPI_Request *sreqs = malloc(sizeof(MPI_Request) * (size_t) o->window);
    char *sbuf = self ? bench_alloc((size_t) run->size * (size_t) o->window) : NULL;
    if (self && o->rank == 1) {
        /* asleep outside MPI until rank 0 is done */
        if (c->index == 0) {
            MPI_Request done;
            int flag = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Ibarrier(MPI_COMM_WORLD, &done);
            while (!flag) {
                nanosleep(&(struct timespec) {.tv_nsec = 2000000 }, NULL);
                MPI_Test(&done, &flag, MPI_STATUS_IGNORE);
            }
        }
        goto out;
    }
    if (self)
        peer = o->rank;
    for (int i = -o->warmup; i < o->iters; i++) {
        if (i == 0) {
            /* All threads of both ranks start the timed phase together. */
            bench_thread_barrier(c);
            if (c->index == 0) {
                MPI_Barrier(MPI_COMM_WORLD);
                run->t_start = MPI_Wtime();
            }
            bench_thread_barrier(c);
            if (c->index == 0)
                bench_counters_start();
        }
        for (int w = 0; w < o->window; w++) {
            char *p = buf + (size_t) w * (size_t) run->size;
            if (o->rank == 0 && !self)
                MPI_Isend(p, (int) run->size, MPI_BYTE, peer, c->tag, c->comm, &reqs[w]);
            else
                MPI_Irecv(p, (int) run->size, MPI_BYTE, peer, c->tag, c->comm, &reqs[w]);
        }
        if (self) {
            for (int w = 0; w < o->window; w++)
                MPI_Isend(sbuf + (size_t) w * (size_t) run->size, (int) run->size, MPI_BYTE,
                          peer, c->tag, c->comm, &sreqs[w]);
            MPI_Waitall(o->window, sreqs, MPI_STATUSES_IGNORE);
            MPI_Waitall(o->window, reqs, MPI_STATUSES_IGNORE);
            continue;
        }
        MPI_Waitall(o->window, reqs, MPI_STATUSES_IGNORE);
        if (o->rank == 0)
            MPI_Recv(NULL, 0, MPI_BYTE, peer, ack_tag, c->comm, MPI_STATUS_IGNORE);
        else
            MPI_Send(NULL, 0, MPI_BYTE, peer, ack_tag, c->comm);
    }
    if (c->index == 0)
        run->instructions = bench_counters_stop();
    bench_thread_barrier(c);
    if (c->index == 0)
        run->t_end = MPI_Wtime();
    if (self && c->index == 0) {
        MPI_Request done;
        MPI_Ibarrier(MPI_COMM_WORLD, &done);
        MPI_Wait(&done, MPI_STATUS_IGNORE);
    }
  out:
    free(sbuf);
    free(sreqs);
    free(reqs);
    free(buf);
}

int main(int argc, char **argv)
{
    bench_opts_t o = {.name = "mt_msgrate",.iters = 2000,.warmup = 100,.threads = 1,
        .window = 64,.per_thread_comm = 1,.wildcard = "none",.order = "posted-first",
        .peer = "remote"
    };
    bench_init(&argc, &argv, &o, MPI_THREAD_MULTIPLE);
    int *tag_ub, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    if (flag && 2 * o.threads > *tag_ub)
        bench_fail("--threads %d needs tags up to %d; MPI_TAG_UB is %d", o.threads, 2 * o.threads,
                   *tag_ub);
    if (o.nsizes == 0) {
        o.sizes[o.nsizes++] = 8;
        o.sizes[o.nsizes++] = 64;
    }
    for (int i = 0; i < o.nsizes; i++)
        if ((double) o.sizes[i] * o.window > (double) (1L << 32))
            bench_fail("--sizes x --window: at most 4 GiB of buffers per thread");
    bench_thread_ctx_t *ctx = calloc((size_t) o.threads, sizeof(*ctx));
    char params[160], bcase[96];
    snprintf(params, sizeof(params), "threads=%d window=%d iters=%d warmup=%d %s peer=%s",
             o.threads, o.window, o.iters, o.warmup,
             o.per_thread_comm ? "comm-per-thread" : "tag-per-thread", o.peer);
    snprintf(bcase, sizeof(bcase), "threads=%d window=%d %s%s", o.threads, o.window,
             o.per_thread_comm ? "comm" : "tag", strcmp(o.peer, "self") ? "" : " self");
    bench_print_header(&o, params);
    for (int i = 0; i < o.nsizes; i++) {
        run_t run = {.size = o.sizes[i],.instructions = -1 };
        bench_run_threads(&o, thread_fn, &run, ctx);
        double msgs = (double) o.threads * o.iters * o.window;
        bench_row(&o, bcase, o.sizes[i], "msg_rate", msgs / (run.t_end - run.t_start), "msg/s");
        if (run.instructions >= 0 && o.threads == 1)
            bench_row(&o, bcase, o.sizes[i], "instructions",
                      (double) run.instructions / ((double) o.iters * o.window), "ins/msg");
    }
    free(ctx);
    bench_finalize(&o);
    return 0;
}
