#!/usr/bin/env python3
"""check_mpi_calls.py - every MPI call in src/ has its result checked (the
CTest `mpi_calls_checked`, label unit).

A call MPI_Xxx(...) (a name MPI_ + capital + lower case, followed by '(';
comments and string literals are ignored) is checked when

  * it is the argument of PLD_MPI_CHECK(...) or PLD_MPI_NOTE(...)
    (src/sim_window/pld_win_int.h: a failure returns PLD_E_MPI, or becomes the
    window layer's sticky error);
  * its result is assigned (`rc = MPI_...(`, `int frc = MPI_...(`): the
    variable is then tested and reported with pld_win_mpi_fail; or
  * its result is compared with MPI_SUCCESS right away
    (`MPI_...(...) != MPI_SUCCESS`, `== MPI_SUCCESS`).

Anything else must be listed in EXCEPTIONS below as (file, call) with the
reason. The CTest runs it on src/ and on tools/ (pldrun's main.c).

usage: check_mpi_calls.py [SRC_DIR]      (default: the src/ beside tests/)
Prints every unchecked call as FILE:LINE: CALL and exits 1 if there is one.
"""
import os
import re
import sys

# (path relative to src/, MPI function): why its result needs no check.
EXCEPTIONS = {
    # src/: none. MPI_Error_string (in pld_win_mpi_fail) is compared with
    # MPI_SUCCESS, and MPI_Initialized / MPI_Finalized (in pld_win_sys_init)
    # too. Entries are (path relative to the checked directory, call): reason.
    # tools/ (the second run, `check_mpi_calls.py tools`):
    ('pldrun/main.c', 'MPI_Abort'): 'ends the job and does not return; where it does return, the next '
                                    'statement leaves with an error status',
    ('pldrun/main.c', 'MPI_Wtime'): 'returns the time, not an error code',
    ('pldrun/observe.c', 'MPI_Wtime'): 'returns the time, not an error code',
}

CALL = re.compile(r'\bMPI_[A-Z][a-z0-9_]*\s*\(')


def strip(text):
    """text with comments and string/char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(c + ' ' * (j - i - 2) + c if j - i >= 2 else ' ' * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def close_paren(s, open_at):
    """Index just past the parenthesis matching s[open_at] == '('."""
    depth = 0
    for k in range(open_at, len(s)):
        if s[k] == '(':
            depth += 1
        elif s[k] == ')':
            depth -= 1
            if depth == 0:
                return k + 1
    return len(s)


def enclosing_macro(s, at):
    """Name of the innermost call whose parentheses enclose position at."""
    depth = 0
    k = at - 1
    while k >= 0:
        if s[k] == ')':
            depth += 1
        elif s[k] == '(':
            if depth == 0:
                m = re.search(r'([A-Za-z_][A-Za-z0-9_]*)\s*$', s[:k])
                return m.group(1) if m else ''
            depth -= 1
        elif s[k] == ';' or s[k] == '{' or s[k] == '}':
            return ''
        k -= 1
    return ''


def checked(s, m):
    before = s[:m.start()].rstrip()
    after = s[close_paren(s, m.end() - 1):].lstrip()
    if enclosing_macro(s, m.start()) in ('PLD_MPI_CHECK', 'PLD_MPI_NOTE'):
        return True
    if before.endswith('=') and not before.endswith('==') and not before.endswith('!='):
        return True
    if re.match(r'(!=|==)\s*MPI_SUCCESS\b', after):
        return True
    return False


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, '..', 'src'))
    bad, seen = [], 0
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(('.c', '.h')):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            with open(path, encoding='utf-8', errors='replace') as fh:
                s = strip(fh.read())
            for m in CALL.finditer(s):
                name = m.group(0).rstrip('( \t\n')
                if s[max(0, m.start() - 8):m.start()].rstrip().endswith('define'):
                    continue
                seen += 1
                if checked(s, m) or (rel, name) in EXCEPTIONS:
                    continue
                line = s.count('\n', 0, m.start()) + 1
                bad.append('%s:%d: %s(...) is not checked (PLD_MPI_CHECK, PLD_MPI_NOTE, rc = ..., '
                           '!= MPI_SUCCESS, or an entry in EXCEPTIONS of %s)' % (path, line, name,
                                                                                 os.path.basename(__file__)))
    for b in bad:
        print(b)
    print('%d MPI calls in %s, %d unchecked' % (seen, src, len(bad)))
    return 1 if bad or seen == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
