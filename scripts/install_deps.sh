#!/usr/bin/env bash
# scripts/install_deps.sh - installs the Debian packages pldrun needs to build
# and test, when any of them is missing (runs apt-get update first). Used by
# .ci/run and scripts/setup_and_run_example.sh; needs root (or sudo).
#
#   openmpi-bin libopenmpi-dev  mpirun and MPI (sim_window, the tool)
#   libffi-dev                  hw_backend kernel calls
#   libcunit1-dev               unit tests
#   cmake pkg-config            build
#   gcc make                    build; the `native` backend compiles kernels with
#                               `cc` (cmake only recommends them)
#   clang                       the libFuzzer harness (tests/fuzz/run.sh) and the
#                               `native` backend under clang (native_clang)
#   python3                     MPI golden tests and the .npy cross-check
#   python3-numpy python3-pytest the Python API (python/pldrun) and its test python_api
#   libpython3-dev              the Python bridge of SubWorkers (src/pybridge; optional at build
#                               time: without it CMake leaves the bridge out, PLDRUN_PYTHON=AUTO)
#   iproute2                    `ip netns`: the emulated hosts of the multinode
#                               tests (scripts/mpx-ci.sh); without it they skip,
#                               and fail in CI (CI=true)
set -euo pipefail

packages=(openmpi-bin libopenmpi-dev libffi-dev libcunit1-dev cmake pkg-config gcc make clang python3 python3-numpy
          python3-pytest libpython3-dev iproute2)
missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if [ "${#missing[@]}" -eq 0 ]; then
    echo "install_deps: all packages present"
    exit 0
fi
echo "install_deps: installing ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y "${missing[@]}"
