#!/bin/sh
# build_kernel_dir.sh - builds the kernel directory of `pldrun --backend ascend`
# from the kernels PyPTO generated for a program (docs/ascend.md, "Building
# the kernel directory"). Needs CANN (ccec, ld.lld) and the headers PyPTO's
# generated kernels include (pto-isa, and the ChipTensor / intrinsic headers).
#
#   tools/ascend/build_kernel_dir.sh GENERATED_AIV_DIR OUT_DIR [ARCH]
#
# GENERATED_AIV_DIR  the kernels/aiv directory pypto.ir.compile wrote
#                    (<output_dir>/next_levels/<chip>/kernels/aiv for a
#                    distributed program), one <name>.cpp per InCore kernel
# OUT_DIR            receives <name>.elf for each; pass it to pldrun as
#                    --backend-options kernels=OUT_DIR
# ARCH               ccec's --cce-aicore-arch (default dav-c220-vec, a2a3;
#                    dav-c310-vec on a5)
# Environment: ASCEND_HOME_PATH (CANN), PTO_ISA_ROOT (pto-isa checkout),
# SIMPLER_ROOT (a hw-native-sys/simpler checkout: its platform headers and
# intrinsic.h, which the generated kernels include), PLD_KERNEL_INCLUDES (more
# -I directories, colon separated).
#
# The compile flags and include directories are simpler's for AIV kernels
# (simpler_setup/toolchain.py CCECToolchain.get_compile_flags,
# simpler_setup/kernel_compiler.py compile_incore: -I<pto-isa>/include and
# .../include/pto, simpler_setup/incore, src/common/platform/include), read
# from its source. None of it is verified on a card yet: this is step 2 of
# the first-run checklist (docs/backends.md).
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 GENERATED_AIV_DIR OUT_DIR [ARCH]" >&2
    exit 64
fi
src=$1
out=$2
arch=${3:-dav-c220-vec}
: "${ASCEND_HOME_PATH:?ASCEND_HOME_PATH is not set: source CANN's set_env.sh}"
: "${PTO_ISA_ROOT:?PTO_ISA_ROOT is not set: the pto-isa checkout the kernels were generated against}"
ccec=$ASCEND_HOME_PATH/bin/ccec
lld=$ASCEND_HOME_PATH/bin/ld.lld
for tool in "$ccec" "$lld"; do
    if [ ! -x "$tool" ]; then
        echo "$0: $tool not found: is ASCEND_HOME_PATH ($ASCEND_HOME_PATH) a CANN toolkit?" >&2
        exit 69
    fi
done
[ -d "$src" ] || { echo "$0: $src is not a directory" >&2; exit 66; }
mkdir -p "$out"
incs="-I$PTO_ISA_ROOT/include -I$PTO_ISA_ROOT/include/pto"
case $arch in
    dav-c310*) plat=a5 ;;
    *) plat=a2a3 ;;
esac
if [ -n "${SIMPLER_ROOT:-}" ]; then
    # intrinsic.h: simpler's runtime common directory of the platform
    incs="$incs -I$SIMPLER_ROOT/simpler_setup/incore -I$SIMPLER_ROOT/src/common/platform/include"
    incs="$incs -I$SIMPLER_ROOT/src/$plat/runtime/tensormap_and_ringbuffer/common"
fi
old_ifs=$IFS
IFS=:
for d in ${PLD_KERNEL_INCLUDES:-}; do
    [ -n "$d" ] && incs="$incs -I$d"
done
IFS=$old_ifs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
for cpp in "$src"/*.cpp; do
    [ -e "$cpp" ] || { echo "$0: no .cpp files in $src" >&2; exit 66; }
    name=$(basename "$cpp" .cpp)
    abs=$(cd "$(dirname "$cpp")" && pwd)/$(basename "$cpp")
    # The entry shim (symbol pld_entry_0_mix_aiv; the runtime registers it as
    # pld_entry_0, which the plugin looks up): the hardware block index picks the block's payload;
    # every payload carries its own LocalContext (logical block index and
    # count) at args[48], which the generated code reads.
    cat > "$work/$name.shim.cpp" <<SHIM
#include "$abs"
extern "C" __global__ __aicore__ void pld_entry_0_mix_aiv(__gm__ uint8_t *payloads, uint64_t stride)
{
    kernel_entry((__gm__ int64_t *)(payloads + (uint64_t)get_block_idx() * stride));
}
SHIM
    # shellcheck disable=SC2086
    "$ccec" -c -O3 -x cce -std=c++17 --cce-aicore-only --cce-aicore-arch="$arch" \
        -mllvm -cce-aicore-stack-size=0x8000 -mllvm -cce-aicore-function-stack-size=0x8000 \
        -mllvm -cce-aicore-record-overflow=false -mllvm -cce-aicore-addr-transform \
        -mllvm -cce-aicore-dcci-insert-for-scalar=false -DMEMORY_BASE $incs \
        "$work/$name.shim.cpp" -o "$work/$name.o"
    "$lld" -m aicorelinux -Ttext=0 -static -n -o "$out/$name.elf" "$work/$name.o"
    n=$((n + 1))
done
echo "$0: $n kernel(s) in $out"
