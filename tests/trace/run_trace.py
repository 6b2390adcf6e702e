#!/usr/bin/env python3
"""run_trace.py - pldrun --trace, -v and --log-dir (CTest trace_<case>, label trace).

Every trace is checked by validate(): it parses as JSON in the Chrome trace
format, with no key twice in an object; every event has the fields its phase needs; every rank 0..P-1 is a
process named "rank R of P", every track an event uses is a thread named
"orchestration" or "block B"; the complete ("X") events of one track nest
(two events are disjoint or one contains the other); every flow (arrow) is one
"s" and one "f" event with the same id, cat "flow", named "notify -> wait" or
"put -> wait", the "f" with "bp":"e"; the "s" lies inside a notify (put, add)
slice of its pid/tid, the "f" inside a satisfied wait slice of its pid/tid,
and s.ts <= f.ts.

Cases:
  collective  programs/incore/allreduce_mesh.pld at P = 4: the results still
              match the Python golden; on every rank the window is created
              before the run, and run > dispatch > task > collective (x2) >
              phases (entry barrier, merged barriers, epilogue) > notify/wait, gets
              inside the collective with peer, bytes and window; one clock:
              no rank leaves the entry barrier before the last rank entered it
  clock       the same with pldrun_testing, rank 2's clock 3 s ahead
              (PLD_TEST_CLOCK_SKEW_NS): the clock exchange still puts every
              rank on rank 0's clock (the entry-barrier check fails without it)
  blocks      programs/host/allreduce_multicore.pld at P = 4: the HOST builtin
              on 4 cores puts core b's steps on track "block b" (1 + b) of
              every rank, inside the collective's time span: its barriers,
              and with --collective-steps chunk its reads too; the merged
              steps' reads (every block's tiles at once) go on the
              collective's own track
  plans       tests/mpi/programs/coll_incore_allreduce.pld over hybrid with
              split hosts (pldrun_testing): the merged steps' plan shows as
              a phase on every rank: "hub step: ranks 2, 3 fold, rank 1
              copies from rank 0 (messages across hosts)" at 2 + 2 with ranks
              0, 1 together, "hub step: ranks 0, 2 fold (messages across
              hosts)" at P = 3 round robin, with every worker's gets from
              the members off the hub host; spread steps (merged
              barriers) at 2 + 2 round robin; tests/mpi/programs/
              coll_incore_a2av.pld at 2 + 2: the batched pushes go to the
              other host's members first; the same program over shm: merged
              barriers by default, none with --collective-steps chunk (but
              its per-chunk barriers), the same output bits; a bad
              --collective-steps value is exit 64
  hang        tests/mpi/programs/coll_neg_mismatch.pld at P = 4 (ranks 1-3
              stuck in the allreduce, rank 0 passed its barrier: a deadlock) and coll_neg_divergent_wait.pld at P = 4 (one
              rank stuck, the watchdog): exit 70 and still a trace, where the
              stuck ranks' wait ends "stopped" with the value found, nested in
              collective/task/dispatch/run, next to an error instant with the
              report's message; finished ranks' events are there too
  error       a runtime error on rank 1 (tests/mpi/programs/oob_on_rank1.pld, P = 2):
              exit 70 and a trace with the error instant (message, location)
              inside rank 1's failed run
  logs        programs/tutorial/put_get.pld at P = 2 with -v and --log-dir:
              "[rank r/2] " lines on stderr, DIR/rank<r>.log with the same
              lines in order (times non-decreasing), naming puts/gets with
              peer, bytes and window, notifies with the value, waits with the
              value found
  errors      --trace into a missing directory (exit 74, named), --log-dir on
              a file (74), --trace without a value (64)
  flows       tests/trace/notify_wait.pld at P = 2 (rank 0 puts into rank 1's
              inbox and notifies it; rank 1 waits, reads, notifies rank 0
              back): exactly three arrows: rank 0's notify (line of the
              notify) -> rank 1's wait, rank 1's notify -> rank 0's wait,
              rank 0's put -> rank 1's wait (none from rank 1, which puts
              nothing); each starts in its producer's slice and ends in the
              wait's slice, later in time (docs/debugging.md, "Arrows");
              tests/schedule/spmd_ring.pld at P = 3 under --schedule-seed 3
              (4 blocks interleaved, puts held back): every arrow joins block
              b of rank r to block b of rank r + 1, 12 notify -> wait, at
              least 12 put -> wait (held puts' "landed" slices have theirs)
"""
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'mpi'))
import pld_mpitest as T  # noqa: E402

EPS = 0.002  # microseconds: the JSON keeps 3 decimals

# the cases (Runner methods), in the order tests/trace.cmake registers them (`--list`)
CASES = ('collective', 'clock', 'blocks', 'plans', 'hang', 'error', 'logs', 'errors', 'flows')
# the programs they run (a missing one fails --list and the run)
PROGRAMS = [os.path.join(ROOT, 'programs', p) for p in ('incore/allreduce_mesh.pld', 'host/allreduce_multicore.pld',
                                                         'tutorial/put_get.pld', 'tutorial/hello_rank.pld')] + \
    [os.path.join(ROOT, 'tests', 'mpi', 'programs', p) for p in (
        'coll_incore_allreduce.pld', 'coll_spmd_allreduce.pld', 'coll_incore_a2av.pld', 'coll_neg_mismatch.pld',
        'coll_neg_divergent_wait.pld', 'oob_on_rank1.pld')] + [os.path.join(HERE, 'notify_wait.pld'),
                                                               os.path.join(ROOT, 'tests', 'schedule', 'spmd_ring.pld')]


class Fail(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Fail(msg)


def validate(path, P, flows_out=None):
    """Checks the format; returns (events by pid: X and i events, thread names).
    flows_out (a list): receives the arrows, (name, s event, f event, producer slice, wait slice)."""
    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        need(len(keys) == len(set(keys)), 'duplicate keys in a JSON object: %r' % keys)
        return dict(pairs)
    with open(path) as f:
        d = json.load(f, object_pairs_hook=no_duplicates)
    need(isinstance(d, dict) and isinstance(d.get('traceEvents'), list), 'no traceEvents array')
    procs, threads, by_pid, flows = {}, {}, {p: [] for p in range(P)}, {}
    for e in d['traceEvents']:
        need(isinstance(e.get('name'), str) and e.get('ph') in ('X', 'i', 'M', 's', 'f'), 'bad event %r' % e)
        need(isinstance(e.get('pid'), int) and isinstance(e.get('tid'), int), 'pid/tid not integers: %r' % e)
        need(0 <= e['pid'] < P, 'pid %d outside [0, %d)' % (e['pid'], P))
        if e['ph'] in ('s', 'f'):
            need(e.get('cat') == 'flow' and e['name'] in ('notify -> wait', 'put -> wait') and
                 isinstance(e.get('id'), int) and isinstance(e.get('ts'), (int, float)), 'bad flow event %r' % e)
            need(e['ph'] == 's' or e.get('bp') == 'e', 'a flow end without "bp":"e": %r' % e)
            need(e['ph'] not in flows.get(e['id'], {}), 'flow id %d has two "%s" events' % (e['id'], e['ph']))
            flows.setdefault(e['id'], {})[e['ph']] = e
            continue
        if e['ph'] == 'M':
            if e['name'] == 'process_name':
                procs[e['pid']] = e['args']['name']
            elif e['name'] == 'thread_name':
                threads[(e['pid'], e['tid'])] = e['args']['name']
            continue
        need(isinstance(e.get('ts'), (int, float)) and isinstance(e.get('cat'), str), 'no ts/cat: %r' % e)
        if e['ph'] == 'X':
            need(isinstance(e.get('dur'), (int, float)) and e['dur'] >= 0, 'bad dur: %r' % e)
        need(isinstance(e.get('args'), dict), 'no args: %r' % e)
        by_pid[e['pid']].append(e)
    for p in range(P):
        need(re.match(r'rank %d of %d\b' % (p, P), procs.get(p, '')), 'rank %d: process name %r' % (p, procs.get(p)))
        need(by_pid[p], 'rank %d has no events' % p)
    for p, evs in by_pid.items():
        for e in evs:
            t = e['tid']
            want = 'orchestration' if t == 0 else 'block %d' % (t - 1)
            need(threads.get((p, t)) == want, 'rank %d track %d named %r, expected %r' % (p, t, threads.get((p, t)), want))
    # nesting per track
    for p, evs in by_pid.items():
        tracks = {}
        for e in evs:
            if e['ph'] == 'X':
                tracks.setdefault(e['tid'], []).append(e)
        for t, xs in tracks.items():
            xs.sort(key=lambda e: (e['ts'], -e['dur']))
            stack = []
            for e in xs:
                while stack and e['ts'] >= stack[-1]['ts'] + stack[-1]['dur'] - EPS:
                    stack.pop()
                if stack:
                    top = stack[-1]
                    need(e['ts'] + e['dur'] <= top['ts'] + top['dur'] + EPS,
                         'rank %d track %d: %s %r [%.3f, %.3f] overlaps %s %r [%.3f, %.3f] without nesting' %
                         (p, t, e['cat'], e['name'], e['ts'], e['ts'] + e['dur'], top['cat'], top['name'], top['ts'],
                          top['ts'] + top['dur']))
                stack.append(e)
    # the arrows: s in a producer's slice, f in a satisfied wait's slice, s before f
    def slice_at(ev, cats):
        hits = [x for x in by_pid[ev['pid']] if x['ph'] == 'X' and x['tid'] == ev['tid'] and x['cat'] in cats and
                x['ts'] - EPS <= ev['ts'] <= x['ts'] + x['dur'] + EPS]
        need(len(hits) == 1, 'flow %s %d at %.3f (rank %d track %d) is in %d %s slices' %
             (ev['ph'], ev['id'], ev['ts'], ev['pid'], ev['tid'], len(hits), '/'.join(cats)))
        return hits[0]
    for i, sf in sorted(flows.items()):
        need(set(sf) == {'s', 'f'}, 'flow id %d has %s only' % (i, list(sf)))
        s_, f_ = sf['s'], sf['f']
        need(s_['name'] == f_['name'], 'flow id %d: names %r / %r' % (i, s_['name'], f_['name']))
        # within the merged clock's error between ranks (tools/pldrun/flow.c FLOW_SKEW_NS, 2 ms)
        need(s_['ts'] <= f_['ts'] + EPS + 2000.0,
             'flow id %d ends (%.3f) before it starts (%.3f)' % (i, f_['ts'], s_['ts']))
        src = slice_at(s_, ('notify',) if s_['name'].startswith('notify') else ('put', 'add'))
        dst = slice_at(f_, ('wait',))
        need(dst['args'].get('result') == 'satisfied', 'flow id %d ends in a wait that stopped' % i)
        if flows_out is not None:
            flows_out.append((s_['name'], s_, f_, src, dst))
    return by_pid, threads


def inside(a, b):
    """a lies within b (same track not required)."""
    return a['ts'] >= b['ts'] - EPS and a['ts'] + a.get('dur', 0) <= b['ts'] + b['dur'] + EPS


def chain(evs, leaf, cats):
    """The X events of leaf's track enclosing leaf, as categories innermost first, must include cats in order."""
    enc = [e for e in evs if e['ph'] == 'X' and e is not leaf and e['tid'] == leaf['tid'] and inside(leaf, e)]
    enc.sort(key=lambda e: e['dur'])
    got = [e['cat'] for e in enc]
    it = iter(got)
    need(all(c in it for c in cats), '%s %r is inside %s, expected the chain %s' % (leaf['cat'], leaf['name'], got, cats))


class Runner:
    def __init__(self, a):
        self.a = a
        self.env = T.mpi_env(ROOT)
        os.makedirs(a.workdir, exist_ok=True)

    def path(self, *p):
        return os.path.join(self.a.workdir, *p)

    def run(self, P, program, args, timeout=60):
        return T.run_pldrun(self.a.mpiexec, self.a.numproc_flag, P, self.a.pldrun, program, args, self.env,
                            self.a.workdir, timeout=timeout)

    # ------------------------------------------------------------ cases
    def collective(self):
        self.collective_run(self.a.pldrun, None)

    def clock(self):
        """pldrun_testing with rank 2's clock 3 s ahead (PLD_TEST_CLOCK_SKEW_NS, MPMD)."""
        tool = self.a.pldrun_testing
        need(tool and os.path.exists(tool), 'pldrun_testing not given (--pldrun-testing)')
        self.collective_run(tool, 2)

    def collective_run(self, tool, skewed):
        P, S = 4, 64
        xs = [[(p * 37 + i * 11) % 23 - 11.0 for i in range(S)] for p in range(P)]
        T.write_npy(self.path('xs.npy'), 'FP32', (P, 1, S), [v for row in xs for v in row])
        out = self.path('outs.npy')
        trace = self.path('collective.json')
        prog = os.path.join(ROOT, 'programs', 'incore', 'allreduce_mesh.pld')
        args = ['--in', 'xs=' + self.path('xs.npy'), '--out', 'outs=' + out, '--trace', trace]
        if skewed is None:
            rc, so, se = self.run(P, prog, args)
        else:
            # mpirun's MPMD form: rank `skewed` alone gets the skew
            argv = [tool, prog] + args
            cmd = [self.a.mpiexec]
            for r in range(P):
                if r:
                    cmd.append(':')
                cmd += [self.a.numproc_flag, '1']
                if r == skewed:
                    cmd += ['-x', 'PLD_TEST_CLOCK_SKEW_NS=3000000000']
                cmd += argv
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env,
                               cwd=self.a.workdir, timeout=90)
            rc, so, se = p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')
        need(rc == 0, 'exit %d\n%s%s' % (rc, so, se))
        dt, shape, vals = T.read_npy(out)
        for r in range(P):
            for i in range(S):
                want_sum = sum(xs[p][i] for p in range(P))
                want_max = max(xs[p][i] for p in range(P))
                need(abs(vals[(r * 2) * S + i] - want_sum) < 1e-4 and vals[(r * 2 + 1) * S + i] == want_max,
                     'rank %d element %d: wrong result under --trace' % (r, i))
        by_pid, _ = validate(trace, P)
        entered, left = [], []
        for p, evs in by_pid.items():
            cats = [e['cat'] for e in evs]
            for c in ('window', 'run', 'dispatch', 'task', 'collective', 'phase', 'notify', 'wait', 'get'):
                need(c in cats, 'rank %d: no %s event' % (p, c))
            win = [e for e in evs if e['cat'] == 'window'][0]
            run = [e for e in evs if e['cat'] == 'run'][0]
            need(win['ts'] + win['dur'] <= run['ts'] + EPS, 'rank %d: window created after the run began' % p)
            need(win['args'].get('members') == P and win['args'].get('bytes', 0) > 0, 'rank %d: window args %r' %
                 (p, win['args']))
            colls = [e for e in evs if e['cat'] == 'collective']
            need(len(colls) == 2 and all('pld.tensor.allreduce' in e['name'] for e in colls),
                 'rank %d: collectives %r' % (p, [e['name'] for e in colls]))
            for c in colls:
                chain(evs, c, ['task', 'dispatch', 'run'])
                phases = [e['name'] for e in evs if e['cat'] == 'phase' and inside(e, c)]
                need(any(n.startswith('entry barrier') for n in phases) and any(n.startswith('epilogue') for n in phases),
                     'rank %d: phases of a collective %r' % (p, phases))
            for e in evs:
                if e['cat'] in ('notify', 'wait'):
                    chain(evs, e, ['phase', 'collective', 'task'])
                if e['cat'] == 'get':
                    chain(evs, e, ['collective', 'task', 'dispatch', 'run'])
                    a = e['args']
                    # spread steps at P = 4 (docs/transport.md): a part of the range per get
                    need(a.get('peer') in range(P) and a['peer'] != p and a.get('bytes') == S * 4 // P and
                         a.get('window') in ('total_buf', 'peak_buf') and a.get('offset', -1) >= 0,
                         'rank %d: get args %r' % (p, a))
                if e['cat'] == 'notify':
                    need(e['args'].get('op') == 'pld.tensor.allreduce' and e['args'].get('update') in ('add', 'set') and isinstance(e['args'].get('value'), int) and e['args']['value'] != 0 and
                         re.match(r'sig_buf\[\d+\]$', e['args'].get('cell', '')), 'rank %d: notify args %r' % (p, e['args']))
                if e['cat'] == 'wait':
                    a = e['args']
                    need(a.get('result') == 'satisfied' and a.get('found', -1) >= int(a['expected'].split()[-1]),
                         'rank %d: wait args %r' % (p, a))
            first = min((e for e in evs if e['cat'] == 'phase' and e['name'].startswith('entry barrier')),
                        key=lambda e: e['ts'])
            entered.append(first['ts'])
            left.append(first['ts'] + first['dur'])
        # one clock: nobody leaves the first entry barrier before everybody entered it
        tol = 200.0  # microseconds: the clock exchange's error is half a round trip
        need(min(left) >= max(entered) - tol, 'clocks disagree: a rank left the entry barrier at %.1f us, the last '
                                              'entered at %.1f us' % (min(left), max(entered)))

    def blocks(self):
        P = 4
        for mode in ('merged', 'chunk'):
            trace = self.path('blocks_%s.json' % mode)
            rc, so, se = self.run(P, os.path.join(ROOT, 'programs', 'host', 'allreduce_multicore.pld'),
                                  ['--in', 'xs=arange', '--collective-steps', mode, '--trace', trace])
            need(rc == 0, 'exit %d\n%s%s' % (rc, so, se))
            by_pid, threads = validate(trace, P)
            for p, evs in by_pid.items():
                coll = [e for e in evs if e['cat'] == 'collective']
                need(len(coll) == 1 and coll[0]['tid'] == 0 and 'HOST builtin' in coll[0]['name'],
                     'rank %d: collectives %r' % (p, [(e['name'], e['tid']) for e in coll]))
                for b in range(4):
                    need(threads.get((p, 1 + b)) == 'block %d' % b, 'rank %d: no track for block %d' % (p, b))
                    mine = [e for e in evs if e['tid'] == 1 + b]
                    # a merged step reads every block's tiles at once, on the
                    # collective's track; per chunk each block reads its own
                    for c in ('notify', 'wait', 'phase') + (('get',) if mode == 'chunk' else ()):
                        need(any(e['cat'] == c for e in mine), '%s: rank %d block %d: no %s event' % (mode, p, b, c))
                    need(all(inside(e, coll[0]) for e in mine),
                         '%s: rank %d block %d: events outside the collective' % (mode, p, b))
                    if mode == 'merged':
                        need(not any(e['cat'] == 'get' for e in mine), 'merged: rank %d block %d: a get' % (p, b))
                if mode == 'merged':
                    gets = [e for e in evs if e['cat'] == 'get' and e['tid'] == 0]
                    need(gets and all(inside(e, coll[0]) for e in gets),
                         'merged: rank %d: no get on the collective\'s track within it' % p)

    def plans(self):
        """The merged steps' plan across (split) hosts, from pldrun_testing with
        PLD_TEST_SPLIT_HOSTS over hybrid (docs/transport.md, "Hub steps"):
        HUB with rep and twin at 2 + 2 with ranks 0, 1 together, HUB without
        them at P = 3 round robin, SPREAD at 2 + 2 round robin."""
        tool = self.a.pldrun_testing
        need(tool and os.path.exists(tool), 'pldrun_testing not given (--pldrun-testing)')
        prog = os.path.join(ROOT, 'tests', 'mpi', 'programs', 'coll_incore_allreduce.pld')
        # over hybrid the hub steps move their parts by message (docs/transport.md,
        # "Hub steps by messages"): every worker records a get from each member
        # off the hub host
        across = ' (messages across hosts)'
        for split, P, want, workers in (('2b', 4, 'hub step: ranks 2, 3 fold, rank 1 copies from rank 0' + across,
                                         (2, 3)),
                                        ('2', 3, 'hub step: ranks 0, 2 fold' + across, (0, 2)),
                                        ('2', 4, None, ())):
            trace = self.path('plans_%s_%d.json' % (split, P))
            env = dict(self.env, PLD_TEST_SPLIT_HOSTS=split)
            rc, so, se = T.run_pldrun(self.a.mpiexec, self.a.numproc_flag, P, tool, prog,
                                      ['--in', 'xs=random:101', '--in', 'hs=random:102', '--in', 'ys=random:103',
                                       '--window-transport', 'hybrid', '--trace', trace], env, self.a.workdir,
                                      timeout=60)
            need(rc == 0, 'split %s P=%d: exit %d\n%s%s' % (split, P, rc, so, se))
            by_pid, _ = validate(trace, P)
            for p, evs in by_pid.items():
                names = [e['name'] for e in evs if e['cat'] == 'phase']
                hub = [n for n in names if n.startswith('hub step')]
                if want:
                    need(hub and all(n == want for n in hub), 'split %s P=%d rank %d: hub steps %r, expected %r' %
                         (split, P, p, sorted(set(hub)), want))
                    steps = [e for e in evs if e['cat'] == 'phase' and e['name'] == want]
                    gets = set(e['args']['peer'] for e in evs if e['cat'] == 'get' and any(inside(e, h) for h in steps))
                    far = set(q for q in range(P) if q not in workers)
                    if p in workers:
                        need(gets >= far, 'split %s P=%d worker %d: gets from %r within its hub steps, expected %r' %
                             (split, P, p, sorted(gets), sorted(far)))
                else:
                    need(not hub and any('merged barriers' in n for n in names),
                         'split %s P=%d rank %d: expected spread steps (merged barriers, no hub step): %r' %
                         (split, P, p, sorted(set(names))))
        # one host: merged steps by default (spread at P = 4: merged barriers),
        # a barrier per chunk with --collective-steps chunk, the same bits
        outs = {}
        for mode in ('merged', 'chunk'):
            trace = self.path('plans_shm_%s.json' % mode)
            outs[mode] = self.path('plans_shm_%s.npy' % mode)
            rc, so, se = T.run_pldrun(self.a.mpiexec, self.a.numproc_flag, 4, tool, prog,
                                      ['--in', 'xs=random:101', '--in', 'hs=random:102', '--in', 'ys=random:103',
                                       '--out', 'sums=' + outs[mode], '--window-transport', 'shm',
                                       '--collective-steps', mode, '--trace', trace], self.env, self.a.workdir,
                                      timeout=60)
            need(rc == 0, 'shm, --collective-steps %s: exit %d\n%s%s' % (mode, rc, so, se))
            by_pid, _ = validate(trace, 4)
            for p, evs in by_pid.items():
                merged = [e for e in evs if e['cat'] == 'phase' and 'merged barriers' in e['name']]
                barriers = [e for e in evs if e['cat'] == 'phase' and e['name'].startswith('barrier')]
                if mode == 'merged':
                    need(merged, 'shm rank %d: no merged barriers by default' % p)
                else:
                    need(not merged and len(barriers) > 4,
                         'shm rank %d, --collective-steps chunk: %d merged barriers, %d barriers' %
                         (p, len(merged), len(barriers)))
        with open(outs['merged'], 'rb') as f, open(outs['chunk'], 'rb') as g:
            need(f.read() == g.read(), 'shm: the merged steps\' outputs differ from the per-chunk ones')
        rc, so, se = T.run_pldrun(self.a.mpiexec, self.a.numproc_flag, 1, tool, prog, ['--collective-steps', 'tile'],
                                  self.env, self.a.workdir, timeout=60)
        need(rc == 64 and '--collective-steps must be merged or chunk' in se,
             '--collective-steps tile: exit %d\n%s' % (rc, se))
        # two blocks of one rank (spmd_submit core_num=2), each in an allreduce
        # of its own: they stay on the window path (no messages: those match
        # by sender and size alone), and give what shm gives on one host
        prog = os.path.join(ROOT, 'tests', 'mpi', 'programs', 'coll_spmd_allreduce.pld')
        outs = {}
        for tr, split in (('hybrid', '2b'), ('shm', '')):
            trace = self.path('plans_spmd_%s.json' % tr)
            outs[tr] = self.path('plans_spmd_%s.npy' % tr)
            env = dict(self.env, PLD_TEST_SPLIT_HOSTS=split) if split else self.env
            rc, so, se = T.run_pldrun(self.a.mpiexec, self.a.numproc_flag, 4, tool, prog,
                                      ['--in', 'xs=random:601', '--out', 'outs=' + outs[tr], '--window-transport', tr,
                                       '--trace', trace], env, self.a.workdir, timeout=60)
            need(rc == 0, 'spmd allreduce over %s: exit %d\n%s%s' % (tr, rc, so, se))
            if tr == 'hybrid':
                by_pid, _ = validate(trace, 4)
                hub = set(e['name'] for evs in by_pid.values() for e in evs
                          if e['cat'] == 'phase' and e['name'].startswith('hub step'))
                need(hub == {'hub step: ranks 2, 3 fold, rank 0 copies to rank 1'},
                     'spmd allreduce: hub steps %r, expected the window path\'s alone' % sorted(hub))
        with open(outs['hybrid'], 'rb') as f, open(outs['shm'], 'rb') as g:
            need(f.read() == g.read(), 'spmd allreduce: the outputs over hybrid differ from those over shm')
        # the batched pushes of all_to_all_v: the members on the other host
        # first, each group from me + 1 round (coll_incore_a2av's counts skip
        # some destinations: the puts must be a subsequence of that order)
        prog = os.path.join(ROOT, 'tests', 'mpi', 'programs', 'coll_incore_a2av.pld')
        trace = self.path('plans_a2av.json')
        rc, so, se = T.run_pldrun(self.a.mpiexec, self.a.numproc_flag, 4, tool, prog,
                                  ['--in', 'xs=random:401', '--window-transport', 'hybrid', '--trace', trace],
                                  dict(self.env, PLD_TEST_SPLIT_HOSTS='2b'), self.a.workdir, timeout=60)
        need(rc == 0, 'all_to_all_v split 2b P=4: exit %d\n%s%s' % (rc, so, se))
        by_pid, _ = validate(trace, 4)
        nfar_first = 0
        for p, evs in by_pid.items():
            rot = [(p + 1 + i) % 4 for i in range(4)]
            order = [q for q in rot if q // 2 != p // 2] + [q for q in rot if q // 2 == p // 2 and q != p]
            colls = [e for e in evs if e['cat'] == 'collective' and 'all_to_all_v' in e['name']]
            need(colls, 'rank %d: no all_to_all_v in the trace' % p)
            for c in colls:
                peers = [e['args']['peer'] for e in sorted(evs, key=lambda e: e['ts'])
                         if e['cat'] == 'put' and inside(e, c)]
                it = iter(order)
                need(peers and all(q in it for q in peers),
                     'rank %d: all_to_all_v pushes to %r, expected a subsequence of %r' % (p, peers, order))
                nfar_first += peers[0] // 2 != p // 2 and peers[-1] // 2 == p // 2
        need(nfar_first > 0, 'no all_to_all_v pushed to both hosts')

    def hang(self):
        P = 4
        for prog, stuck, why in (('coll_neg_mismatch.pld', [1, 2, 3], 'deadlock'),
                                 ('coll_neg_divergent_wait.pld', [1], None)):
            trace = self.path('hang_%s.json' % prog[:-4])
            if os.path.exists(trace):
                os.remove(trace)
            rc, so, se = self.run(P, os.path.join(ROOT, 'tests', 'mpi', 'programs', prog),
                                  ['--in', 'xs=random:1', '--trace', trace, '--timeout', '5'], timeout=90)
            need(rc == 70, '%s: exit %d, expected 70\n%s%s' % (prog, rc, so, se))
            need(os.path.exists(trace), '%s: no trace after the hang' % prog)
            by_pid, _ = validate(trace, P)
            for p in range(P):
                evs = by_pid[p]
                need(any(e['cat'] == 'run' for e in evs), '%s rank %d: no run event' % (prog, p))
                stopped = [e for e in evs if e['cat'] == 'wait' and e['args'].get('result') == 'stopped']
                if p not in stuck:
                    need(not stopped, '%s rank %d: a stopped wait on a rank that finished' % (prog, p))
                    continue
                need(len(stopped) == 1, '%s rank %d: %d stopped waits' % (prog, p, len(stopped)))
                w = stopped[0]
                need('found' in w['args'] and w['args'].get('expected') and
                     re.search(r'%s:\d+:\d+$' % re.escape(prog), w['args'].get('at', '')), '%s: wait args %r' % (prog, w['args']))
                chain(evs, w, ['task', 'dispatch', 'run'])
                errs = [e for e in evs if e['cat'] == 'error']
                need(len(errs) == 1 and w['args']['wait'] in errs[0]['args'].get('message', ''),
                     '%s rank %d: error instants %r' % (prog, p, [e['args'] for e in errs]))
                need(errs[0]['ts'] >= w['ts'] + w['dur'] - 1000.0, '%s rank %d: the error precedes the wait' % (prog, p))
                if why:
                    need(why in errs[0]['args']['message'], '%s: %r' % (prog, errs[0]['args']['message']))

    def error(self):
        """A runtime error on rank 1 (tests/mpi/programs/oob_on_rank1.pld at P = 2): exit 70, a trace
        with rank 1's error instant (the message, its location) inside its run; rank 0 is there too."""
        P = 2
        trace = self.path('error.json')
        if os.path.exists(trace):
            os.remove(trace)
        rc, so, se = self.run(P, os.path.join(ROOT, 'tests', 'mpi', 'programs', 'oob_on_rank1.pld'),
                              ['--in', 'xs=arange', '--trace', trace])
        need(rc == 70, 'exit %d, expected 70\n%s%s' % (rc, so, se))
        by_pid, _ = validate(trace, P)
        errs = [e for e in by_pid[1] if e['cat'] == 'error']
        need(len(errs) == 1 and 'past the end of dimension 0' in errs[0]['args'].get('message', '') and
             re.search(r'oob_on_rank1\.pld:\d+:\d+$', errs[0]['args'].get('at', '')), 'rank 1 errors %r' % errs)
        run = [e for e in by_pid[1] if e['cat'] == 'run']
        need(len(run) == 1 and run[0]['args'].get('failed') and inside(errs[0], run[0]),
             'rank 1: the error is not inside a failed run: %r' % run)
        need(not any(e['cat'] == 'error' for e in by_pid[0]), 'rank 0 has an error instant')

    def logs(self):
        P = 2
        d = self.path('logs')
        shutil.rmtree(d, ignore_errors=True)
        rc, so, se = self.run(P, os.path.join(ROOT, 'programs', 'tutorial', 'put_get.pld'),
                              ['--in', 'xs=arange', '-v', '--log-dir', d])
        need(rc == 0, 'exit %d\n%s%s' % (rc, so, se))
        for r in range(P):
            mine = [l[len('[rank %d/%d] ' % (r, P)):] for l in se.splitlines() if l.startswith('[rank %d/%d] ' % (r, P))]
            need(len(mine) > 10, 'rank %d: %d lines on stderr' % (r, len(mine)))
            with open(os.path.join(d, 'rank%d.log' % r)) as f:
                lines = [l.rstrip('\n') for l in f if not l.startswith('#')]
            times = [float(l.split(' ms  ', 1)[0]) for l in lines]
            text = [l.split(' ms  ', 1)[1] for l in lines]
            need(times == sorted(times), 'rank %d: log times go back' % r)
            need(text == mine, 'rank %d: the log file and stderr differ' % r)
            peer = (r + 1) % P
            need(any(re.search(r'\b(put|get) \S+ (to|from) rank %d \(world %d\): \w+, \d+ bytes at window offset \d+'
                               % (peer, peer), t) for t in text), 'rank %d: no put/get naming its peer' % r)
            need(any(re.search(r'notify \S+ to rank \d \(world \d\): \w+\[\d+\] (\+)?= -?\d+ \(cell at window offset \d+\)', t)
                     for t in text), 'rank %d: no notify line' % r)
            need(any(re.search(r'wait: .*: found -?\d+, expected (==|>=) -?\d+, satisfied', t) for t in text),
                 'rank %d: no wait line' % r)
            need(any(re.search(r'put_get\.pld:\d+:\d+', t) for t in text), 'rank %d: no source locations' % r)
            need(text[0].startswith('host: window') and any(t.startswith('host: begin run') for t in text),
                 'rank %d: log starts with %r' % (r, text[0]))

    def errors(self):
        prog = os.path.join(ROOT, 'programs', 'tutorial', 'hello_rank.pld')
        rc, so, se = self.run(2, prog, ['--in', 'xs=arange', '--trace', self.path('no', 'such', 'dir', 't.json')])
        need(rc == 74 and 'cannot write' in se and 'no/such/dir/t.json' in se, '--trace into a missing dir: %d\n%s' %
             (rc, se))
        blocker = self.path('afile')
        with open(blocker, 'w') as f:
            f.write('x')
        rc, so, se = self.run(2, prog, ['--in', 'xs=arange', '--log-dir', os.path.join(blocker, 'logs')])
        need(rc == 74 and '--log-dir' in se, '--log-dir on a file: %d\n%s' % (rc, se))
        rc, so, se = self.run(1, prog, ['--trace'])
        need(rc == 64 and '--trace needs' in se, '--trace without a value: %d\n%s' % (rc, se))


    def flows(self):
        P = 2
        prog = os.path.join(HERE, 'notify_wait.pld')
        out, trace = self.path('ys.npy'), self.path('flows.json')
        rc, so, se = self.run(P, prog, ['--in', 'xs=arange', '--out', 'ys=' + out, '--trace', trace])
        need(rc == 0, 'exit %d\n%s%s' % (rc, so, se))
        need(T.read_npy(out)[2][32:] == [float(i) for i in range(32)], 'ys[1] != xs[0]')
        arrows = []
        validate(trace, P, arrows)
        line = lambda marker: '%s:%d:%d' % ((prog,) + T.locate(prog, marker))  # noqa: E731
        n0, n1 = line('pld.system.notify(sig, 1'), line('pld.system.notify(sig, 0')
        w0, w1 = line('pld.system.wait(sig, [1, 0]'), line('pld.system.wait(sig, [0, 0]')
        put = line('pld.tensor.put(inbox, 1, x)')
        got = sorted((name, src['pid'], src['args'].get('at'), dst['pid'], dst['args'].get('at'))
                     for name, s_, f_, src, dst in arrows)
        want = sorted([('notify -> wait', 0, n0, 1, w1), ('notify -> wait', 1, n1, 0, w0),
                       ('put -> wait', 0, put, 1, w1)])
        need(got == want, 'the arrows (name, from rank, at, to rank, at):\n  got  %s\n  want %s' % (got, want))
        # blocks interleaved by a seeded schedule: block b of rank r puts into row b of rank r + 1 and
        # notifies its cell b, which block b of rank r + 1 waits on; every arrow joins the two blocks
        P, blocks = 3, 4
        trace = self.path('ring.json')
        rc, so, se = self.run(P, os.path.join(ROOT, 'tests', 'schedule', 'spmd_ring.pld'),
                              ['--in', 'xs=arange', '--schedule-seed', '3', '--trace', trace])
        need(rc == 0, 'spmd_ring: exit %d\n%s%s' % (rc, so, se))
        arrows = []
        validate(trace, P, arrows)
        kinds = {}
        for name, s_, f_, src, dst in arrows:
            need(src['tid'] == dst['tid'] and dst['pid'] == (src['pid'] + 1) % P,
                 'spmd_ring: %s from rank %d track %d to rank %d track %d' %
                 (name, src['pid'], src['tid'], dst['pid'], dst['tid']))
            kinds[name] = kinds.get(name, 0) + 1
        need(kinds.get('notify -> wait') == P * blocks and kinds.get('put -> wait', 0) >= P * blocks,
             'spmd_ring: arrows %r, expected %d notify -> wait and at least as many put -> wait' % (kinds, P * blocks))


def main():
    if '--list' in sys.argv[1:]:  # the cases, one per line (tests/trace.cmake registers one test per case)
        T.require_programs('run_trace.py', [('trace', p) for p in PROGRAMS])
        print('\n'.join(CASES))
        return 0
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--case', required=True, choices=CASES)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--pldrun-testing', default='')
    ap.add_argument('--list', action='store_true', help='print the cases and exit')
    a = ap.parse_args()
    T.require_programs('run_trace.py', [('trace', p) for p in PROGRAMS])
    r = Runner(a)
    try:
        getattr(r, a.case)()
    except Fail as e:
        print('FAIL (%s): %s' % (a.case, e))
        return 1
    print('ok: %s' % a.case)
    return 0


if __name__ == '__main__':
    sys.exit(main())
