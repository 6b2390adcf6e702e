# shellcheck shell=bash
# scripts/mpi_env.sh - Open MPI environment for running pldrun and its tests
# as root on a small machine (4 ranks on 2 cores). Source it:
#
#   . scripts/mpi_env.sh
#   mpirun -n 4 build/pldrun programs/tutorial/hello_rank.pld
#
# The block is the one verified in shared/docs/platform.md §2 (and §7.2):
# every variable was checked together and one by one with Open MPI 4.1
# (Debian bookworm). Do not drop osc sm or rdma, and keep yield_when_idle.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # root
export OMPI_MCA_rmaps_base_oversubscribe=1      # = --oversubscribe (4 ranks on 2 cores)
export OMPI_MCA_hwloc_base_binding_policy=none  # = --bind-to none (np<=2 would otherwise pin to cores)
export OMPI_MCA_mpi_yield_when_idle=1           # MPI-internal waits call sched_yield
export OMPI_MCA_btl=self,vader                  # shared memory only; no btl tcp listening on 0.0.0.0
export OMPI_MCA_pml=ob1                         # don't depend on Debian's params file (else pml cm/mtl ofi)
export OMPI_MCA_osc=sm,rdma                     # rdma for MPI_Win_allocate, sm for MPI_Win_allocate_shared
export OMPI_MCA_oob_tcp_if_include=lo           # launcher<->rank control traffic on loopback only
