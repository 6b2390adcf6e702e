#!/usr/bin/env python3
"""run_plugin.py - pldrun with a backend plugin (CTest plugin_<case>).

The test plugin (tests/plugin/pld_test_plugin.c) runs a few kernels as host C
code, records every call in a log and checks the ABI bytes of every launch.
Goldens are computed here, in Python, never by pldrun.

Cases:
  kernels  tests/plugin/plugin_kernels.pld at P = 1, 2 on the plugin and on
           sim: a typed kernel (libffi), a pl.at scope with its captured
           values as arguments, a pl.spmd grid of 4 blocks; the plugin's log
           (program_load's kernel list, kernel_load once per kernel, the
           launches with their block counts)
  hello    programs/tutorial/hello_rank.pld at P = 2 on the plugin (kernel
           `stamp`, args[] form, tensor views with an offset)
  device   `kernels` with a plugin that keeps its own memory: pldrun copies
           each tensor in and out (mem_alloc, upload, download, mem_free; no
           block leaked)
  window   tests/plugin/plugin_window.pld at P = 2, 3: the CommContext the
           kernel gets (rankNum, rankId, windowsIn[r] mapped on shm for every
           r, only this rank's on rma) and a window argument in its window
  errors   loader refusals (not a shared object, no entry symbol, wrong ABI
           version, short table, no table, missing entry point: exit 69 with
           the path), the plugin failing open (69), a kernel it cannot load
           and a failed launch (70, located, naming the kernel)
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'mpi'))
import pld_mpitest as T  # noqa: E402

KERNELS = os.path.join(HERE, 'plugin_kernels.pld')
WINDOW = os.path.join(HERE, 'plugin_window.pld')
HELLO = os.path.join(ROOT, 'programs', 'tutorial', 'hello_rank.pld')
ROWS, COLS = 4, 16
CASES = ('kernels', 'hello', 'device', 'window', 'errors')  # `--list`: one CTest test each (tests/plugin.cmake)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL: ' + what)


class Runner:
    def __init__(self, a):
        self.a = a
        self.env = T.mpi_env(ROOT)
        os.makedirs(a.workdir, exist_ok=True)

    def run(self, p, program, args, backend=True, options=None, env=None):
        extra = []
        if backend:
            extra = ['--backend', self.a.plugin]
            if options:
                extra += ['--backend-options', options]
        e = dict(self.env)
        e.pop('PLD_TEST_PLUGIN_ENTRY', None)
        e.update(env or {})
        return T.run_pldrun(self.a.mpiexec, self.a.numproc_flag, p, self.a.pldrun, program, extra + args, e,
                            self.a.workdir)

    def path(self, name):
        return os.path.join(self.a.workdir, name)

    def log(self, p):
        lines = []
        for r in range(p):
            with open(self.path('log%d.txt' % r)) as f:
                lines += f.read().splitlines()
        return lines


def arange(n):
    return [float(i) for i in range(n)]


def kernels_case(R, p, backend, env=None):
    tag = 'kernels P=%d %s%s' % (p, 'plugin' if backend else 'sim', ' ' + str(env) if env else '')
    outs = ['ys', 'y2s', 'zs']
    for o in outs:
        if os.path.exists(R.path(o + '.npy')):
            os.remove(R.path(o + '.npy'))
    rc, out, err = R.run(p, KERNELS, ['--in', 'xs=arange'] + sum((['--out', '%s=%s.npy' % (o, o)] for o in outs), []),
                         backend=backend, options='log=' + R.path('log%r.txt'), env=env)
    check(rc == 0, '%s: exit %d\n%s%s' % (tag, rc, out, err))
    if rc != 0:
        return
    n = p * ROWS * COLS
    x = arange(n)
    want = {
        'ys': [T.f32(2.5 * v) for v in x],
        'y2s': [T.f32(v + 3.0) for v in x],
        'zs': [float((i // COLS) % ROWS) for i in range(n)],
    }
    for o in outs:
        dt, shape, got = T.read_npy(R.path(o + '.npy'))
        check(shape == (p, ROWS, COLS) and got == want[o], '%s: %s differs from the golden' % (tag, o))
    if not backend:
        return
    log = R.log(p)
    for r in range(p):
        mine = [l for l in log if l.startswith('rank %d: ' % r)]
        text = '\n'.join(mine)
        check('rank %d: program_load %s kernels=1' % (r, KERNELS) in text, '%s: program_load on rank %d' % (tag, r))
        check(any('kernel axpy line=' in l and 'params=x:1:0:0,y:1:0:1,a:2:0:0' in l for l in mine),
              '%s: axpy described with its parameters (name:kind:dtype:dir)' % tag)
        for k in ('axpy', 'at_add', 'grid_rows'):
            check(sum(1 for l in mine if ('kernel_load %s ' % k) in l) == 1, '%s: %s loaded once on rank %d' % (tag, k, r))
        # the scope's captured values: x, y2 (tensors) and k, whatever order
        at = [l for l in mine if 'kernel_load at_add ' in l]
        check(at and 'params=3' in at[0], '%s: the pl.at scope captures x, y2 and k: %s' % (tag, at))
        grid = [l for l in mine if 'launch grid_rows ' in l]
        check(grid and 'blocks=4' in grid[0], '%s: the pl.spmd grid is one launch of 4 blocks: %s' % (tag, grid))
        check(not any('launch axpy' in l for l in mine), '%s: the typed kernel is called by pldrun, not launched' % tag)
        check(not any(' error ' in l for l in mine), '%s: the plugin reported an error' % tag)
        check(any(l.endswith('close leaked=0') for l in mine), '%s: closed without a leaked block' % tag)


def case_kernels(R):
    for p in (1, 2):
        kernels_case(R, p, backend=False)
        kernels_case(R, p, backend=True)


def case_device(R):
    kernels_case(R, 2, backend=True, env={'PLD_TEST_PLUGIN_ENTRY': 'device'})
    log = R.log(2)
    for what in ('mem_alloc', 'upload', 'download', 'mem_free'):
        check(any(what in l for l in log), 'device: no %s in the plugin log' % what)
    ups = sum(1 for l in log if ': upload ' in l)
    frees = sum(1 for l in log if l.endswith('mem_free'))
    allocs = sum(1 for l in log if ': mem_alloc ' in l)
    check(allocs == frees and allocs >= ups, 'device: %d allocs, %d frees, %d uploads' % (allocs, frees, ups))


def case_hello(R):
    p = 2
    rc, out, err = R.run(p, HELLO, ['--in', 'xs=arange', '--out', 'ys=ys.npy', '--out', 'ids=ids.npy'],
                         options='log=' + R.path('log%r.txt'))
    check(rc == 0, 'hello: exit %d\n%s%s' % (rc, out, err))
    if rc != 0:
        return
    n = ROWS * COLS
    _, _, ys = T.read_npy(R.path('ys.npy'))
    _, _, ids = T.read_npy(R.path('ids.npy'))
    check(ys == [float(i) + i // n for i in range(p * n)], 'hello: ys differs from the golden')
    check(ids == [0, 1], 'hello: ids = %r' % ids)
    log = R.log(p)
    check(sum(1 for l in log if 'launch stamp blocks=1' in l) == p, 'hello: one stamp launch per rank')


def case_window(R):
    for transport in ('shm', 'rma'):
        for p in (2, 3):
            tag = 'window P=%d %s' % (p, transport)
            rc, out, err = R.run(p, WINDOW, ['--window-transport', transport, '--out', 'outs=outs.npy'],
                                 options='log=' + R.path('log%r.txt'))
            check(rc == 0, '%s: exit %d\n%s%s' % (tag, rc, out, err))
            if rc != 0:
                continue
            _, shape, got = T.read_npy(R.path('outs.npy'))
            for r in range(p):
                row = got[r * 8:r * 8 + 4]
                want = [float(p), float(r), float(p if transport == 'shm' else 1), 1.0]
                check(row == want, '%s: rank %d saw %r, expected %r' % (tag, r, row, want))


def case_errors(R):
    a = R.a
    junk = R.path('junk.so')
    with open(junk, 'w') as f:
        f.write('not a shared object\n')
    libc = '/lib/x86_64-linux-gnu/libc.so.6'
    if not os.path.exists(libc):
        libc = None
    cases = [
        ('not a shared object', junk, {}, 69, ["cannot load backend plugin '%s'" % junk]),
        ('missing file', R.path('nope.so'), {}, 69, ["cannot load backend plugin '%s'" % R.path('nope.so')]),
        ('wrong ABI version', a.plugin, {'PLD_TEST_PLUGIN_ENTRY': 'abi'}, 69,
         ['was built for plugin ABI version 2', 'rebuild it against']),
        ('short table', a.plugin, {'PLD_TEST_PLUGIN_ENTRY': 'size'}, 69, ['(table of 16 bytes)']),
        ('no table', a.plugin, {'PLD_TEST_PLUGIN_ENTRY': 'null'}, 69, ['returned no backend for ABI version 1']),
        ('no open', a.plugin, {'PLD_TEST_PLUGIN_ENTRY': 'noopen'}, 69, ["has no 'open' entry point"]),
    ]
    if libc:
        cases.append(('no entry symbol', libc, {}, 69, ['has no entry symbol pld_backend_entry']))
    for what, path, env, code, needles in cases:
        e = dict(R.env)
        e.update(env)
        rc, out, err = T.run_pldrun(a.mpiexec, a.numproc_flag, 2, a.pldrun, HELLO,
                                    ['--backend', path, '--in', 'xs=arange'], e, a.workdir)
        check(rc == code, 'errors/%s: exit %d, expected %d\n%s' % (what, rc, code, err))
        for n in needles:
            check(n in err, 'errors/%s: %r not in\n%s' % (what, n, err))
        check('Segmentation' not in err and 'core dumped' not in err, 'errors/%s: crashed' % what)
    # the plugin fails open on every rank: its own message, exit 69
    rc, out, err = R.run(2, HELLO, ['--in', 'xs=arange'], options='fail=open')
    check(rc == 69 and 'told to fail open (fail=open)' in err, 'errors/fail=open: exit %d\n%s' % (rc, err))
    # a kernel the plugin cannot load: located at the launch, names the kernel
    rc, out, err = R.run(2, WINDOW.replace('plugin_window', 'plugin_window'), [],
                         options='fail=load')
    line, _ = T.locate(WINDOW, 'out = self.ctx_probe(win, out, ctx)')
    check(rc == 70 and "cannot load kernel ctx_probe" in err and 'told to fail kernel_load' in err,
          'errors/fail=load: exit %d\n%s' % (rc, err))
    check(('plugin_window.pld:%d:' % line) in err, 'errors/fail=load: not located at line %d\n%s' % (line, err))
    put_get = os.path.join(ROOT, 'programs', 'tutorial', 'put_get.pld')
    rc, out, err = R.run(2, put_get, ['--in', 'xs=arange'])
    check(rc == 70 and "the test plugin has no kernel" in err, 'errors/unknown kernel: exit %d\n%s' % (rc, err))
    rc, out, err = R.run(2, HELLO, ['--in', 'xs=arange'], options='fail=launch')
    check(rc == 70 and 'told to fail launch (fail=launch)' in err and 'stamp' in err,
          'errors/fail=launch: exit %d\n%s' % (rc, err))


def main():
    put_get = os.path.join(ROOT, 'programs', 'tutorial', 'put_get.pld')
    programs = [('plugin', p) for p in (KERNELS, WINDOW, HELLO, put_get)]
    if '--list' in sys.argv[1:]:
        T.require_programs('run_plugin.py', programs)
        print('\n'.join(CASES))
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--plugin', required=True)
    ap.add_argument('--mpiexec', required=True)
    ap.add_argument('--numproc-flag', default='-n')
    ap.add_argument('--case', required=True, choices=CASES)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--list', action='store_true', help='print the cases and exit')
    a = ap.parse_args()
    T.require_programs('run_plugin.py', programs)
    R = Runner(a)
    globals()['case_' + a.case](R)
    if failures:
        print('%d check(s) failed' % len(failures))
        return 1
    print('plugin %s: all checks passed' % a.case)
    return 0


if __name__ == '__main__':
    sys.exit(main())
