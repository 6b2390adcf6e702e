/* pld_pybridge.c - the embedded Python of SubWorkers (pld_pybridge.h).
 *
 * The Python side is one small helper (HELPER below, compiled as "<pldrun>"):
 * it builds each SubWorker's function once (from --subworkers' module, else
 * from the program's body as `def name(params):`, with the body's lines where
 * they are in the program), views each tensor argument (a writable
 * memoryview over the tensor's bytes, as a numpy array with the tensor's
 * byte strides, or a torch tensor sharing it), calls the function and turns
 * any exception into its traceback text (the helper's own frames left out).
 * The C side starts Python, hands over the arguments and reads the answer:
 * None, or the text of the failure. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "pld_mem.h"
#include "pld_pybridge.h"

#include <string.h>

struct pld_py {
    pld_py_opts_t opts;
    int dirty;        /* opts changed since the helper last saw them */
    int started;      /* Py_InitializeFromConfig succeeded */
    int failed;       /* Python could not start: every call fails with why */
    PyObject *globals;/* the helper's namespace */
    PyObject *call;   /* its _call */
};

static const char HELPER[] =
    "import ast as _ast, sys as _sys, traceback as _tb\n"
    "_np = _torch = _mod = None\n"
    "_cfg = {'module': None, 'torch': False, 'ready': False}\n"
    "_fns = {}\n"
    "_DT = {'BOOL': 'bool', 'INT8': 'int8', 'INT16': 'int16', 'INT32': 'int32', 'INT64': 'int64',\n"
    "       'INDEX': 'int64', 'UINT8': 'uint8', 'UINT16': 'uint16', 'UINT32': 'uint32', 'UINT64': 'uint64',\n"
    "       'FP16': 'float16', 'FP32': 'float32', 'FP64': 'float64', 'BF16': 'uint16'}\n"
    "class _Fail(Exception):\n"
    "    pass\n"
    "def _setup():\n"
    "    global _np, _torch, _mod\n"
    "    import numpy\n"
    "    _np = numpy\n"
    "    if _cfg['torch']:\n"
    "        import torch\n"
    "        _torch = torch\n"
    "    if _cfg['module']:\n"
    "        import importlib.util\n"
    "        spec = importlib.util.spec_from_file_location('pldrun_subworkers', _cfg['module'])\n"
    "        if spec is None:\n"
    "            raise _Fail('--subworkers %s: not a Python file' % _cfg['module'])\n"
    "        m = importlib.util.module_from_spec(spec)\n"
    "        _sys.modules['pldrun_subworkers'] = m\n"
    "        spec.loader.exec_module(m)\n"
    "        _mod = m\n"
    "    _cfg['ready'] = True\n"
    "def _reset(module, torch):\n"
    "    global _mod\n"
    "    _cfg.update(module=module, torch=torch, ready=False)\n"
    "    _fns.clear()\n"
    "    _mod = None\n"
    "def _abstract(body):\n"
    "    try:\n"
    "        tree = _ast.parse(body)\n"
    "    except SyntaxError:\n"
    "        return False\n"
    "    def meta(s):\n"
    "        v = s.value if isinstance(s, _ast.Expr) else None\n"
    "        return (isinstance(v, _ast.Constant) and isinstance(v.value, str)) or (isinstance(v, _ast.Call)\n"
    "                and isinstance(v.func, _ast.Attribute) and v.func.attr == 'func_attr')\n"
    "    rest = [s for s in tree.body if not meta(s)]\n"
    "    return len(rest) == 1 and isinstance(rest[0], _ast.Expr) and isinstance(rest[0].value, _ast.Constant) \\\n"
    "        and rest[0].value.value is ...\n"
    "def _function(name, params, body, file, line):\n"
    "    f = _fns.get(name)\n"
    "    if f is not None:\n"
    "        return f\n"
    "    if _mod is not None and callable(getattr(_mod, name, None)):\n"
    "        f = getattr(_mod, name)\n"
    "    elif body is None or _abstract(body):\n"
    "        raise _Fail('no body in the program (`...`: a callback bound at run time); give its function '\n"
    "                    'in a Python file with --subworkers FILE.py%s' % ('' if _mod is None\n"
    "                    else ' (%s defines no function %s)' % (_cfg['module'], name)))\n"
    "    else:\n"
    "        lines = body.split('\\n')\n"
    "        src = '\\n' * max(line - 2, 0) + 'def %s(%s):\\n' % (name, ', '.join(params)) + \\\n"
    "            '\\n'.join(('    ' + s) if s.strip() else '' for s in lines) + '\\n    pass\\n'\n"
    "        g = {'__name__': '__pldrun_subworkers__', '__file__': file, 'np': _np, 'numpy': _np}\n"
    "        if _torch is not None:\n"
    "            g['torch'] = _torch\n"
    "        exec(compile(src, file, 'exec'), g)\n"
    "        f = g[name]\n"
    "    _fns[name] = f\n"
    "    return f\n"
    "def _view(param, mv, dt, shape, strides):\n"
    "    t = _DT.get(dt)\n"
    "    if t is None:\n"
    "        raise _Fail('argument %r is a %s tensor, which Python cannot view (numpy has no %s)' % (param, dt, dt))\n"
    "    a = _np.ndarray(shape, dtype=t, buffer=mv, strides=strides)\n"
    "    if _torch is None:\n"
    "        return a\n"
    "    if dt == 'BF16':\n"
    "        return _torch.from_numpy(a.view('int16')).view(_torch.bfloat16)\n"
    "    if t in ('uint16', 'uint32', 'uint64'):\n"
    "        raise _Fail('argument %r is a %s tensor, which torch cannot view' % (param, dt))\n"
    "    return _torch.from_numpy(a)\n"
    "def _call(name, params, body, file, line, args):\n"
    "    try:\n"
    "        if not _cfg['ready']:\n"
    "            _setup()\n"
    "        f = _function(name, params, body, file, line)\n"
    "        conv = [_view(p, *a) if isinstance(a, tuple) else a for p, a in zip(params, args)]\n"
    "        f(*conv)\n"
    "        for s in (_sys.stdout, _sys.stderr):\n"
    "            if s is not None:\n"
    "                s.flush()\n"
    "        return None\n"
    "    except _Fail as e:\n"
    "        return str(e)\n"
    "    except BaseException as e:\n"
    "        tb = e.__traceback__\n"
    "        while tb is not None and tb.tb_frame.f_code.co_filename == '<pldrun>':\n"
    "            tb = tb.tb_next\n"
    "        return ''.join(_tb.format_exception(type(e), e, tb)).rstrip()\n";

int pld_py_available(void)
{
    return 1;
}

pld_status_t pld_py_create(pld_py_t **out)
{
    pld_py_t *py = pld_mem_calloc(1, sizeof *py);
    if (!py)
        return PLD_E_NOMEM;
    py->dirty = 1;
    *out = py;
    return PLD_OK;
}

void pld_py_configure(pld_py_t *py, const pld_py_opts_t *opts)
{
    py->opts = *opts;
    py->dirty = 1;
}

/* The text of the pending Python exception (cleared). */
static void take_error(pld_buf_t *err)
{
    PyObject *type = NULL, *value = NULL, *tb = NULL;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *t = s ? PyUnicode_AsUTF8(s) : NULL;
    pld_buf_puts(err, t ? t : "an unknown Python error");
    PyErr_Clear();
    Py_XDECREF(s);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

static pld_status_t start(pld_py_t *py, pld_buf_t *err)
{
    if (py->failed) {
        pld_buf_puts(err, "the embedded Python did not start (see the first error)");
        return PLD_E_RUNTIME;
    }
    if (py->started)
        return PLD_OK;
    if (Py_IsInitialized()) {
        pld_buf_puts(err, "Python is already running in this process: the bridge needs its own interpreter");
        py->failed = 1;
        return PLD_E_RUNTIME;
    }
    PyConfig cfg;
    PyConfig_InitPythonConfig(&cfg);
    cfg.install_signal_handlers = 0; /* the tool's own handlers stay (the hang report) */
    cfg.parse_argv = 0;
    PyStatus ps = PyConfig_SetBytesString(&cfg, &cfg.program_name, "pldrun");
    if (!PyStatus_Exception(ps))
        ps = Py_InitializeFromConfig(&cfg);
    PyConfig_Clear(&cfg);
    if (PyStatus_Exception(ps)) {
        pld_buf_printf(err, "the embedded Python did not start: %s", ps.err_msg ? ps.err_msg : "unknown reason");
        py->failed = 1;
        return PLD_E_RUNTIME;
    }
    py->started = 1;
    py->globals = PyDict_New();
    PyObject *code = py->globals ? Py_CompileString(HELPER, "<pldrun>", Py_file_input) : NULL;
    PyObject *r = NULL;
    if (code && PyDict_SetItemString(py->globals, "__builtins__", PyEval_GetBuiltins()) == 0)
        r = PyEval_EvalCode(code, py->globals, py->globals);
    Py_XDECREF(code);
    int ok = r != NULL;
    Py_XDECREF(r);
    py->call = ok ? PyDict_GetItemString(py->globals, "_call") : NULL;
    if (!py->call) {
        pld_buf_puts(err, "the bridge's Python helper did not load: ");
        take_error(err);
        py->failed = 1;
        return PLD_E_RUNTIME;
    }
    Py_INCREF(py->call);
    return PLD_OK;
}

/* One argument as the helper takes it: a tensor as (memoryview, dtype name,
 * shape, byte strides); a scalar as itself. New reference, NULL on error. */
static PyObject *arg_object(const pld_py_arg_t *a)
{
    switch (a->kind) {
    case PLD_PY_INT: return PyLong_FromLongLong((long long)a->i);
    case PLD_PY_FLOAT: return PyFloat_FromDouble(a->f);
    case PLD_PY_BOOL: return PyBool_FromLong(a->i != 0);
    case PLD_PY_TENSOR: break;
    default: Py_RETURN_NONE;
    }
    if (a->rank < 0 || a->rank > PLD_PY_MAX_RANK)
        return PyErr_Format(PyExc_ValueError, "a tensor of rank %d", a->rank);
    const int64_t esz = (pld_dtype_bits(a->dt) + 7) / 8;
    int64_t bytes = esz;
    PyObject *shape = PyTuple_New(a->rank), *strides = PyTuple_New(a->rank);
    for (int d = 0; shape && strides && d < a->rank; d++) {
        if (a->shape[d] <= 0)
            bytes = 0;
        else if (bytes > 0)
            bytes += (a->shape[d] - 1) * a->strides[d];
        PyTuple_SET_ITEM(shape, d, PyLong_FromLongLong((long long)a->shape[d]));
        PyTuple_SET_ITEM(strides, d, PyLong_FromLongLong((long long)a->strides[d]));
    }
    PyObject *mv = shape && strides ? PyMemoryView_FromMemory(a->data, (Py_ssize_t)bytes, PyBUF_WRITE) : NULL;
    PyObject *t = mv ? Py_BuildValue("(OsOO)", mv, pld_dtype_name(a->dt), shape, strides) : NULL;
    Py_XDECREF(mv);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    return t;
}

pld_status_t pld_py_call(pld_py_t *py, const pld_py_fn_t *fn, const pld_py_arg_t *args, int nargs, pld_buf_t *err)
{
    if (start(py, err) != PLD_OK)
        return PLD_E_RUNTIME;
    if (py->dirty) {
        PyObject *reset = PyDict_GetItemString(py->globals, "_reset"); /* borrowed */
        PyObject *m = py->opts.module ? PyUnicode_DecodeFSDefault(py->opts.module) : (Py_INCREF(Py_None), Py_None);
        PyObject *r = reset && m ? PyObject_CallFunction(reset, "OO", m, py->opts.torch ? Py_True : Py_False) : NULL;
        Py_XDECREF(m);
        if (!r) {
            pld_buf_puts(err, "the Python bridge could not take its options: ");
            take_error(err);
            return PLD_E_RUNTIME;
        }
        Py_DECREF(r);
        py->dirty = 0;
    }
    PyObject *params = PyTuple_New(fn->nparams), *vals = PyTuple_New(nargs);
    int ok = params && vals;
    for (int i = 0; ok && i < fn->nparams; i++) {
        PyObject *s = PyUnicode_FromString(fn->params[i]);
        ok = s != NULL;
        if (ok)
            PyTuple_SET_ITEM(params, i, s);
    }
    for (int i = 0; ok && i < nargs; i++) {
        PyObject *v = arg_object(&args[i]);
        ok = v != NULL;
        if (ok)
            PyTuple_SET_ITEM(vals, i, v);
    }
    PyObject *r = NULL;
    if (ok) {
        PyObject *body = fn->body ? PyUnicode_FromString(fn->body) : (Py_INCREF(Py_None), Py_None);
        PyObject *file = PyUnicode_DecodeFSDefault(fn->file ? fn->file : "<program>");
        if (body && file)
            r = PyObject_CallFunction(py->call, "sOOOiO", fn->name, params, body, file, fn->body_line, vals);
        Py_XDECREF(body);
        Py_XDECREF(file);
    }
    Py_XDECREF(params);
    Py_XDECREF(vals);
    pld_status_t st = PLD_OK;
    if (!r) {
        pld_buf_puts(err, "the Python bridge failed: ");
        take_error(err);
        st = PLD_E_RUNTIME;
    } else if (r != Py_None) {
        const char *t = PyUnicode_Check(r) ? PyUnicode_AsUTF8(r) : NULL;
        pld_buf_puts(err, t ? t : "the SubWorker failed");
        PyErr_Clear();
        st = PLD_E_RUNTIME;
    }
    Py_XDECREF(r);
    return st;
}
