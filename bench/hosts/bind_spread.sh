#!/bin/sh
# bench/hosts/bind_spread.sh PROGRAM [ARGS...] - run_bench_hosts.py --bind spread:
# binds this rank to one core so that every core holds one rank of each
# emulated host, then execs PROGRAM. Rank i of emulated host h (the hostname
# is MPX_PFX followed by h, scripts/mpx-ci.sh) goes to core (i + h - 1) mod
# the number of cores: with 2 cores, 1 + 1 ranks use cores 0 and 1, 2 + 2
# ranks put ranks 0, 1 of host 1 on cores 0, 1 and those of host 2 on 1, 0.
# The emulated hosts share the machine's cores; unbound, the kernel
# sometimes gives each host a core of its own (docs/benchmarks-hosts.md,
# "Sixth session").
set -eu
h=$(hostname)
h=${h##*[!0-9]}
i=${OMPI_COMM_WORLD_LOCAL_RANK:?not started by Open MPI}
n=$(nproc)
case $h in '' | *[!0-9]*) echo "bind_spread.sh: hostname $(hostname) has no host number" >&2; exit 2 ;; esac
exec taskset -c $(((i + h - 1) % n)) "$@"
