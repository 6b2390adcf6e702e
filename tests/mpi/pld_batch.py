"""pld_batch.py - many pldrun runs in one MPI job (`pldrun --batch LIST`), for
the runners whose cases run concurrently in threads (run_conformance.py).

Most of the MPI suite's time is fixed cost per run: mpirun's start, MPI_Init
and, in the sanitizer tree, ASan's start and its leak scan. A Batcher takes
the launches of concurrent run_case calls (their `launch` parameter:
launch(P, program, cli, env, cwd, timeout) -> (rc, stdout, stderr)), waits
until every live worker is either waiting in a launch or done, and starts
the waiting runs as one job per (P, environment): `MPIEXEC -n P PLDRUN
--batch LIST`. pldrun runs the entries one after the other, each with a
fresh interpreter and fresh windows, each entry's stdout and stderr in files
of its own, and writes LIST.status ("INDEX RC" per finished entry).

A run that passed in the batch returns the batch's result: its exit status
0, its own stdout and stderr. Every other run is started again alone, as
without the batcher, and that run's result is returned, so a failure is
always named by a run of its own:
  - an entry that exited non-zero in the batch;
  - an entry the job never finished (the job aborted or timed out);
  - every entry of a job whose own exit status or stderr (outside the
    entries: MPI_Init, the leak check at the end) was not clean.
The caller's checks (goldens, stderr) then judge the result as before. A run
that failed in its batch (or finished in an unclean job) and passes alone is
a failure all the same (exit 1, the batch's stderr and why): a run must not
depend on the runs before it in one process, and a leak that only the batch
shows is a leak.

Batcher(...).launch is the launch to hand to run_case; run_all(items, call,
batcher) runs one call per item in threads, each of which calls done() when
it will launch no more. Runs started alone go one at a time
(alone_at_once), and none starts once stop() says so or max_alone_failures
of them exited non-zero (the runner's --max-failures: a tree that fails
everywhere stops early): launch then raises pld_mpitest.StopRun. summary()
says how many runs went through batches and how many were started alone.
"""
import concurrent.futures
import os
import sys
import threading
import time

import pld_mpitest as T

BATCH_TIMEOUT_PER_RUN = 40  # seconds a batch may take per entry (pldrun's watchdog is 30 s)


def _print(line):
    print(line)
    sys.stdout.flush()


class _Request:
    def __init__(self, P, prog, cli, env, cwd, timeout):
        self.P, self.prog, self.cli, self.env, self.cwd, self.timeout = P, prog, list(cli), env, cwd, timeout
        self.result = None  # (rc, stdout, stderr) from the batch, or None: run alone
        self.done = False
        self.failed_in_batch = None  # (why, stderr) when the batch held this run and it failed there


class Batcher:
    """Launches concurrent runs as pldrun batches; see the module text."""

    def __init__(self, mpiexec, numproc_flag, pldrun, workdir, workers, log=None, stop=None, alone_at_once=1,
                 max_alone_failures=0):
        self.mpiexec, self.numproc_flag, self.pldrun = mpiexec, numproc_flag, pldrun
        self.workdir = workdir
        self.active = workers  # workers that may still launch
        self.pending = []
        self.cv = threading.Condition()
        self.jobs = 0
        self.batched = 0
        self.alone = 0
        self.log = log or _print
        self.stop = stop or (lambda: False)
        self.alone_sem = threading.Semaphore(max(1, alone_at_once))
        self.max_alone_failures = max_alone_failures
        self.alone_failed = 0

    # ------------------------------------------------------------ workers

    def launch(self, P, prog, cli, env, cwd, timeout):
        """A run_case launch: waits for the batch holding this run; returns its
        result, or that of a run of its own when the batch did not pass it."""
        req = _Request(P, prog, cli, env, cwd, timeout)
        with self.cv:
            self.pending.append(req)
            self._maybe_flush()
            while not req.done:
                self.cv.wait()
        if req.result is not None:
            return req.result
        with self.alone_sem:
            if self.stop() or 0 < self.max_alone_failures <= self.alone_failed:
                raise T.StopRun('not started alone: the runner stopped')
            with self.cv:
                self.alone += 1
            res = T.run_pldrun(self.mpiexec, self.numproc_flag, P, self.pldrun, prog, cli, env, cwd, timeout=timeout)
            if res[0] == 0 and req.failed_in_batch:
                # it failed in its batch and passes alone: the batch is wrong
                # (a run that depends on the runs before it in one process, a
                # leak only the batch shows), never a pass
                why, err = req.failed_in_batch
                res = (1, res[1], '%s\npld_batch: this run %s and passed alone: a run must not depend on the runs '
                       'before it in a --batch job (tools/pldrun/main.c); the batch\'s stderr is above'
                       % (err.rstrip(), why))
            if res[0] != 0:
                with self.cv:
                    self.alone_failed += 1
            return res

    def done(self):
        """This worker launches no more."""
        with self.cv:
            self.active -= 1
            self._maybe_flush()

    def summary(self):
        """The closing line the runners print."""
        return 'batches: %d jobs ran %d runs; %d runs started alone' % (self.jobs, self.batched, self.alone)

    # ------------------------------------------------------------ batches

    def _maybe_flush(self):
        """(cv held) When every live worker waits in a launch, runs the waiting
        runs: the lock is let go while the jobs run."""
        if not self.pending or len(self.pending) < self.active:
            return
        todo, self.pending = self.pending, []
        self.cv.release()
        try:
            groups = {}
            for r in todo:
                groups.setdefault((r.P, tuple(sorted(r.env.items()))), []).append(r)
            for reqs in groups.values():
                if len(reqs) == 1:
                    continue  # a job of one: run alone, as without the batcher
                try:
                    self._run_batch(reqs)
                except OSError as e:
                    self.log('batch: could not run the batch (%s): its runs start alone' % e)
                    for r in reqs:
                        r.result = None
        finally:
            self.cv.acquire()
        for r in todo:
            r.done = True
        self.cv.notify_all()

    def _run_batch(self, reqs):
        P, env = reqs[0].P, reqs[0].env
        self.jobs += 1
        n = self.jobs
        bdir = os.path.join(self.workdir, 'batch')
        os.makedirs(bdir, exist_ok=True)
        lst = os.path.join(bdir, 'job%d.p%d.list' % (n, P))
        files = []
        with open(lst, 'w') as f:
            f.write('# pldrun --batch: %d runs (tests/mpi/pld_batch.py)\n' % len(reqs))
            for k, r in enumerate(reqs):
                out, err = os.path.join(r.cwd, 'batch%d.%d.out' % (n, k)), os.path.join(r.cwd, 'batch%d.%d.err' % (n, k))
                for path in (out, err):
                    open(path, 'w').close()  # pldrun appends (every rank): never truncates
                files.append((out, err))
                fields = [r.cwd, out, err, r.prog] + r.cli
                if any('\t' in x or '\n' in x for x in fields):
                    raise OSError('a run argument holds a tab or a newline')
                f.write('\t'.join(fields) + '\n')
        status = lst + '.status'
        t0 = time.time()
        timeout = BATCH_TIMEOUT_PER_RUN * len(reqs) + 30
        rc, out, err = T.run_pldrun(self.mpiexec, self.numproc_flag, P, self.pldrun, '--batch', [lst], env, bdir,
                                    timeout=timeout)
        finished = {}
        if os.path.isfile(status):
            with open(status) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) == 2 and parts[0].isdigit():
                        finished[int(parts[0])] = int(parts[1])
        stray = T.unexpected_lines(err, r'error|warning|ERROR|leak')
        clean = (rc == max(list(finished.values()) + [0]) and not stray)
        ok = 0
        for k, r in enumerate(reqs):
            if k in finished and finished[k] != 0:
                with open(files[k][1], errors='replace') as fe:
                    r.failed_in_batch = ('exited %d in its batch (%s)' % (finished[k], lst), fe.read())
            elif not clean and k in finished:
                r.failed_in_batch = ('ran in a batch job that was not clean (%s: exit %d, stderr %s)'
                                     % (lst, rc, stray[0].strip() if stray else 'clean'), err)
            if not clean or finished.get(k) != 0:
                r.result = None
                continue
            with open(files[k][0], errors='replace') as fo, open(files[k][1], errors='replace') as fe:
                r.result = (0, fo.read(), fe.read())
            ok += 1
        with self.cv:
            self.batched += ok
        why = ''
        if not clean:
            why = '; the job itself was not clean (exit %d%s): every run starts alone' % (
                rc, ', stderr: ' + stray[0].strip() if stray else '')
        elif ok < len(reqs):
            why = '; %d run(s) did not pass in it and start alone' % (len(reqs) - ok)
        self.log('batch: %d runs at P=%d in one job, %.2f s%s' % (len(reqs), P, time.time() - t0, why))


STOPPED = object()  # run_all's result of a run that the failure limit kept from starting alone


def run_all(items, call, batcher):
    """Runs call(item, launch) for every item at once, in threads, their
    launches gathered by batcher (whose `workers` must be len(items)); returns
    the results in the order of items (STOPPED where call raised StopRun).
    An exception in a call is raised here, after every thread ended."""
    results = [None] * len(items)
    errors = []

    def job(k):
        try:
            results[k] = call(items[k], batcher.launch)
        except T.StopRun:
            results[k] = STOPPED
        except BaseException as e:  # re-raised below, once every worker has ended
            errors.append(e)
        finally:
            batcher.done()

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(items))) as pool:
        list(pool.map(job, range(len(items))))
    if errors:
        raise errors[0]
    return results
