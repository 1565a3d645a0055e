/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Unit test of PiP-MColl's SIMD reductions (pip_mcoll_vec.h), no MPI: for
 * every type and operation, lengths 0 to 100 at every misalignment of
 * either buffer, the result equals a scalar loop's bit for bit, and no
 * byte outside the n elements changes.
 *   test_mcoll_vec
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include "pip_mcoll_vec.h"

static int failures;

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
            if (++failures > 10) exit(1); } } while (0)

/* the reference, kept scalar */
#define SCALAR(T, OP) do { const T *a = (const T *) in; T *b = (T *) acc; \
        for (size_t i = 0; i < n; i++) { volatile T r = a[i] OP b[i]; b[i] = r; } } while (0)

static void scalar(int type, int op, const void *in, void *acc, size_t n)
{
    if (op == MPIDI_PIP_VEC_SUM) {
        switch (type) {
            case MPIDI_PIP_VEC_F32: SCALAR(float, +); break;
            case MPIDI_PIP_VEC_F64: SCALAR(double, +); break;
            case MPIDI_PIP_VEC_U32: SCALAR(uint32_t, +); break;
            case MPIDI_PIP_VEC_U64: SCALAR(uint64_t, +); break;
        }
    } else {
        switch (type) {
            case MPIDI_PIP_VEC_F32: SCALAR(float, *); break;
            case MPIDI_PIP_VEC_F64: SCALAR(double, *); break;
            case MPIDI_PIP_VEC_U32: SCALAR(uint32_t, *); break;
            case MPIDI_PIP_VEC_U64: SCALAR(uint64_t, *); break;
        }
    }
}

static void fill(unsigned char *p, size_t bytes, int type, unsigned *seed)
{
    for (size_t i = 0; i < bytes; i++)
        p[i] = (unsigned char) rand_r(seed);
    /* floating point: finite values of moderate size, some negative */
    if (type == MPIDI_PIP_VEC_F32)
        for (size_t i = 0; i + 4 <= bytes; i += 4) {
            float f = (float) ((int) (rand_r(seed) % 20001) - 10000) / 37.0f;
            memcpy(p + i, &f, 4);
        }
    if (type == MPIDI_PIP_VEC_F64)
        for (size_t i = 0; i + 8 <= bytes; i += 8) {
            double d = (double) ((int) (rand_r(seed) % 20001) - 10000) / 37.0;
            memcpy(p + i, &d, 8);
        }
}

int main(void)
{
    static const size_t esz[] = { 4, 8, 4, 8 };
    unsigned seed = 12345;
    enum { MAXN = 100, PAD = 64 };
    unsigned char in[MAXN * 8 + 2 * PAD], acc[MAXN * 8 + 2 * PAD], ref[MAXN * 8 + 2 * PAD];

    for (int type = 0; type < 4; type++)
        for (int op = 0; op < 2; op++)
            for (size_t n = 0; n <= MAXN; n++)
                for (size_t ib = 0; ib < 16; ib += esz[type]) {
                        fill(in, sizeof(in), type, &seed);
                        fill(acc, sizeof(acc), type, &seed);
                        memcpy(ref, acc, sizeof(acc));
                        /* the two buffers misaligned differently */
                        void *pin = in + PAD + (16 - ib) % 16, *pacc = acc + PAD + ib;
                        CHECK(MPIDI_PIP_mcoll_vec(type, op, pin, pacc, n) == 1,
                              "type %d op %d not handled", type, op);
                        scalar(type, op, pin, ref + PAD + ib, n);
                        CHECK(!memcmp(acc, ref, sizeof(acc)),
                              "type %d op %d n %zu offset %zu: differs from the scalar loop",
                              type, op, n, ib);
                    }
    CHECK(MPIDI_PIP_mcoll_vec(MPIDI_PIP_VEC_F32, 7, in, acc, 4) == 0, "unknown op handled");
    CHECK(MPIDI_PIP_mcoll_vec(9, MPIDI_PIP_VEC_SUM, in, acc, 4) == 0, "unknown type handled");
    if (failures)
        return 1;
    printf("vec: 4 types x 2 operations, lengths 0 to %d at 16-byte misalignments: "
           "bit-identical to scalar loops\n", MAXN);
    return 0;
}
