/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * The matching benchmarks' shared driver (match_burst, match_shuffle).
 */
#ifndef MATCH_COMMON_H_INCLUDED
#define MATCH_COMMON_H_INCLUDED

/* shuffle = 0: every message has the same tag (a burst);
 * shuffle = 1: message i has tag i and receives are posted in random order. */
int match_main(int argc, char **argv, const char *name, int shuffle);

#endif /* MATCH_COMMON_H_INCLUDED */
