#!/usr/bin/env bash
# scripts/setup_and_run_example.sh - from a fresh clone to a checked and a
# running program:
#   1. installs the Debian packages (scripts/install_deps.sh);
#   2. builds pldrun in Release (build/);
#   3. checks a distributed program for 4 ranks under mpirun:
#        mpirun -n 4 build/pldrun --check --ranks 4 programs/host/allreduce_ring.pld
#   4. runs that ring allreduce on 4 ranks (HOST builtin rail: window
#      buffers over MPI RMA, notify/wait signals) and checks the result:
#        mpirun -n 4 build/pldrun programs/host/allreduce_ring.pld \
#            --in xs=arange --out outs=build/example_outs.npy
#      every rank's row of outs must equal the sum of all ranks' rows of xs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

scripts/install_deps.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)" --target pldrun

# shellcheck source=scripts/mpi_env.sh
. scripts/mpi_env.sh
# this run's own Open MPI shared-memory directory, removed at exit
# shellcheck source=scripts/mpi_rundir.sh
. scripts/mpi_rundir.sh

echo "+ mpirun -n 4 build/pldrun --check --ranks 4 programs/host/allreduce_ring.pld"
mpirun -n 4 build/pldrun --check --ranks 4 programs/host/allreduce_ring.pld
echo "check: ok (exit 0)"

echo "+ mpirun -n 4 build/pldrun programs/host/allreduce_ring.pld --in xs=arange --out outs=build/example_outs.npy"
mpirun -n 4 build/pldrun programs/host/allreduce_ring.pld --in xs=arange --out outs=build/example_outs.npy
python3 - build/example_outs.npy <<'PY'
import sys
sys.path.insert(0, 'tests/mpi')
from pld_mpitest import read_npy
dtype, shape, vals = read_npy(sys.argv[1])
rows, cols = shape[0], shape[-1]
xs = [[float(r * cols + c) for c in range(cols)] for r in range(rows)]
want = [sum(xs[r][c] for r in range(rows)) for c in range(cols)]
bad = [(r, c) for r in range(rows) for c in range(cols) if vals[r * cols + c] != want[c]]
print('outs: %s %s, row 0 starts %s' % (dtype, list(shape), vals[:4]))
if bad:
    print('example: WRONG result at (rank, col) %s: %s, expected %s' % (bad[0], vals[bad[0][0] * cols + bad[0][1]], want[bad[0][1]]))
    sys.exit(1)
print('example: ok, every rank holds the sum over %d ranks' % rows)
PY
