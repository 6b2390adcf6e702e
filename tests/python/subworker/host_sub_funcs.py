"""SubWorker functions for tests/python/subworker/host_sub.pld, given with
--subworkers (tests/python/test_subworker.py): each replaces the program's
body of the SubWorker of its name; the others keep the program's bodies."""
import numpy as np


def prep(xs, k, tmp):
    """As the program's prep, with 2 instead of 1: the test sees which body ran."""
    tmp[:] = xs * k + 2.0


def check(xs, tmp, k):
    want = xs * k + 1.0
    if not np.array_equal(tmp, want):
        bad = tuple(int(i) for i in np.argwhere(tmp != want)[0])
        raise ValueError('tmp%s is %r, not %r' % (bad, float(tmp[bad]), float(want[bad])))
