/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * match_shuffle: N outstanding 1-byte receives with distinct tags posted in
 * random order. See match_common.c.
 */
#include "match_common.h"

int main(int argc, char **argv)
{
    return match_main(argc, argv, "match_shuffle", 1);
}
