/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX PiP-MColl: SIMD loops for the reductions that dominate
 * (MPI_SUM and MPI_PROD on 4- and 8-byte floating-point and integer types,
 and on 1- and 2-byte integers: OSU's default type is MPI_CHAR).
 * MPICH's MPIR_SUM is a scalar loop (one addss per element at -O2); these
 * do 16 bytes per instruction with GCC's vector extensions (SSE2 on x86-64,
 * NEON on aarch64). Element by element, as MPICH: the same bits. Integers
 * go through unsigned vectors (two's complement: the same low bits as
 * signed, for sums and products alike, without signed overflow). A third
 * operand lets the first fold of a reduction write its result elsewhere
 * instead of copying one input there first. Plain C, no MPICH types: unit-tested by
 * test/unit/pipsteal/test_mcoll_vec.c against scalar loops.
 */
#ifndef PIP_MCOLL_VEC_H_INCLUDED
#define PIP_MCOLL_VEC_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
    MPIDI_PIP_VEC_F32, MPIDI_PIP_VEC_F64, MPIDI_PIP_VEC_U32, MPIDI_PIP_VEC_U64,
    MPIDI_PIP_VEC_U8, MPIDI_PIP_VEC_U16, MPIDI_PIP_VEC_NTYPES
};
enum { MPIDI_PIP_VEC_SUM, MPIDI_PIP_VEC_PROD };

/* out[i] = in[i] OP acc[i] for i < n: 4 vectors of 16 bytes per round,
 * unaligned (memcpy compiles to movups), the tail element by element in W
 * (unsigned int for the narrow types: their product would overflow int).
 * out may be acc. */
#define MPIDI_PIP_VEC_LOOP(T, W, OP)                                             \
    do {                                                                  \
        typedef T v_t __attribute__((vector_size(16)));                   \
        const size_t k = 16 / sizeof(T);                                  \
        const T *a = (const T *) in;                                      \
        const T *b = (const T *) acc;                                     \
        T *c = (T *) out;                                                 \
        size_t i = 0;                                                     \
        for (; i + 4 * k <= n; i += 4 * k) {                              \
            v_t x[4], y[4];                                               \
            memcpy(x, a + i, sizeof(x));                                  \
            memcpy(y, b + i, sizeof(y));                                  \
            for (int j = 0; j < 4; j++)                                   \
                y[j] = x[j] OP y[j];                                      \
            memcpy(c + i, y, sizeof(y));                                  \
        }                                                                 \
        for (; i < n; i++)                                                \
            c[i] = (T) ((W) a[i] OP (W) b[i]);                            \
    } while (0)

#define MPIDI_PIP_VEC_TYPES(OP)                                               \
    switch (type) {                                                       \
        case MPIDI_PIP_VEC_F32: MPIDI_PIP_VEC_LOOP(float, float, OP); return 1;     \
        case MPIDI_PIP_VEC_F64: MPIDI_PIP_VEC_LOOP(double, double, OP); return 1;    \
        case MPIDI_PIP_VEC_U32: MPIDI_PIP_VEC_LOOP(uint32_t, uint32_t, OP); return 1;  \
        case MPIDI_PIP_VEC_U64: MPIDI_PIP_VEC_LOOP(uint64_t, uint64_t, OP); return 1;  \
        case MPIDI_PIP_VEC_U8: MPIDI_PIP_VEC_LOOP(uint8_t, unsigned, OP); return 1;    \
        case MPIDI_PIP_VEC_U16: MPIDI_PIP_VEC_LOOP(uint16_t, unsigned, OP); return 1;  \
    }

/* out = in OP acc, element by element (out may be acc, not in); 1 if done,
 * 0 if type or op is not one of the above. */
static inline int MPIDI_PIP_mcoll_vec3(int type, int op, const void *in, const void *acc,
                                       void *out, size_t n)
{
    if (op == MPIDI_PIP_VEC_SUM) {
        MPIDI_PIP_VEC_TYPES(+);
    } else if (op == MPIDI_PIP_VEC_PROD) {
        MPIDI_PIP_VEC_TYPES(*);
    }
    return 0;
}

#endif /* PIP_MCOLL_VEC_H_INCLUDED */
