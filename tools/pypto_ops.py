#!/usr/bin/env python3
"""pypto_ops.py - PyPTO's op list against pldrun's (issue 11: "the whole table").

  pypto_ops.py extract GIT_DIR COMMIT > docs/pypto-ops.tsv
      Reads PyPTO's language layer at COMMIT from a clone (GIT_DIR may be a
      bare repository) and writes one line per public op: namespace, name,
      signature. Only names and signatures are taken (facts), with Python's
      own `ast` module; no code.

  pypto_ops.py coverage [--check FILE] [--repo DIR]
      Writes docs/ops-pypto.md: every op of docs/pypto-ops.tsv with pldrun's
      status: supported (in src/parser/pld_ops.def, an alias or a unified name
      of src/parser/pld_ops.c), or not supported with the reason from
      docs/pypto-ops-unsupported.tsv (default: not implemented yet: the
      checker reports an unknown op). --check FILE compares instead of
      printing (exit 1 when FILE is stale): the ctest `ops_pypto_up_to_date`.

  pypto_ops.py tested SEEN_FILE
      Which supported PyPTO ops the test suite runs: SEEN_FILE holds the op
      names every pldrun run appended under PLD_OPS_SEEN=SEEN_FILE (run the
      suite with it set). A PyPTO name counts as run when its op (or, for an
      alias, the op it names; for a unified name, one of its tile/tensor ops)
      was evaluated. Prints the count and the supported ops never run.
"""
import ast
import os
import re
import subprocess
import sys

MODULES = [
    ('pl.tile', 'python/pypto/language/op/tile_ops.py'),
    ('pl.tensor', 'python/pypto/language/op/tensor_ops.py'),
    ('pl', 'python/pypto/language/op/unified_ops.py'),
    ('pl.system', 'python/pypto/language/op/system_ops.py'),
    ('pl.array', 'python/pypto/language/op/array_ops.py'),
    ('pl.prefetch', 'python/pypto/language/op/prefetch_ops.py'),
    ('pld.tile', 'python/pypto/language/distributed/op/tile_ops.py'),
    ('pld.tensor', 'python/pypto/language/distributed/op/tensor_ops.py'),
    ('pld', 'python/pypto/language/distributed/op/unified_ops.py'),
    ('pld.system', 'python/pypto/language/distributed/op/system_ops.py'),
]


def signature(fn):
    a = fn.args
    parts = []
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    for arg, d in zip(pos, defaults):
        parts.append(one(arg, d))
    if a.vararg:
        parts.append('*' + a.vararg.arg)
    elif a.kwonlyargs:
        parts.append('*')
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        parts.append(one(arg, d))
    if a.kwarg:
        parts.append('**' + a.kwarg.arg)
    s = '(' + ', '.join(parts) + ')'
    if fn.returns is not None:
        s += ' -> ' + ast.unparse(fn.returns)
    return re.sub(r'\s+', ' ', s)


def one(arg, default):
    s = arg.arg
    if arg.annotation is not None:
        s += ': ' + ast.unparse(arg.annotation)
    if default is not None:
        s += ' = ' + ast.unparse(default)
    return s


def is_overload(fn):
    return any((isinstance(d, ast.Name) and d.id == 'overload') or
               (isinstance(d, ast.Attribute) and d.attr == 'overload') for d in fn.decorator_list)


def extract(git_dir, commit):
    rows = []
    for ns, path in MODULES:
        try:
            src = subprocess.run(['git', '--git-dir', git_dir, 'show', '%s:%s' % (commit, path)],
                                 check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
        except subprocess.CalledProcessError:
            continue
        tree = ast.parse(src)
        by_name = {}
        order = []
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or node.name.startswith('_'):
                continue
            if node.name not in by_name:
                by_name[node.name] = {'over': [], 'impl': None}
                order.append(node.name)
            ent = by_name[node.name]
            if is_overload(node):
                ent['over'].append(signature(node))
            else:
                ent['impl'] = signature(node)
        for name in order:
            ent = by_name[name]
            sigs = ent['over'] if ent['over'] else [ent['impl']]
            rows.append((ns, name, ' | '.join(s for s in sigs if s)))
    out = ['# PyPTO language-layer ops at %s (tools/pypto_ops.py extract): namespace, name, signature' % commit]
    out += ['\t'.join(r) for r in rows]
    return '\n'.join(out) + '\n'


def read_tsv(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line or line.startswith('#'):
                continue
            rows.append(line.split('\t'))
    return rows


def pldrun_names(repo):
    names = set()
    with open(os.path.join(repo, 'src', 'parser', 'pld_ops.def')) as f:
        for m in re.finditer(r'^PLD_OP\(\s*\w+\s*,\s*"([^"]+)"', f.read(), re.M):
            names.add(m.group(1))
    with open(os.path.join(repo, 'src', 'parser', 'pld_ops.c')) as f:
        for m in re.finditer(r'\{\s*"(pld?\.[A-Za-z0-9_.]+)"\s*,', f.read()):
            names.add(m.group(1))
    return names


def coverage(repo):
    docs = os.path.join(repo, 'docs')
    header = open(os.path.join(docs, 'pypto-ops.tsv')).readline().strip()
    commit = re.search(r' at (\w+)', header)
    rows = read_tsv(os.path.join(docs, 'pypto-ops.tsv'))
    reasons = {}
    rpath = os.path.join(docs, 'pypto-ops-unsupported.tsv')
    if os.path.exists(rpath):
        for r in read_tsv(rpath):
            reasons[r[0]] = r[1] if len(r) > 1 else ''
    have = pldrun_names(repo)
    out = ['# PyPTO\'s ops and pldrun', '',
           '<!-- Generated by tools/pypto_ops.py coverage from docs/pypto-ops.tsv (PyPTO at %s),' %
           (commit.group(1) if commit else '?'),
           '     src/parser/pld_ops.def, src/parser/pld_ops.c and docs/pypto-ops-unsupported.tsv;',
           '     do not edit by hand. Regenerate: python3 tools/pypto_ops.py coverage > docs/ops-pypto.md -->', '',
           'Every public op of PyPTO\'s language layer (`python/pypto/language/op/*.py` and',
           '`python/pypto/language/distributed/op/*.py`) with its PyPTO signature and whether pldrun',
           'runs it. An op pldrun does not support is an unknown-op error at check time, never a',
           'silent result. The semantics and numerics pldrun chose are in `docs/ops-numerics.md`;',
           'pldrun\'s own signatures in `docs/ops.md`.', '']
    total = len(rows)
    sup = sum(1 for ns, name, _ in rows if '%s.%s' % (ns, name) in have)
    out.append('**%d of %d ops supported.**' % (sup, total))
    out.append('')
    cur = None
    for ns, name, sig in rows:
        if ns != cur:
            cur = ns
            n_ns = sum(1 for r in rows if r[0] == ns)
            s_ns = sum(1 for r in rows if r[0] == ns and '%s.%s' % (ns, r[1]) in have)
            out += ['', '## `%s.*` (%d of %d)' % (ns, s_ns, n_ns), '', '| op | PyPTO signature | pldrun |',
                    '|---|---|---|']
        full = '%s.%s' % (ns, name)
        if full in have:
            st = 'supported'
        else:
            st = 'not supported: ' + reasons.get(full, 'not implemented yet')
        out.append('| `%s` | `%s` | %s |' % (full, sig.replace('|', '\\|'), st))
    return '\n'.join(out) + '\n'


def op_ids(repo):
    """name -> set of canonical op names it may run as (pld_ops.def names,
    pld_ops.c aliases and unified names)."""
    ids = {}
    with open(os.path.join(repo, 'src', 'parser', 'pld_ops.def')) as f:
        for m in re.finditer(r'^PLD_OP\(\s*(\w+)\s*,\s*"([^"]+)"', f.read(), re.M):
            ids[m.group(1)] = m.group(2)
    names = {v: {v} for v in ids.values()}
    with open(os.path.join(repo, 'src', 'parser', 'pld_ops.c')) as f:
        text = f.read()
    for m in re.finditer(r'\{\s*"(pld?\.[A-Za-z0-9_.]+)"\s*,([^}]*)\}', text):
        targets = {ids[t] for t in re.findall(r'PLD_OPID_(\w+)', m.group(2)) if t in ids}
        if targets:
            names.setdefault(m.group(1), set()).update(targets)
    return names


def tested(repo, seen_path):
    seen = set()
    with open(seen_path) as f:
        for line in f:
            seen.update(line.split())
    names = op_ids(repo)
    rows = read_tsv(os.path.join(repo, 'docs', 'pypto-ops.tsv'))
    have = pldrun_names(repo)
    sup = ['%s.%s' % (ns, n) for ns, n, _ in rows if '%s.%s' % (ns, n) in have]
    missing = [op for op in sup if not (names.get(op, {op}) & seen)]
    out = ['%d of %d supported PyPTO ops ran in the test suite' % (len(sup) - len(missing), len(sup))]
    out += ['not run: ' + op for op in missing]
    return '\n'.join(out) + '\n'


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == 'tested':
        repo = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
        sys.stdout.write(tested(repo, args[1]))
        return 0
    if len(args) >= 3 and args[0] == 'extract':
        sys.stdout.write(extract(args[1], args[2]))
        return 0
    if args and args[0] == 'coverage':
        repo = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
        check = None
        i = 1
        while i < len(args):
            if args[i] == '--check':
                check = args[i + 1]
                i += 2
            elif args[i] == '--repo':
                repo = args[i + 1]
                i += 2
            else:
                print(__doc__, file=sys.stderr)
                return 2
        text = coverage(repo)
        if check:
            with open(check) as f:
                if f.read() != text:
                    print('%s is stale: run python3 tools/pypto_ops.py coverage > %s' % (check, check),
                          file=sys.stderr)
                    return 1
            return 0
        sys.stdout.write(text)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
