/* pld_print.c - AST printer. Output is Python syntax that pld_parse reads
 * back to the same tree, so print -> parse -> print is a fixed point. */
#include "pld_ast.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    P_COND = 1, P_OR, P_XOR, P_AND, P_NOT, P_CMP, P_BOR, P_BXOR, P_BAND, P_SHIFT, P_ARITH, P_TERM, P_UNARY,
    P_POW, P_PRIMARY, P_ATOM
};

static int binop_prec(pld_binop_t op)
{
    switch (op) {
    case PLD_OP_OR: return P_OR;
    case PLD_OP_XOR: return P_XOR;
    case PLD_OP_AND: return P_AND;
    case PLD_OP_EQ: case PLD_OP_NE: case PLD_OP_LT: case PLD_OP_LE: case PLD_OP_GT: case PLD_OP_GE:
        return P_CMP;
    case PLD_OP_BITOR: return P_BOR;
    case PLD_OP_BITXOR: return P_BXOR;
    case PLD_OP_BITAND: return P_BAND;
    case PLD_OP_LSHIFT: case PLD_OP_RSHIFT: return P_SHIFT;
    case PLD_OP_ADD: case PLD_OP_SUB: return P_ARITH;
    case PLD_OP_MUL: case PLD_OP_DIV: case PLD_OP_FLOORDIV: case PLD_OP_MOD: return P_TERM;
    case PLD_OP_POW: return P_POW;
    }
    return P_ATOM;
}

static const char *binop_text(pld_binop_t op)
{
    static const char *const t[] = {
        [PLD_OP_ADD] = "+", [PLD_OP_SUB] = "-", [PLD_OP_MUL] = "*", [PLD_OP_DIV] = "/",
        [PLD_OP_FLOORDIV] = "//", [PLD_OP_MOD] = "%", [PLD_OP_POW] = "**", [PLD_OP_LSHIFT] = "<<",
        [PLD_OP_RSHIFT] = ">>", [PLD_OP_BITAND] = "&", [PLD_OP_BITOR] = "|", [PLD_OP_BITXOR] = "^",
        [PLD_OP_EQ] = "==", [PLD_OP_NE] = "!=", [PLD_OP_LT] = "<", [PLD_OP_LE] = "<=", [PLD_OP_GT] = ">",
        [PLD_OP_GE] = ">=", [PLD_OP_AND] = "and", [PLD_OP_OR] = "or", [PLD_OP_XOR] = "xor",
    };
    return t[op];
}

static int expr_prec(const pld_expr_t *e)
{
    switch (e->kind) {
    case PLD_EX_BINARY: return binop_prec(e->u.bin.op);
    case PLD_EX_UNARY: return e->u.un.op == PLD_UOP_NOT ? P_NOT : P_UNARY;
    case PLD_EX_CALL: case PLD_EX_ATTR: case PLD_EX_SUBSCRIPT: return P_PRIMARY;
    case PLD_EX_COND: return P_COND;
    default: return P_ATOM;
    }
}

static void print_expr(const pld_expr_t *e, pld_buf_t *out);

static void print_paren(const pld_expr_t *e, int paren, pld_buf_t *out)
{
    if (paren)
        pld_buf_putc(out, '(');
    print_expr(e, out);
    if (paren)
        pld_buf_putc(out, ')');
}

static void print_float(double v, pld_buf_t *out)
{
    char b[64];
    if (isinf(v)) {
        pld_buf_puts(out, v > 0 ? "inf" : "-inf");
        return;
    }
    if (isnan(v)) {
        pld_buf_puts(out, "nan");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(b, sizeof b, "%.*g", prec, v);
        if (strtod(b, NULL) == v)
            break;
    }
    pld_buf_puts(out, b);
    if (!strpbrk(b, ".eEn"))
        pld_buf_puts(out, ".0");
}

static void print_string(const char *s, size_t n, pld_buf_t *out)
{
    pld_buf_putc(out, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': pld_buf_puts(out, "\\\""); break;
        case '\\': pld_buf_puts(out, "\\\\"); break;
        case '\n': pld_buf_puts(out, "\\n"); break;
        case '\t': pld_buf_puts(out, "\\t"); break;
        case '\r': pld_buf_puts(out, "\\r"); break;
        default:
            if (c < 0x20 || c == 0x7F)
                pld_buf_printf(out, "\\x%02x", c);
            else
                pld_buf_putc(out, (char)c);
        }
    }
    pld_buf_putc(out, '"');
}

static void print_items(pld_expr_t *const *items, int n, pld_buf_t *out)
{
    for (int i = 0; i < n; i++) {
        if (i)
            pld_buf_puts(out, ", ");
        print_expr(items[i], out);
    }
}

static void print_tuple_bare(const pld_expr_t *e, pld_buf_t *out)
{
    print_items(e->u.seq.items, e->u.seq.n, out);
    if (e->u.seq.n == 1)
        pld_buf_putc(out, ',');
}

static void print_expr(const pld_expr_t *e, pld_buf_t *out)
{
    switch (e->kind) {
    case PLD_EX_NAME:
        pld_buf_puts(out, e->u.name);
        break;
    case PLD_EX_INT:
        pld_buf_printf(out, "%lld", (long long)e->u.ival);
        break;
    case PLD_EX_FLOAT:
        print_float(e->u.fval, out);
        break;
    case PLD_EX_STR:
        print_string(e->u.str.s, e->u.str.len, out);
        break;
    case PLD_EX_BOOL:
        pld_buf_puts(out, e->u.bval ? "True" : "False");
        break;
    case PLD_EX_NONE:
        pld_buf_puts(out, "None");
        break;
    case PLD_EX_ELLIPSIS:
        pld_buf_puts(out, "...");
        break;
    case PLD_EX_UNARY: {
        int p = e->u.un.op == PLD_UOP_NOT ? P_NOT : P_UNARY;
        const char *t = e->u.un.op == PLD_UOP_NEG ? "-" : e->u.un.op == PLD_UOP_POS ? "+"
                      : e->u.un.op == PLD_UOP_INVERT ? "~" : "not ";
        pld_buf_puts(out, t);
        print_paren(e->u.un.a, expr_prec(e->u.un.a) < p, out);
        break;
    }
    case PLD_EX_BINARY: {
        int p = binop_prec(e->u.bin.op);
        int lp, rp;
        int lc = expr_prec(e->u.bin.a), rc = expr_prec(e->u.bin.b);
        if (e->u.bin.op == PLD_OP_POW) {
            lp = lc <= P_POW;   /* (-a)**b, (a**b)**c */
            rp = rc < P_UNARY;  /* a**-b is fine */
        } else if (p == P_CMP) {
            lp = lc <= P_CMP;
            rp = rc <= P_CMP;
        } else {
            lp = lc < p;
            rp = rc <= p;
        }
        print_paren(e->u.bin.a, lp, out);
        pld_buf_printf(out, " %s ", binop_text(e->u.bin.op));
        print_paren(e->u.bin.b, rp, out);
        break;
    }
    case PLD_EX_CALL:
        print_paren(e->u.call.fn, expr_prec(e->u.call.fn) < P_PRIMARY, out);
        pld_buf_putc(out, '(');
        for (int i = 0; i < e->u.call.nargs; i++) {
            if (i)
                pld_buf_puts(out, ", ");
            if (e->u.call.args[i].kw)
                pld_buf_printf(out, "%s=", e->u.call.args[i].kw);
            print_expr(e->u.call.args[i].value, out);
        }
        pld_buf_putc(out, ')');
        break;
    case PLD_EX_ATTR:
        /* an int literal needs parens before '.' (1 .x) */
        print_paren(e->u.attr.obj, expr_prec(e->u.attr.obj) < P_PRIMARY || e->u.attr.obj->kind == PLD_EX_INT, out);
        pld_buf_printf(out, ".%s", e->u.attr.attr);
        break;
    case PLD_EX_SUBSCRIPT:
        print_paren(e->u.sub.obj, expr_prec(e->u.sub.obj) < P_PRIMARY, out);
        pld_buf_putc(out, '[');
        print_items(e->u.sub.items, e->u.sub.n, out);
        pld_buf_putc(out, ']');
        break;
    case PLD_EX_SLICE:
        if (e->u.slice.lo)
            print_expr(e->u.slice.lo, out);
        pld_buf_putc(out, ':');
        if (e->u.slice.hi)
            print_expr(e->u.slice.hi, out);
        if (e->u.slice.step) {
            pld_buf_putc(out, ':');
            print_expr(e->u.slice.step, out);
        }
        break;
    case PLD_EX_LIST:
        pld_buf_putc(out, '[');
        print_items(e->u.seq.items, e->u.seq.n, out);
        pld_buf_putc(out, ']');
        break;
    case PLD_EX_TUPLE:
        pld_buf_putc(out, '(');
        print_tuple_bare(e, out);
        pld_buf_putc(out, ')');
        break;
    case PLD_EX_DICT:
        pld_buf_putc(out, '{');
        for (int i = 0; i < e->u.dict.n; i++) {
            if (i)
                pld_buf_puts(out, ", ");
            print_expr(e->u.dict.keys[i], out);
            pld_buf_puts(out, ": ");
            print_expr(e->u.dict.vals[i], out);
        }
        pld_buf_putc(out, '}');
        break;
    case PLD_EX_COND: /* a and cond are or_tests; b may be another conditional */
        print_paren(e->u.cond.a, expr_prec(e->u.cond.a) <= P_COND, out);
        pld_buf_puts(out, " if ");
        print_paren(e->u.cond.cond, expr_prec(e->u.cond.cond) <= P_COND, out);
        pld_buf_puts(out, " else ");
        print_expr(e->u.cond.b, out);
        break;
    }
}

void pld_ast_print_expr(const pld_expr_t *e, pld_buf_t *out)
{
    print_expr(e, out);
}

/* A statement-level tuple (assignment target, for target) prints without parens. */
static void print_target(const pld_expr_t *e, pld_buf_t *out)
{
    if (e->kind == PLD_EX_TUPLE)
        print_tuple_bare(e, out);
    else
        print_expr(e, out);
}

static void indent(int level, pld_buf_t *out)
{
    for (int i = 0; i < level; i++)
        pld_buf_puts(out, "    ");
}

static void print_comments(const pld_comment_t *c, int level, pld_buf_t *out)
{
    for (; c; c = c->next) {
        indent(level, out);
        if (c->text[0])
            pld_buf_printf(out, "# %s\n", c->text);
        else
            pld_buf_puts(out, "#\n");
    }
}

static void print_block(const pld_block_t *b, int level, pld_buf_t *out);

static void print_stmt(const pld_stmt_t *s, int level, pld_buf_t *out)
{
    print_comments(s->comments, level, out);
    indent(level, out);
    switch (s->kind) {
    case PLD_ST_EXPR:
        print_expr(s->u.expr, out);
        pld_buf_putc(out, '\n');
        break;
    case PLD_ST_ASSIGN:
        print_target(s->u.assign.target, out);
        if (s->u.assign.ann) {
            pld_buf_puts(out, ": ");
            print_expr(s->u.assign.ann, out);
        }
        pld_buf_puts(out, " = ");
        print_expr(s->u.assign.value, out);
        pld_buf_putc(out, '\n');
        break;
    case PLD_ST_RETURN:
        pld_buf_puts(out, "return");
        if (s->u.ret.n) {
            pld_buf_putc(out, ' ');
            print_items(s->u.ret.vals, s->u.ret.n, out);
        }
        pld_buf_putc(out, '\n');
        break;
    case PLD_ST_PASS:
        pld_buf_puts(out, "pass\n");
        break;
    case PLD_ST_BREAK:
        pld_buf_puts(out, "break\n");
        break;
    case PLD_ST_CONTINUE:
        pld_buf_puts(out, "continue\n");
        break;
    case PLD_ST_IF: {
        const pld_stmt_t *cur = s;
        pld_buf_puts(out, "if ");
        for (;;) {
            print_expr(cur->u.if_.cond, out);
            pld_buf_puts(out, ":\n");
            print_block(&cur->u.if_.then, level + 1, out);
            if (cur->u.if_.els_is_elif && cur->u.if_.els.n == 1 && !cur->u.if_.els.stmts[0]->comments) {
                cur = cur->u.if_.els.stmts[0];
                indent(level, out);
                pld_buf_puts(out, "elif ");
                continue;
            }
            if (cur->u.if_.els.n) {
                indent(level, out);
                pld_buf_puts(out, "else:\n");
                print_block(&cur->u.if_.els, level + 1, out);
            }
            break;
        }
        break;
    }
    case PLD_ST_WHILE:
        pld_buf_puts(out, "while ");
        print_expr(s->u.while_.cond, out);
        pld_buf_puts(out, ":\n");
        print_block(&s->u.while_.body, level + 1, out);
        break;
    case PLD_ST_FOR:
        pld_buf_puts(out, "for ");
        print_target(s->u.for_.target, out);
        pld_buf_puts(out, " in ");
        print_target(s->u.for_.iter, out);
        pld_buf_puts(out, ":\n");
        print_block(&s->u.for_.body, level + 1, out);
        break;
    case PLD_ST_WITH:
        pld_buf_puts(out, "with ");
        print_expr(s->u.with.item, out);
        if (s->u.with.as_name)
            pld_buf_printf(out, " as %s", s->u.with.as_name);
        pld_buf_puts(out, ":\n");
        print_block(&s->u.with.body, level + 1, out);
        break;
    }
}

static void print_block(const pld_block_t *b, int level, pld_buf_t *out)
{
    if (b->n == 0) {
        indent(level, out);
        pld_buf_puts(out, "pass\n");
        return;
    }
    for (int i = 0; i < b->n; i++)
        print_stmt(b->stmts[i], level, out);
}

static void print_func(const pld_func_t *f, int level, pld_buf_t *out)
{
    print_comments(f->comments, level, out);
    if (f->deco) {
        indent(level, out);
        pld_buf_putc(out, '@');
        print_expr(f->deco, out);
        pld_buf_putc(out, '\n');
    }
    indent(level, out);
    pld_buf_printf(out, "def %s(", f->name);
    int first = 1;
    if (f->has_self) {
        pld_buf_puts(out, "self");
        first = 0;
    }
    for (int i = 0; i < f->nparams; i++) {
        if (!first)
            pld_buf_puts(out, ", ");
        first = 0;
        pld_buf_printf(out, "%s: ", f->params[i].name);
        print_expr(f->params[i].ann, out);
    }
    pld_buf_putc(out, ')');
    if (f->ret_ann) {
        pld_buf_puts(out, " -> ");
        print_expr(f->ret_ann, out);
    }
    pld_buf_puts(out, ":\n");
    if (f->is_raw) {
        const char *s = f->raw_body;
        if (!*s) {
            indent(level + 1, out);
            pld_buf_puts(out, "...\n");
        }
        while (*s) {
            const char *e = strchr(s, '\n');
            size_t n = e ? (size_t)(e - s) : strlen(s);
            if (n) {
                indent(level + 1, out);
                pld_buf_putn(out, s, n);
            }
            pld_buf_putc(out, '\n');
            s += n + (e ? 1 : 0);
        }
        return;
    }
    print_block(&f->body, level + 1, out);
}

void pld_ast_print(const pld_program_t *p, pld_buf_t *out)
{
    for (int i = 0; i < p->nimports; i++) {
        const pld_import_t *im = &p->imports[i];
        print_comments(im->comments, 0, out);
        if (im->from_name) {
            pld_buf_printf(out, "from %s import %s", im->module, im->from_name);
            if (im->alias && im->alias != im->from_name)
                pld_buf_printf(out, " as %s", im->alias);
        } else {
            pld_buf_printf(out, "import %s", im->module);
            if (im->alias)
                pld_buf_printf(out, " as %s", im->alias);
        }
        pld_buf_putc(out, '\n');
    }
    if (p->nimports)
        pld_buf_putc(out, '\n');
    for (int i = 0; i < p->nconsts; i++) {
        print_comments(p->consts[i].comments, 0, out);
        pld_buf_printf(out, "%s = ", p->consts[i].name);
        print_target(p->consts[i].value, out);
        pld_buf_putc(out, '\n');
    }
    if (p->nconsts)
        pld_buf_putc(out, '\n');
    int level = 0;
    if (p->class_name) {
        print_comments(p->class_comments, 0, out);
        pld_buf_putc(out, '@');
        if (p->class_deco)
            print_expr(p->class_deco, out);
        else
            pld_buf_puts(out, "pl.program");
        pld_buf_printf(out, "\nclass %s:\n", p->class_name);
        level = 1;
        if (p->nfuncs == 0) {
            indent(1, out);
            pld_buf_puts(out, "pass\n");
        }
    }
    for (int i = 0; i < p->nfuncs; i++) {
        if (i)
            pld_buf_putc(out, '\n');
        print_func(p->funcs[i], level, out);
    }
    if (p->tail_comments) {
        if (p->nimports || p->nconsts || p->class_name || p->nfuncs)
            pld_buf_putc(out, '\n');
        print_comments(p->tail_comments, 0, out);
    }
}
