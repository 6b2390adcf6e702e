# bench/bench_env.sh - the MPI environment of the benchmark scripts (sourced
# by run_bench_win.sh and run_bench_pldrun.sh).
#
# Default: the variables of shared/docs/platform.md section 2 that a 2-rank
# run on 2 cores needs (root, btl self,vader, pml ob1, osc sm,rdma, loopback),
# without mpi_yield_when_idle and with Open MPI's default binding, as
# platform.md section 7.2 recommends for np <= 2 numbers.
# PLD_BENCH_CI_ENV=1: the full CI environment (yield_when_idle=1,
# --bind-to none, oversubscribe).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_osc=sm,rdma OMPI_MCA_oob_tcp_if_include=lo
if [ "${PLD_BENCH_CI_ENV:-0}" = 1 ]; then
    export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
    export OMPI_MCA_mpi_yield_when_idle=1
    echo "environment: full CI environment of platform.md section 2"
else
    echo "environment: platform.md section 2 without yield_when_idle/oversubscribe/binding (default binding)"
fi
