#!/usr/bin/env python3
"""test_batch.py - `pldrun --batch LIST` against separate runs of the same entries (CTest mpi_batch, label mpi).

One MPI job runs a LIST of entries (tools/pldrun/main.c, batch): each line is
CWD<TAB>STDOUT_FILE<TAB>STDERR_FILE<TAB>ARGS..., run with fresh windows and a
fresh interpreter; rank 0 appends "INDEX EXIT" to LIST.status after each entry.
This runner checks, at P = --ranks (default 2):

  batch      a LIST of tutorial programs (programs/tutorial, with the --in
             generators of their `# inputs:` directive and an --out for every
             Out parameter of the HOST orchestrator) over the shm, rma and hybrid
             transports, in which a runtime error (tests/mpi/programs/
             oob_on_rank1.pld, exit 70), a hang the watchdog stops (coll_neg_
             divergent_wait.pld, 70), a usage error found before the run
             (an unknown option, 64), one found in the run (an unknown --in
             parameter, 64), an entry whose CWD does not exist (74, its message
             on the batch's own stderr) and a --check entry (64, "not available
             in a --batch entry") sit between programs that succeed; some CWDs
             are relative, the program path comes first or last. Every entry is
             also run alone (`mpirun -n P pldrun ARGS` in a directory of its own;
             the usage error of parse_args, which happens before MPI_Init, alone
             without mpirun, P copies of its message expected). For each entry:
             its status line equals the separate run's exit status; its .npy
             outputs are byte-identical (and the same files exist); its stderr
             file holds the same lines as the separate run's stderr (sorted; Open
             MPI's job-abort notices of the separate run left out, nothing else
             allowed); its stdout the same (the run time masked). The batch
             exits with the worst status and prints nothing else.
  malformed  a LIST whose line 4 has two fields: exit 64, "LIST:4:" in the
             message, no entry runs (not even the valid line 3)
  unreadable a LIST that does not exist (a singleton, no mpirun): exit 64
  options    `--batch LIST more` and `PROGRAM --batch LIST`: exit 64
  singleton  `pldrun --batch LIST` without mpirun (P = 1): two entries against
             singleton runs, as above

In a sanitizer build the batch runs with the leak check on (pldrun checks
once, after the last entry: a leak in any entry fails the batch's exit status).

usage:
  test_batch.py --pldrun PATH [--mpiexec mpirun] [--numproc-flag -n]
                [--ranks P] [--workdir DIR]
Prints one line per check group and "N passed, M failed"; exit 0 when all pass.
"""
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import pld_mpitest as T  # noqa: E402

TUT = os.path.join(REPO, 'programs', 'tutorial')
NEG = os.path.join(HERE, 'programs')
TIMEOUT = 180

# Open MPI's notices when a rank of a separate run exits non-zero (mpirun's own, not pldrun's): a block between
# two lines of dashes whose first line starts so
MPIRUN_BLOCKS = re.compile(r'Primary job  terminated normally, but|'
                           r'(mpirun|mpiexec|orterun) detected that one or more processes exited with non-zero status')
DASHES = re.compile(r'-{20,}')
# ... and what a rank says when mpirun's abort of that job (the first rank to exit non-zero) finds it still inside
# MPI_Finalize: the exit status is decided by then
ABORTED_IN_FINALIZE = re.compile(r'\[rank \d+/\d+\] terminated while finishing')


def directive(path, key):
    """The words of the program's `# key:` header directive ([] when absent)."""
    with open(path) as f:
        for line in f:
            if not line.startswith('#'):
                break
            if line.startswith('# %s:' % key):
                return line.split(':', 1)[1].split()
    return []


def host_outputs(path):
    """The Out parameters of the program's HOST orchestrator, in order."""
    with open(path) as f:
        text = f.read()
    at = text.find('role=pl.Role.Orchestrator')
    if at < 0:
        raise ValueError('%s: no HOST orchestrator' % path)
    sig = text[text.find('def ', at):]
    sig = sig[:sig.find('->')]
    return re.findall(r'^\s*(\w+): pl\.Out\[', sig, re.M)


def strip_mpirun(err):
    """The lines of a job's stderr without Open MPI's job-abort blocks (MPIRUN_BLOCKS), a rank's line when that abort
    found it in MPI_Finalize (ABORTED_IN_FINALIZE) and launcher notices (T.launcher_notice)."""
    lines, out, i = err.splitlines(), [], 0
    while i < len(lines):
        if DASHES.fullmatch(lines[i]):
            j = i + 1
            while j < len(lines) and not DASHES.fullmatch(lines[j]):
                j += 1
            if j < len(lines) and j > i + 1 and MPIRUN_BLOCKS.match(lines[i + 1]):
                i = j + 1
                continue
        if not T.launcher_notice(lines[i]) and not ABORTED_IN_FINALIZE.fullmatch(lines[i]):
            out.append(lines[i])
        i += 1
    return out


def mask_times(text):
    """text with measured times masked: the run time of the summary line ("..., 0.036 s") and the hang
    report's "last progress 3.00 s before the stop" (they differ between any two runs)."""
    return re.sub(r'\d+\.\d+ s\b', 'T s', text)


def run(cmd, env, cwd):
    """(rc, stdout, stderr, seconds) of cmd."""
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env,
                           cwd=cwd, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or b'').decode(errors='replace'), \
            (e.stderr or b'').decode(errors='replace') + '\n(timed out after %d s)' % TIMEOUT, time.time() - t0
    return p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace'), time.time() - t0


class Entry:
    """One LIST line. kind: 'run' (compared with `mpirun -n P pldrun ARGS`), 'direct' (a usage error of parse_args:
    compared with `pldrun ARGS` without mpirun, P copies of its stderr), 'refused' (an option a batch entry does
    not take: 64 and the message), 'nocwd' (CWD missing: 74, the message on the batch's stderr)."""

    def __init__(self, name, prog, opts, kind='run', outputs=True, relative=False, prog_last=False):
        self.name, self.prog, self.kind, self.relative = name, prog, kind, relative
        args = []
        for b in directive(prog, 'inputs'):
            args += ['--in', b]
        if outputs:
            for o in host_outputs(prog):
                args += ['--out', '%s=out_%s.npy' % (o, o)]
        args += list(opts)
        self.args = args + [prog] if prog_last else [prog] + args


def entries(P):
    """The batch: programs that succeed around the failures, both/all transports."""
    hello, put_get = os.path.join(TUT, 'hello_rank.pld'), os.path.join(TUT, 'put_get.pld')
    e = [
        Entry('hello_shm', hello, ['--window-transport', 'shm']),
        Entry('put_get_shm', put_get, ['--window-transport', 'shm'], relative=True, prog_last=True),
        Entry('mesh_rma', os.path.join(TUT, 'allreduce_mesh_handrolled.pld'), ['--window-transport', 'rma']),
        Entry('oob_runtime_error', os.path.join(NEG, 'oob_on_rank1.pld'), ['--window-transport', 'rma']),
        Entry('put_get_rma', put_get, ['--window-transport', 'rma'], prog_last=True),
        Entry('hang_detected', os.path.join(NEG, 'coll_neg_divergent_wait.pld'), ['--window-transport', 'shm']),
        Entry('usage_unknown_option', hello, ['--no-such-option'], kind='direct', relative=True),
        Entry('collectives_shm', os.path.join(TUT, 'collectives_handrolled.pld'), ['--window-transport', 'shm'],
              relative=True),
        Entry('usage_unknown_param', hello, ['--in', 'nope=arange', '--window-transport', 'rma']),
        Entry('missing_cwd', hello, [], kind='nocwd'),
        Entry('hello_rma', hello, ['--window-transport', 'rma'], prog_last=True),
        Entry('check_refused', hello, ['--check'], kind='refused'),
        Entry('window_buffer_hybrid', os.path.join(TUT, 'window_buffer.pld'), ['--window-transport', 'hybrid'],
              relative=True),
    ]
    return e


def write_list(path, base, ents, tag):
    """Writes LIST for ents; each entry's directory base/tag/NAME (created, with empty stdout/stderr files, except
    for a 'nocwd' entry), relative to base when the entry says so."""
    lines = ['# test_batch.py: %d entries' % len(ents), '']
    for e in ents:
        d = os.path.join(base, tag, e.name)
        if e.kind != 'nocwd':
            os.makedirs(d)
            for f in ('stdout.txt', 'stderr.txt'):
                open(os.path.join(d, f), 'w').close()
        cwd = os.path.relpath(d, base) if e.relative or e.kind == 'nocwd' else d
        lines.append('\t'.join([cwd, 'stdout.txt', 'stderr.txt'] + e.args))
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


def outputs_of(d):
    """{file name: bytes} of the .npy files in d."""
    got = {}
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if f.endswith('.npy'):
            with open(os.path.join(d, f), 'rb') as fh:
                got[f] = fh.read()
    return got


def read(path):
    with open(path) as f:
        return f.read()


def compare_entry(e, i, status, bdir, sdir, ref, P):
    """Problems of entry i (ref: the separate run's (rc, stdout, stderr) or None)."""
    pr = []
    if e.kind == 'nocwd':
        if status.get(i) != 74:
            pr.append('%s: status %s, expected 74' % (e.name, status.get(i)))
        return pr
    out, err = read(os.path.join(bdir, 'stdout.txt')), read(os.path.join(bdir, 'stderr.txt'))
    if e.kind == 'refused':
        want_rc, want_out = 64, ''
        want_err = ['pldrun: %s is not available in a --batch entry' % e.args[-1]] * P
    else:
        want_rc, want_out, ref_err = ref
        want_err = ref_err.splitlines() * P if e.kind == 'direct' else strip_mpirun(ref_err)
    if status.get(i) != want_rc:
        pr.append('%s: status %s, the separate run exited %d' % (e.name, status.get(i), want_rc))
    if mask_times(out) != mask_times(want_out):
        pr.append('%s: stdout %r, the separate run printed %r' % (e.name, out, want_out))
    err, want_err = mask_times(err), [mask_times(l) for l in want_err]
    if sorted(err.splitlines()) != sorted(want_err):
        extra = sorted(set(err.splitlines()) - set(want_err))
        missing = sorted(set(want_err) - set(err.splitlines()))
        pr.append('%s: stderr differs from the separate run\'s (sorted lines): only in the batch: %r; only in the '
                  'separate run: %r; counts %d vs %d' % (e.name, extra[:3], missing[:3], len(err.splitlines()),
                                                           len(want_err)))
    if e.kind == 'run':
        got, want = outputs_of(bdir), outputs_of(sdir)
        if sorted(got) != sorted(want):
            pr.append('%s: output files %s, the separate run wrote %s' % (e.name, sorted(got), sorted(want)))
        for f in sorted(set(got) & set(want)):
            if got[f] != want[f]:
                pr.append('%s: %s differs from the separate run\'s' % (e.name, f))
        if want_rc == 0 and not want:
            pr.append('%s: the separate run wrote no output (the comparison would be empty)' % e.name)
    return pr


def read_status(path):
    """{index: exit} from LIST.status, and the problems with its lines."""
    st, pr = {}, []
    for n, line in enumerate(read(path).splitlines() if os.path.exists(path) else []):
        m = re.fullmatch(r'(\d+) (\d+)', line)
        if not m or int(m.group(1)) != n:
            pr.append('%s line %d: %r (expected "%d EXIT")' % (os.path.basename(path), n + 1, line, n))
            continue
        st[n] = int(m.group(2))
    return st, pr


def check_batch(args, env, P, wd):
    """The batch against separate runs; returns problems."""
    ents = entries(P)
    listf = os.path.join(wd, 'batch.list')
    write_list(listf, wd, ents, 'batch')
    mpi = [args.mpiexec, args.numproc_flag, str(P)]
    rc, out, err, tb = run(mpi + [args.pldrun, '--batch', 'batch.list'], env, wd)
    pr = []
    status, spr = read_status(listf + '.status')
    pr += spr
    # the separate runs, each in a directory of its own
    refs, ts = {}, 0.0
    for e in ents:
        if e.kind not in ('run', 'direct'):
            continue
        d = os.path.join(wd, 'single', e.name)
        os.makedirs(d)
        cmd = (mpi if e.kind == 'run' else []) + [args.pldrun] + e.args
        r = run(cmd, env, d)
        ts += r[3]
        refs[e.name] = r[:3]
    for i, e in enumerate(ents):
        pr += compare_entry(e, i, status, os.path.join(wd, 'batch', e.name), os.path.join(wd, 'single', e.name),
                            refs.get(e.name), P)
    if sorted(status) != list(range(len(ents))):
        pr.append('status lines for %s, expected 0..%d' % (sorted(status), len(ents) - 1))
    worst = max(status.values()) if status else None
    if rc != worst:
        pr.append('the batch exited %d, the worst entry status is %s' % (rc, worst))
    if 70 not in status.values() or 64 not in status.values() or status.get(0) != 0:
        pr.append('the batch lacks a passing, a 70 or a 64 entry: statuses %s' % status)
    if out:
        pr.append('the batch printed on its own stdout: %r' % out[:200])
    # the batch's own stderr: the missing CWD's message from every rank, and Open MPI's notice of the exit status
    nocwd = [i for i, e in enumerate(ents) if e.kind == 'nocwd'][0]
    want = sorted("[rank %d/%d] pldrun: batch.list:%d: cannot enter the directory '%s': No such file or directory"
                  % (r, P, nocwd + 3, os.path.join('batch', ents[nocwd].name), ) for r in range(P))
    got = sorted(strip_mpirun(err))
    if got != want:
        pr.append('the batch\'s own stderr: %r, expected %r' % (got[:6], want))
    print('    batch of %d entries: %.2f s; the same entries run separately: %.2f s' % (len(ents), tb, ts))
    if pr and err.strip():
        pr.append('batch stderr:\n' + '\n'.join('      ' + l for l in err.strip().splitlines()[:30]))
    return pr


def check_malformed(args, env, P, wd):
    """A LIST with a malformed line 4: 64, LIST:4 named, nothing runs."""
    ok = Entry('ok', os.path.join(TUT, 'hello_rank.pld'), [])
    listf = os.path.join(wd, 'bad.list')
    write_list(listf, wd, [ok], 'bad')
    with open(listf, 'a') as f:  # write_list wrote a comment, an empty line and the valid line: this is line 4
        f.write('%s\tstdout.txt\n' % os.path.join(wd, 'bad', 'ok'))
    rc, out, err, _ = run([args.mpiexec, args.numproc_flag, str(P), args.pldrun, '--batch', 'bad.list'], env, wd)
    pr = []
    if rc != 64:
        pr.append('malformed LIST: exit %d, expected 64' % rc)
    lines = [l for l in err.splitlines() if 'bad.list:4:' in l]
    if len(lines) != 1 or 'malformed --batch entry (fewer than 4 fields)' not in lines[0]:
        pr.append('malformed LIST: expected one "bad.list:4: malformed --batch entry (fewer than 4 fields)" '
                  'line, got %r' % lines)
    d = os.path.join(wd, 'bad', 'ok')
    if read(os.path.join(d, 'stdout.txt')) or read(os.path.join(d, 'stderr.txt')) or outputs_of(d):
        pr.append('malformed LIST: its valid line 3 ran')
    st = listf + '.status'
    if os.path.exists(st) and read(st):
        pr.append('malformed LIST: status lines %r' % read(st))
    # a LIST that cannot be read (a singleton: no mpirun)
    rc, out, err, _ = run([args.pldrun, '--batch', 'missing.list'], env, wd)
    if rc != 64 or "cannot read 'missing.list'" not in err:
        pr.append('missing LIST: exit %d, expected 64 with "cannot read \'missing.list\'"; stderr %r' % (rc, err[:300]))
    # --batch takes no other options
    for cmd in ([args.pldrun, '--batch', 'bad.list', '--window-transport', 'rma'],
                [args.pldrun, os.path.join(TUT, 'hello_rank.pld'), '--batch', 'bad.list']):
        rc, out, err, _ = run(cmd, env, wd)
        if rc != 64 or '--batch LIST takes no other options' not in err:
            pr.append('%s: exit %d, expected 64 with "--batch LIST takes no other options"' % (' '.join(cmd[1:]), rc))
    rc, out, err, _ = run([args.pldrun, '--help'], env, wd)
    if not re.search(r'^  --batch LIST +\S', out, re.M):
        pr.append('pldrun --help does not list --batch LIST')
    return pr


def check_singleton(args, env, wd):
    """`pldrun --batch LIST` without mpirun against singleton runs."""
    ents = [Entry('hello_shm', os.path.join(TUT, 'hello_rank.pld'), ['--window-transport', 'shm']),
            Entry('window_buffer_rma', os.path.join(TUT, 'window_buffer.pld'), ['--window-transport', 'rma'],
                  relative=True)]
    listf = os.path.join(wd, 'one.list')
    write_list(listf, wd, ents, 'one')
    rc, out, err, _ = run([args.pldrun, '--batch', 'one.list'], env, wd)
    status, pr = read_status(listf + '.status')
    if rc != 0 or out or err:
        pr.append('singleton batch: exit %d, stdout %r, stderr %r' % (rc, out[:200], err[:300]))
    for i, e in enumerate(ents):
        d = os.path.join(wd, 'one_single', e.name)
        os.makedirs(d)
        ref = run([args.pldrun] + e.args, env, d)[:3]
        pr += compare_entry(e, i, status, os.path.join(wd, 'one', e.name), d, ref, 1)
    return pr


def main():
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--ranks', type=int, default=2)
    ap.add_argument('--workdir', default=None)
    args = ap.parse_args()
    T.require_programs('test_batch.py', [(os.path.basename(p), p) for p in
                                         (os.path.join(TUT, f) for f in ('hello_rank.pld', 'put_get.pld',
                                                                         'allreduce_mesh_handrolled.pld',
                                                                         'collectives_handrolled.pld',
                                                                         'window_buffer.pld'))]
                       + [(c, os.path.join(NEG, c + '.pld')) for c in ('oob_on_rank1', 'coll_neg_divergent_wait')])
    args.pldrun = os.path.abspath(args.pldrun)
    wd = os.path.abspath(args.workdir or os.path.join(os.getcwd(), 'mpi_batch'))
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    env = T.mpi_env(REPO)
    # LeakSanitizer's statistics of the suppressions it used (Open MPI's, tools/pldrun/main.c) are printed at each
    # leak check: in a separate run onto its stderr, in a batch once at the end; a leak is reported all the same
    env['LSAN_OPTIONS'] = ':'.join(o for o in (env.get('LSAN_OPTIONS'), 'print_suppressions=0') if o)
    with open(args.pldrun, 'rb') as f:
        lsan = b'__lsan_do_leak_check' in f.read()
    if lsan:
        print('sanitizer build: the leak check runs once, after the last entry of each batch')
        if 'detect_leaks=0' in env.get('ASAN_OPTIONS', ''):
            print('FAIL: ASAN_OPTIONS has detect_leaks=0: the batch would run without its leak check')
            return 1
    passed = failed = 0
    t0 = time.time()
    for name, fn in (('batch', lambda: check_batch(args, env, args.ranks, wd)),
                     ('malformed', lambda: check_malformed(args, env, args.ranks, wd)),
                     ('singleton', lambda: check_singleton(args, env, wd))):
        t1 = time.time()
        problems = fn()
        if problems:
            failed += 1
            print('FAIL: %s (%.2f s)' % (name, time.time() - t1))
            for p in problems:
                print('    ' + p)
        else:
            passed += 1
            print('ok:   %s (%.2f s)' % (name, time.time() - t1))
        sys.stdout.flush()
    print('total time %.1f s' % (time.time() - t0))
    print('%d passed, %d failed' % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
