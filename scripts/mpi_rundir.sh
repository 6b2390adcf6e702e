# shellcheck shell=bash
# scripts/mpi_rundir.sh - this run's own directory for Open MPI's shared-memory
# backing files and session directories, removed when the run ends, by this
# run only. Source it after scripts/mpi_env.sh (.ci/run and scripts/test.sh do):
#
#   . scripts/mpi_env.sh
#   . scripts/mpi_rundir.sh        # exports PLD_MPI_RUNDIR and the OMPI_MCA_* below
#   ...mpirun jobs, ctest...       # their files land in $PLD_MPI_RUNDIR
#   pld_mpi_rundir_empty           # optional: remove what killed jobs left, now
#
# Why: Open MPI 4.1 puts btl vader's segments (vader_segment.HOST.JOBID.RANK)
# and the backing files of osc sm and osc rdma windows in /dev/shm, and its
# session directories under /tmp; a killed job leaves them behind. The old
# cleanup, `rm -f /dev/shm/vader_segment.*`, also removed the segments of every
# other job on the machine, running ones included. Here every such file of
# this run's jobs lands in one directory made by mktemp, and only that
# directory is removed.
#
#   OMPI_MCA_btl_vader_backing_directory  vader's segments       (default /dev/shm)
#   OMPI_MCA_osc_sm_backing_directory     MPI_Win_allocate_shared (default /dev/shm)
#   OMPI_MCA_osc_rdma_backing_directory   MPI_Win_allocate        (default /dev/shm)
#   OMPI_MCA_orte_tmpdir_base             session directories     (default /tmp)
#                                         with PMIx's dstore segments and hwloc.sm
#   OMPI_MCA_shmem=mmap                   the component selected anyway (priority
#                                         50); without it the posix one's probe
#                                         creates and unlinks /dev/shm/open_mpi.NNNN
#                                         in every process
# (Open MPI 4.1.4: `ompi_info --all | grep -i -e backing -e tmpdir`; checked with
# strace -e openat: every file an mpirun job of pldrun creates is in the run's
# directory: vader_segment.*, osc_sm.*, osc_rdma.*, ompi.HOST.UID/.)
#
# The directory: PLD_MPI_RUNDIR when it is set and exists (a child shell of the
# run that made it, e.g. scripts/test.sh under .ci/run: reused, and removed by
# its maker); else a new mktemp -d pld-mpi.XXXXXX in /dev/shm (tmpfs, where the
# backing files belong) or, when /dev/shm is not writable, in ${TMPDIR:-/tmp}.
# The shell that made it removes it on exit: an EXIT trap that runs
# pld_mpi_rundir_cleanup and then the EXIT trap set before sourcing; a script
# that sets its own EXIT trap later must call pld_mpi_rundir_cleanup in it.
# A run killed with SIGKILL leaves its directory (pld-mpi.*, never another
# job's files); nothing here removes directories of other runs.
#
# scripts/mpx-ci.sh sets its own values for the emulated hosts (each host's
# private /dev/shm, its scratch directory), so the multinode tests ignore these.

pld_mpi_rundir_cleanup() {
    # only the directory this shell made (not one inherited from a parent run)
    if [ -n "${_pld_mpi_rundir_mine:-}" ] && [ "$_pld_mpi_rundir_mine" = "${PLD_MPI_RUNDIR:-}" ]; then
        case "$_pld_mpi_rundir_mine" in
            */pld-mpi.??????) rm -rf -- "$_pld_mpi_rundir_mine" ;;
        esac
        _pld_mpi_rundir_mine=
    fi
}

pld_mpi_rundir_empty() {
    # removes the files killed jobs of this run left in its directory (between
    # two ctest runs: a live job of this run would lose its files' names only)
    case "${PLD_MPI_RUNDIR:-}" in
        */pld-mpi.??????) [ -d "$PLD_MPI_RUNDIR" ] && find "$PLD_MPI_RUNDIR" -mindepth 1 -delete 2>/dev/null ;;
    esac
    return 0
}

if [ -n "${PLD_MPI_RUNDIR:-}" ] && [ -d "$PLD_MPI_RUNDIR" ]; then
    : # a parent run's directory: reuse it, leave its removal to that run
else
    _pld_mpi_rundir_base=/dev/shm
    if ! { [ -d "$_pld_mpi_rundir_base" ] && [ -w "$_pld_mpi_rundir_base" ]; }; then
        _pld_mpi_rundir_base=${TMPDIR:-/tmp}
    fi
    if ! PLD_MPI_RUNDIR=$(mktemp -d "$_pld_mpi_rundir_base/pld-mpi.XXXXXX"); then
        echo "scripts/mpi_rundir.sh: mktemp -d in $_pld_mpi_rundir_base failed" >&2
        return 1
    fi
    _pld_mpi_rundir_mine=$PLD_MPI_RUNDIR
    # run the cleanup first, then whatever EXIT trap the shell had
    _pld_mpi_rundir_prev=$(trap -p EXIT)
    if [ -n "$_pld_mpi_rundir_prev" ]; then
        eval "_pld_mpi_rundir_prev_words=(${_pld_mpi_rundir_prev#trap -- })"
        # shellcheck disable=SC2064,SC2154  # the earlier trap's text (set by the eval) is fixed now, on purpose
        trap "pld_mpi_rundir_cleanup; ${_pld_mpi_rundir_prev_words[0]}" EXIT
    else
        trap pld_mpi_rundir_cleanup EXIT
    fi
    unset _pld_mpi_rundir_base _pld_mpi_rundir_prev _pld_mpi_rundir_prev_words
fi
export PLD_MPI_RUNDIR
export OMPI_MCA_btl_vader_backing_directory=$PLD_MPI_RUNDIR
export OMPI_MCA_osc_sm_backing_directory=$PLD_MPI_RUNDIR
export OMPI_MCA_osc_rdma_backing_directory=$PLD_MPI_RUNDIR
export OMPI_MCA_orte_tmpdir_base=$PLD_MPI_RUNDIR
export OMPI_MCA_shmem=mmap
