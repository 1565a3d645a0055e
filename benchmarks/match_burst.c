/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * match_burst: N outstanding 1-byte receives, all with the same tag. See match_common.c.
 */
#include "match_common.h"

int main(int argc, char **argv)
{
    return match_main(argc, argv, "match_burst", 0);
}
