/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX PiP-MColl: SIMD loops for the reductions that dominate
 * (MPI_SUM and MPI_PROD on 4- and 8-byte floating-point and integer types).
 * MPICH's MPIR_SUM is a scalar loop (one addss per element at -O2); these
 * do 16 bytes per instruction with GCC's vector extensions (SSE2 on x86-64,
 * NEON on aarch64). Element by element, as MPICH: the same bits. Integers
 * go through unsigned vectors (two's complement: the same bits as signed,
 * without signed overflow). Plain C, no MPICH types: unit-tested by
 * test/unit/pipsteal/test_mcoll_vec.c against scalar loops.
 */
#ifndef PIP_MCOLL_VEC_H_INCLUDED
#define PIP_MCOLL_VEC_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { MPIDI_PIP_VEC_F32, MPIDI_PIP_VEC_F64, MPIDI_PIP_VEC_U32, MPIDI_PIP_VEC_U64 };
enum { MPIDI_PIP_VEC_SUM, MPIDI_PIP_VEC_PROD };

/* acc[i] = in[i] OP acc[i] for i < n: 4 vectors of 16 bytes per round,
 * unaligned (memcpy compiles to movups), the tail element by element. */
#define MPIDI_PIP_VEC_LOOP(T, OP)                                             \
    do {                                                                  \
        typedef T v_t __attribute__((vector_size(16)));                   \
        const size_t k = 16 / sizeof(T);                                  \
        const T *a = (const T *) in;                                      \
        T *b = (T *) acc;                                                 \
        size_t i = 0;                                                     \
        for (; i + 4 * k <= n; i += 4 * k) {                              \
            v_t x[4], y[4];                                               \
            memcpy(x, a + i, sizeof(x));                                  \
            memcpy(y, b + i, sizeof(y));                                  \
            for (int j = 0; j < 4; j++)                                   \
                y[j] = x[j] OP y[j];                                      \
            memcpy(b + i, y, sizeof(y));                                  \
        }                                                                 \
        for (; i < n; i++)                                                \
            b[i] = a[i] OP b[i];                                          \
    } while (0)

/* 1 if done, 0 if type or op is not one of the above. */
static inline int MPIDI_PIP_mcoll_vec(int type, int op, const void *in, void *acc, size_t n)
{
    if (op == MPIDI_PIP_VEC_SUM) {
        switch (type) {
            case MPIDI_PIP_VEC_F32:
                MPIDI_PIP_VEC_LOOP(float, +);
                return 1;
            case MPIDI_PIP_VEC_F64:
                MPIDI_PIP_VEC_LOOP(double, +);
                return 1;
            case MPIDI_PIP_VEC_U32:
                MPIDI_PIP_VEC_LOOP(uint32_t, +);
                return 1;
            case MPIDI_PIP_VEC_U64:
                MPIDI_PIP_VEC_LOOP(uint64_t, +);
                return 1;
        }
    } else if (op == MPIDI_PIP_VEC_PROD) {
        switch (type) {
            case MPIDI_PIP_VEC_F32:
                MPIDI_PIP_VEC_LOOP(float, *);
                return 1;
            case MPIDI_PIP_VEC_F64:
                MPIDI_PIP_VEC_LOOP(double, *);
                return 1;
            case MPIDI_PIP_VEC_U32:
                MPIDI_PIP_VEC_LOOP(uint32_t, *);
                return 1;
            case MPIDI_PIP_VEC_U64:
                MPIDI_PIP_VEC_LOOP(uint64_t, *);
                return 1;
        }
    }
    return 0;
}

#endif /* PIP_MCOLL_VEC_H_INCLUDED */
