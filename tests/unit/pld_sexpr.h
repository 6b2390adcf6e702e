/* pld_sexpr.h - a test-only S-expression dump of the AST, independent of the
 * printer (pld_print.c), so parser tests can assert the exact tree shape:
 *   a + b * c          ->  (+ a (* b c))
 *   f(x, k=1)[0:2]     ->  (sub (call f x k=1) (slice 0 2 _))
 * Statements dump one per line with two spaces per block level. */
#ifndef PLD_SEXPR_H
#define PLD_SEXPR_H

#include "pld_ast.h"

#include <inttypes.h>

static const char *sx_binop(pld_binop_t op)
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

static void sx_expr(const pld_expr_t *e, pld_buf_t *b);

static void sx_items(pld_expr_t *const *items, int n, pld_buf_t *b)
{
    for (int i = 0; i < n; i++) {
        pld_buf_putc(b, ' ');
        sx_expr(items[i], b);
    }
}

static void sx_opt(const pld_expr_t *e, pld_buf_t *b)
{
    if (e)
        sx_expr(e, b);
    else
        pld_buf_putc(b, '_');
}

static void sx_expr(const pld_expr_t *e, pld_buf_t *b)
{
    switch (e->kind) {
    case PLD_EX_NAME: pld_buf_puts(b, e->u.name); break;
    case PLD_EX_INT: pld_buf_printf(b, "%" PRId64, e->u.ival); break;
    case PLD_EX_FLOAT: pld_buf_printf(b, "%.17gf", e->u.fval); break;
    case PLD_EX_STR:
        pld_buf_putc(b, '\'');
        pld_buf_putn(b, e->u.str.s, e->u.str.len);
        pld_buf_putc(b, '\'');
        break;
    case PLD_EX_BOOL: pld_buf_puts(b, e->u.bval ? "True" : "False"); break;
    case PLD_EX_NONE: pld_buf_puts(b, "None"); break;
    case PLD_EX_ELLIPSIS: pld_buf_puts(b, "..."); break;
    case PLD_EX_UNARY:
        pld_buf_printf(b, "(%s ", e->u.un.op == PLD_UOP_NEG ? "neg" : e->u.un.op == PLD_UOP_POS ? "pos"
                                  : e->u.un.op == PLD_UOP_INVERT ? "~" : "not");
        sx_expr(e->u.un.a, b);
        pld_buf_putc(b, ')');
        break;
    case PLD_EX_BINARY:
        pld_buf_printf(b, "(%s ", sx_binop(e->u.bin.op));
        sx_expr(e->u.bin.a, b);
        pld_buf_putc(b, ' ');
        sx_expr(e->u.bin.b, b);
        pld_buf_putc(b, ')');
        break;
    case PLD_EX_CALL:
        pld_buf_puts(b, "(call ");
        sx_expr(e->u.call.fn, b);
        for (int i = 0; i < e->u.call.nargs; i++) {
            pld_buf_putc(b, ' ');
            if (e->u.call.args[i].kw)
                pld_buf_printf(b, "%s=", e->u.call.args[i].kw);
            sx_expr(e->u.call.args[i].value, b);
        }
        pld_buf_putc(b, ')');
        break;
    case PLD_EX_ATTR:
        pld_buf_puts(b, "(. ");
        sx_expr(e->u.attr.obj, b);
        pld_buf_printf(b, " %s)", e->u.attr.attr);
        break;
    case PLD_EX_SUBSCRIPT:
        pld_buf_puts(b, "(sub ");
        sx_expr(e->u.sub.obj, b);
        sx_items(e->u.sub.items, e->u.sub.n, b);
        pld_buf_putc(b, ')');
        break;
    case PLD_EX_SLICE:
        pld_buf_puts(b, "(slice ");
        sx_opt(e->u.slice.lo, b);
        pld_buf_putc(b, ' ');
        sx_opt(e->u.slice.hi, b);
        pld_buf_putc(b, ' ');
        sx_opt(e->u.slice.step, b);
        pld_buf_putc(b, ')');
        break;
    case PLD_EX_LIST:
        pld_buf_puts(b, "[list");
        sx_items(e->u.seq.items, e->u.seq.n, b);
        pld_buf_putc(b, ']');
        break;
    case PLD_EX_TUPLE:
        pld_buf_puts(b, "(tuple");
        sx_items(e->u.seq.items, e->u.seq.n, b);
        pld_buf_puts(b, e->u.seq.trailing_comma ? ",)" : ")");
        break;
    case PLD_EX_DICT:
        pld_buf_puts(b, "{dict");
        for (int i = 0; i < e->u.dict.n; i++) {
            pld_buf_putc(b, ' ');
            sx_expr(e->u.dict.keys[i], b);
            pld_buf_putc(b, ':');
            sx_expr(e->u.dict.vals[i], b);
        }
        pld_buf_putc(b, '}');
        break;
    case PLD_EX_COND:
        pld_buf_puts(b, "(ifexp ");
        sx_expr(e->u.cond.cond, b);
        pld_buf_putc(b, ' ');
        sx_expr(e->u.cond.a, b);
        pld_buf_putc(b, ' ');
        sx_expr(e->u.cond.b, b);
        pld_buf_putc(b, ')');
        break;
    }
}

static void sx_block(const pld_block_t *blk, int level, pld_buf_t *b);

static void sx_indent(int level, pld_buf_t *b)
{
    for (int i = 0; i < level; i++)
        pld_buf_puts(b, "  ");
}

static void sx_stmt(const pld_stmt_t *s, int level, pld_buf_t *b)
{
    for (const pld_comment_t *c = s->comments; c; c = c->next) {
        sx_indent(level, b);
        pld_buf_printf(b, "#%s\n", c->text);
    }
    sx_indent(level, b);
    switch (s->kind) {
    case PLD_ST_EXPR:
        pld_buf_puts(b, "expr ");
        sx_expr(s->u.expr, b);
        break;
    case PLD_ST_ASSIGN:
        pld_buf_puts(b, "assign ");
        sx_expr(s->u.assign.target, b);
        if (s->u.assign.ann) {
            pld_buf_puts(b, " : ");
            sx_expr(s->u.assign.ann, b);
        }
        pld_buf_puts(b, " = ");
        sx_expr(s->u.assign.value, b);
        break;
    case PLD_ST_RETURN:
        pld_buf_puts(b, "return");
        sx_items(s->u.ret.vals, s->u.ret.n, b);
        break;
    case PLD_ST_PASS: pld_buf_puts(b, "pass"); break;
    case PLD_ST_BREAK: pld_buf_puts(b, "break"); break;
    case PLD_ST_CONTINUE: pld_buf_puts(b, "continue"); break;
    case PLD_ST_IF:
        pld_buf_puts(b, s->u.if_.els_is_elif ? "if/elif " : "if ");
        sx_expr(s->u.if_.cond, b);
        pld_buf_putc(b, '\n');
        sx_block(&s->u.if_.then, level + 1, b);
        if (s->u.if_.els.n) {
            sx_indent(level, b);
            pld_buf_puts(b, "else\n");
            sx_block(&s->u.if_.els, level + 1, b);
        }
        return;
    case PLD_ST_WHILE:
        pld_buf_puts(b, "while ");
        sx_expr(s->u.while_.cond, b);
        pld_buf_putc(b, '\n');
        sx_block(&s->u.while_.body, level + 1, b);
        return;
    case PLD_ST_FOR:
        pld_buf_puts(b, "for ");
        sx_expr(s->u.for_.target, b);
        pld_buf_puts(b, " in ");
        sx_expr(s->u.for_.iter, b);
        pld_buf_putc(b, '\n');
        sx_block(&s->u.for_.body, level + 1, b);
        return;
    case PLD_ST_WITH:
        pld_buf_puts(b, "with ");
        sx_expr(s->u.with.item, b);
        if (s->u.with.as_name)
            pld_buf_printf(b, " as %s", s->u.with.as_name);
        pld_buf_putc(b, '\n');
        sx_block(&s->u.with.body, level + 1, b);
        return;
    }
    pld_buf_putc(b, '\n');
}

static void sx_block(const pld_block_t *blk, int level, pld_buf_t *b)
{
    for (int i = 0; i < blk->n; i++)
        sx_stmt(blk->stmts[i], level, b);
}

#endif
