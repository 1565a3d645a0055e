/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Unexpected eager messages of every size class (MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE):
 * rank 0 sends ROUNDS x SIZES messages, then a sync message; once rank 1 has
 * the sync message every data message waits in its unexpected queue.  Rank 1
 * then takes them in a shuffled order, some by Irecv, some by Iprobe + Recv,
 * some by Mprobe + Mrecv, and one per round truncated; every payload is
 * checked.  The pvar cx_unexp_small_buffers must have grown by exactly the
 * number of non-empty messages at or below the size limit (the CVAR, read
 * through MPI_T): each took a small cell, every other one a pack buffer.
 * Several rounds make the pools grow past one block and free blocks again.
 */
#include "mpitest.h"

#define ROUNDS 300
#define NSIZES 8
static const int sizes[NSIZES] = { 0, 1, 100, 255, 256, 257, 1000, 4000 };

#define NMSG (ROUNDS * NSIZES)
#define SYNC_TAG (NMSG + 1)

static unsigned char byte_of(int msg, int i)
{
    return (unsigned char) (msg * 31 + i * 7 + 1);
}

/* MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE as the library sees it, or -1. */
static int small_limit(void)
{
    int idx, count, value = -1;
    MPI_T_cvar_handle h;
    if (MPI_T_cvar_get_index("MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE", &idx) != MPI_SUCCESS)
        return -1;
    MPI_T_cvar_handle_alloc(idx, NULL, &h, &count);
    MPI_T_cvar_read(h, &value);
    MPI_T_cvar_handle_free(&h);
    return value;
}

static void check_payload(const unsigned char *buf, int msg, int n)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != byte_of(msg, i)) {
            MT_CHECK(0, "message %d byte %d: got %u, expected %u", msg, i, buf[i], byte_of(msg, i));
            return;
        }
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    static unsigned char buf[NMSG][4000];

    mt_pvar_read("cx_unexp_small_buffers");     /* MPI_T up before the counts */
    int limit = small_limit();
    MT_CHECK(limit >= 0, "MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE not readable through MPI_T");
    MPI_Barrier(MPI_COMM_WORLD);
    long long before = mt_pvar_read("cx_unexp_small_buffers");

    if (rank == 0) {
        for (int m = 0; m < NMSG; m++) {
            int n = sizes[m % NSIZES];
            for (int i = 0; i < n; i++)
                buf[m][i] = byte_of(m, i);
            MPI_Send(buf[m], n, MPI_BYTE, 1, m, MPI_COMM_WORLD);
        }
        MPI_Send(NULL, 0, MPI_BYTE, 1, SYNC_TAG, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, SYNC_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        long long small = 0;
        int order[NMSG];
        for (int m = 0; m < NMSG; m++) {
            order[m] = m;
            if (sizes[m % NSIZES] > 0 && sizes[m % NSIZES] <= limit)
                small++;
        }
        srand(7);
        for (int j = NMSG - 1; j > 0; j--) {
            int x = rand() % (j + 1), t = order[j];
            order[j] = order[x];
            order[x] = t;
        }
        MPI_Request reqs[NMSG];
        int nreq = 0, posted[NMSG];
        for (int j = 0; j < NMSG; j++) {
            int m = order[j], n = sizes[m % NSIZES], got;
            MPI_Status st;
            switch (j % 4) {
                case 0:        /* posted now, completed at the end */
                    posted[nreq] = m;
                    MPI_Irecv(buf[m], n, MPI_BYTE, 0, m, MPI_COMM_WORLD, &reqs[nreq++]);
                    break;
                case 1:{
                        /* probed first: the same message is then received */
                        int flag = 0;
                        MPI_Iprobe(0, m, MPI_COMM_WORLD, &flag, &st);
                        MT_CHECK(flag, "message %d not found by MPI_Iprobe", m);
                        MPI_Get_count(&st, MPI_BYTE, &got);
                        MT_CHECK(got == n, "message %d: probed %d bytes, sent %d", m, got, n);
                        MPI_Recv(buf[m], n, MPI_BYTE, 0, m, MPI_COMM_WORLD, &st);
                        check_payload(buf[m], m, n);
                        break;
                    }
                case 2:{
                        /* matched probe */
                        MPI_Message msg;
                        MPI_Mprobe(0, m, MPI_COMM_WORLD, &msg, &st);
                        MPI_Mrecv(buf[m], n, MPI_BYTE, &msg, &st);
                        MPI_Get_count(&st, MPI_BYTE, &got);
                        MT_CHECK(got == n, "message %d: received %d bytes, sent %d", m, got, n);
                        check_payload(buf[m], m, n);
                        break;
                    }
                case 3:{
                        /* truncated where there is something to cut */
                        int room = n > 1 ? n / 2 : n;
                        int rc = MPI_Recv(buf[m], room, MPI_BYTE, 0, m, MPI_COMM_WORLD, &st);
                        int cls = MPI_SUCCESS;
                        if (rc != MPI_SUCCESS)
                            MPI_Error_class(rc, &cls);
                        MT_CHECK(room == n ? rc == MPI_SUCCESS : cls == MPI_ERR_TRUNCATE,
                                 "message %d (%d bytes into %d): error class %d", m, n, room, cls);
                        check_payload(buf[m], m, room);
                        break;
                    }
            }
        }
        static MPI_Status sts[NMSG];
        MPI_Waitall(nreq, reqs, sts);
        for (int r = 0; r < nreq; r++)
            check_payload(buf[posted[r]], posted[r], sizes[posted[r] % NSIZES]);
        long long after = mt_pvar_read("cx_unexp_small_buffers");
        MT_CHECK(after - before == small,
                 "cx_unexp_small_buffers grew by %lld, expected %lld (limit %d bytes)",
                 after - before, small, limit);
        printf("%lld of %d unexpected messages in small buffers (limit %d bytes)\n",
               after - before, NMSG, limit);
    }
    return mt_finish();
}
