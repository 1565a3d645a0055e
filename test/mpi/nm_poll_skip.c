/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Netmod polls skipped while shared memory delivers, or while the netmod is
 * quiet (MPIR_CVAR_CH4_CX_NM_POLL_SKIP, _QUIET): network traffic must keep
 * flowing while shared memory streams and after the netmod was quiet, and
 * the pvars cx_nm_polls_skipped and cx_nm_polls_skipped_quiet must show the
 * skips.
 *
 * Run with 4 ranks split into two pretend nodes (MPIR_CVAR_NUM_CLIQUES=2:
 * ranks 0-1 and 2-3), so 0<->1 and 2<->3 use shared memory and 0<->2 the
 * netmod.  Rank 1 streams STREAM small messages to rank 0, and rank 3 to rank
 * 2, while ranks 0 and 2 ping-pong over the netmod, each ping posted and
 * completed in the same MPI_Waitall calls as the stream's receives; every
 * message's data is checked.  Then ranks 0 and 2 send each other QUIET
 * messages over the netmod, each after its sender slept 2 ms outside MPI,
 * so the receiver meanwhile polls an idle netmod with idle shared memory
 * (longer than the default 1 ms after which the netmod is quiet).  Then
 * rank 0's pvars:
 *   argument "skips":    cx_nm_polls_skipped > 0, and of them
 *                        cx_nm_polls_skipped_quiet > 0 (the default CVARs);
 *   argument "noquiet":  skips, none of them quiet (run with
 *                        MPIR_CVAR_CH4_CX_NM_POLL_QUIET=0);
 *   argument "noskips":  both stay 0 (run with MPIR_CVAR_CH4_CX_NM_POLL_SKIP=0);
 *   argument "nopause":  as "skips" (run with MPIR_CVAR_CH4_CX_NM_POLL_PAUSE=0).
 * And cx_nm_poll_pauses (a pause follows an empty shared-memory poll in a
 * call that skipped the netmod): at most one per skip; positive with "skips"
 * (the quiet phase waits with idle shared memory), 0 with "noskips" and
 * "nopause", unchecked with "noquiet".
 */
#include "mpitest.h"
#include <unistd.h>

#define STREAM 20000
#define WINDOW 64
#define PINGS 200
#define TAG_STREAM 1
#define TAG_PING 2
#define QUIET 20
#define QUIET_SLEEP_US 2000
#define TAG_QUIET 3

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4 || argc != 2 ||
        (strcmp(argv[1], "skips") && strcmp(argv[1], "noquiet") && strcmp(argv[1], "noskips") &&
         strcmp(argv[1], "nopause"))) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: MPIR_CVAR_NUM_CLIQUES=2 mpiexec -n 4 %s skips|noquiet|noskips|nopause\n",
                    argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int streamer = rank == 1 || rank == 3;      /* shared-memory senders */
    int local = rank ^ 1, remote = rank ^ 2;    /* 0<->1, 2<->3; 0<->2 */

    if (streamer) {
        int buf[WINDOW];
        MPI_Request reqs[WINDOW];
        for (int i = 0; i < STREAM; i += WINDOW) {
            int n = STREAM - i < WINDOW ? STREAM - i : WINDOW;
            for (int k = 0; k < n; k++) {
                buf[k] = i + k;
                MPI_Isend(&buf[k], 1, MPI_INT, local, TAG_STREAM, MPI_COMM_WORLD, &reqs[k]);
            }
            MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        }
    } else {
        /* receive the stream in windows; one ping-pong step rides along in
         * each window's MPI_Waitall until all pings are done */
        int buf[WINDOW], ping_out = 0, ping_in = -1, pings = 0;
        MPI_Request reqs[WINDOW + 2];
        for (int i = 0; i < STREAM || pings < PINGS; i += WINDOW) {
            int n = i < STREAM ? (STREAM - i < WINDOW ? STREAM - i : WINDOW) : 0, m = n;
            for (int k = 0; k < n; k++)
                MPI_Irecv(&buf[k], 1, MPI_INT, local, TAG_STREAM, MPI_COMM_WORLD, &reqs[k]);
            if (pings < PINGS) {
                ping_out = rank * 100000 + pings;
                MPI_Irecv(&ping_in, 1, MPI_INT, remote, TAG_PING, MPI_COMM_WORLD, &reqs[m++]);
                MPI_Isend(&ping_out, 1, MPI_INT, remote, TAG_PING, MPI_COMM_WORLD, &reqs[m++]);
            }
            MPI_Waitall(m, reqs, MPI_STATUSES_IGNORE);
            for (int k = 0; k < n; k++)
                MT_CHECK(buf[k] == i + k, "stream message %d carried %d", i + k, buf[k]);
            if (m > n) {
                MT_CHECK(ping_in == remote * 100000 + pings, "ping %d carried %d", pings, ping_in);
                pings++;
            }
        }
    }

    /* quiet: the receiver waits in MPI_Recv while nothing arrives anywhere */
    if (!streamer) {
        for (int r = 0; r < QUIET; r++) {
            int v, sender = r % 2 ? 0 : 2;
            if (rank == sender) {
                usleep(QUIET_SLEEP_US);
                v = rank * 1000 + r;
                MPI_Send(&v, 1, MPI_INT, remote, TAG_QUIET, MPI_COMM_WORLD);
            } else {
                MPI_Recv(&v, 1, MPI_INT, remote, TAG_QUIET, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MT_CHECK(v == remote * 1000 + r, "quiet message %d carried %d", r, v);
            }
        }
    }

    if (rank == 0) {
        long long skipped = mt_pvar_read("cx_nm_polls_skipped");
        long long quiet = mt_pvar_read("cx_nm_polls_skipped_quiet");
        MT_CHECK(skipped >= 0, "no pvar cx_nm_polls_skipped");
        MT_CHECK(quiet >= 0, "no pvar cx_nm_polls_skipped_quiet");
        MT_CHECK(quiet <= skipped, "%lld quiet skips of %lld", quiet, skipped);
        if (!strcmp(argv[1], "noskips"))
            MT_CHECK(skipped == 0, "%lld netmod polls skipped with skipping off", skipped);
        else
            MT_CHECK(skipped > quiet, "no netmod poll skipped while shared memory streamed");
        int quiet_on = !strcmp(argv[1], "skips") || !strcmp(argv[1], "nopause");
        if (quiet_on)
            MT_CHECK(quiet > 0, "no netmod poll skipped while the netmod was quiet");
        else
            MT_CHECK(quiet == 0, "%lld quiet skips with quiet skipping off", quiet);
        long long pauses = mt_pvar_read("cx_nm_poll_pauses");
        MT_CHECK(pauses >= 0, "no pvar cx_nm_poll_pauses");
        MT_CHECK(pauses <= skipped, "%lld pauses after %lld skips", pauses, skipped);
        if (!strcmp(argv[1], "skips"))
            MT_CHECK(pauses > 0, "no pause after an empty poll of idle shared memory");
        else if (strcmp(argv[1], "noquiet"))
            MT_CHECK(pauses == 0, "%lld pauses with %s", pauses, argv[1]);
        printf("netmod polls skipped on rank 0: %lld, %lld of them quiet; %lld pauses\n",
               skipped, quiet, pauses);
    }
    return mt_finish();
}
