/*
 * MPICH-CX: selection of MPIDIG's receive-queue implementation and the MPI_T
 * pvars of the constant-time matcher and of the request pools it fills (see cx_recvq.h).
 */
#include "mpidimpl.h"
#include "cx_cvar.h"
#include "mpidig_recvq.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : CH4_CX_MATCHING
      description : MPICH-CX tag matching

cvars:
    - name        : MPIR_CVAR_CH4_CX_MATCHING
      category    : CH4_CX_MATCHING
      alt-env     : MPIR_CVAR_CH4_MATCHING
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        How MPIDIG (shared memory, and the netmods' active-message path)
        matches messages to receives: hash (constant-time matching after
        NewMadeleine: per-context hash tables for (source, tag), tag and
        source, and a wildcard list) or list (MPICH's linear queues).
        Empty selects the configure default (--with-ch4-matching, hash
        unless given).

    - name        : MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX
      category    : CH4_CX_MATCHING
      alt-env     : MPIR_CVAR_CH4_MATCHING_LIST_MAX
      type        : int
      default     : 64
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        With hash matching: a VCI searches plain lists while neither its
        posted nor its unexpected queue holds more than this many elements
        (cheaper than hashing for a handful of requests), moves them into
        the hash tables when one grows past it, and returns to the lists
        when both queues are empty. 0: always the hash tables.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

static int pvars_registered;
static void register_pvars(void);

bool MPIDIG_cx_hash;
MPIDIG_cx_matcher_slot_t MPIDIG_cx_matchers[MPIDI_CH4_MAX_VCIS];
static int n_matchers;          /* initialized, from VCI 0 on */

/* After MPIDIG_am_init set up the VCIs: a matcher per VCI, or none (lists). */
int MPIDIG_cx_recvq_init(void)
{
    int mpi_errno = MPI_SUCCESS;
    const char *v =
        MPIR_CVAR_CH4_CX_MATCHING[0] ? MPIR_CVAR_CH4_CX_MATCHING : MPIDIG_CX_DEFAULT_MATCHING;
    bool hash;

    if (!strcasecmp(v, "hash"))
        hash = true;
    else if (!strcasecmp(v, "list"))
        hash = false;
    else
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_MATCHING", v, "hash, list");
    if (MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX < 0)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX",
                                         MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX,
                                         "0 (always hash) or a positive queue length");
    MPIDIG_cx_hash = false;
    for (int vci = 0; hash && vci < MPIDI_global.n_vcis; vci++) {
        MPIR_ERR_CHKANDJUMP(cx_match_init(&MPIDIG_cx_matchers[vci].m,
                                          (size_t) MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX) != 0,
                            mpi_errno, MPI_ERR_OTHER, "**nomem");
        n_matchers = vci + 1;
    }
    MPIDIG_cx_hash = hash;
    register_pvars();
  fn_exit:
    return mpi_errno;
  fn_fail:
    MPIDIG_cx_recvq_finalize();
    goto fn_exit;
}

int MPIDIG_cx_tag_mask = ~0;

/* MPID_Init, once the netmod and shmem agreed on MPIR_Process.tag_bits
 * (after MPIDIG_cx_recvq_init). */
void MPIDIG_cx_recvq_tag_bits_known(void)
{
    MPIDIG_cx_tag_mask = MPIR_TAG_MASK_ERROR_BITS(~0);
}

/* MPI_Get_library_version's extensions line (src/util/mpichcx) */
int MPIDIG_cx_matching_is_active(void)
{
    return MPIDIG_cx_hash;
}

const char *MPIDIG_cx_matching_describe(void)
{
    static char buf[64];
    if (MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX)
        snprintf(buf, sizeof(buf), "hash, lists up to %d", MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX);
    else
        snprintf(buf, sizeof(buf), "hash");
    return buf;
}

void MPIDIG_cx_recvq_finalize(void)
{
    MPIDIG_cx_hash = false;
    for (int vci = 0; vci < n_matchers; vci++)
        cx_match_destroy(&MPIDIG_cx_matchers[vci].m);
    n_matchers = 0;
}

/* ---- MPI_T: sums over the VCIs (read without the VCI locks: statistics) --- */

static unsigned long long stat_sum(int which)
{
    unsigned long long v = 0;
    for (int vci = 0; vci < n_matchers; vci++) {
        cx_matcher_t *m = &MPIDIG_cx_matchers[vci].m;
        cx_match_stats_t s;
        cx_match_get_stats(m, &s);
        switch (which) {
            case 0:
                v += s.posted;
                break;
            case 1:
                v += s.unexp;
                break;
            case 2:
                v = MPL_MAX(v, s.max_chain);
                break;
            case 3:
                v += s.entries;
                break;
            case 4:
                v += s.buckets;
                break;
            case 5:
                v += s.migrations;
                break;
        }
    }
    return v;
}

#define MATCH_PVAR_GETTER(name_, which_) \
    static void name_(void *addr, void *obj, int count, void *buf) \
    { *(unsigned long long *) buf = stat_sum(which_); }
MATCH_PVAR_GETTER(get_posted, 0)
    MATCH_PVAR_GETTER(get_unexp, 1)
    MATCH_PVAR_GETTER(get_max_chain, 2)
    MATCH_PVAR_GETTER(get_entries, 3)
    MATCH_PVAR_GETTER(get_buckets, 4)
    MATCH_PVAR_GETTER(get_migrations, 5)
/* Requests the pools have allocated, in use or free for reuse: what the
 * queues can hold (patch cx-request-capacity lets a pool grow past
 * MPICH's 262144). */
static void get_requests_allocated(void *addr, void *obj, int count, void *buf)
{
    unsigned long long v = 0;
    for (int p = 0; p < MPIR_REQUEST_NUM_POOLS; p++)
        v += (unsigned long long) MPIR_Request_mem[p].num_allocated;
    *(unsigned long long *) buf = v;
}

static void register_pvars(void)
{
    static const struct {
        const char *name;
        int klass;
        void (*get)(void *, void *, int, void *);
        const char *desc;
    } pvars[] = {
        {"cx_match_posted", MPI_T_PVAR_CLASS_LEVEL, get_posted,
         "hash matching: receives in the posted queues now"},
        {"cx_match_unexpected", MPI_T_PVAR_CLASS_LEVEL, get_unexp,
         "hash matching: messages in the unexpected queues now"},
        {"cx_match_max_chain", MPI_T_PVAR_CLASS_LEVEL, get_max_chain,
         "hash matching: the longest hash bucket chain a lookup walked"},
        {"cx_match_entries", MPI_T_PVAR_CLASS_LEVEL, get_entries,
         "hash matching: hash table entries (keys with a posted receive or an unexpected message)"},
        {"cx_match_buckets", MPI_T_PVAR_CLASS_LEVEL, get_buckets,
         "hash matching: bucket slots of the hash tables (they never shrink)"},
        {"cx_match_migrations", MPI_T_PVAR_CLASS_COUNTER, get_migrations,
         "hash matching: times a VCI's queues outgrew MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX "
         "and moved into the hash tables"},
    };
    if (pvars_registered++)
        return;
    for (size_t i = 0; i < sizeof(pvars) / sizeof(pvars[0]); i++)
        MPIR_T_PVAR_REGISTER_impl(pvars[i].klass, MPI_UNSIGNED_LONG_LONG, pvars[i].name, NULL, 1,
                                  MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_BASIC,
                                  MPI_T_BIND_NO_OBJECT,
                                  MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                                  pvars[i].get, NULL, "CH4_CX_MATCHING", pvars[i].desc);
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED_LONG_LONG,
                              "cx_requests_allocated", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_requests_allocated, NULL, "CH4_CX_REQUESTS",
                              "requests allocated in all request pools, in use or free for "
                              "reuse (a pool holds up to 1043456; MPICH 4.0.2's 262144)");
}
