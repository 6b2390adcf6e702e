#!/usr/bin/env python3
"""run_native.py - tests of the `native` backend beyond the conformance table
(CTest native_numerics, native_errors, native_cache; label `native;mpi`).

  numerics  tests/native/numerics.pld (FP32 chains in a loop with carried
            tiles, FP16 / BF16 / INT32 element-wise chains, FP32 matmul and
            matmul_acc, a row sum, scalar
            loops with element reads and writes) on sim and native: every
            output byte-identical (the same operations in the same order).
  errors    an op native refuses (the test hook PLD_TEST_NATIVE_REFUSE=OP: every
            kernel op compiles): exit 69 naming the op, kernel and line; a missing compiler and a failing one: exit 69 with the
            compiler's name and message; an index past the end in compiled
            code: exit 70 with file:line:col of the write; tiles above the
            on-chip capacity: the same error as sim.
  control   tests/native/control.pld (continue, break, nested loops, carried
            scalars and tiles with continue / break, while, pl.while_, an early
            return) on sim and native: every output byte-identical; and
            tests/native/spin.pld (2^40 trips that each end in `continue`)
            stopped by --wait-timeout 2 on native at P = 1 and 2: exit 70, every
            rank's timeout report naming the loop, within 60 s.
  system    tests/native/system.pld (arrays, TaskIds, scopes and a pl.spmd
            grid inside a kernel, the core facts, no-effect ops, prefetch and
            allocation tokens, a kernel calling a kernel, pl.split_aiv lanes
            with aiv_shard / aic_gather) on sim and native: every output
            byte-identical.
  ext       tests/native/ext.pld (cmp / sel / cmps / sels on partial valid
            shapes, broadcasting element-wise ops, row / column expands,
            softmax steps, casts with modes, log / rsqrt on FP16, INT8 bitwise
            ops and shifts, col_sum's tree order on FP16, argmax / argmin,
            tri / ci / part / addc / expands, random, results written over
            an operand) on sim and native: every
            output byte-identical; tests/native/ext_err.pld: an integer fmod
            by zero in compiled code gives sim's located error (exit 70).
  cache     a fresh cache directory gets the kernel's .so on the first run; the
            second run compiles nothing (the files are not rewritten) and gives
            the same output.
  cachedir  the cache's safety: a cache directory writable by others (chmod 777)
            or owned by another user (chown nobody, when run as root) is refused
            with exit 69 and the reason; a failing compile leaves no temporary
            file in the cache.
  cachekey  another compiler binary with the same --version line (a wrapper
            script, then the same script changed) and another flag each get a
            new cache entry; dump=DIR writes one .c per kernel, named by kernel,
            the source that was compiled.
  boundary  distributed programs whose kernels use the pld.* ops (windows,
            signals, waits, remote load / store, put / get through tensors and
            staging tiles, in-kernel collectives), tensor slices, slice
            assignment, computed constants, dynamic dimensions and returns
            (tests/native/boundary.pld and programs of programs/ and
            tests/mpi/programs/) at P = 2 over shm and rma: every output
            byte-identical on sim and native, and native's summary line says
            "(0 in compiled kernels)": nothing in a compiled kernel reached the
            tree walker (sim's line has no such count); and
            tests/native/boundary_err.pld: a slice or index past the end, a
            slice assignment of another shape, an element write out of range
            in compiled code give sim's located errors, line for line.
  mm        mm.pld (cast rounding modes, BF16 matmul / matmul_acc with
            init_cond / matmul_bias, atomic stores) byte-identical on sim and native;
            mm_f32.pld (FP32 matmul / matmul_acc / matmul_bias / gemv of odd sizes)
            byte-identical, and its kernel source (dump=DIR) calls the library's
            matmul 4 times with no inline matmul loop (issue 44).
  memory    tensor_loop.pld (a kernel loop of pl.tensor.* ops) gives sim's bytes,
            and native's peak RSS at 20,000 iterations is within 4 MB (+10%)
            of its peak at 2,000: compiled tensor ops reuse their storage.
  tensor    tensor_views.pld (tensor views, reshape, slice, assemble as a
            statement, plain and atomic) byte-identical on sim and native.
  tlayout   tensor_layout.pld (pl.tensor.transpose, concat, gather in its
            index, mask and compare forms, scatter, sort32, mrgsort, fillpad,
            fillpad_expand, paged_gather, gather_row, scatter_update,
            reinterpret_view) byte-identical on sim and native, and no op of
            the kernel run by the tree walker ("(0 in compiled kernels)").
  clang     numerics.pld compiled by clang (cc=clang, then CC=clang) gives the
            same bytes as sim (and the flags gcc-only options are probed away).
            Without clang: skipped (exit 77) with the reason; with CI=true it
            fails instead.
  units     issue 44, compile cost: the kernels a program misses in the cache are
            compiled in units, one translation unit and one cc run each, run at
            the same time (as many as CPUs, or --backend-options jobs=N).
            collectives_handrolled.pld (5 kernels, P = 2) through a cc wrapper
            that logs its compiles: the default makes min(CPUs, 5) compiles;
            jobs=1 makes one compile of all 5 (outputs byte-identical to sim, 5
            cache entries, a second run compiles nothing); jobs=2 makes 2
            compiles that overlap (each waits up to 5 s for another to start); a compiler
            that refuses one kernel of a unit names that kernel, shows its
            message, exits 69 and leaves only the probed flags in the cache.
  fuse      fuse.pld (chains of element-wise statements fused into one loop:
            FP32, FP16, BF16, INT32, scalar operands, nested ops,
            intermediates read twice, in-place writes, a loop-carried chain,
            chains broken by a reduction and a scalar read of a tile, a result
            nothing reads; row / column expands, expdif, [M, 1], [1, N] and
            [1, 1] operands on a partial valid shape, FP16 softmax steps;
            maximum / minimum fused and alone on every pair of NaNs with
            payloads, signed zeros, infinities and subnormals)
            byte-identical on sim and native; the C native dumps (dump=DIR)
            shows the fusion: kernel `chain` (7 statements) has one
            element-wise loop (at most 8 ops) and two tile
            allocations (tx, u7; unfused: 7 and 8), kernel
            `mix` at most 24 loops (62 unfused), kernel `bcast` at least 4 fused loops over
            rows;
            fuse_err.pld: an index error in a chain's scalar operand and an
            on-chip capacity error at a later statement of the chain give
            sim's located errors, in sim's order;
            fuse_view.pld (slices read in place by their chain, concats
            written by it: bench rope's loop, a run-time offset, FP16, a
            [M, 1] operand, valid_shape, partially valid concat operands,
            slices that must stay copies) byte-identical on sim and native,
            kernel `rope` with no library copy and 7 tile allocations
            (unfused: 4 and 12), kernel `views` with 3 copies (unfused 20);
            fuse_view_err.pld: a slice's window error and a capacity error
            inside such a chain at sim's places, in sim's order.
  fuse_cast fuse_cast.pld (pl.tile.cast between FP32, FP16, BF16 and INT32 in
            every rounding mode, log and rsqrt, inside fused chains, on FP32
            specials and random bit patterns, ties, saturation, FP16 <-> BF16)
            byte-identical on sim and native; the C native dumps calls the
            library for no cast and no unary op in kernel `casts` (every one
            fused; before: 40 library calls).
  layout    layout.pld (assemble in a loop, transpose, valid shapes and
            padding, a partial load's padding zero after a full load of its name,
            slice, reshape, extract, concat, mask gathers) gives sim's
            bytes; layout_err.pld stops with sim's located message for each op
            its n picks (extract, gather_row, reinterpret_view, mrgsort, slice).

usage: run_native.py --pldrun PATH [--mpiexec mpirun]
       {numerics,errors,load,control,ext,system,cache,cachedir,cachekey,clang,boundary,layout,mm,memory,tensor,
        tlayout,tdyn,units}
       run_native.py --list     the parts, one per line (tests/native.cmake registers one test
                                per part); fails (exit 2) when a program of tests/native/ is missing
"""
import argparse
import glob
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'mpi'))
import pld_mpitest as T  # noqa: E402  (require_programs)

UNITS_PROG = '../../programs/tutorial/collectives_handrolled.pld'  # 5 kernels
PARTS = ('numerics', 'errors', 'load', 'control', 'ext', 'system', 'cache', 'cachedir', 'cachekey', 'clang', 'boundary',
         'layout', 'mm', 'memory', 'tensor', 'tlayout', 'tdyn', 'units', 'fuse', 'fuse_cast')
# the files the parts run (tests/native/)
FILES = {'numerics': ('numerics.pld',), 'errors': ('unsupported.pld', 'numerics_small.pld', 'bad_cc.sh', 'oob.pld',
                                                   'ub_overflow.pld'), 'control': ('control.pld', 'spin.pld'),
         'system': ('system.pld',),
         'ext': ('ext.pld', 'ext_err.pld'),
         'load': ('scope_refused.pld', 'scope_ok.pld'), 'cache': ('numerics_small.pld',), 'cachedir': ('numerics_small.pld', 'bad_cc.sh'),
         'cachekey': ('numerics_small.pld', 'two_kernels.pld'), 'clang': ('numerics.pld',), 'boundary': ('boundary.pld', 'boundary_err.pld'),
         'layout': ('layout.pld', 'layout_err.pld'), 'fuse': ('fuse.pld', 'fuse_err.pld', 'fuse_view.pld', 'fuse_view_err.pld'),
         'fuse_cast': ('fuse_cast.pld',),
         'mm': ('mm.pld', 'mm_f32.pld'), 'memory': ('tensor_loop.pld',), 'tensor': ('tensor_views.pld',),
         'tlayout': ('tensor_layout.pld',), 'units': (UNITS_PROG,), 'tdyn': ('tensor_dyn.pld', 'tensor_dyn_err.pld', 'tensor_dyn_layout.pld', 'elem_subscript.pld', 'tensor_dyn_create.pld', 'tensor_index.pld', 'tensor_dyn_views.pld', 'tensor_dyn_more.pld', 'tensor_dyn_gather.pld', 'scope_dyn.pld', 'dyn_unbound_arg.pld',
                  'dyn_unbound.pld', 'tensor_row_assign.pld')}


def npy_f32(path, shape, seed):
    """a float32 .npy of `shape` with values from a fixed seed (no numpy needed)"""
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ''.join('%d, ' % d for d in shape)
    hdr += ' ' * (64 - 10 - len(hdr) - 1) + '\n'
    n = 1
    for d in shape:
        n *= d
    rng = random.Random(seed)
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
        f.write(struct.pack('<%df' % n, *[rng.uniform(-2, 2) for _ in range(n)]))


def npy_scalar_i64(path, v):
    hdr = "{'descr': '<i8', 'fortran_order': False, 'shape': (), }"
    hdr += ' ' * (64 - 10 - len(hdr) - 1) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + struct.pack('<q', v))


def run(args, prog, backend, extra, env=None, P=1, limit=300):
    cmd = [args.mpiexec, '-n', str(P), args.pldrun, os.path.join(HERE, prog), '--backend', backend] + extra
    # a session of its own: a run past the limit is killed with every process it started
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        fail('%s on %s did not end within %d s' % (prog, backend, limit), out)
    return p.returncode, out


def same_on_sim_and_native(args, work, env, prog, inputs, outs, P=1, limit=300):
    """Runs prog on sim and on native with the same inputs; every output must
    be byte-identical on both and not constant (else the comparison could not
    see a difference)."""
    for b in ('sim', 'native'):
        extra = list(inputs)
        for o in outs:
            extra += ['--out', '%s=%s' % (o, os.path.join(work, '%s_%s.npy' % (o, b)))]
        rc, out = run(args, prog, b, extra, env, P=P, limit=limit)
        if rc != 0:
            fail('%s on %s exited %d' % (prog, b, rc), out)
    for o in outs:
        a = open(os.path.join(work, o + '_sim.npy'), 'rb').read()
        if a != open(os.path.join(work, o + '_native.npy'), 'rb').read():
            fail('%s: output %s differs between sim and native' % (prog, o))
        if len(set(a[128:])) < 2:
            fail('%s: output %s is constant: the test would not see a difference' % (prog, o))


def fail(msg, out=''):
    print('FAIL: ' + msg)
    if out:
        print('\n'.join('    ' + l for l in out.strip().splitlines()[:30]))
    sys.exit(1)


def numerics(args, work, env, variants=(('native', [], None),)):
    """numerics.pld on sim and on each variant (name, extra options, env): every output byte-identical"""
    steps = os.path.join(work, 'steps.npy')
    npy_scalar_i64(steps, 5)
    outs = ['out', 'hout', 'bout', 'iout', 'mout', 'sums', 'cnt']
    for b, bopts, benv in (('sim', [], None),) + tuple(variants):
        extra = ['--in', 'x=random:3', '--in', 'h=random:4', '--in', 'bh=random:5', '--in', 'iv=random:6', '--in', 'w=random:7',
                 '--in', 'steps=' + steps] + bopts
        for o in outs:
            extra += ['--out', '%s=%s' % (o, os.path.join(work, '%s_%s.npy' % (o, b)))]
        rc, out = run(args, 'numerics.pld', 'sim' if b == 'sim' else 'native', extra, benv or env)
        if rc != 0:
            fail('numerics.pld on %s exited %d' % (b, rc), out)
    for b, _, _ in variants:
        for o in outs:
            a = open(os.path.join(work, o + '_sim.npy'), 'rb').read()
            n = open(os.path.join(work, '%s_%s.npy' % (o, b)), 'rb').read()
            if a != n:
                fail('output %s differs between sim and %s' % (o, b))
            if len(set(a[128:])) < 2:
                fail('output %s is constant: the test would not see a difference' % o)
        print('ok: numerics: %d outputs byte-identical on sim and %s' % (len(outs), b))


def clang(args, work, env):
    cl = shutil.which('clang')
    if not cl:
        if os.environ.get('CI', '').lower() in ('1', 'true', 'yes'):
            fail('clang is not installed (CI=true: the native backend must be tested with clang; '
                 'scripts/install_deps.sh installs it)')
        print('SKIP: clang is not installed: the native backend is not tested with clang here')
        sys.exit(77)
    e2 = dict(env)
    e2['CC'] = 'clang'
    e2['XDG_CACHE_HOME'] = os.path.join(work, 'xdg_cc')
    numerics(args, work, env, (('native_gcc', ['--backend-options', 'cc=gcc'], None),
                               ('native_cc=clang', ['--backend-options', 'cc=clang'], None),
                               ('native_CC=clang', [], e2)))
    flags = glob.glob(os.path.join(work, 'xdg_cc', 'pldrun', 'cc-*.flags'))
    if len(flags) != 1 or '-fvect-cost-model' in open(flags[0]).read():
        fail('clang\'s probed flags: %s' % [open(f).read() for f in flags])
    print('ok: clang: flags %s' % open(flags[0]).read())


# the distributed programs of part `boundary` (paths from the repository root)
BOUNDARY = ('tests/native/boundary.pld', 'programs/tutorial/remote_load_store.pld', 'programs/tutorial/put_get.pld',
            'programs/tutorial/barrier_handrolled.pld', 'tests/mpi/programs/tile_put_get.pld',
            'programs/incore/allreduce_mesh.pld', 'programs/incore/broadcast.pld', 'programs/incore/all_to_all_v.pld',
            'programs/host/reduce_scatter.pld')


def program_io(path):
    """the --in options of a program's `# inputs:` line and the names of its
    orchestrator's pl.Out parameters"""
    text = open(path).read()
    ins = []
    for line in text.splitlines():
        if line.startswith('# inputs:'):
            for spec in line[len('# inputs:'):].split():
                ins += ['--in', spec]
    orch = text[text.find('role=pl.Role.Orchestrator'):]
    outs = re.findall(r'(\w+): pl\.Out\[', orch)
    if not outs:
        fail('%s: no pl.Out parameter of the orchestrator found' % path)
    return ins, outs


def boundary(args, work, env):
    root = os.path.dirname(os.path.dirname(HERE))
    P = 2
    for rel in BOUNDARY:
        prog = os.path.join(root, rel)
        if not os.path.isfile(prog):
            fail('%s is missing' % rel)
        ins, outs = program_io(prog)
        for tr in ('shm', 'rma'):
            varied = False
            for b in ('sim', 'native'):
                extra = ins + ['--window-transport', tr]
                for o in outs:
                    extra += ['--out', '%s=%s' % (o, os.path.join(work, '%s_%s.npy' % (o, b)))]
                rc, out = run(args, prog, b, extra, env, P=P)
                if rc != 0:
                    fail('%s on %s (%s) exited %d' % (rel, b, tr, rc), out)
                summary = [l for l in out.splitlines() if 'interpreted ops' in l]
                if len(summary) != 1:
                    fail('%s on %s (%s): no summary line' % (rel, b, tr), out)
                if b == 'native' and '(0 in compiled kernels)' not in summary[0]:
                    fail('%s on native (%s): the tree walker ran inside a compiled kernel: %s' % (rel, tr, summary[0]))
                if b == 'sim' and 'compiled kernels' in summary[0]:
                    fail('%s on sim: the summary line counts compiled kernels: %s' % (rel, summary[0]))
            for o in outs:
                a = open(os.path.join(work, o + '_sim.npy'), 'rb').read()
                if a != open(os.path.join(work, o + '_native.npy'), 'rb').read():
                    fail('%s (%s): output %s differs between sim and native' % (rel, tr, o))
                varied |= len(set(a[128:])) >= 2
            if not varied:
                fail('%s (%s): every output is constant: the test would not see a difference' % (rel, tr))
        print('ok: boundary: %s at P=%d on shm and rma: %d output%s byte-identical, 0 ops in compiled kernels'
              % (rel, P, len(outs), '' if len(outs) == 1 else 's'))
    # the errors of compiled subscripts: sim's located messages, rank prefix and notes included
    for m, what in enumerate(('a slice bound past the end', 'an index past the end', 'a slice assignment of another shape',
                              'an element write out of range', None)):
        mpath = os.path.join(work, 'm%d.npy' % m)
        npy_scalar_i64(mpath, m)
        got = {}
        for b in ('sim', 'native'):
            o = os.path.join(work, 'err_%s.npy' % b)
            rc, out = run(args, 'boundary_err.pld', b, ['--in', 'x=random:1', '--in', 'm=' + mpath, '--out', 'out=' + o], env)
            if rc != (0 if what is None else 70):
                fail('boundary_err.pld (mode %d) on %s exited %d' % (m, b, rc), out)
            got[b] = [l for l in out.splitlines() if l.startswith('[rank ')]
            if b == 'native' and what is None and '(0 in compiled kernels)' not in out:
                fail('boundary_err.pld on native: the tree walker ran inside a compiled kernel', out)
        if got['sim'] != got['native'] or (what and not got['sim']):
            fail('boundary_err.pld: %s: sim and native report differently:\n%s\n---\n%s'
                 % (what or 'no error', '\n'.join(got['sim']), '\n'.join(got['native'])))
        if what is None and open(os.path.join(work, 'err_sim.npy'), 'rb').read() != \
                open(os.path.join(work, 'err_native.npy'), 'rb').read():
            fail('boundary_err.pld: the element and slice writes differ between sim and native')
        print('ok: boundary: %s: %s' % (what or 'element and slice writes', 'the same located error on sim and native'
                                                if what else 'byte-identical on sim and native'))


def cache_files(d):
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def cachedir(args, work, env):
    o = ['--in', 'x=random:1', '--out', 'out=' + os.path.join(work, 'n.npy')]
    # a cache directory others can write: refused
    d = os.path.join(work, 'open')
    os.makedirs(d)
    os.chmod(d, 0o777)
    rc, out = run(args, 'numerics_small.pld', 'native', o + ['--backend-options', 'cache=' + d], env)
    expect(rc, out, 69, ['refusing the kernel cache directory ' + d, 'writable by others (mode 777)'],
           'a cache directory writable by others')
    if cache_files(d):
        fail('the refused cache directory got files: %s' % cache_files(d))
    os.chmod(d, 0o770)
    rc, out = run(args, 'numerics_small.pld', 'native', o + ['--backend-options', 'cache=' + d], env)
    expect(rc, out, 69, ['writable by its group (mode 770)'], 'a cache directory its group can write')
    # owned by another user (needs root to make one)
    if os.geteuid() == 0:
        import pwd
        d = os.path.join(work, 'theirs')
        os.makedirs(d, mode=0o755)
        os.chmod(d, 0o755)
        os.chown(d, pwd.getpwnam('nobody').pw_uid, -1)
        rc, out = run(args, 'numerics_small.pld', 'native', o + ['--backend-options', 'cache=' + d], env)
        expect(rc, out, 69, ['refusing the kernel cache directory ' + d, 'is owned by uid %d' % pwd.getpwnam('nobody').pw_uid],
               'a cache directory owned by another user')
    else:
        print('note: not root: the cache directory owned by another user is not tried')
    # a failing compile leaves no temporary file
    d = os.path.join(work, 'fail')
    rc, out = run(args, 'numerics_small.pld', 'native',
                  o + ['--backend-options', 'cache=%s,cc=%s' % (d, os.path.join(HERE, 'bad_cc.sh'))], env)
    expect(rc, out, 69, ['failed (exit 1)', 'bad_cc: no compiling today'], 'a failing compiler')
    left = [f for f in cache_files(d) if not (f.startswith('cc-') and f.endswith('.flags'))]
    if left:
        fail('a failed compile left files in the cache: %s' % left, out)
    print('ok: a failed compile leaves only the probed flags in the cache (%s)' % cache_files(d))


def cachekey(args, work, env):
    o = ['--in', 'x=random:1', '--out', 'out=' + os.path.join(work, 'n.npy')]
    # the compiler's identity and the flags are in the key
    d = os.path.join(work, 'key')
    gcc = shutil.which('gcc') or shutil.which('cc')
    ver = subprocess.run([gcc, '--version'], capture_output=True, text=True).stdout.splitlines()[0]
    wrap = os.path.join(work, 'mycc')

    def write_wrapper(extra):
        with open(wrap, 'w') as f:
            f.write('#!/bin/sh\n# same --version line as %s\n' % gcc)
            f.write('if [ "$1" = "--version" ]; then echo "%s"; exit 0; fi\n' % ver)
            f.write('exec %s %s "$@"\n' % (gcc, extra))
        os.chmod(wrap, 0o755)

    def sos():
        return set(glob.glob(os.path.join(d, 'k-*.so')))

    for what, cc in (('gcc', gcc), ('a wrapper with the same --version line', wrap),
                     ('the wrapper changed', wrap), ('another flag', gcc)):
        if what == 'the wrapper changed':
            os.utime(wrap, ns=(1, 1))   # not the same file: the mtime is in the identity
            write_wrapper('-O1')
        elif cc == wrap:
            write_wrapper('')
        if what == 'another flag':
            with open(gcc_flags[0], 'a') as f:
                f.write(' -DPLD_TEST_EXTRA_FLAG=1')
        before = sos()
        rc, out = run(args, 'numerics_small.pld', 'native', o + ['--backend-options', 'cache=%s,cc=%s' % (d, cc)], env)
        if rc != 0:
            fail('native with cc=%s exited %d' % (cc, rc), out)
        new = sos() - before
        if len(new) != 1:
            fail('%s: %d new cache entries (%s), expected 1' % (what, len(new), sorted(new)))
        if what == 'gcc':
            gcc_flags = glob.glob(os.path.join(d, 'cc-*.flags'))  # the probed flags of gcc
        print('ok: %s: a new cache entry %s' % (what, os.path.basename(new.pop())))
    # dump=DIR: one .c per kernel, named by kernel, the source compiled
    d = os.path.join(work, 'dumpcache')
    dd = os.path.join(work, 'dump')
    rc, out = run(args, 'two_kernels.pld', 'native', ['--in', 'x=random:1', '--out', 'out=' + os.path.join(work, 't.npy'),
                                                       '--backend-options', 'cache=%s,dump=%s' % (d, dd)], env, P=2)
    if rc != 0:
        fail('dump=DIR: exited %d' % rc, out)
    if cache_files(dd) != ['double_it.c', 'square_plus_one.c']:
        fail('dump=DIR holds %s, expected double_it.c and square_plus_one.c' % cache_files(dd))
    cached = sorted(open(f).read() for f in glob.glob(os.path.join(d, 'k-*.c')))
    dumped = sorted(open(os.path.join(dd, f)).read() for f in cache_files(dd))
    if cached != dumped:
        fail('dump=DIR: the dumped sources are not the compiled ones')
    if 'pld_ckernel' not in dumped[0]:
        fail('dump=DIR: the dumped file is no kernel')
    print('ok: dump=DIR: %s' % ', '.join(cache_files(dd)))


def expect(rc, out, want_rc, needles, what):
    if rc != want_rc:
        fail('%s: exit %d, expected %d' % (what, rc, want_rc), out)
    for n in needles:
        if n not in out:
            fail('%s: the message lacks %r' % (what, n), out)
    print('ok: %s (exit %d)' % (what, rc))


# Every op sim runs in a kernel compiles (docs/native-ops.md), so the refusal path is driven by the test hook
# PLD_TEST_NATIVE_REFUSE=OP, which makes the code generator refuse that one op.
REFUSE = 'pl.tile.fillpad'


def refusing(env):
    e = dict(env)
    e['PLD_TEST_NATIVE_REFUSE'] = REFUSE
    return e


def errors(args, work, env):
    o = ['--in', 'x=random:1', '--out', 'out=' + os.path.join(work, 'u.npy')]
    rc, out = run(args, 'unsupported.pld', 'native', o, refusing(env))
    expect(rc, out, 69, ['cannot be compiled', 'unsupported.pld:9:13', REFUSE + ' is not compiled by the native backend',
                         'kernel k'], 'an op native refuses')
    rc, out = run(args, 'unsupported.pld', 'native', o, env)
    expect(rc, out, 0, ['(0 in compiled kernels)'], 'the same program on native without the hook')
    rc, out = run(args, 'unsupported.pld', 'sim', o, env)
    expect(rc, out, 0, [], 'the same program on sim')
    o = ['--in', 'x=random:1', '--out', 'out=' + os.path.join(work, 'n.npy')]
    rc, out = run(args, 'numerics_small.pld', 'native', o + ['--backend-options', 'cc=/nonexistent/cc'], env)
    expect(rc, out, 69, ["C compiler '/nonexistent/cc' is not usable", 'kernel k'], 'a missing compiler')
    rc, out = run(args, 'numerics_small.pld', 'native', o + ['--backend-options', 'cc=' + os.path.join(HERE, 'bad_cc.sh')], env)
    expect(rc, out, 69, ['failed (exit 1)', 'bad_cc: no compiling today', 'kernel k'], 'a failing compiler')
    n = os.path.join(work, 'n9.npy')
    npy_scalar_i64(n, 9)
    rc, out = run(args, 'oob.pld', 'native', ['--in', 'n=' + n, '--out', 'out=' + os.path.join(work, 'oob.npy')],
                  env)
    expect(rc, out, 70, ['oob.pld:9:13', 'index 4 out of range in dimension 1 (shape [1, 4])'], 'an index past the end in compiled code')
    o = ['--in', 'x=random:1', '--out', 'out=' + os.path.join(work, 'ub.npy')]
    msgs = {}
    for b in ('sim', 'native'):
        rc, out = run(args, 'ub_overflow.pld', b, o, env)
        msg = [l for l in out.splitlines() if 'error:' in l]
        expect(rc, out, 70, ['ub_overflow.pld:12:9', 'above the 196608 bytes of Vec (UB)'], 'tiles above the UB on ' + b)
        msgs[b] = msg[0] if msg else ''
    if msgs['sim'] != msgs['native']:
        fail('the UB error differs: sim %r, native %r' % (msgs['sim'], msgs['native']))


def load(args, work, env):
    """scope kernels (pl.at, pl.spmd) are compiled at load with the function kernels: a refused scope stops the
    run (exit 69) before its first kernel runs; compilable scopes give sim's bytes"""
    for P in (1, 2):
        out_f, trace = os.path.join(work, 'r%d_out.npy' % P), os.path.join(work, 'r%d_trace.json' % P)
        o = ['--in', 'x=random:1', '--out', 'out=' + out_f, '--out', 'y=' + os.path.join(work, 'r%d_y.npy' % P),
             '--trace', trace]
        rc, out = run(args, 'scope_refused.pld', 'native', o, refusing(env), P=P)
        expect(rc, out, 69, ['cannot load program', 'kernel sines', 'cannot be compiled',
                             'scope_refused.pld:18:17: pl.tile.fillpad is not compiled by the native backend'],
               'a pl.at scope native does not compile, at P=%d' % P)
        if os.path.exists(out_f) or (os.path.exists(trace) and '"k"' in open(trace).read()):
            fail('kernel k ran before the refused scope stopped the run (P=%d)' % P, out)
        if 'kernel backend' in out or 'failed to run' in out:
            fail('the scope was refused at its launch, not at load (P=%d)' % P, out)
    rc, out = run(args, 'scope_refused.pld', 'sim', o, env)
    expect(rc, out, 0, [], 'the same program on sim')
    outs = ['out', 'y']
    same_on_sim_and_native(args, work, env, 'scope_ok.pld', ['--in', 'x=random:5'], outs, P=2)
    print('ok: load: scope kernels compiled at load; %d outputs byte-identical on sim and native' % len(outs))


def control(args, work, env):
    outs = ['cnt', 'out']
    same_on_sim_and_native(args, work, env, 'control.pld', ['--in', 'x=random:11'], outs, limit=60)
    # cnt[0, 10:14]: `big: pl.INT32 = 5 + 2147483647` stored wrapped (-2147483644),
    # then big < 0, big // 2 and big * 3 as INT32 (the same on both backends, so
    # the values themselves are checked)
    cnt = open(os.path.join(work, 'cnt_native.npy'), 'rb').read()
    got = list(struct.unpack_from('<4i', cnt, len(cnt) - 64 + 40))
    if got != [-2147483644, 1, -1073741822, -2147483636]:
        fail('control.pld: an INT32-annotated INDEX value is not wrapped: cnt[0, 10:14] = %s, want '
             '[-2147483644, 1, -1073741822, -2147483636]' % got)
    print('ok: control: %d outputs byte-identical on sim and native' % len(outs))
    # a kernel that spins (every trip ends in `continue`): the watchdog tick of
    # the loop's back edge stops it after --wait-timeout (the per-wait limit;
    # under --timeout alone a running loop is progress), on every rank
    o = ['--in', 'x=random:1', '--out', 'cnt=' + os.path.join(work, 'spin.npy'), '--wait-timeout', '2']
    for P in (1, 2):
        rc, out = run(args, 'spin.pld', 'native', o, env, P=P, limit=60)
        needles = ['[rank %d/%d] %s:10:18: error: kernel spin: this loop still runs after 2 s (the hang watchdog\'s '
                   'per-wait limit expired)' % (r, P, os.path.join(HERE, 'spin.pld')) for r in range(P)]
        expect(rc, out, 70, needles, 'a spinning kernel stopped by --wait-timeout 2 at P=%d' % P)
        if 'did not stop' in out:
            fail('a rank did not stop by itself at P=%d' % P, out)


def system(args, work, env):
    outs = ['out', 'cnt']
    same_on_sim_and_native(args, work, env, 'system.pld', ['--in', 'x=random:3', '--in', 'ix=random:4'], outs, limit=60)
    print('ok: system: %d outputs byte-identical on sim and native' % len(outs))


def layout(args, work, env):
    """layout, valid-shape and gather ops (src/hw_backend/pld_cgen_layout.c): sim's bytes, and sim's located
    message for each error layout_err.pld's n picks"""
    outs = ['out', 'y', 'z']
    same_on_sim_and_native(args, work, env, 'layout.pld', ['--in', 'x=random:5'], outs)
    z = open(os.path.join(work, 'z_native.npy'), 'rb').read()
    pad = struct.unpack_from('<128f', z, len(z) - 512)
    if any(pad[r * 16 + c] != 0.0 for r in range(8) for c in range(16) if r >= 5 or c >= 9):
        fail('layout.pld: z, a load with valid shape [5, 9] after a full load of the same name, keeps data in its '
             'padding on native (the tile is not zeroed)')
    print('ok: layout: %d outputs byte-identical on sim and native' % len(outs))
    for n, needle in ((1, 'pl.tile.extract: window [4, 20) of dimension 0'), (2, 'pl.tile.gather_row: the window'),
                      (3, 'an explicit shape needs a fully valid source'), (4, 'block_len 32 is not a positive multiple'),
                      (5, 'pl.tile.slice: the window is outside the tile')):
        p = os.path.join(work, 'n%d.npy' % n)
        npy_scalar_i64(p, n)
        o = ['--in', 'x=random:5', '--in', 'n=' + p, '--out', 'out=' + os.path.join(work, 'le.npy')]
        msgs = {}
        for b in ('sim', 'native'):
            rc, out = run(args, 'layout_err.pld', b, o, env)
            expect(rc, out, 70, ['layout_err.pld:', needle], 'layout error %d on %s' % (n, b))
            msgs[b] = [l for l in out.splitlines() if 'error:' in l]
        if msgs['sim'] != msgs['native']:
            fail('layout error %d differs: sim %r, native %r' % (n, msgs['sim'], msgs['native']))


def ext(args, work, env):
    outs = ['o', 'm', 'b', 'i', 'cs', 'am', 'ca', 'g', 'rr', 'ao', 'ap']
    same_on_sim_and_native(args, work, env, 'ext.pld', ['--in', 'x=random:11', '--in', 'y=random:12'], outs)
    print('ok: ext: %d outputs byte-identical on sim and native' % len(outs))
    msgs = {}
    for b in ('sim', 'native'):
        for v in (3, 4):
            n = os.path.join(work, 'n%d.npy' % v)
            npy_scalar_i64(n, v)
            rc, out = run(args, 'ext_err.pld', b, ['--in', 'x=random:1', '--in', 'n=' + n, '--out',
                                                   'out=' + os.path.join(work, 'e%d_%s.npy' % (v, b))], env)
            if v == 4:
                expect(rc, out, 0, [], 'ext_err.pld with n = 4 on ' + b)
                continue
            expect(rc, out, 70, ['ext_err.pld:13:13: error: pl.tile.fmod: integer division by zero'],
                   'an integer fmod by zero on ' + b)
            msgs[b] = [l for l in out.splitlines() if 'error:' in l]
    if msgs['sim'] != msgs['native']:
        fail('the fmod error differs: sim %r, native %r' % (msgs['sim'], msgs['native']))
    if open(os.path.join(work, 'e4_sim.npy'), 'rb').read() != open(os.path.join(work, 'e4_native.npy'), 'rb').read():
        fail('ext_err.pld with n = 4: the output differs between sim and native')


def kernel_shape(path):
    """(element-wise loops, tile allocations) of the kernel function in a dumped source"""
    src = open(path).read()
    body = src[src.index('int pld_ckernel(const pc_rt *rt, void *bk, int64_t *args)\n{'):]
    return len(re.findall(r'for \(int64_t i = 0; i < [0-9]+; i\+\+\)', body)), body.count('rt->alloc(')


def npy_f32_bits(path, shape, words):
    """a float32 .npy of `shape` holding the given 32-bit patterns"""
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ''.join('%d, ' % d for d in shape)
    hdr += ' ' * (64 - 10 - len(hdr) - 1) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + struct.pack('<%dI' % len(words), *words))


# FP32 bit patterns where an IEEE maximum / minimum is easy to get wrong: zeros of both signs, infinities, NaNs with
# payloads and signs, subnormals, the largest finite, ones
SPECIAL_F32 = (0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fc01234, 0xffa00001,
               0x00000001, 0x80000001, 0x7f7fffff, 0x3f800000, 0xbf800000, 0x00800000)


def fuse(args, work, env):
    """fused element-wise chains (src/hw_backend/pld_cgen_fuse.c): sim's bytes, the fusion visible in the generated
    C, sim's errors in sim's order inside a chain"""
    n = os.path.join(work, 'n5.npy')
    npy_scalar_i64(n, 5)
    # p, q: every ordered pair of SPECIAL_F32 (196), then random bits
    rng = random.Random(7)
    pairs = [(a, b) for a in SPECIAL_F32 for b in SPECIAL_F32]
    pairs += [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(16 * 32 - len(pairs))]
    npy_f32_bits(os.path.join(work, 'p.npy'), (16, 32), [a for a, _ in pairs])
    npy_f32_bits(os.path.join(work, 'q.npy'), (16, 32), [b for _, b in pairs])
    ins = ['--in', 'x=random:1', '--in', 'y=random:2', '--in', 'h=random:3', '--in', 'bh=random:4', '--in', 'iv=random:5',
           '--in', 'rv=random:6', '--in', 'n=' + n, '--in', 'p=' + os.path.join(work, 'p.npy'),
           '--in', 'q=' + os.path.join(work, 'q.npy')]
    outs = ['o32', 'o16', 'obf', 'oi', 'ocar', 'obrk', 'out', 'ob', 'obh', 'ocl', 'omx', 'omn', 'om3', 'om4']
    same_on_sim_and_native(args, work, env, 'fuse.pld', ins, outs)
    print('ok: fuse: %d outputs byte-identical on sim and native' % len(outs))
    dump = os.path.join(work, 'dump')
    o = ins + ['--backend-options', 'dump=' + dump]
    for x in outs:
        o += ['--out', '%s=%s' % (x, os.path.join(work, 'd_%s.npy' % x))]
    rc, out = run(args, 'fuse.pld', 'native', o, env)
    expect(rc, out, 0, [], 'fuse.pld on native with dump=DIR')
    loops, allocs = kernel_shape(os.path.join(dump, 'chain.c'))
    if (loops, allocs) != (1, 2):
        fail('kernel chain: %d element-wise loops and %d tile allocations in the generated C, want 1 and 2 (the '
             '7 statements fused into one loop of at most 8 ops, u1..u6 without storage; unfused: 7 and 8)'
             % (loops, allocs))
    loops, allocs = kernel_shape(os.path.join(dump, 'mix.c'))
    if loops > 24:
        fail('kernel mix: %d element-wise loops in the generated C, want at most 24 (its chains fused; 62 unfused)' % loops)
    rows = len(re.findall(r'for \(int64_t r = 0; r < 16; r\+\+\)', open(os.path.join(dump, 'bcast.c')).read()))
    if rows < 4:
        fail('kernel bcast: %d fused loops over rows in the generated C, want at least 4 (its chains with row / column '
             'operands fused)' % rows)
    print('ok: fuse: kernel chain is one loop over 2 tiles; kernel mix has %d loops, %d tile allocations; kernel bcast '
          '%d fused loops over rows' % (loops, allocs, rows))
    fuse_view(args, work, env, n)
    for v, needle in ((200, 'fuse_err.pld:15:41: error: pl.tensor.read: index 200 out of range in dimension 0'),
                      (3, 'fuse_err.pld:16:9: error: kernel k needs 262144 bytes of Vec (UB) tiles at once')):
        p = os.path.join(work, 'e%d.npy' % v)
        npy_scalar_i64(p, v)
        msgs = {}
        for b in ('sim', 'native'):
            rc, out = run(args, 'fuse_err.pld', b, ['--in', 'x=random:1', '--in', 'n=' + p, '--out',
                                                    'out=' + os.path.join(work, 'e.npy')], env)
            expect(rc, out, 70, [needle], 'an error inside a fused chain (n = %d) on %s' % (v, b))
            msgs[b] = [l for l in out.splitlines() if 'error:' in l or 'note:' in l]
        if msgs['sim'] != msgs['native']:
            fail('the error inside a chain (n = %d) differs: sim %r, native %r' % (v, msgs['sim'], msgs['native']))


def fuse_view(args, work, env, n):
    """slices read in place and concats written by fused chains (fuse_view.pld): sim's bytes, no copy left in
    the generated C where the chain reads the window, sim's errors in sim's order (fuse_view_err.pld)"""
    ins = ['--in', 'x=random:1', '--in', 'y=random:2', '--in', 'h=random:3', '--in', 'th=random:4', '--in', 'n=' + n]
    outs = ['orope', 'o1', 'o2', 'o3', 'o4', 'o5', 'o6']
    same_on_sim_and_native(args, work, env, 'fuse_view.pld', ins, outs)
    print('ok: fuse: fuse_view.pld, %d outputs byte-identical on sim and native' % len(outs))
    dump = os.path.join(work, 'vdump')
    o = ins + ['--backend-options', 'dump=' + dump]
    for x in outs:
        o += ['--out', '%s=%s' % (x, os.path.join(work, 'v_%s.npy' % x))]
    rc, out = run(args, 'fuse_view.pld', 'native', o, env)
    expect(rc, out, 0, [], 'fuse_view.pld on native with dump=DIR')
    copies = lambda src: len(re.findall(r'PC_K\([0-9]+, copy,', src))  # noqa: E731
    rope = open(os.path.join(dump, 'rope.c')).read()
    loops, allocs = kernel_shape(os.path.join(dump, 'rope.c'))
    if copies(rope) or allocs != 7:
        fail('kernel rope: %d library copies and %d tile allocations in the generated C, want 0 and 7 (lo and hi read '
             'in place, the rotation written into u: tx, ta, tc, ts, t, u, t_next; unfused: 4 copies, 12 allocations)'
             % (copies(rope), allocs))
    nv = copies(open(os.path.join(dump, 'views.c')).read())
    if nv != 3:
        fail('kernel views: %d library copies in the generated C, want 3 (w1, read after its chain; tz and z2, whose '
             'chain writes tz; unfused: 20)' % nv)
    print('ok: fuse: kernel rope makes no copy (%d tile allocations); kernel views 3 copies' % allocs)
    for v, needle in ((200, 'fuse_view_err.pld:18:14: error: pl.tile.slice: the window is outside the tile'),
                      (3, 'fuse_view_err.pld:20:9: error: kernel k needs 229376 bytes of Vec (UB) tiles at once')):
        p = os.path.join(work, 've%d.npy' % v)
        npy_scalar_i64(p, v)
        msgs = {}
        for b in ('sim', 'native'):
            rc, out = run(args, 'fuse_view_err.pld', b, ['--in', 'x=random:1', '--in', 'y=random:2', '--in', 'n=' + p,
                                                         '--out', 'out=' + os.path.join(work, 've.npy')], env)
            expect(rc, out, 70, [needle], 'an error inside a fused chain with slices (n = %d) on %s' % (v, b))
            msgs[b] = [l for l in out.splitlines() if 'error:' in l or 'note:' in l]
        if msgs['sim'] != msgs['native']:
            fail('the error inside a chain with slices (n = %d) differs: sim %r, native %r'
                 % (v, msgs['sim'], msgs['native']))
    print('ok: fuse: fuse_view_err.pld, sim\'s errors at sim\'s places')

def fuse_cast(args, work, env):
    """casts (every rounding mode), log and rsqrt fused into element-wise loops: sim's bytes, no library call left for
    them in the generated C"""
    rng = random.Random(11)
    words = [a for a in SPECIAL_F32 for _ in SPECIAL_F32]
    words += [rng.getrandbits(32) for _ in range(16 * 32 - len(words))]
    npy_f32_bits(os.path.join(work, 'p.npy'), (16, 32), words)
    ins = ['--in', 'x=random:1', '--in', 'p=' + os.path.join(work, 'p.npy'), '--in', 'h=random:3', '--in', 'iv=random:5']
    outs = ['oq', 'ot', 'ohn', 'ohf', 'oho', 'obc', 'obt', 'ohb', 'obh', 'oif', 'oih', 'oib', 'olg', 'oln', 'olb']
    same_on_sim_and_native(args, work, env, 'fuse_cast.pld', ins, outs)
    print('ok: fuse_cast: %d outputs byte-identical on sim and native' % len(outs))
    dump = os.path.join(work, 'dump')
    o = ins + ['--backend-options', 'dump=' + dump]
    for x in outs:
        o += ['--out', '%s=%s' % (x, os.path.join(work, 'd_%s.npy' % x))]
    rc, out = run(args, 'fuse_cast.pld', 'native', o, env)
    expect(rc, out, 0, [], 'fuse_cast.pld on native with dump=DIR')
    src = open(os.path.join(dump, 'casts.c')).read()
    lib = re.findall(r'PC_K\([0-9]+, (cast|unary),', src)
    if lib:
        fail('kernel casts: %d library calls (cast / unary) in the generated C, want 0 (every cast, log and rsqrt '
             'fused)' % len(lib))
    if 'pld_kfn_f64_round_bits(' not in src or 'pld_kfn_f2i32(' not in src or 'pld_kfn_log(' not in src:
        fail('kernel casts: the fused loops do not call the shared per-element functions of pld_kern_fn.h')
    print('ok: fuse_cast: kernel casts calls the library for no cast, log or rsqrt (%d element-wise loops)'
          % kernel_shape(os.path.join(dump, 'casts.c'))[0])


def mm(args, work, env):
    """mm.pld: pl.tile.cast in every rounding mode, BF16 matmul / matmul_acc (init_cond in a loop) /
    matmul_bias and atomic stores: byte-identical on sim and native"""
    outs = ['cst', 'hst', 'mm', 'acc']
    same_on_sim_and_native(args, work, env, 'mm.pld', ['--in', 'x=random:3', '--in', 'w=random:4'], outs)
    print('ok: mm: %d outputs byte-identical on sim and native' % len(outs))
    # FP32 (issue 44): the library's blocked matmul on both backends; the kernel source
    # (dump=DIR) calls it for every matmul and holds no inline matmul loop of its own
    ins = ['--in', 'x=random:3', '--in', 'w=random:4']
    same_on_sim_and_native(args, work, env, 'mm_f32.pld', ins, ['y', 'g'])
    d, dd = os.path.join(work, 'f32cache'), os.path.join(work, 'f32dump')
    rc, out = run(args, 'mm_f32.pld', 'native', ins + ['--out', 'y=' + os.path.join(work, 'f32y.npy'), '--out',
                                                       'g=' + os.path.join(work, 'f32g.npy'),
                                                       '--backend-options', 'cache=%s,dump=%s' % (d, dd)], env)
    if rc != 0:
        fail('mm_f32.pld with dump=DIR exited %d' % rc, out)
    src = open(os.path.join(dd, 'k.c')).read()
    calls = len(re.findall(r'PC_K\(\d+, matmul,', src))
    if calls != 4 or re.search(r'\+= x \* b\[j\]', src):
        fail('mm_f32.pld: the kernel source makes %d calls of the library matmul (want 4: matmul, matmul_acc, '
             'matmul_bias, gemv) or has an inline matmul loop' % calls)
    print('ok: mm: FP32 matmul / matmul_acc / matmul_bias / gemv byte-identical on sim and native, all 4 through '
          'the library')


def tensor(args, work, env):
    """tensor_views.pld: pl.tensor views and assemble statements compiled; sim's bytes"""
    same_on_sim_and_native(args, work, env, 'tensor_views.pld', ['--in', 'x=random:3'], ['out'])
    print('ok: tensor: the output byte-identical on sim and native')


def tlayout(args, work, env):
    """tensor_layout.pld: the pl.tensor.* layout / gather / scatter ops compiled (pld_cgen_tlay.c); sim's bytes and
    no op of the kernel run by the tree walker"""
    ins = ['--in', 'x=random:3']
    same_on_sim_and_native(args, work, env, 'tensor_layout.pld', ins, ['out', 'ci'])
    rc, out = run(args, 'tensor_layout.pld', 'native', ins + ['--out', 'out=' + os.path.join(work, 'again.npy'),
                                                              '--out', 'ci=' + os.path.join(work, 'again_ci.npy')], env)
    if rc != 0 or '(0 in compiled kernels)' not in out:
        fail('tensor_layout.pld on native: an op of the kernel ran in the tree walker (want "(0 in compiled kernels)")',
             out)
    print('ok: tlayout: both outputs byte-identical on sim and native, 0 interpreted ops in the compiled kernel')


def tdyn(args, work, env):
    """tensor_dyn.pld: pl.tensor.* element-wise / reduction / cast ops of a dynamic dim compiled (result shapes at run
    time): sim's bytes, 0 ops of the kernel in the tree walker; tensor_dyn_err.pld: their shape errors with sim's
    messages"""
    f = {}
    for nm, shape in (('x', (6, 20)), ('v', (6, 1)), ('w', (1, 20)), ('w7', (1, 7)), ('y', (6, 20)), ('y7', (6, 7))):
        f[nm] = os.path.join(work, nm + '.npy')
        npy_f32(f[nm], shape, nm)
    ins = ['--in', 'x=' + f['x'], '--in', 'v=' + f['v'], '--in', 'w=' + f['w']]
    same_on_sim_and_native(args, work, env, 'tensor_dyn.pld', ins, ['out', 'ai', 'mo'])
    rc, out = run(args, 'tensor_dyn.pld', 'native', ins + ['--out', 'out=' + os.path.join(work, 'again.npy'),
                                                           '--out', 'ai=' + os.path.join(work, 'again_ai.npy'),
                                                           '--out', 'mo=' + os.path.join(work, 'again_mo.npy')], env)
    if rc != 0 or '(0 in compiled kernels)' not in out:
        fail('tensor_dyn.pld on native: an op of the kernel ran in the tree walker (want "(0 in compiled kernels)")', out)
    for w, y, want in (('w7', 'y', 'pl.tensor.col_expand_mul: the vector [1, 7] must be [1, N] for the operand [6, 20]'),
                       ('w', 'y7', 'pl.tensor.add: shapes [6, 20] and [6, 7] do not broadcast')):
        msgs = {}
        for b in ('sim', 'native'):
            rc, out = run(args, 'tensor_dyn_err.pld', b, ['--in', 'x=' + f['x'], '--in', 'w=' + f[w], '--in', 'y=' + f[y],
                                                          '--out', 'out=' + os.path.join(work, 'e.npy')], env)
            msgs[b] = [l for l in out.splitlines() if 'error:' in l]
            if rc == 0 or not any(want in l for l in msgs[b]):
                fail('tensor_dyn_err.pld on %s: want exit != 0 and "%s"' % (b, want), out)
        if msgs['sim'] != msgs['native']:
            fail('tensor_dyn_err.pld: the messages differ', '\n'.join(msgs['sim'] + msgs['native']))
    rc, out = run(args, 'tensor_dyn_err.pld', 'native', ['--in', 'x=' + f['x'], '--in', 'w=' + f['w'], '--in',
                                                         'y=' + f['y'], '--out', 'out=' + os.path.join(work, 'e.npy')], env)
    if rc != 0 or '(0 in compiled kernels)' not in out:
        fail('tensor_dyn_err.pld on native (no error): want exit 0 and "(0 in compiled kernels)"', out)
    # tensor_dyn_create.pld: full / create of shape [6, n]
    for v in (20, -3, 1 << 40):
        npy_scalar_i64(os.path.join(work, 'n.npy'), v)
        ins = ['--in', 'x=' + f['x'], '--in', 'n=' + os.path.join(work, 'n.npy')]
        if v == 20:
            same_on_sim_and_native(args, work, env, 'tensor_dyn_create.pld', ins, ['out'])
            rc, out = run(args, 'tensor_dyn_create.pld', 'native', ins + ['--out', 'out=' + os.path.join(work, 'e.npy')], env)
            if rc != 0 or '(0 in compiled kernels)' not in out:
                fail('tensor_dyn_create.pld on native: want exit 0 and "(0 in compiled kernels)"', out)
            continue
        want = ('pl.tensor.full: shape dimension 1 is negative (-3)' if v < 0 else
                'pl.tensor.full: a FP32 tensor of shape [6, 1099511627776] is larger than pldrun allows (1 TiB)')
        msgs = {}
        for b in ('sim', 'native'):
            rc, out = run(args, 'tensor_dyn_create.pld', b, ins + ['--out', 'out=' + os.path.join(work, 'e.npy')], env)
            msgs[b] = [l for l in out.splitlines() if 'error:' in l]
            if rc == 0 or not any(want in l for l in msgs[b]):
                fail('tensor_dyn_create.pld on %s (n = %d): want exit != 0 and "%s"' % (b, v, want), out)
        if msgs['sim'] != msgs['native']:
            fail('tensor_dyn_create.pld: the messages differ', '\n'.join(msgs['sim'] + msgs['native']))
    # tensor_dyn_views.pld: transpose / reshape / view / slice / assemble of [6, M]
    npy_scalar_i64(os.path.join(work, 'n.npy'), 20)
    ins = ['--in', 'x=' + f['x'], '--in', 'n=' + os.path.join(work, 'n.npy')]
    same_on_sim_and_native(args, work, env, 'tensor_dyn_views.pld', ins, ['out'])
    rc, out = run(args, 'tensor_dyn_views.pld', 'native', ins + ['--out', 'out=' + os.path.join(work, 'e.npy')], env)
    if rc != 0 or '(0 in compiled kernels)' not in out:
        fail('tensor_dyn_views.pld on native: want exit 0 and "(0 in compiled kernels)"', out)
    # tensor_dyn_more.pld: expand_clone / part_add / matmul_acc of [6, M]
    same_on_sim_and_native(args, work, env, 'tensor_dyn_more.pld', ['--in', 'x=' + f['x']], ['out'])
    rc, out = run(args, 'tensor_dyn_more.pld', 'native', ['--in', 'x=' + f['x'], '--out', 'out=' + os.path.join(work, 'e.npy')],
                  env)
    if rc != 0 or '(0 in compiled kernels)' not in out:
        fail('tensor_dyn_more.pld on native: want exit 0 and "(0 in compiled kernels)"', out)
    # tensor_dyn_gather.pld: gather / scatter / fillpad / scatter_update of [6, M] (ix: [6, 4] INT32 column indices)
    hdr = "{'descr': '<i4', 'fortran_order': False, 'shape': (6, 4, ), }"
    hdr += ' ' * (64 - 10 - len(hdr) - 1) + '\n'
    with open(os.path.join(work, 'ix.npy'), 'wb') as fh:
        fh.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
        fh.write(struct.pack('<24i', *[(i * 7) % 20 for i in range(24)]))
    ins = ['--in', 'x=' + f['x'], '--in', 'ix=' + os.path.join(work, 'ix.npy')]
    same_on_sim_and_native(args, work, env, 'tensor_dyn_gather.pld', ins, ['out'])
    rc, out = run(args, 'tensor_dyn_gather.pld', 'native', ins + ['--out', 'out=' + os.path.join(work, 'e.npy')], env)
    if rc != 0 or '(0 in compiled kernels)' not in out:
        fail('tensor_dyn_gather.pld on native: want exit 0 and "(0 in compiled kernels)"', out)
    # scope_dyn.pld: M read in a pl.at scope and a pl.spmd grid
    same_on_sim_and_native(args, work, env, 'scope_dyn.pld', ['--in', 'x=' + f['x']], ['out'])
    rc, out = run(args, 'scope_dyn.pld', 'native', ['--in', 'x=' + f['x'], '--out', 'out=' + os.path.join(work, 'e.npy')], env)
    if rc != 0 or '(0 in compiled kernels)' not in out:
        fail('scope_dyn.pld on native: want exit 0 and "(0 in compiled kernels)"', out)
    # dyn_unbound_arg.pld: M bound by orch's x, read in a kernel that does not take x; dyn_unbound.pld: M never bound
    f['y'] = os.path.join(work, 'y16.npy')
    npy_f32(f['y'], (6, 16), 'y16')
    ins = ['--in', 'x=' + f['x'], '--in', 'y=' + f['y']]
    same_on_sim_and_native(args, work, env, 'dyn_unbound_arg.pld', ins, ['out'])
    rc, out = run(args, 'dyn_unbound_arg.pld', 'native', ins + ['--out', 'out=' + os.path.join(work, 'e.npy')], env)
    if rc != 0 or '(0 in compiled kernels)' not in out:
        fail('dyn_unbound_arg.pld on native: want exit 0 and "(0 in compiled kernels)"', out)
    msgs = {}
    for b in ('sim', 'native'):
        rc, out = run(args, 'dyn_unbound.pld', b, ['--in', 'y=' + f['y'], '--out', 'out=' + os.path.join(work, 'e.npy')], env)
        msgs[b] = [l for l in out.splitlines() if 'error:' in l]
        if rc == 0 or not any("dynamic dimension 'M' is not bound" in l for l in msgs[b]):
            fail('dyn_unbound.pld on %s: want exit != 0 and the unbound-dimension message' % b, out)
    if msgs['sim'] != msgs['native']:
        fail('dyn_unbound.pld: the messages differ', '\n'.join(msgs['sim'] + msgs['native']))
    # tensor_index.pld: x[1] and x[i, 2] as views
    f['x3'] = os.path.join(work, 'x3.npy')
    npy_f32(f['x3'], (4, 6, 16), 'x3')
    # tensor_row_assign.pld: out[0] = ..., out[i] = x[2] as window copies
    for prog in ('tensor_index.pld', 'tensor_row_assign.pld'):
        for i in (3, 9):
            npy_scalar_i64(os.path.join(work, 'i.npy'), i)
            ins = ['--in', 'x=' + f['x3'], '--in', 'i=' + os.path.join(work, 'i.npy')]
            if i == 3:
                same_on_sim_and_native(args, work, env, prog, ins, ['out'])
                rc, out = run(args, prog, 'native', ins + ['--out', 'out=' + os.path.join(work, 'e.npy')], env)
                if rc != 0 or '(0 in compiled kernels)' not in out:
                    fail('%s on native: want exit 0 and "(0 in compiled kernels)"' % prog, out)
                continue
            msgs = {}
            for b in ('sim', 'native'):
                rc, out = run(args, prog, b, ins + ['--out', 'out=' + os.path.join(work, 'e.npy')], env)
                msgs[b] = [l for l in out.splitlines() if 'error:' in l]
                if rc == 0 or not any('index 9 out of range for dimension 0 (size 4)' in l for l in msgs[b]):
                    fail('%s on %s (i = 9): want exit != 0 and the index message' % (prog, b), out)
            if msgs['sim'] != msgs['native']:
                fail('%s: the messages differ' % prog, '\n'.join(msgs['sim'] + msgs['native']))
    # tensor_dyn_layout.pld: tensor_layout.pld's ops on x [8, M] and y [N, 32] (shapes and checks at run time)
    npy_f32(os.path.join(work, 'x16.npy'), (8, 16), 'x16')
    npy_f32(os.path.join(work, 'y32.npy'), (8, 32), 'y32')
    ins = ['--in', 'x=' + os.path.join(work, 'x16.npy'), '--in', 'y=' + os.path.join(work, 'y32.npy')]
    same_on_sim_and_native(args, work, env, 'tensor_dyn_layout.pld', ins, ['out', 'ci'])
    rc, out = run(args, 'tensor_dyn_layout.pld', 'native', ins + ['--out', 'out=' + os.path.join(work, 'e.npy'),
                                                                  '--out', 'ci=' + os.path.join(work, 'e2.npy')], env)
    if rc != 0 or '(0 in compiled kernels)' not in out:
        fail('tensor_dyn_layout.pld on native: want exit 0 and "(0 in compiled kernels)"', out)
    # elem_subscript.pld: x[i, j] reads of tensors and tiles, tile[i, j] = v writes
    for i, want in ((2, None), (9, 'index 9 out of range for dimension 0 (size 8)'), (-1, 'tile index out of range')):
        npy_scalar_i64(os.path.join(work, 'i.npy'), i)
        ins = ['--in', 'x=' + os.path.join(work, 'x16.npy'), '--in', 'i=' + os.path.join(work, 'i.npy')]
        if want is None:
            same_on_sim_and_native(args, work, env, 'elem_subscript.pld', ins, ['out'])
            rc, out = run(args, 'elem_subscript.pld', 'native', ins + ['--out', 'out=' + os.path.join(work, 'e.npy')], env)
            if rc != 0 or '(0 in compiled kernels)' not in out:
                fail('elem_subscript.pld on native: want exit 0 and "(0 in compiled kernels)"', out)
            continue
        msgs = {}
        for b in ('sim', 'native'):
            rc, out = run(args, 'elem_subscript.pld', b, ins + ['--out', 'out=' + os.path.join(work, 'e.npy')], env)
            msgs[b] = [l for l in out.splitlines() if 'error:' in l]
            if rc == 0 or not any(want in l for l in msgs[b]):
                fail('elem_subscript.pld on %s (i = %d): want exit != 0 and "%s"' % (b, i, want), out)
        if msgs['sim'] != msgs['native']:
            fail('elem_subscript.pld: the messages differ', '\n'.join(msgs['sim'] + msgs['native']))
    print('ok: tdyn: dynamic-shape tensor ops byte-identical on sim and native, 0 interpreted ops in the kernel, '
          'shape errors with sim\'s messages')


def peak_rss_kb(cmd, env, limit=300):
    """runs cmd (no MPI launcher: a singleton); its exit status, output and peak RSS in KiB (wait4)"""
    with tempfile.TemporaryFile() as log:
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        signal.signal(signal.SIGALRM, lambda *_: os.killpg(p.pid, signal.SIGKILL))
        signal.alarm(limit)
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            signal.alarm(0)
        p.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        return p.returncode, log.read().decode(errors='replace'), ru.ru_maxrss


def memory(args, work, env):
    """tensor_loop.pld: sim's bytes on native, and native's peak memory does not grow with the iteration count"""
    prog = os.path.join(HERE, 'tensor_loop.pld')
    ins = ['--in', 'x=random:3', '--in', 'v=random:4']
    npy_scalar_i64(os.path.join(work, 'n1.npy'), 1)
    same_on_sim_and_native(args, work, env, 'tensor_loop.pld', ins + ['--in', 'n=' + os.path.join(work, 'n1.npy')],
                           ['out'])
    peak = {}
    for n in (2000, 20000):
        f = os.path.join(work, 'n%d.npy' % n)
        npy_scalar_i64(f, n)
        # the cache is warm (same_on_sim_and_native compiled the kernel): the compiler's RSS is not measured
        rc, out, kb = peak_rss_kb([args.pldrun, prog, '--backend', 'native'] + ins +
                                  ['--in', 'n=' + f, '--out', 'out=' + os.path.join(work, 'm%d.npy' % n)], env)
        if rc != 0:
            fail('tensor_loop.pld at n=%d on native exited %d' % (n, rc), out)
        peak[n] = kb
    if peak[20000] > peak[2000] * 1.1 + 4096:
        fail('native peak memory grows with the iteration count: %d KiB at 2,000 iterations, %d KiB at 20,000'
             % (peak[2000], peak[20000]))
    print('ok: memory: sim\'s bytes; native peak RSS %d KiB at 2,000 iterations, %d KiB at 20,000' % (peak[2000], peak[20000]))


def cache(args, work, env):
    d = os.path.join(work, 'kcache')
    o = ['--in', 'x=random:1', '--backend-options', 'cache=' + d]
    rc, out = run(args, 'numerics_small.pld', 'native', o + ['--out', 'out=' + os.path.join(work, 'c1.npy')], env, P=2)
    if rc != 0:
        fail('first run exited %d' % rc, out)
    sos = sorted(glob.glob(os.path.join(d, 'k-*.so')))
    if len(sos) != 1 or not os.path.exists(sos[0][:-3] + '.c'):
        fail('the cache holds %s after one run of one kernel (2 ranks)' % os.listdir(d))
    before = {p: os.stat(p).st_mtime_ns for p in glob.glob(os.path.join(d, '*'))}
    rc, out = run(args, 'numerics_small.pld', 'native', o + ['--out', 'out=' + os.path.join(work, 'c2.npy')], env, P=2)
    if rc != 0:
        fail('second run exited %d' % rc, out)
    after = {p: os.stat(p).st_mtime_ns for p in glob.glob(os.path.join(d, '*'))}
    if before != after:
        fail('the second run rewrote the cache: %s -> %s' % (sorted(before), sorted(after)))
    if open(os.path.join(work, 'c1.npy'), 'rb').read() != open(os.path.join(work, 'c2.npy'), 'rb').read():
        fail('the cached kernel gave another result')
    print('ok: cache: compiled once (%s), reused by the second run' % os.path.basename(sos[0]))


def units(args, work, env):
    gcc = shutil.which('gcc') or shutil.which('cc')
    prog = os.path.join(HERE, UNITS_PROG)
    ins = []
    for a in open(prog).read().split('# inputs:', 1)[1].splitlines()[0].split():
        ins += ['--in', a]
    outs = ('bouts', 'gouts', 'routs', 'aouts', 'credits')

    def wrapper(name, logdir, refuse=None, wait=False):
        # compiles (not --version, not the -Werror flag probes) are logged with the other compiles they saw
        # running; with wait, a compile waits up to 5 s for another (a compile that waited in vain stops the waits)
        w = os.path.join(work, name)
        with open(w, 'w') as f:
            f.write('#!/bin/sh\nd=%s\n' % logdir)
            f.write('case " $* " in *" --version "*|*" -Werror "*) exec %s "$@";; esac\n' % gcc)
            if refuse:
                # the source files and what they #include "..." (next to them)
                f.write('for a in "$@"; do case "$a" in *.c)\n'
                        '  for s in "$a" $(sed -n \'s/^#include "\\(.*\\)"$/\\1/p\' "$a" | sed "s|^[^/]|$(dirname "$a")/&|"); do\n'
                        '    if grep -q "kernel %s of" "$s"; then echo "mycc: refusing %s" >&2; exit 1; fi\n'
                        '  done;; esac; done\n' % (refuse, refuse))
            if not wait:
                f.write('touch "$d/alone"\n')
            f.write('touch "$d/running.$$"\ni=0\nothers=\n'
                    'while [ ! -e "$d/alone" ] && [ $i -lt 50 ]; do\n'
                    '  others=$(cd "$d" && ls running.* | grep -vx "running.$$" | tr "\\n" " ")\n'
                    '  [ -n "$others" ] && break\n  sleep 0.1\n  i=$((i + 1))\ndone\n'
                    '[ -n "$others" ] || touch "$d/alone"\n'
                    'echo "compile $$ saw: $others" >> "$d/calls"\n'
                    '%s "$@"\nrc=$?\nrm -f "$d/running.$$"\nexit $rc\n' % gcc)
        os.chmod(w, 0o755)
        return w

    def native(tag, opts, refuse=None, wait=False):
        # a run of tag's wrapper on tag's cache: the compiles this run made
        logdir, cache, cc = (os.path.join(work, x + tag) for x in ('log-', 'cache-', 'cc-'))
        if not os.path.isdir(logdir):
            os.makedirs(logdir)
            wrapper('cc-' + tag, logdir, refuse, wait)
        calls = os.path.join(logdir, 'calls')
        seen = len(open(calls).read().splitlines()) if os.path.exists(calls) else 0
        extra = ins + ['--backend-options', 'cache=%s,cc=%s%s' % (cache, cc, opts)]
        for o in outs:
            extra += ['--out', '%s=%s' % (o, os.path.join(work, '%s_%s.npy' % (o, tag)))]
        rc, out = run(args, prog, 'native', extra, env, P=2, limit=120)
        lines = open(calls).read().splitlines() if os.path.exists(calls) else []
        return rc, out, lines[seen:], cache

    rc, out = run(args, prog, 'sim', ins + sum((['--out', '%s=%s' % (o, os.path.join(work, o + '_sim.npy'))]
                                                for o in outs), []), env, P=2)
    if rc != 0:
        fail('sim exited %d' % rc, out)
    # the default: as many units as CPUs online
    want = min(os.cpu_count() or 1, 5)
    rc, out, calls, _ = native('cpus', '', wait=True)
    if rc != 0 or len(calls) != want:
        fail('default: exit %d, %d compiles for 5 kernels on %s CPUs, expected %d' % (rc, len(calls), os.cpu_count(), want),
             out)
    print('ok: default: %d compiles (%s CPUs)' % (want, os.cpu_count()))
    # jobs=1: one compile of the five kernels, sim's bytes, a cache entry per kernel
    rc, out, calls, cache = native('one', ',jobs=1')
    if rc != 0:
        fail('jobs=1: exited %d' % rc, out)
    if len(calls) != 1:
        fail('jobs=1: %d compiles for 5 kernels, expected 1: %s' % (len(calls), calls), out)
    sos = glob.glob(os.path.join(cache, 'k-*.so'))
    if len(sos) != 5 or len(glob.glob(os.path.join(cache, 'k-*.c'))) != 5:
        fail('jobs=1: the cache holds %s, expected 5 kernels (k-*.so, k-*.c)' % cache_files(cache))
    for o in outs:
        if open(os.path.join(work, o + '_sim.npy'), 'rb').read() != open(os.path.join(work, o + '_one.npy'), 'rb').read():
            fail('jobs=1: output %s differs from sim' % o)
    rc, out, again, _ = native('one', ',jobs=1')
    if rc != 0 or again:
        fail('the second run on the filled cache: exit %d, compiles %s, expected none' % (rc, again), out)
    print('ok: jobs=1: one compile of 5 kernels, sim\'s bytes, 5 cache entries; a second run compiles nothing')
    # jobs=2: two compiles at the same time
    rc, out, calls, _ = native('two', ',jobs=2', wait=True)
    if rc != 0:
        fail('jobs=2: exited %d' % rc, out)
    if len(calls) != 2 or not any(l.split('saw:')[1].strip() for l in calls):
        fail('jobs=2: %d compiles for 5 kernels, expected 2 that overlap: %s' % (len(calls), calls), out)
    print('ok: jobs=2: 2 compiles that overlap (%s)' % '; '.join(calls))
    # one kernel of a unit refused: named, the compiler's message, exit 69, only the probed flags left
    rc, out, calls, cache = native('bad', ',jobs=1', refuse='gather_step')
    expect(rc, out, 69, ['kernel gather_step (', "failed (exit 1)", 'mycc: refusing gather_step'],
           'a compiler refusing one kernel of a unit of 5')
    named = re.findall(r'kernel (\w+) \(', out)
    if set(named) != {'gather_step'}:
        fail('the failed compile names %s, expected gather_step alone' % sorted(set(named)), out)
    left = [f for f in cache_files(cache) if not (f.startswith('cc-') and f.endswith('.flags'))]
    if left:
        fail('a failed unit left files in the cache: %s' % left, out)
    print('ok: a refused kernel of a unit is named; nothing but the probed flags left')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pldrun')
    ap.add_argument('--mpiexec', default='mpirun')
    ap.add_argument('--list', action='store_true', help='print the parts and exit')
    ap.add_argument('what', nargs='?', choices=PARTS)
    args = ap.parse_args()
    T.require_programs('run_native.py', [(p, os.path.join(HERE, f)) for p in (PARTS if args.list else [args.what])
                                         if p for f in FILES[p]])
    if args.list:
        print('\n'.join(PARTS))
        return 0
    if not args.pldrun or not args.what:
        ap.error('--pldrun and a part (%s) are needed' % ', '.join(PARTS))
    work = tempfile.mkdtemp(prefix='pld_native_')
    env = dict(os.environ)
    env['XDG_CACHE_HOME'] = os.path.join(work, 'xdg')
    try:
        {'numerics': numerics, 'errors': errors, 'load': load, 'control': control, 'ext': ext, 'system': system,
         'cache': cache, 'cachedir': cachedir, 'cachekey': cachekey, 'clang': clang, 'boundary': boundary,
         'layout': layout, 'mm': mm, 'memory': memory, 'tensor': tensor,
     'tlayout': tlayout, 'tdyn': tdyn, 'units': units, 'fuse': fuse,
     'fuse_cast': fuse_cast}[args.what](args, work, env)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
