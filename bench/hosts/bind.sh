#!/bin/sh
# bench/hosts/bind.sh spread|host PROGRAM [ARGS...] - run_bench_hosts.py --bind:
# binds this rank to one core, then execs PROGRAM. The emulated hosts share
# the machine's cores; unbound, the kernel picks per job whether each core
# holds one rank of each host or each host gets a core of its own
# (docs/benchmarks-hosts.md, "Sixth session"). These fix either placement:
#   spread  every core holds one rank of each emulated host: rank i of host h
#           (the hostname is MPX_PFX followed by h, scripts/mpx-ci.sh) goes to
#           core (i + h - 1) mod the number of cores. With 2 cores, 1 + 1 ranks
#           use cores 0 and 1, 2 + 2 ranks put ranks 0, 1 of host 1 on cores
#           0, 1 and those of host 2 on 1, 0;
#   host    every host gets a core of its own: host h on core (h - 1) mod the
#           number of cores, all its ranks there.
set -eu
mode=${1:?usage: bind.sh spread|host PROGRAM [ARGS...]}
shift
h=$(hostname)
h=${h##*[!0-9]}
i=${OMPI_COMM_WORLD_LOCAL_RANK:?not started by Open MPI}
n=$(nproc)
case $h in '' | *[!0-9]*) echo "bind.sh: hostname $(hostname) has no host number" >&2; exit 2 ;; esac
case $mode in
spread) exec taskset -c $(((i + h - 1) % n)) "$@" ;;
host) exec taskset -c $(((h - 1) % n)) "$@" ;;
*) echo "bind.sh: spread or host, got '$mode'" >&2; exit 2 ;;
esac
