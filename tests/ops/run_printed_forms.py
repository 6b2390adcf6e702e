#!/usr/bin/env python3
"""run_printed_forms.py - PyPTO's printed forms of gather/scatter/mrgsort (issue 41,
wave 2; CTest `ops_printed_forms`, and `ops_native_printed_forms` on --backend native).

PyPTO's printer writes an op's IR form, which its parser reads back:
pl.tensor.gather(x, idx, dim=-1) (the DSL's is gather(x, dim, idx)),
pl.tensor.scatter(x, idx, src, dim=-1), pl.tensor.gather_mask(x, mask_pattern=),
pl.tensor.scatter_mask(x, dst, mask_pattern=), pl.tensor.mrgsort_format1(x,
block_len), pl.tensor.mrgsort_format2(a, b, exhausted=), and the pl.tile.*
spellings of the cross-core pipe ops (pl.tile.tpop_from_aiv, tpush_to_aic),
and PyPTO's dtype promotion of pl.tensor.add / sub of FP32 with BF16 / FP16
(printed_forms_mixed.pld: FP32, the narrow operand widened exactly).
The programs tests/ops/printed_forms.pld and printed_forms_xcore.pld hold them
in the form PyPTO printed for its tests/st/runtime/ops/test_gather.py,
test_scatter.py, test_sort.py and cross_core/test_cross_core.py; each output is
compared bit for bit with a golden computed here in pure Python (docs/ops.md's
semantics; the matmul's operands are small integers, so its sums are exact).

usage: run_printed_forms.py --pldrun PATH [--workdir DIR]
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_ops  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def sorted_run(rng, npairs, base):
    """npairs [value, index] pairs sorted by value descending (distinct values, FP32-exact)."""
    vals = sorted({(rng.next() % 100000) / 8.0 for _ in range(npairs * 2)}, reverse=True)[:npairs]
    out = []
    for k, v in enumerate(vals):
        out += [v, float(base + k)]
    return out


def merge(lists):
    """The pairs of the sorted lists merged descending; ties: the earlier list first."""
    pairs = []
    for li, l in enumerate(lists):
        pairs += [(-l[2 * k], li, k, l[2 * k], l[2 * k + 1]) for k in range(len(l) // 2)]
    out = []
    for p in sorted(pairs):
        out += [p[3], p[4]]
    return out


def run_one(a, prog, ins, want):
    """Runs tests/ops/PROG on the inputs; the count of outputs that differ from want (all when pldrun fails)."""
    cmd = [a.pldrun, os.path.join(HERE, prog)]
    for n, (shape, dt, vals) in ins.items():
        p = os.path.join(a.workdir, n + '.npy')
        run_ops.write_npy(p, dt, shape, vals)
        cmd += ['--in', '%s=%s' % (n, p)]
    for n in want:
        cmd += ['--out', '%s=%s' % (n, os.path.join(a.workdir, 'out_' + n + '.npy'))]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=120)
    if p.returncode != 0:
        sys.stdout.write(p.stdout.decode(errors='replace'))
        print('FAIL: %s: pldrun exit %d' % (prog, p.returncode))
        return len(want)
    bad = 0
    for n, w in want.items():
        _, got = run_ops.read_npy(os.path.join(a.workdir, 'out_' + n + '.npy'), 'FP32')
        diff = [i for i in range(len(w)) if run_ops.bits('FP32', got[i]) != run_ops.bits('FP32', w[i])]
        if len(got) != len(w) or diff:
            bad += 1
            i = diff[0] if diff else 0
            print('FAIL: %s: %s: %d of %d elements differ; first [%d]: got %r, want %r' %
                  (prog, n, len(diff), len(w), i, got[i] if i < len(got) else None, w[i]))
        else:
            print('ok: %s: %s (%d elements)' % (prog, n, len(w)))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--workdir', default='printed_forms_work')
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    rng = run_ops.Rng(41)
    inp = [float(rng.next() % 1000) / 4.0 for _ in range(64)]
    idx = []
    for _ in range(4):  # distinct columns per row: scatter's last-write order does not matter
        cols = list(range(16))
        for j in range(15, 0, -1):
            k = rng.next() % (j + 1)
            cols[j], cols[k] = cols[k], cols[j]
        idx += cols[:8]
    src = [float(rng.next() % 1000) / 8.0 for _ in range(32)]
    m = [float(rng.next() % 1000) / 2.0 for _ in range(128)]
    d = [float(rng.next() % 1000) / 16.0 for _ in range(128)]
    runs = []
    for r in range(4):
        runs += sorted_run(rng, 32, 100 * r)
    l0, l1 = sorted_run(rng, 32, 0), sorted_run(rng, 32, 500)
    ins = {'inp': ([4, 16], 'FP32', inp), 'idx': ([4, 8], 'INT32', idx), 'src': ([4, 8], 'FP32', src),
           'm': ([8, 16], 'FP32', m), 'd': ([8, 16], 'FP32', d), 'runs': ([1, 256], 'FP32', runs),
           'l0': ([1, 64], 'FP32', l0), 'l1': ([1, 64], 'FP32', l1)}
    g = [inp[b * 16 + idx[b * 8 + k]] for b in range(4) for k in range(8)]
    s = list(inp)
    for b in range(4):
        for k in range(8):
            s[b * 16 + idx[b * 8 + k]] = src[b * 8 + k]
    gm = [m[r * 16 + 2 * j] for r in range(8) for j in range(8)]  # P0101: the even columns
    sm = list(d)
    for r in range(8):
        for j in range(8):
            sm[r * 16 + 2 * j + 1] = gm[r * 8 + j]  # P1010: the odd columns
    want = {'g': g, 's': s, 'gm': gm, 'sm': sm, 'f1': merge([runs[64 * r:64 * r + 64] for r in range(4)]),
            'f2': merge([l0, l1])}
    xa = [float(rng.next() % 9 - 4) for _ in range(256)]
    xb = [float(rng.next() % 9 - 4) for _ in range(256)]
    sa = [xa[i] + xb[i] for i in range(256)]
    da = [xa[i] - xb[i] for i in range(256)]
    mm = [float(sum(sa[r * 16 + k] * da[k * 16 + c] for k in range(16))) for r in range(16) for c in range(16)]
    ma = [float(rng.next() % 2000 - 1000) / 64.0 + 1.0 / 4096 for _ in range(1024)]
    mb = [run_ops.bf16(float(rng.next() % 2000 - 1000) / 3.0) for _ in range(1024)]
    mc = [run_ops.f16(float(rng.next() % 2000 - 1000) / 7.0) for _ in range(1024)]
    mixed = ({'a': ([16, 64], 'FP32', ma), 'b': ([16, 64], 'BF16', mb), 'c': ([16, 64], 'FP16', mc)},
             {'o': [run_ops.f32(ma[i] + mb[i]) for i in range(1024)], 'p': [run_ops.f32(mc[i] - ma[i]) for i in range(1024)]})
    runs_ = [('printed_forms.pld', ins, want), ('printed_forms_mixed.pld',) + mixed,
             ('printed_forms_xcore.pld', {'a': ([16, 16], 'FP32', xa), 'b': ([16, 16], 'FP32', xb)}, {'output': mm})]
    bad = 0
    nwant = 0
    for prog, pins, pwant in runs_:
        bad += run_one(a, prog, pins, pwant)
        nwant += len(pwant)
    print('%d of %d outputs wrong' % (bad, nwant))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
