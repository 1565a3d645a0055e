/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Unit test of PiP-MColl's SIMD reductions (pip_mcoll_vec.h), no MPI: for
 * every type and operation, in place and into a third buffer, lengths 0 to
 * 100 at every misalignment of each buffer, the result equals a scalar
 * loop's bit for bit, and no byte outside the n elements changes.
 *   test_mcoll_vec
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include "pip_mcoll_vec.h"

static int failures;

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
            if (++failures > 10) exit(1); } } while (0)

/* the reference, kept scalar; narrow integers in a type their products fit */
#define SCALAR(T, W, OP) do { const T *a = (const T *) in; T *b = (T *) acc; \
        for (size_t i = 0; i < n; i++) { volatile T r = (T) ((W) a[i] OP (W) b[i]); b[i] = r; } \
    } while (0)
#define SCALAR_TYPES(OP) switch (type) { \
        case MPIDI_PIP_VEC_F32: SCALAR(float, float, OP); break; \
        case MPIDI_PIP_VEC_F64: SCALAR(double, double, OP); break; \
        case MPIDI_PIP_VEC_U32: SCALAR(uint32_t, uint64_t, OP); break; \
        case MPIDI_PIP_VEC_U64: SCALAR(uint64_t, uint64_t, OP); break; \
        case MPIDI_PIP_VEC_U8: SCALAR(uint8_t, uint64_t, OP); break; \
        case MPIDI_PIP_VEC_U16: SCALAR(uint16_t, uint64_t, OP); break; }

static void scalar(int type, int op, const void *in, void *acc, size_t n)
{
    if (op == MPIDI_PIP_VEC_SUM)
        SCALAR_TYPES(+)
    else
        SCALAR_TYPES(*)
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
    static const size_t esz[] = { 4, 8, 4, 8, 1, 2 };
    unsigned seed = 12345;
    enum { MAXN = 100, PAD = 64, BYTES = MAXN * 8 + 2 * PAD };
    unsigned char in[BYTES], acc[BYTES], ref[BYTES], out[BYTES], keep[BYTES];

    for (int type = 0; type < MPIDI_PIP_VEC_NTYPES; type++)
        for (int op = 0; op < 2; op++)
            for (size_t n = 0; n <= MAXN; n++)
                for (size_t ib = 0; ib < 16; ib += esz[type]) {
                    fill(in, BYTES, type, &seed);
                    fill(acc, BYTES, type, &seed);
                    fill(out, BYTES, type, &seed);
                    memcpy(ref, acc, BYTES);
                    memcpy(keep, acc, BYTES);
                    /* the buffers misaligned differently */
                    size_t io = PAD + (16 - ib) % 16, ao = PAD + ib, oo = PAD + (ib * 3) % 16;
                    /* three operands: acc stays, out gets the result */
                    unsigned char outref[BYTES];
                    memcpy(outref, out, BYTES);
                    memcpy(outref + oo, acc + ao, n * esz[type]);
                    scalar(type, op, in + io, outref + oo, n);
                    CHECK(MPIDI_PIP_mcoll_vec3(type, op, in + io, acc + ao, out + oo, n) == 1,
                          "type %d op %d not handled", type, op);
                    CHECK(!memcmp(out, outref, BYTES) && !memcmp(acc, keep, BYTES),
                          "type %d op %d n %zu offset %zu: three operands differ from the "
                          "scalar loop", type, op, n, ib);
                    /* two operands: in place */
                    CHECK(MPIDI_PIP_mcoll_vec3(type, op, in + io, acc + ao, acc + ao, n) == 1,
                          "type %d op %d not handled", type, op);
                    scalar(type, op, in + io, ref + ao, n);
                    CHECK(!memcmp(acc, ref, BYTES),
                          "type %d op %d n %zu offset %zu: differs from the scalar loop",
                          type, op, n, ib);
                }
    CHECK(MPIDI_PIP_mcoll_vec3(MPIDI_PIP_VEC_F32, 7, in, acc, acc, 4) == 0, "unknown op handled");
    CHECK(MPIDI_PIP_mcoll_vec3(9, MPIDI_PIP_VEC_SUM, in, acc, acc, 4) == 0, "unknown type handled");
    if (failures)
        return 1;
    printf("vec: %d types x 2 operations, in place and into a third buffer, lengths 0 to %d "
           "at 16-byte misalignments: bit-identical to scalar loops\n", MPIDI_PIP_VEC_NTYPES,
           MAXN);
    return 0;
}
