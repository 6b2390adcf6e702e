#!/usr/bin/env python3
"""run_ascend.py - pldrun --backend ascend on the fake ACL runtime (CTest ascend_<case>).

The fake (tests/ascend/acl_fake.c, libacl_rt.so) emulates device memory in
host memory, maps VMM windows between the ranks with shared memory, runs a
"kernel binary" (a host shared object, tests/ascend/kernels/) on one thread
per block, logs every call as a JSON line and fails on request. Goldens are
computed here, in Python, never by pldrun.

Cases:
  unavailable  no CANN (ASCEND_HOME_PATH unset), a wrong ASCEND_HOME_PATH, a
               runtime without a needed function: exit 69 naming what is
               missing; libascendcl.so when libacl_rt.so is absent; --devices
  run_P2/P4    hello_rank (tensor copies), ring (windows over Fabric handles,
               then over legacy handles with peer access), spmd_rows (a 4-block
               grid scope) against goldens; every rank's call sequence (open,
               windows, loads, launches, teardown in the order of
               ../shared/docs/hw_backend.md §4.4) and nothing left at aclFinalize
  abi          the probe kernel's view of its launch, byte by byte: args[]
               slots, ChipTensors, LocalContext, GlobalContext, the CommContext
               with every peer's window as mapped in this process
  errors       a failed physical allocation on one rank, a failed import, a
               failed launch, a failed copy, a device fault, a kernel that never
               finishes: exit 70 with the message, no hang, no sync of an
               error-state stream, a force reset, a clean teardown everywhere
  refusals     defer_wait, an SDMA-async op, a MIX kernel, more blocks than AIV
               cores, no kernel directory, a missing binary, a bad option
  conformance  the conformance table on ascend at P = 1, 2, 4: what the fake
               has kernels for passes, the rest fails only for want of a binary
               or by a refusal
"""
import argparse
import json
import os
import shutil
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'mpi'))
import pld_mpitest as T  # noqa: E402

HELLO = os.path.join(ROOT, 'programs', 'tutorial', 'hello_rank.pld')
PROG = {n: os.path.join(HERE, n + '.pld') for n in
        ('ring', 'spmd_rows', 'probe', 'hang', 'fault', 'refuse_defer_wait', 'refuse_prefetch', 'refuse_mix')}
ROWS, COLS = 4, 16

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL: ' + what)
    return cond


class Runner:
    def __init__(self, a):
        self.a = a
        self.env = T.mpi_env(ROOT)
        for k in list(self.env):
            if k.startswith('ACL_FAKE_') or k in ('ASCEND_HOME_PATH', 'PLD_ASCEND_LIBDIR', 'PLD_ASCEND_PLUGIN',
                                                  'PLD_ASCEND_KERNELS'):
                del self.env[k]
        if os.path.isdir(a.workdir):
            shutil.rmtree(a.workdir)
        os.makedirs(a.workdir)

    def path(self, name):
        return os.path.join(self.a.workdir, name)

    def run(self, p, program, args, options=None, env=None, cann=True, timeout=60):
        """pldrun --backend ascend on the fake; the call log in log<rank>.jsonl."""
        for r in range(8):
            if os.path.exists(self.path('log%d.jsonl' % r)):
                os.remove(self.path('log%d.jsonl' % r))
        e = dict(self.env)
        if cann:
            e['ASCEND_HOME_PATH'] = self.a.cann
            e['ACL_FAKE_LOG'] = self.path('log%r.jsonl')
        e.update(env or {})
        opts = 'kernels=' + self.a.kernels if options is None else options
        extra = ['--backend', 'ascend'] + (['--backend-options', opts] if opts else [])
        return T.run_pldrun(self.a.mpiexec, self.a.numproc_flag, p, self.a.pldrun, program, extra + args, e,
                            self.a.workdir, timeout=timeout)

    def log(self, r):
        """Rank r's calls: a list of dicts (the leaks line included)."""
        out = []
        try:
            with open(self.path('log%d.jsonl' % r)) as f:
                for line in f:
                    if line.strip():
                        out.append(json.loads(line))
        except OSError:
            pass
        return out


def calls(log, name):
    return [c for c in log if c.get('call') == name]


def first(log, name):
    for i, c in enumerate(log):
        if c.get('call') == name:
            return i
    return -1


FREES = ('aclrtFree', 'aclrtFreePhysical', 'aclrtUnmapMem', 'aclrtReleaseMemAddress', 'aclrtBinaryUnLoad',
         'aclrtDestroyStream')


def clean_teardown(tag, log, r):
    """Nothing left at aclFinalize, aclFinalize last, nothing after it. After a force reset (a device
    fault) the handles are abandoned instead: no free of anything made before the reset (a free after a
    fault can block: issue 40 item 5), only the probe's own allocation."""
    leaks = [c for c in log if c.get('call') == 'leaks']
    ok = check(leaks, '%s: rank %d logged no leaks line (aclFinalize not called?)' % (tag, r))
    force = first(log, 'aclrtResetDeviceForce')
    if force >= 0:
        probe = [c['args'].get('ptr') for c in log[force:] if c.get('call') == 'aclrtMalloc']
        late = [c for c in log[force:] if c.get('call') in FREES and
                not (c.get('call') == 'aclrtFree' and c['args'].get('ptr') in probe)]
        check(not late, '%s: rank %d freed after the device fault: %s' % (tag, r, late[:3]))
        check(not any(c.get('args', {}).get('blocked_after_fault') for c in log),
              '%s: rank %d blocked in a free after the fault' % (tag, r))
    if ok and force < 0:
        l = leaks[-1]
        left = {k: v for k, v in l.items() if k != 'call' and v}
        check(not left, '%s: rank %d left device resources at aclFinalize: %s' % (tag, r, left))
        fin = first(log, 'aclFinalize')
        check(fin == len(log) - 2, '%s: rank %d calls after aclFinalize: %s' % (tag, r, log[fin + 1:-1]))
    check(not any(c.get('ret') == 507018 for c in log),
          '%s: rank %d used a stream in error state (507018)' % (tag, r))
    # 507899: a user id where the driver's is needed, a blocked free, a second peer enable (not from the
    # synchronisation a stop's reset ended)
    bad = [c for c in log if c.get('ret') == 507899 and c.get('call') not in
           ('aclrtSynchronizeStreamWithTimeout', 'aclrtDeviceEnablePeerAccess')]
    check(not bad, '%s: rank %d got 507899: %s' % (tag, r, bad[:2]))


def arange(n):
    return [float(i) for i in range(n)]


def read(R, name):
    return T.read_npy(R.path(name + '.npy'))


# ------------------------------------------------------------------ unavailable

def case_unavailable(R):
    a = R.a
    rc, out, err = R.run(2, HELLO, ['--in', 'xs=arange'], cann=False)
    check(rc == 69 and 'ASCEND_HOME_PATH is not set' in err and 'libacl_rt.so' in err,
          'no CANN: exit %d\n%s' % (rc, err))
    rc, out, err = R.run(2, HELLO, ['--in', 'xs=arange'], cann=False, env={'ASCEND_HOME_PATH': '/nonexistent/cann'})
    check(rc == 69 and '/nonexistent/cann/lib64/libacl_rt.so' in err and 'libascendcl.so' in err,
          'wrong ASCEND_HOME_PATH: exit %d\n%s' % (rc, err))
    rc, out, err = R.run(2, HELLO, ['--in', 'xs=arange'], cann=False,
                         env={'ASCEND_HOME_PATH': a.partial})
    check(rc == 69 and 'has no function aclrtMapMem' in err, 'runtime without aclrtMapMem: exit %d\n%s' % (rc, err))
    # libascendcl.so when libacl_rt.so is absent (PLD_ASCEND_LIBDIR)
    alt = R.path('ascendcl')
    os.makedirs(alt, exist_ok=True)
    link = os.path.join(alt, 'libascendcl.so')
    if not os.path.exists(link):
        os.symlink(os.path.join(a.cann, 'lib64', 'libacl_rt.so'), link)
    rc, out, err = R.run(2, HELLO, ['--in', 'xs=arange', '--out', 'ys=ys.npy'], env={'PLD_ASCEND_LIBDIR': alt})
    check(rc == 0, 'libascendcl.so fallback: exit %d\n%s' % (rc, err))
    # --devices: one device per local rank
    rc, out, err = R.run(2, HELLO, ['--in', 'xs=arange', '--devices', '5,3'])
    if check(rc == 0, '--devices 5,3: exit %d\n%s' % (rc, err)):
        for r, d in ((0, 5), (1, 3)):
            sd = calls(R.log(r), 'aclrtSetDevice')
            check(sd and sd[0]['args'].get('device') == d, '--devices 5,3: rank %d set device %s' % (r, sd[:1]))
    # the version floor (issue 40 item 4): CANN 8.0 is refused at open with both versions
    rc, out, err = R.run(2, HELLO, ['--in', 'xs=arange'], env={'ACL_FAKE_CANN_VERSION': '8.0.0'})
    check(rc == 69 and 'is version 8.0.0' in err and 'needs CANN 8.2 or later' in err,
          'CANN 8.0: exit %d\n%s' % (rc, err))
    if check(R.log(0), 'CANN 8.0: no call log'):
        check(not calls(R.log(0), 'aclInit'), 'CANN 8.0: aclInit called before the version check')
    # the version query reads $ASCEND_HOME_PATH/share/info: PLD_ASCEND_LIBDIR alone is not enough
    rc, out, err = R.run(2, HELLO, ['--in', 'xs=arange'], cann=False,
                         env={'PLD_ASCEND_LIBDIR': os.path.join(a.cann, 'lib64')})
    check(rc == 69 and 'aclsysGetCANNVersion failed with error 100003' in err and 'needs ASCEND_HOME_PATH' in err,
          'PLD_ASCEND_LIBDIR without ASCEND_HOME_PATH: exit %d\n%s' % (rc, err))
    rc, out, err = R.run(2, HELLO, ['--in', 'xs=arange'], env={'ACL_FAKE_CANN_VERSION': '8.2.RC1'})
    check(rc == 0, 'CANN 8.2.RC1: exit %d\n%s' % (rc, err))
    rc, out, err = R.run(2, HELLO, ['--in', 'xs=arange', '--devices', '0'])
    check(rc == 64 and "--devices '0' names 1 device" in err, '--devices too short: exit %d\n%s' % (rc, err))
    rc, out, err = R.run(2, HELLO, ['--in', 'xs=arange', '--devices', '9,1'])
    check(rc == 69 and 'device 9' in err and '8' in err, '--devices beyond the device count: exit %d\n%s' % (rc, err))


# ------------------------------------------------------------------ runs

def check_sequence(tag, log, r, p, windows, legacy):
    """The order of hw_backend.md §4.4 in one rank's log."""
    names = [c.get('call') for c in log]
    # the version floor first (issue 40 item 4), then hw_backend.md §4.4's order
    opening = ['aclsysGetCANNVersion', 'aclInit', 'aclrtGetDeviceCount', 'aclrtSetDevice', 'aclrtCreateStream',
               'aclrtGetDeviceInfo']
    check(names[:6] == opening, '%s: rank %d opens with %s, not %s' % (tag, r, names[:6], opening))
    sd = calls(log, 'aclrtSetDevice')
    check(sd and sd[0]['args'].get('device') == r, '%s: rank %d runs on device %s, not its local rank' %
          (tag, r, sd[0]['args'] if sd else None))
    if windows:
        seq = ['aclrtMemGetAllocationGranularity', 'aclrtMallocPhysical', 'aclrtReserveMemAddress', 'aclrtMapMem',
               'aclrtMemSetAccess', 'aclrtMemset']
        seq += ['aclrtMemExportToShareableHandle', 'aclrtDeviceEnablePeerAccess', 'aclrtDevicePeerAccessStatus',
                'aclrtMemImportFromShareableHandle'] if legacy else \
            ['aclrtMemExportToShareableHandleV2', 'aclrtMemImportFromShareableHandleV2']
        at = [first(log, n) for n in seq]
        check(all(i >= 0 for i in at) and at == sorted(at),
              '%s: rank %d window set-up out of order: %s' % (tag, r, list(zip(seq, at))))
        imports = calls(log, 'aclrtMemImportFromShareableHandle' + ('' if legacy else 'V2'))
        check(len(imports) == p - 1, '%s: rank %d imported %d windows, not %d' % (tag, r, len(imports), p - 1))
        # a refused Fabric export (207000) costs one local window made again with normal pages
        refused = [c for c in calls(log, 'aclrtMemExportToShareableHandleV2') if c.get('ret') == 207000]
        check(len(calls(log, 'aclrtMapMem')) == p + len(refused), '%s: rank %d mapped %d windows' %
              (tag, r, len(calls(log, 'aclrtMapMem'))))
        if legacy:
            check(not calls(log, 'aclrtMemExportToShareableHandleV2') or
                  calls(log, 'aclrtMemExportToShareableHandleV2')[0].get('ret') == 207000,
                  '%s: rank %d used a Fabric handle on the legacy path' % (tag, r))
            peers = sorted(c['args'].get('peer', c['args'].get('peerDevice')) for c in
                           calls(log, 'aclrtDeviceEnablePeerAccess'))
            check(peers == sorted(d for d in range(p) if d != r),
                  '%s: rank %d enabled peer access to %s' % (tag, r, peers))
        ms = calls(log, 'aclrtMemset')
        check(ms and ms[0]['args'].get('value') == 0, '%s: rank %d zeroes its window: %s' % (tag, r, ms[:1]))
    load = calls(log, 'aclrtBinaryLoadFromData')
    check(load and load[0]['args'].get('opt0') == [2, '0x41415246'],
          '%s: rank %d binary load options %s (want MAGIC = ELF_VECTOR_CORE)' % (tag, r, load[:1]))
    fn = calls(log, 'aclrtBinaryGetFunction')
    # the shim's symbol pld_entry_0_mix_aiv is registered as pld_entry_0 (issue 40 item 1)
    check(fn and all(c['args'].get('name') == 'pld_entry_0' and c.get('ret') == 0 for c in fn),
          '%s: rank %d entry names %s' % (tag, r, [c['args'].get('name') for c in fn]))
    for i, c in enumerate(log):
        if c.get('call') != 'aclrtLaunchKernelWithHostArgs':
            continue
        ar = c['args']
        check(ar.get('argsSize') == 16 and ar.get('cfg', [[None]])[0] == [1, 1],
              '%s: rank %d launch arguments %s (want 16 bytes of host args, SCHEM_MODE batch first)' % (tag, r, ar))
        payload = int.from_bytes(bytes.fromhex(ar.get('hostArgs', '00' * 16))[:8], 'little')
        before = [x for x in log[:i] if x.get('call') == 'aclrtMemcpy' and int(x['args']['dst'], 16) == payload]
        check(before and before[-1]['args'].get('kind') == 1,
              '%s: rank %d launched payload 0x%x without copying it to the device first' % (tag, r, payload))
        # one synchronisation with the run's timeout (issue 40 item 6), on the waiter thread (whose first
        # call sets its device) or here; the next call of this thread frees the payload
        nxt = [x for x in log[i + 1:] if x.get('call') not in ('aclrtSetDevice',)][:2]
        check(nxt and nxt[0].get('call') == 'aclrtSynchronizeStreamWithTimeout' and
              nxt[0]['args'].get('timeout', 0) > 0 and nxt[0].get('ret') == 0 and
              nxt[1:2] and nxt[1].get('call') == 'aclrtFree',
              '%s: rank %d does not synchronise once, with a timeout, right after the launch: %s' %
              (tag, r, [(x.get('call'), x.get('args', {}).get('timeout'), x.get('ret')) for x in nxt]))
        freed = [x for x in log[i:] if x.get('call') == 'aclrtFree' and int(x['args']['ptr'], 16) == payload]
        check(freed, '%s: rank %d never freed payload 0x%x' % (tag, r, payload))
    ending = [n for n in names if n in ('aclrtBinaryUnLoad', 'aclrtDestroyStream', 'aclrtResetDevice', 'aclFinalize')]
    want_end = ['aclrtBinaryUnLoad'] * len(load) + ['aclrtDestroyStream', 'aclrtResetDevice', 'aclFinalize']
    check(ending == want_end, '%s: rank %d tears down as %s, not %s' % (tag, r, ending, want_end))
    if windows:
        check(first(log, 'aclrtFreePhysical') < first(log, 'aclrtDestroyStream'),
              '%s: rank %d frees windows after destroying its stream' % (tag, r))
    # a refused Fabric export on the legacy path; peer access answers that are not fatal (a status of 0
    # with one process per device is not an error, a second enable of a pair is)
    failed = [c for c in log if 'error' in c and not (c.get('call') == 'aclrtMemExportToShareableHandleV2' and
                                                      c.get('ret') == 207000 and legacy)]
    check(not failed, '%s: rank %d had failing calls: %s' % (tag, r, failed[:2]))
    clean_teardown(tag, log, r)


def run_case(R, p):
    tag = 'hello P=%d' % p
    rc, out, err = R.run(p, HELLO, ['--in', 'xs=arange', '--out', 'ys=ys.npy', '--out', 'ids=ids.npy'])
    if check(rc == 0, '%s: exit %d\n%s' % (tag, rc, err)):
        n = p * ROWS * COLS
        _, shape, ys = read(R, 'ys')
        check(shape == (p, ROWS, COLS) and ys == [T.f32(v + i // (ROWS * COLS)) for i, v in enumerate(arange(n))],
              '%s: ys differs from the golden' % tag)
        _, shape, ids = read(R, 'ids')
        check(ids == list(range(p)), '%s: ids %s' % (tag, ids))
        for r in range(p):
            check_sequence(tag, R.log(r), r, p, windows=False, legacy=False)
    for legacy in (False, True):
        tag = 'ring P=%d %s' % (p, 'legacy IPC' if legacy else 'fabric')
        env = {'ACL_FAKE_NO_FABRIC': '1'} if legacy else None
        rc, out, err = R.run(p, PROG['ring'], ['--in', 'xs=arange', '--out', 'ys=ys.npy'], env=env)
        if not check(rc == 0, '%s: exit %d\n%s' % (tag, rc, err)):
            continue
        m = ROWS * COLS
        x = arange(p * m)
        want = [T.f32(x[((r - 1) % p) * m + i] + 0.5) for r in range(p) for i in range(m)]
        _, shape, ys = read(R, 'ys')
        check(shape == (p, ROWS, COLS) and ys == want, '%s: ys differs from the golden' % tag)
        for r in range(p):
            check_sequence(tag, R.log(r), r, p, windows=True, legacy=legacy)
    # ASCEND_RT_VISIBLE_DEVICES renumbers the cards (containers): physical memory takes the user id,
    # the access descriptor the driver id (issue 40 item 3)
    visible = [1, 3, 4, 6][:p]
    for legacy in (False, True):
        tag = 'ring P=%d ASCEND_RT_VISIBLE_DEVICES=%s%s' % (p, ','.join(map(str, visible)), ' legacy' if legacy else '')
        env = {'ASCEND_RT_VISIBLE_DEVICES': ','.join(map(str, visible))}
        if legacy:
            env['ACL_FAKE_NO_FABRIC'] = '1'
        rc, out, err = R.run(p, PROG['ring'], ['--in', 'xs=arange', '--out', 'ys=ys.npy'], env=env)
        if not check(rc == 0, '%s: exit %d\n%s' % (tag, rc, err)):
            continue
        m = ROWS * COLS
        x = arange(p * m)
        want = [T.f32(x[((r - 1) % p) * m + i] + 0.5) for r in range(p) for i in range(m)]
        _, shape, ys = read(R, 'ys')
        check(ys == want, '%s: ys differs from the golden' % tag)
        for r in range(p):
            log = R.log(r)
            phys = [c['args'].get('locationId') for c in calls(log, 'aclrtMallocPhysical')]
            acc = set(c['args'].get('locationId') for c in calls(log, 'aclrtMemSetAccess'))
            check(phys and all(i == r for i in phys) and acc == {visible[r]},
                  '%s: rank %d: physical memory on %s (want user id %d), access for %s (want driver id %d)' %
                  (tag, r, phys, r, sorted(acc), visible[r]))
            check_sequence(tag, log, r, p, windows=True, legacy=legacy)
    # containers: each rank sees only its own card, as user id 0 (driver id rank + 2); Fabric handles
    wrap = R.path('one_card.sh')
    with open(wrap, 'w') as f:
        f.write('#!/bin/sh\nASCEND_RT_VISIBLE_DEVICES=$((OMPI_COMM_WORLD_RANK + 2)) exec "%s" "$@"\n' % R.a.pldrun)
    os.chmod(wrap, 0o755)
    saved, R.a.pldrun = R.a.pldrun, wrap
    try:
        tag = 'ring P=%d one card per rank' % p
        rc, out, err = R.run(p, PROG['ring'], ['--in', 'xs=arange', '--out', 'ys=ys.npy'])
        if check(rc == 0, '%s: exit %d\n%s' % (tag, rc, err)):
            m = ROWS * COLS
            x = arange(p * m)
            _, shape, ys = read(R, 'ys')
            check(ys == [T.f32(x[((r - 1) % p) * m + i] + 0.5) for r in range(p) for i in range(m)],
                  '%s: ys differs from the golden' % tag)
            for r in range(p):
                log = R.log(r)
                sd = calls(log, 'aclrtSetDevice')
                acc = set(c['args'].get('locationId') for c in calls(log, 'aclrtMemSetAccess'))
                check(sd and sd[0]['args'].get('device') == 0 and acc == {r + 2},
                      '%s: rank %d set device %s, access for %s (want user id 0, driver id %d)' %
                      (tag, r, sd[:1], sorted(acc), r + 2))
    finally:
        R.a.pldrun = saved
    # legacy handles asked for explicitly (fabric=0): no V2 export at all
    rc, out, err = R.run(p, PROG['ring'], ['--in', 'xs=arange'], options='kernels=%s,fabric=0' % R.a.kernels)
    check(rc == 0 and all(not calls(R.log(r), 'aclrtMemExportToShareableHandleV2') for r in range(p)),
          'ring P=%d fabric=0: exit %d, V2 calls made\n%s' % (p, rc, err))
    tag = 'spmd_rows P=%d' % p
    rc, out, err = R.run(p, PROG['spmd_rows'], ['--in', 'xs=arange', '--out', 'zs=zs.npy'])
    if check(rc == 0, '%s: exit %d\n%s' % (tag, rc, err)):
        x = arange(p * ROWS * COLS)
        want = [T.f32(2 * x[(r * ROWS + b) * COLS + j] + b + r) for r in range(p) for b in range(ROWS)
                for j in range(COLS)]
        _, shape, zs = read(R, 'zs')
        check(zs == want, '%s: zs differs from the golden' % tag)
        for r in range(p):
            log = R.log(r)
            launches = calls(log, 'aclrtLaunchKernelWithHostArgs')
            check(len(launches) == 1 and launches[0]['args'].get('numBlocks') == 4,
                  '%s: rank %d: one launch of 4 blocks: %s' % (tag, r, [c['args'] for c in launches]))
            check_sequence(tag, log, r, p, windows=False, legacy=False)


def case_run_P2(R):
    # P = 1 as well: hello_rank and spmd_rows on one rank
    for prog, args in ((HELLO, ['--in', 'xs=arange', '--out', 'ys=ys.npy']),
                       (PROG['spmd_rows'], ['--in', 'xs=arange', '--out', 'zs=zs.npy'])):
        rc, out, err = R.run(1, prog, args)
        if check(rc == 0, 'P=1 %s: exit %d\n%s' % (os.path.basename(prog), rc, err)):
            check_sequence('P=1 ' + os.path.basename(prog), R.log(0), 0, 1, windows=False, legacy=False)
    run_case(R, 2)


def case_run_P4(R):
    run_case(R, 4)


# ------------------------------------------------------------------ abi

def u64(b, off):
    return struct.unpack_from('<Q', b, off)[0]


def u32(b, off):
    return struct.unpack_from('<I', b, off)[0]


def check_tensor(tag, b, off, addr, shape, dtype, what):
    got = {'addr': u64(b, off), 'owner': u64(b, off + 16), 'start': u64(b, off + 24), 'ndims': u32(b, off + 36),
           'dtype': b[off + 40], 'contig': b[off + 42], 'shapes': [u32(b, off + 44 + 4 * i) for i in range(len(shape))],
           'strides': [u32(b, off + 72 + 4 * i) for i in range(len(shape))]}
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    want = {'addr': addr, 'owner': 2 ** 64 - 1, 'start': 0, 'ndims': len(shape), 'dtype': dtype, 'contig': 1,
            'shapes': list(shape), 'strides': strides}
    if addr is None:
        want['addr'] = got['addr']
    check(got == want, '%s: ChipTensor %s is %s, want %s' % (tag, what, got, want))
    check(all(x == 0 for x in b[off + 92:off + 128]), '%s: ChipTensor %s reserved bytes not zero' % (tag, what))


def case_abi(R):
    for p in (2, 4):
        tag = 'abi P=%d' % p
        rc, out, err = R.run(p, PROG['probe'], ['--in', 'xs=arange', '--out', 'outs=outs.npy'])
        if not check(rc == 0, '%s: exit %d\n%s' % (tag, rc, err)):
            continue
        _, shape, vals = read(R, 'outs')
        check(shape == (p, 1, 256), '%s: outs shape %s' % (tag, shape))
        for r in range(p):
            t = '%s rank %d' % (tag, r)
            b = struct.pack('<256q', *vals[r * 256:(r + 1) * 256])
            log = R.log(r)
            launch = calls(log, 'aclrtLaunchKernelWithHostArgs')[0]['args']
            host_args = bytes.fromhex(launch['hostArgs'])
            payloads, stride = u64(host_args, 0), u64(host_args, 8)
            check(stride == 896, '%s: stride %d, want 512 + 3 * 128 = 896' % (t, stride))
            check(u64(b, 1912) == stride and u64(b, 1920) == payloads and u64(b, 1936) == payloads,
                  '%s: the kernel saw stride %d payloads 0x%x args 0x%x; launched with 0x%x, %d' %
                  (t, u64(b, 1912), u64(b, 1920), u64(b, 1936), payloads, stride))
            check(u32(b, 1928) == 0 and u32(b, 1932) == 1, '%s: hardware block %d of %d' % (t, u32(b, 1928), u32(b, 1932)))
            args = [u64(b, 8 * i) for i in range(50)]
            for i in range(3):
                check(args[i] == payloads + 512 + 128 * i, '%s: args[%d] = 0x%x, want payload + %d' %
                      (t, i, args[i], 512 + 128 * i))
            check(args[48] == payloads + 400 and args[49] == payloads + 448,
                  '%s: args[48], args[49] = 0x%x, 0x%x' % (t, args[48], args[49]))
            check(args[4] == 2 ** 64 - 5, '%s: INT32 -5 not sign-extended: 0x%x' % (t, args[4]))
            check(args[5] == struct.unpack('<I', struct.pack('<f', 1.5))[0],
                  '%s: FP32 1.5 not bit-cast into the low 32 bits: 0x%x' % (t, args[5]))
            check(all(a == 0 for a in args[6:48]), '%s: unused slots are not zero' % t)
            # the CommCtx scalar is the device CommContext: a 1056-byte device block uploaded before the launch
            ctx_blocks = [c['args'] for c in calls(log, 'aclrtMalloc') if c['args'].get('size') == 1056]
            check(ctx_blocks and int(ctx_blocks[0]['ptr'], 16) == args[3],
                  '%s: args[3] = 0x%x is not the uploaded CommContext %s' % (t, args[3], ctx_blocks))
            # x: a device copy of the input slice
            copies = [c['args'] for c in calls(log, 'aclrtMalloc') if c['args'].get('size') == 64]
            check_tensor(t, b, 400, int(copies[0]['ptr'], 16) if copies else -1, (2, 8), 0, 'x (device copy)')
            c = 856
            rank_id, rank_num, win_size = u32(b, c + 16), u32(b, c + 20), u64(b, c + 24)
            wins = [u64(b, c + 32 + 8 * i) for i in range(64)]
            outs_ = [u64(b, c + 544 + 8 * i) for i in range(64)]
            gran = calls(log, 'aclrtMallocPhysical')[0]['args'].get('size') if calls(log, 'aclrtMallocPhysical') else -1
            check(rank_id == r and rank_num == p and win_size == gran,
                  '%s: CommContext rankId %d rankNum %d winSize %d (mapped %s)' % (t, rank_id, rank_num, win_size, gran))
            check(u64(b, c) == 0 and u64(b, c + 8) == 0, '%s: CommContext workSpace not zero' % t)
            check(all(w != 0 for w in wins[:p]) and len(set(wins[:p])) == p and all(w == 0 for w in wins[p:]),
                  '%s: windowsIn %s' % (t, [hex(w) for w in wins[:p + 1]]))
            check(all(w == 0 for w in outs_), '%s: windowsOut not zero' % t)
            # every windowsIn entry is a mapping made in THIS process (own window or an import)
            mapped = sorted(int(x['args']['va'], 16) for x in calls(log, 'aclrtMapMem'))
            check(sorted(wins[:p]) == mapped, '%s: windowsIn %s are not this process\'s mappings %s' %
                  (t, [hex(w) for w in wins[:p]], [hex(m) for m in mapped]))
            check_tensor(t, b, 528, wins[r], (1, 8), 0, 'win (in this rank\'s window)')
            check_tensor(t, b, 656, None, (1, 256), 7, 'out')
            local = b[784:832]
            check(struct.unpack_from('<ii', local, 0) == (0, 1) and local[8:40] == bytes(32) and
                  u64(local, 40) == 2 ** 64 - 1, '%s: LocalContext %s' % (t, local.hex()))
            check(b[832:856] == bytes(24), '%s: GlobalContext %s' % (t, b[832:856].hex()))


# ------------------------------------------------------------------ errors

def error_run(R, tag, program, env, want_msgs, p=2, args=None, timeout_s=4):
    t0 = time.time()
    rc, out, err = R.run(p, program, (['--in', 'xs=arange'] if args is None else args) + ['--timeout', str(timeout_s)],
                         env=env,
                         timeout=90)
    took = time.time() - t0
    ok = check(rc == 70, '%s: exit %d (want 70)\n%s' % (tag, rc, err))
    for m in want_msgs:
        ok &= check(m in err, '%s: message lacks %r\n%s' % (tag, m, err))
    check(took < 60, '%s: took %.0f s' % (tag, took))
    logs = [R.log(r) for r in range(p)]
    for r in range(p):
        clean_teardown(tag, logs[r], r)
    return logs, err


def case_errors(R):
    ring = PROG['ring']
    error_run(R, 'failed physical allocation on rank 1', ring, {'ACL_FAKE_FAIL': 'aclrtMallocPhysical:1@1'},
              ['[rank 1/2]', 'injected failure of aclrtMallocPhysical', 'cannot place the window of comm domain 0',
               '[rank 0/2]', 'member 1 of the comm domain could not create its window'])
    error_run(R, 'failed physical allocation on rank 2 of 4', ring, {'ACL_FAKE_FAIL': 'aclrtMallocPhysical:1@2'},
              ['[rank 2/4]', 'injected failure of aclrtMallocPhysical', '[rank 0/4]', '[rank 3/4]',
               'member 2 of the comm domain could not create its window'], p=4)
    error_run(R, 'device fault at P = 4', PROG['fault'], None, ['[rank 3/4]', 'deliberate AICore fault in block 0'],
              p=4)
    error_run(R, 'failed import on rank 0', ring, {'ACL_FAKE_FAIL': 'aclrtMemImportFromShareableHandleV2:1@0'},
              ['injected failure of aclrtMemImportFromShareableHandleV2',
               'another member of the comm domain failed to map the windows'])
    # legacy path: a failed import is reported with the rank, the peer and the code, and what peer access
    # answered (issue 40 item 2: the enable / status answers themselves are not fatal)
    error_run(R, 'failed legacy import on rank 0', ring,
              {'ACL_FAKE_NO_FABRIC': '1', 'ACL_FAKE_FAIL': 'aclrtMemImportFromShareableHandle:1@0'},
              ['[rank 0/2]', 'rank 0: importing the window of rank 1 (device 1, driver id 1) failed with error 100000',
               'peer access from device 0 to device 1: enable answered 0, status 0'])
    # the first access: a kernel that fails after a legacy window set-up says which peer access was
    # not confirmed (with one process per device the status stays 0)
    error_run(R, 'device fault after a legacy window', ring, {'ACL_FAKE_NO_FABRIC': '1', 'ACL_FAKE_DEVICE_ERROR': '1'},
              ['[rank 0/2]', 'kernel ring (1 block) failed on device 0 with error 507015',
               'peer access was not confirmed at window set-up: device 1 (driver id 1): enable 0, status 0'])
    # a refused enable is not fatal by itself: the import then fails, and says what the enable answered
    error_run(R, 'refused peer enable on rank 0', ring,
              {'ACL_FAKE_NO_FABRIC': '1', 'ACL_FAKE_FAIL': 'aclrtDeviceEnablePeerAccess:1@0'},
              ['[rank 0/2]', 'rank 0: importing the window of rank 1 (device 1, driver id 1) failed with error 507022',
               'peer access to device 1 not enabled',
               'peer access from device 0 to device 1: enable answered 100000, status 0'])
    t0 = time.time()
    logs, err = error_run(R, 'failed launch on rank 1', ring, {'ACL_FAKE_FAIL': 'aclrtLaunchKernelWithHostArgs:1@1'},
                          ['[rank 1/2]', 'launching kernel ring (1 blocks) on device 1 failed with error 100000',
                           'injected failure of aclrtLaunchKernelWithHostArgs'], timeout_s=30)
    # rank 0's kernel waits for rank 1 forever: the run's abort ends its wait long before --timeout 30
    check(time.time() - t0 < 20 and 'the run was stopped (another rank failed' in err,
          'failed launch: rank 0 was not stopped early (%.0f s)\n%s' % (time.time() - t0, err))
    check(not calls(logs[1], 'aclrtSynchronizeStreamWithTimeout'), 'failed launch: rank 1 synchronised anyway')
    error_run(R, 'failed copy on rank 0', ring, {'ACL_FAKE_FAIL': 'aclrtMemcpy:2@0'},
              ['could not place argument 1 of kernel ring', 'injected failure of aclrtMemcpy'])
    for tag, prog, env, msgs in (
            ('device fault', PROG['fault'], None,
             ['fault.pld:29:13', 'failed on device 0 with error 507015', 'deliberate AICore fault in block 0',
              'the device was reset']),
            ('injected device error', HELLO, {'ACL_FAKE_DEVICE_ERROR': '1'},
             ['hello_rank.pld', 'kernel stamp (1 block) failed on device', 'error 507015', 'AICore exception']),
            ('kernel that never finishes', PROG['hang'], None,
             ['hang.pld:30:13', 'did not finish on device 0 within 4000 ms', '507046'])):
        args = [] if prog == PROG['hang'] else None
        logs, err = error_run(R, tag, prog, env, msgs, args=args)
        for r in range(2):
            log = logs[r]
            syncs = [i for i, c in enumerate(log) if c.get('call') == 'aclrtSynchronizeStreamWithTimeout']
            force = first(log, 'aclrtResetDeviceForce')
            check(syncs and force > syncs[-1] and log[syncs[-1]].get('ret') != 0,
                  '%s: rank %d: a failed sync, then a force reset (syncs %s, reset at %d)' % (tag, r, syncs, force))
            check(force >= 0 and not [c for c in log[force:] if c.get('call') in
                                      ('aclrtLaunchKernelWithHostArgs', 'aclrtSynchronizeStreamWithTimeout')],
                  '%s: rank %d used the device after the error' % (tag, r))
            # one synchronisation per launch, with the run's timeout (issue 40 item 6)
            check(len(syncs) == len(calls(log, 'aclrtLaunchKernelWithHostArgs')) and
                  all(log[i]['args'].get('timeout') == 4000 for i in syncs),
                  '%s: rank %d synchronised %s' % (tag, r, [(log[i]['args'].get('timeout'), log[i].get('ret'))
                                                             for i in syncs]))


# ------------------------------------------------------------------ refusals

def case_refusals(R):
    def expect(tag, rc_want, msgs, p, program, args, **kw):
        rc, out, err = R.run(p, program, args, **kw)
        ok = check(rc == rc_want, '%s: exit %d (want %d)\n%s' % (tag, rc, rc_want, err))
        for m in msgs:
            ok &= check(m in err, '%s: message lacks %r\n%s' % (tag, m, err))
        return ok

    line, col = T.locate(PROG['refuse_defer_wait'], 'pld.system.defer_wait(')
    expect('defer_wait', 70, ['refuse_defer_wait.pld:%d:%d: pld.system.defer_wait' % (line, col),
                              "needs PyPTO's device-side scheduler"], 2, PROG['refuse_defer_wait'],
           ['--in', 'xs=arange'])
    line, col = T.locate(PROG['refuse_prefetch'], 'pl.prefetch.make_context(')
    expect('SDMA-async', 69, ['refuse_prefetch.pld:%d:%d: pl.prefetch.' % (line, col), 'SDMA'], 2,
           PROG['refuse_prefetch'], ['--in', 'xs=arange'])
    expect('MIX', 69, ['kernel cluster is a MIX (AIC+AIV) kernel'], 2, PROG['refuse_mix'], ['--in', 'xs=arange'])
    expect('too many blocks', 70, ['kernel spmd_rows launches 4 blocks, but device 0 has 2 AIV cores'], 2,
           PROG['spmd_rows'], ['--in', 'xs=arange'], env={'ACL_FAKE_AIV_CORES': '2'})
    expect('no kernel directory', 69, ['no kernel directory (--backend-options kernels=DIR'], 2, HELLO,
           ['--in', 'xs=arange'], options='')
    empty = R.path('empty_kernels')
    os.makedirs(empty, exist_ok=True)
    expect('missing binary', 69, ['kernel stamp', 'has no binary: %s/stamp.elf does not exist' % empty], 2, HELLO,
           ['--in', 'xs=arange'], options='kernels=' + empty)
    expect('bad option', 69, ["unknown option 'speed=fast'"], 2, HELLO, ['--in', 'xs=arange'],
           options='kernels=%s,speed=fast' % R.a.kernels)
    for r in range(2):
        clean_teardown('bad option', R.log(r), r) if R.log(r) else None


# ------------------------------------------------------------------ conformance

def case_conformance(R):
    """The conformance table (tests/conformance/run_conformance.py) on ascend over the fake, at P = 1, 2,
    4: every program whose kernels the fake has a binary for must pass; every other cell must fail only
    because a kernel has no binary here (the fake's kernels are host functions written for these tests,
    tests/ascend/kernels/) or because the backend refuses a construct (deferred completion)."""
    import re
    import subprocess
    script = os.path.join(ROOT, 'tests', 'conformance', 'run_conformance.py')
    env = dict(R.env)
    env['ASCEND_HOME_PATH'] = R.a.cann
    env['PLD_ASCEND_KERNELS'] = R.a.kernels
    for p in (1, 2, 4):
        wd = R.path('conformance_p%d' % p)
        cmd = [sys.executable, script, '--pldrun', R.a.pldrun, '--mpiexec', R.a.mpiexec,
               '--numproc-flag=' + R.a.numproc_flag, '--backends', 'ascend', '--ranks', str(p), '--transports', 'shm',
               '--max-failures', '0', '-j', '2', '--workdir', wd]
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=R.a.workdir,
                             timeout=800).stdout.decode(errors='replace')
        ran, no_binary, refused, other = [], [], [], []
        blocks = re.split(r'\n(?=ok: |FAIL: )', out)
        for b in blocks:
            m = re.match(r'(ok|FAIL): +(\S+) ascend', b)
            if not m:
                continue
            if m.group(1) == 'ok':
                ran.append(m.group(2))
            elif 'has no binary' in b:
                no_binary.append(m.group(2))
            elif 'uses deferred completion' in b or 'SDMA-async' in b or 'MIX (AIC+AIV)' in b:
                refused.append(m.group(2))
            else:
                other.append((m.group(2), b[:600]))
        print('conformance ascend P=%d: %d ran and passed (%s); %d cannot run here: a kernel without a binary '
              'for the fake; %d refused (%s)' % (p, len(ran), ', '.join(sorted(ran)), len(no_binary), len(refused),
                                                 ', '.join(sorted(refused))))
        check(not other, 'conformance P=%d: cells failing for another reason: %s' % (p, other[:2]))
        if not ran:
            print(out[-3000:])
        want = {'hello_rank', 'hello_rank.printed', 'hello_rank.arange', 'tutorial_hello_rank',
                'tutorial_hello_rank_printed'}
        check(want <= set(ran), 'conformance P=%d: %s did not pass' % (p, sorted(want - set(ran))))


def main():
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--case', required=True, choices=['unavailable', 'run_P2', 'run_P4', 'abi', 'errors', 'refusals',
                                                      'conformance'])
    ap.add_argument('--cann', required=True, help='the fake CANN root (lib64/libacl_rt.so)')
    ap.add_argument('--partial', required=True, help='a CANN root whose runtime lacks aclrtMapMem')
    ap.add_argument('--kernels', required=True, help='the fake kernel binaries')
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()
    R = Runner(a)
    globals()['case_' + a.case](R)
    if failures:
        print('%d check(s) failed' % len(failures))
        return 1
    print('ascend %s: all checks passed' % a.case)
    return 0


if __name__ == '__main__':
    sys.exit(main())
