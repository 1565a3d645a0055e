# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Sourced by test/mpi/run: more ranks than cores (doc/user/rank-yield.md).
# Waits yield, so 1000 small allreduces and barriers
# on 4 ranks and 2 cores take well under a second, where MPICH's spinning
# waits take about 8 s; with every rank on a core of its own nothing yields;
# never keeps MPICH's way.
over=$(( $(nproc) + 2 ))
run_np mpi/rank-yield/oversubscribed $over "rank_yield yield 1000 4"
run_np mpi/rank-yield/never $over "rank_yield noyield 20 0" MPIR_CVAR_CH4_CX_RANK_YIELD=never
run_np mpi/rank-yield/always 2 "rank_yield yield 100 0" MPIR_CVAR_CH4_CX_RANK_YIELD=always
[ "$(nproc)" -ge 2 ] && run_np mpi/rank-yield/own-cores 2 "rank_yield noyield 1000 0"
# emulated nodes of one machine (2 cliques, or a node per rank) count all
# their ranks: 2 per clique on 2 cores still yield
run_np mpi/rank-yield/cliques $over "rank_yield yield 1000 4" MPIR_CVAR_NUM_CLIQUES=2 FI_PROVIDER=tcp
run_np mpi/rank-yield/nolocal $over "rank_yield yield 1000 4" MPIR_CVAR_NOLOCAL=1 FI_PROVIDER=tcp
# pinned, 2 ranks on one core: the union of the masks counts
run_np mpi/rank-yield/one-core 2 "rank_yield yield 1000 4" -- -bind-to user:0,0
bad_cvar mpi/cvar/bad-rank-yield MPIR_CVAR_CH4_CX_RANK_YIELD sometimes "Invalid value 'sometimes' of MPIR_CVAR_CH4_CX_RANK_YIELD; valid values: auto, always, never"
