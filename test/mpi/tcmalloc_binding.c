/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * With --with-tcmalloc, tcmalloc serves MPICH-CX's own allocations and,
 * unless the program is linked with tcmalloc itself, not the program's:
 *   tcmalloc_binding         the program's malloc is libc's; tcmalloc's
 *                            allocated bytes grow by what MPI allocates
 *                            (MPI_Info values, duplicated communicators)
 *                            and not by what the program mallocs
 *   tcmalloc_binding_whole   the same program linked with
 *                            -Wl,--no-as-needed -ltcmalloc: its malloc is
 *                            tcmalloc's too
 * tcmalloc's statistics come from MallocExtension_GetNumericProperty, found
 * with dlsym (the program is not linked against it in "lib" mode).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*get_prop_t) (const char *, size_t *);

static size_t allocated(get_prop_t get)
{
    size_t v = 0;
    if (!get("generic.current_allocated_bytes", &v)) {
        fprintf(stderr, "tcmalloc has no generic.current_allocated_bytes\n");
        exit(1);
    }
    return v;
}

/* the file that defines the program's malloc */
static const char *malloc_home(void)
{
    Dl_info info;
    void *(*m)(size_t) = malloc;
    return dladdr((void *) m, &info) && info.dli_fname ? info.dli_fname : "?";
}

int main(int argc, char **argv)
{
    const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    int whole = strstr(name, "_whole") != NULL, rank, errs = 0;
    /* values under MPI_MAX_INFO_VAL */
    enum { NKEYS = 1000, VLEN = 1000, NDUPS = 50 };

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    get_prop_t get = (get_prop_t) dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
    if (!get) {
        printf("rank %d: tcmalloc is not loaded (libmpi built without --with-tcmalloc?)\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const char *home = malloc_home();
    int on_tc = strstr(home, "tcmalloc") != NULL;
    if (on_tc != whole) {
        printf("rank %d: the program's malloc is in %s (expected %s)\n", rank, home,
               whole ? "libtcmalloc" : "libc");
        errs++;
    }

    /* MPI's allocations: info values (MPL_strdup), communicators */
    size_t before = allocated(get);
    MPI_Info info;
    MPI_Info_create(&info);
    char key[32], *val = malloc(VLEN + 1);
    memset(val, 'v', VLEN);
    val[VLEN] = '\0';
    for (int i = 0; i < NKEYS; i++) {
        snprintf(key, sizeof(key), "cx_key_%d", i);
        MPI_Info_set(info, key, val);
    }
    MPI_Comm dups[NDUPS];
    for (int i = 0; i < NDUPS; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &dups[i]);
    size_t grown = allocated(get) - before;
    if (grown < (size_t) NKEYS * VLEN) {
        printf("rank %d: tcmalloc grew by %zu bytes while MPI stored %d values of %d bytes: "
               "MPI's allocations are not tcmalloc's\n", rank, grown, NKEYS, VLEN);
        errs++;
    }

    /* the program's own allocation: tcmalloc's only when linked with it */
    before = allocated(get);
    size_t big = 8 << 20;
    char *mine = malloc(big);
    memset(mine, 1, big);
    grown = allocated(get) - before;
    if (whole ? grown < big : grown >= big) {
        printf("rank %d: tcmalloc grew by %zu bytes for the program's malloc of %zu (%s)\n",
               rank, grown, big, whole ? "expected it to serve the program" :
               "the program's malloc should stay libc's");
        errs++;
    }
    free(mine);
    free(val);
    for (int i = 0; i < NDUPS; i++)
        MPI_Comm_free(&dups[i]);
    MPI_Info_free(&info);

    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && !all)
        printf("%s: program's malloc in %s; MPI's allocations on tcmalloc\nNo Errors\n",
               name, home);
    MPI_Finalize();
    return all != 0;
}
