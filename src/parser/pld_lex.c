/* pld_lex.c - indentation-aware lexer (Python's layout rules). */
#include "pld_lex.h"
#include "pld_mem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lcomment {
    uint32_t line;
    const char *text;
    struct lcomment *next;
} lcomment_t;

struct pld_lexer {
    pld_program_t *p;
    const char *src;
    size_t len;
    size_t pos;
    uint32_t line;        /* 1-based line of pos */
    size_t line_start;    /* byte offset where that line starts */
    int at_line_start;
    int pending_newline;
    int pending_dedents;
    int last_was_newline; /* suppresses NEWLINE for blank lines and at file start */
    int any_token;
    uint32_t indents[PLD_LEX_MAX_INDENT + 1];
    int nindent;
    int depth;
    char bracket[PLD_LEX_MAX_BRACKETS];
    pld_span_t bracket_span[PLD_LEX_MAX_BRACKETS];
    lcomment_t *comments, *comments_tail;
    int eof_reported;
    int stopped;          /* a limit was exceeded: only EOF from now on */
    int swallow;          /* closers still due for brackets the parser gave up on */
    /* column cache: col_of resumes from the last position it measured on the
     * same line, so a long line costs linear, not quadratic, time */
    size_t cc_line_start, cc_off;
    uint32_t cc_col;
};

static const struct {
    const char *kw;
    pld_tok_kind_t kind;
} keywords[] = {
    {"False", PLD_T_FALSE}, {"None", PLD_T_NONE}, {"True", PLD_T_TRUE}, {"and", PLD_T_AND},
    {"as", PLD_T_AS}, {"assert", PLD_T_ASSERT}, {"async", PLD_T_ASYNC}, {"await", PLD_T_AWAIT},
    {"break", PLD_T_BREAK}, {"class", PLD_T_CLASS}, {"continue", PLD_T_CONTINUE}, {"def", PLD_T_DEF},
    {"del", PLD_T_DEL}, {"elif", PLD_T_ELIF}, {"else", PLD_T_ELSE}, {"except", PLD_T_EXCEPT},
    {"finally", PLD_T_FINALLY}, {"for", PLD_T_FOR}, {"from", PLD_T_FROM}, {"global", PLD_T_GLOBAL},
    {"if", PLD_T_IF}, {"import", PLD_T_IMPORT}, {"in", PLD_T_IN}, {"is", PLD_T_IS},
    {"lambda", PLD_T_LAMBDA}, {"nonlocal", PLD_T_NONLOCAL}, {"not", PLD_T_NOT}, {"or", PLD_T_OR},
    {"pass", PLD_T_PASS}, {"raise", PLD_T_RAISE}, {"return", PLD_T_RETURN}, {"try", PLD_T_TRY},
    {"while", PLD_T_WHILE}, {"with", PLD_T_WITH}, {"yield", PLD_T_YIELD},
};

const char *pld_tok_name(pld_tok_kind_t k)
{
    static const char *const names[PLD_T__COUNT] = {
        [PLD_T_EOF] = "end of file", [PLD_T_NEWLINE] = "newline", [PLD_T_INDENT] = "indent",
        [PLD_T_DEDENT] = "dedent", [PLD_T_NAME] = "name", [PLD_T_INT] = "integer",
        [PLD_T_FLOAT] = "float", [PLD_T_STRING] = "string", [PLD_T_ERROR] = "invalid token",
        [PLD_T_PLUS] = "'+'", [PLD_T_MINUS] = "'-'", [PLD_T_STAR] = "'*'", [PLD_T_SLASH] = "'/'",
        [PLD_T_DSLASH] = "'//'", [PLD_T_PERCENT] = "'%'", [PLD_T_DSTAR] = "'**'", [PLD_T_LSHIFT] = "'<<'",
        [PLD_T_RSHIFT] = "'>>'", [PLD_T_AMP] = "'&'", [PLD_T_PIPE] = "'|'", [PLD_T_CARET] = "'^'",
        [PLD_T_TILDE] = "'~'", [PLD_T_LT] = "'<'", [PLD_T_GT] = "'>'", [PLD_T_LE] = "'<='",
        [PLD_T_GE] = "'>='", [PLD_T_EQEQ] = "'=='", [PLD_T_NE] = "'!='", [PLD_T_ASSIGN] = "'='",
        [PLD_T_LPAREN] = "'('", [PLD_T_RPAREN] = "')'", [PLD_T_LBRACK] = "'['", [PLD_T_RBRACK] = "']'",
        [PLD_T_LBRACE] = "'{'", [PLD_T_RBRACE] = "'}'", [PLD_T_COMMA] = "','", [PLD_T_COLON] = "':'",
        [PLD_T_DOT] = "'.'", [PLD_T_ARROW] = "'->'", [PLD_T_AT] = "'@'", [PLD_T_ELLIPSIS] = "'...'",
        [PLD_T_SEMI] = "';'", [PLD_T_AUGASSIGN] = "augmented assignment", [PLD_T_WALRUS] = "':='",
    };
    if (k >= PLD_T_FALSE && k <= PLD_T_YIELD) {
        for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
            if (keywords[i].kind == k)
                return keywords[i].kw;
    }
    if ((int)k >= 0 && k < PLD_T__COUNT && names[k])
        return names[k];
    return "token";
}

pld_lexer_t *pld_lex_create(pld_program_t *p)
{
    pld_lexer_t *lx = pld_mem_calloc(1, sizeof *lx);
    if (!lx)
        return NULL;
    lx->p = p;
    lx->src = p->src;
    lx->len = p->src_len;
    lx->line = 1;
    lx->at_line_start = 1;
    lx->last_was_newline = 1;
    lx->nindent = 1;
    lx->indents[0] = 0;
    /* skip a UTF-8 byte order mark */
    if (lx->len >= 3 && (unsigned char)lx->src[0] == 0xEF && (unsigned char)lx->src[1] == 0xBB &&
        (unsigned char)lx->src[2] == 0xBF)
        lx->pos = lx->line_start = 3;
    return lx;
}

void pld_lex_destroy(pld_lexer_t *lx)
{
    pld_mem_free(lx);
}

/* Visual column (1-based, tabs to 8, UTF-8 continuation bytes zero-width) of off. */
static uint32_t col_of(const pld_lexer_t *lx, size_t line_start, size_t off)
{
    /* The cache is bookkeeping, not state the caller sees: lexers are always
     * allocated mutable (pld_lex_create), so writing through it is defined. */
    pld_lexer_t *m = (pld_lexer_t *)lx;
    uint32_t col = 0;
    size_t i = line_start;
    if (m->cc_line_start == line_start && m->cc_off <= off && m->cc_off >= line_start) {
        i = m->cc_off;
        col = m->cc_col;
    }
    for (; i < off && i < lx->len; i++) {
        unsigned char c = (unsigned char)lx->src[i];
        if (c == '\t')
            col = (col / 8 + 1) * 8;
        else if ((c & 0xC0) != 0x80)
            col++;
    }
    m->cc_line_start = line_start;
    m->cc_off = i;
    m->cc_col = col;
    return col + 1;
}

static pld_span_t span_at(const pld_lexer_t *lx, size_t start, size_t end, uint32_t line, size_t line_start)
{
    pld_span_t s;
    s.off = (uint32_t)start;
    s.len = (uint32_t)(end - start);
    s.line = line;
    s.col = col_of(lx, line_start, start);
    return s;
}

static pld_span_t here(const pld_lexer_t *lx, size_t start)
{
    return span_at(lx, start, lx->pos > start ? lx->pos : start + 1, lx->line, lx->line_start);
}

static pld_token_t tok(pld_tok_kind_t k, pld_span_t sp)
{
    pld_token_t t;
    memset(&t, 0, sizeof t);
    t.kind = k;
    t.span = sp;
    return t;
}

static int peekc(const pld_lexer_t *lx, size_t k)
{
    return lx->pos + k < lx->len ? (unsigned char)lx->src[lx->pos + k] : -1;
}

/* Consumes a line break (\n, \r\n or \r) at pos; updates line counters. */
static void eat_newline(pld_lexer_t *lx)
{
    if (peekc(lx, 0) == '\r' && peekc(lx, 1) == '\n')
        lx->pos += 2;
    else
        lx->pos += 1;
    lx->line++;
    lx->line_start = lx->pos;
}

static int is_nl(int c)
{
    return c == '\n' || c == '\r';
}

static void add_comment(pld_lexer_t *lx, size_t start)
{
    /* start points at '#'; the comment runs to end of line */
    size_t s = start + 1;
    size_t e = s;
    while (e < lx->len && !is_nl((unsigned char)lx->src[e]))
        e++;
    lx->pos = e;
    if (s < e && lx->src[s] == ' ')
        s++;
    size_t te = e;
    while (te > s && (lx->src[te - 1] == ' ' || lx->src[te - 1] == '\t'))
        te--;
    lcomment_t *c = pld_arena_alloc(&lx->p->arena, sizeof *c);
    char *text = pld_arena_strndup(&lx->p->arena, lx->src + s, te - s);
    if (!c || !text) {
        lx->p->diags.oom = 1;
        return;
    }
    c->line = lx->line;
    c->text = text;
    if (lx->comments_tail)
        lx->comments_tail->next = c;
    else
        lx->comments = c;
    lx->comments_tail = c;
}

pld_comment_t *pld_lex_take_comments(pld_lexer_t *lx, uint32_t before_line)
{
    pld_comment_t *head = NULL, *tail = NULL;
    while (lx->comments && lx->comments->line < before_line) {
        lcomment_t *c = lx->comments;
        lx->comments = c->next;
        if (!lx->comments)
            lx->comments_tail = NULL;
        pld_comment_t *pc = pld_arena_alloc(&lx->p->arena, sizeof *pc);
        if (!pc) {
            lx->p->diags.oom = 1;
            break;
        }
        pc->text = c->text;
        if (tail)
            tail->next = pc;
        else
            head = pc;
        tail = pc;
    }
    return head;
}

static void lex_error(pld_lexer_t *lx, pld_span_t sp, const char *fmt, const char *arg)
{
    pld_diag_add(&lx->p->diags, PLD_SEV_ERROR, sp, fmt, arg);
}

int pld_lex_depth(const pld_lexer_t *lx)
{
    return lx->depth;
}

pld_span_t pld_lex_open_bracket(const pld_lexer_t *lx)
{
    pld_span_t none = {0, 0, 0, 0};
    if (lx->depth <= 0)
        return none;
    int d = lx->depth <= PLD_LEX_MAX_BRACKETS ? lx->depth : PLD_LEX_MAX_BRACKETS;
    return lx->bracket_span[d - 1];
}

void pld_lex_reset_brackets(pld_lexer_t *lx)
{
    lx->depth = 0;
}

void pld_lex_stop(pld_lexer_t *lx)
{
    lx->stopped = 1;
    lx->depth = 0;
    lx->swallow = 0;
    lx->pending_newline = 0;
    lx->pending_dedents = 0;
    lx->nindent = 1;
}

int pld_lex_stopped(const pld_lexer_t *lx)
{
    return lx->stopped;
}

/* Skips a string literal whose opening quote is at src[i]; returns the offset
 * after it (or of the line break / end that leaves it unterminated). */
static size_t skip_string(const pld_lexer_t *lx, size_t i)
{
    char q = lx->src[i];
    int triple = i + 2 < lx->len && lx->src[i + 1] == q && lx->src[i + 2] == q;
    i += triple ? 3 : 1;
    while (i < lx->len) {
        char c = lx->src[i];
        if (c == '\\') {
            i += 2;
            continue;
        }
        if (!triple && is_nl((unsigned char)c))
            return i;
        if (c == q && (!triple || (i + 2 < lx->len && lx->src[i + 1] == q && lx->src[i + 2] == q)))
            return i + (triple ? 3 : 1);
        i++;
    }
    return lx->len;
}

/* Counts brackets in the text after `from` (strings and comments skipped) with
 * `depth` brackets open. Returns the lowest depth reached before the end of the
 * text: 0 when every open bracket is closed later. */
static int lowest_depth_after(const pld_lexer_t *lx, size_t from, int depth)
{
    int cur = depth, low = depth;
    size_t i = from;
    while (i < lx->len && low > 0) {
        char c = lx->src[i];
        if (c == '#') {
            while (i < lx->len && !is_nl((unsigned char)lx->src[i]))
                i++;
        } else if (c == '\'' || c == '"') {
            i = skip_string(lx, i);
        } else {
            if (c == '(' || c == '[' || c == '{')
                cur++;
            else if ((c == ')' || c == ']' || c == '}') && --cur < low)
                low = cur;
            i++;
        }
    }
    return low;
}

int pld_lex_give_up_brackets(pld_lexer_t *lx, pld_span_t *open)
{
    if (lx->depth <= 0)
        return 0;
    /* Past the error limit nothing more is shown: forget the brackets without
     * the look-ahead, which keeps a text full of such errors linear. */
    const pld_diag_list_t *dl = &lx->p->diags;
    int low = dl->max_errors > 0 && dl->n_errors >= dl->max_errors ? lx->depth
                                                                   : lowest_depth_after(lx, lx->pos, lx->depth);
    if (low == 0)
        return 0;
    if (open) {
        int d = low <= PLD_LEX_MAX_BRACKETS ? low : PLD_LEX_MAX_BRACKETS;
        *open = lx->bracket_span[d - 1];
    }
    /* the closers still due (depth - low of them) end brackets that are gone now */
    lx->swallow += lx->depth - low;
    lx->depth = 0;
    return 1;
}

pld_span_t pld_lex_span_at(const pld_lexer_t *lx, size_t off, size_t len)
{
    /* line breaks as eat_newline counts them; line 1 starts after a BOM */
    size_t bom = lx->len >= 3 && (unsigned char)lx->src[0] == 0xEF && (unsigned char)lx->src[1] == 0xBB &&
                 (unsigned char)lx->src[2] == 0xBF ? 3 : 0;
    size_t ls = bom;
    uint32_t line = 1;
    for (size_t i = bom; i < off && i < lx->len; i++) {
        if (lx->src[i] == '\r' && i + 1 < lx->len && lx->src[i + 1] == '\n' && i + 1 < off)
            i++;
        if (is_nl((unsigned char)lx->src[i])) {
            line++;
            ls = i + 1;
        }
    }
    return span_at(lx, off, off + len, line, off >= ls ? ls : off);
}

uint32_t pld_lex_line_indent(const pld_lexer_t *lx, uint32_t off)
{
    size_t ls = off;
    while (ls > 0 && !is_nl((unsigned char)lx->src[ls - 1]))
        ls--;
    size_t i = ls;
    while (i < lx->len && (lx->src[i] == ' ' || lx->src[i] == '\t' || lx->src[i] == '\f'))
        i++;
    return col_of(lx, ls, i) - 1;
}

/* ------------------------------------------------------------------ numbers */

static int is_digit_in(int c, int base)
{
    if (base == 16)
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (base == 8)
        return c >= '0' && c <= '7';
    if (base == 2)
        return c == '0' || c == '1';
    return c >= '0' && c <= '9';
}

static int is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static int is_ident_char(int c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* A misplaced '_' in a numeric literal: the first one found, and why. */
typedef struct num_us {
    size_t at;         /* offset of the '_' (valid when why != NULL) */
    const char *why;
} num_us_t;

/* digitpart ::= digit { ['_'] digit } (Python's grammar), in `base`. Appends the
 * digits to buf (n counts them, capped by cap). A '_' must be followed by a
 * digit and, unless lead_ok (right after 0x / 0o / 0b, as in 0x_ff), preceded
 * by one; the first violation goes to *us. Returns the number of digits read. */
static size_t lex_digits(pld_lexer_t *lx, int base, int lead_ok, char *buf, size_t *n, size_t cap, num_us_t *us)
{
    size_t digits = 0;
    while (peekc(lx, 0) >= 0 && (is_digit_in(peekc(lx, 0), base) || peekc(lx, 0) == '_')) {
        int c = peekc(lx, 0);
        if (c == '_') {
            const char *why = !is_digit_in(peekc(lx, 1), base) ? "'_' must be followed by a digit"
                              : digits == 0 && !lead_ok      ? "'_' must follow a digit"
                                                              : NULL;
            if (why && !us->why) {
                us->at = lx->pos;
                us->why = why;
            }
        } else {
            if (*n + 1 < cap)
                buf[(*n)++] = (char)c;
            digits++;
        }
        lx->pos++;
    }
    return digits;
}

static pld_token_t lex_number(pld_lexer_t *lx)
{
    size_t start = lx->pos;
    int base = 10, is_float = 0;
    char buf[128];
    size_t n = 0, digits = 0;
    num_us_t us = {0, NULL};
    if (peekc(lx, 0) == '0' && (peekc(lx, 1) == 'x' || peekc(lx, 1) == 'X' || peekc(lx, 1) == 'o' ||
                                peekc(lx, 1) == 'O' || peekc(lx, 1) == 'b' || peekc(lx, 1) == 'B')) {
        int c1 = peekc(lx, 1) | 0x20;
        base = c1 == 'x' ? 16 : c1 == 'o' ? 8 : 2;
        lx->pos += 2;
        digits = lex_digits(lx, base, 1, buf, &n, sizeof buf, &us);
    } else {
        digits = lex_digits(lx, 10, 0, buf, &n, sizeof buf, &us);
        if (peekc(lx, 0) == '.' && !(peekc(lx, 1) == '.' && peekc(lx, 2) == '.')) {
            is_float = 1;
            if (n + 1 < sizeof buf)
                buf[n++] = '.';
            lx->pos++;
            digits += lex_digits(lx, 10, 0, buf, &n, sizeof buf, &us);
        }
        if ((peekc(lx, 0) == 'e' || peekc(lx, 0) == 'E') &&
            (is_digit_in(peekc(lx, 1), 10) ||
             ((peekc(lx, 1) == '+' || peekc(lx, 1) == '-') && is_digit_in(peekc(lx, 2), 10)))) {
            is_float = 1;
            if (n + 1 < sizeof buf)
                buf[n++] = 'e';
            lx->pos++;
            if (peekc(lx, 0) == '+' || peekc(lx, 0) == '-') {
                if (n + 1 < sizeof buf)
                    buf[n++] = (char)peekc(lx, 0);
                lx->pos++;
            }
            lex_digits(lx, 10, 0, buf, &n, sizeof buf, &us);
        }
    }
    buf[n] = '\0';
    if (peekc(lx, 0) >= 0 && (is_ident_char(peekc(lx, 0)) || peekc(lx, 0) == '.')) {
        /* e.g. 1abc, 0x1g, 1j, 1.2.3 */
        int c = peekc(lx, 0);
        while (peekc(lx, 0) >= 0 && (is_ident_char(peekc(lx, 0)) || peekc(lx, 0) == '.'))
            lx->pos++;
        lex_error(lx, here(lx, start), (c == 'j' || c == 'J') ? "complex literals are not supported%s"
                                                             : "invalid numeric literal%s", "");
        return tok(PLD_T_ERROR, here(lx, start));
    }
    if (us.why) {
        /* point at the misplaced '_', as precisely as Python's tokenizer */
        const char *kind = base == 16 ? "hexadecimal" : base == 8 ? "octal" : base == 2 ? "binary" : "decimal";
        char m[96];
        snprintf(m, sizeof m, "invalid %s literal (%s)", kind, us.why);
        lex_error(lx, span_at(lx, us.at, us.at + 1, lx->line, lx->line_start), "%s", m);
        return tok(PLD_T_ERROR, here(lx, start));
    }
    if ((base != 10 && digits == 0) || n + 1 >= sizeof buf) {
        lex_error(lx, here(lx, start), "invalid numeric literal%s", "");
        return tok(PLD_T_ERROR, here(lx, start));
    }
    pld_token_t t = tok(is_float ? PLD_T_FLOAT : PLD_T_INT, here(lx, start));
    errno = 0;
    if (is_float) {
        t.fval = strtod(buf, NULL);
    } else {
        char *end = NULL;
        unsigned long long v = strtoull(buf, &end, base);
        if (errno == ERANGE || v > (unsigned long long)INT64_MAX) {
            lex_error(lx, t.span, "integer literal too large (limit %s)", "9223372036854775807");
            t.kind = PLD_T_ERROR;
            return t;
        }
        /* a decimal literal with a leading zero such as 007 is not Python */
        if (base == 10 && n > 1 && buf[0] == '0' && v != 0) {
            lex_error(lx, t.span, "leading zeros in decimal integer literals are not permitted%s", "");
            t.kind = PLD_T_ERROR;
            return t;
        }
        t.ival = (int64_t)v;
    }
    return t;
}

/* ------------------------------------------------------------------ strings */

static void put_utf8(pld_buf_t *b, unsigned long cp)
{
    char o[4];
    if (cp < 0x80) {
        o[0] = (char)cp;
        pld_buf_putn(b, o, 1);
    } else if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        pld_buf_putn(b, o, 2);
    } else if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        pld_buf_putn(b, o, 3);
    } else {
        o[0] = (char)(0xF0 | ((cp >> 18) & 0x07));
        o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[3] = (char)(0x80 | (cp & 0x3F));
        pld_buf_putn(b, o, 4);
    }
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* pos is at the opening quote; start is where the prefix began. */
static pld_token_t lex_string(pld_lexer_t *lx, size_t start, int raw, int fstr)
{
    uint32_t line0 = lx->line;
    size_t ls0 = lx->line_start;
    int q = peekc(lx, 0);
    int triple = peekc(lx, 1) == q && peekc(lx, 2) == q;
    lx->pos += triple ? 3 : 1;
    pld_buf_t b;
    pld_buf_init(&b);
    for (;;) {
        int c = peekc(lx, 0);
        if (c < 0 || (!triple && is_nl(c))) {
            pld_span_t sp = span_at(lx, start, start + 1, line0, ls0);
            pld_buf_fini(&b);
            /* the rest of the line is gone: brackets opened before it that are
             * not closed later are forgotten, so that they are not also
             * reported as never closed; the others stay open */
            pld_lex_give_up_brackets(lx, NULL);
            lex_error(lx, sp, triple ? "unterminated triple-quoted string literal%s"
                                     : "unterminated string literal%s", "");
            return tok(PLD_T_ERROR, sp);
        }
        if (c == q && (!triple || (peekc(lx, 1) == q && peekc(lx, 2) == q))) {
            lx->pos += triple ? 3 : 1;
            break;
        }
        if (is_nl(c)) {
            pld_buf_putc(&b, '\n');
            eat_newline(lx);
            continue;
        }
        if (c == '\\') {
            int e = peekc(lx, 1);
            if (e < 0) {
                lx->pos++;
                continue;
            }
            if (is_nl(e)) { /* backslash-newline inside a string */
                lx->pos++;
                eat_newline(lx);
                if (raw) {
                    pld_buf_putc(&b, '\\');
                    pld_buf_putc(&b, '\n');
                }
                continue;
            }
            if (raw) {
                pld_buf_putc(&b, '\\');
                pld_buf_putc(&b, (char)e);
                lx->pos += 2;
                continue;
            }
            lx->pos += 2;
            switch (e) {
            case 'n': pld_buf_putc(&b, '\n'); break;
            case 't': pld_buf_putc(&b, '\t'); break;
            case 'r': pld_buf_putc(&b, '\r'); break;
            case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
                int v = e - '0', k = 1;
                while (k < 3 && peekc(lx, 0) >= '0' && peekc(lx, 0) <= '7') {
                    v = v * 8 + (peekc(lx, 0) - '0');
                    lx->pos++;
                    k++;
                }
                put_utf8(&b, (unsigned long)v);
                break;
            }
            case 'a': pld_buf_putc(&b, '\a'); break;
            case 'b': pld_buf_putc(&b, '\b'); break;
            case 'f': pld_buf_putc(&b, '\f'); break;
            case 'v': pld_buf_putc(&b, '\v'); break;
            case 'x': case 'u': case 'U': {
                int want = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                unsigned long v = 0;
                int k;
                for (k = 0; k < want && hexval(peekc(lx, 0)) >= 0; k++) {
                    v = v * 16 + (unsigned long)hexval(peekc(lx, 0));
                    lx->pos++;
                }
                if (k != want || v > 0x10FFFF) {
                    pld_span_t sp = here(lx, lx->pos - 2 - (size_t)k);
                    pld_buf_fini(&b);
                    lex_error(lx, sp, "truncated or invalid \\%s escape in string literal",
                              e == 'x' ? "x" : e == 'u' ? "u" : "U");
                    /* skip to the end of the string */
                    while (peekc(lx, 0) >= 0 && peekc(lx, 0) != q && !is_nl(peekc(lx, 0)))
                        lx->pos++;
                    if (peekc(lx, 0) == q)
                        lx->pos++;
                    return tok(PLD_T_ERROR, sp);
                }
                put_utf8(&b, v);
                break;
            }
            default:
                /* \\, \', \" and unknown escapes (kept verbatim, as Python does) */
                if (e != '\\' && e != '\'' && e != '"')
                    pld_buf_putc(&b, '\\');
                pld_buf_putc(&b, (char)e);
                break;
            }
            continue;
        }
        pld_buf_putc(&b, (char)c);
        lx->pos++;
    }
    pld_token_t t = tok(PLD_T_STRING, span_at(lx, start, lx->pos, line0, ls0));
    if (t.span.line != lx->line) /* a multi-line token: keep len inside the first line for carets */
        t.span.len = (uint32_t)(lx->pos - start);
    char *s = pld_arena_strndup(&lx->p->arena, b.p ? b.p : "", b.len);
    if (!s || b.oom)
        lx->p->diags.oom = 1;
    t.text = s ? s : "";
    t.text_len = s ? b.len : 0;
    t.str_prefix_f = fstr;
    pld_buf_fini(&b);
    return t;
}

/* ------------------------------------------------------------------ main loop */

static pld_token_t op_token(pld_lexer_t *lx, size_t start, pld_tok_kind_t k, size_t n)
{
    lx->pos += n;
    return tok(k, here(lx, start));
}

static int open_bracket(pld_lexer_t *lx, char c, size_t start)
{
    if (lx->depth >= PLD_LEX_MAX_BRACKETS) {
        /* a limit error ends the token stream: one error, not one per bracket */
        lex_error(lx, here(lx, start), "too many nested brackets (limit %s)", "200");
        pld_lex_stop(lx);
        return 0;
    }
    lx->bracket[lx->depth] = c;
    lx->bracket_span[lx->depth] = span_at(lx, start, start + 1, lx->line, lx->line_start);
    lx->depth++;
    return 1;
}

static pld_token_t close_bracket(pld_lexer_t *lx, char c, size_t start, pld_tok_kind_t k)
{
    char want = c == ')' ? '(' : c == ']' ? '[' : '{';
    lx->pos++;
    if (lx->depth == 0) {
        char m[2] = {c, 0};
        lex_error(lx, here(lx, start), "unmatched '%s'", m);
        return tok(PLD_T_ERROR, here(lx, start));
    }
    if (lx->bracket[lx->depth - 1] != want) {
        char m[64];
        pld_span_t o = lx->bracket_span[lx->depth - 1];
        snprintf(m, sizeof m, "'%c' does not match '%c' on line %u", c, lx->bracket[lx->depth - 1],
                 (unsigned)o.line);
        lex_error(lx, here(lx, start), "closing parenthesis %s", m);
        lx->depth--;
        return tok(PLD_T_ERROR, here(lx, start));
    }
    lx->depth--;
    return tok(k, here(lx, start));
}

/* Handles indentation at the start of a logical line. Returns 1 and sets *out
 * when a token (INDENT/DEDENT/ERROR) must be returned. */
static int do_indent(pld_lexer_t *lx, pld_token_t *out)
{
    for (;;) {
        size_t ls = lx->pos;
        uint32_t col = 0;
        while (lx->pos < lx->len) {
            int c = peekc(lx, 0);
            if (c == ' ')
                col++;
            else if (c == '\t')
                col = (col / 8 + 1) * 8;
            else if (c == '\f')
                col = 0;
            else
                break;
            lx->pos++;
        }
        int c = peekc(lx, 0);
        if (c < 0)
            return 0; /* EOF: handled by the caller */
        if (c == '#') {
            add_comment(lx, lx->pos);
            continue;
        }
        if (is_nl(c)) {
            eat_newline(lx);
            continue;
        }
        if (c == '\\' && is_nl(peekc(lx, 1))) { /* a line made only of a continuation */
            lx->pos++;
            eat_newline(lx);
            continue;
        }
        (void)ls;
        lx->at_line_start = 0;
        uint32_t top = lx->indents[lx->nindent - 1];
        if (col > top) {
            if (lx->nindent > PLD_LEX_MAX_INDENT) {
                /* a limit error ends the token stream: one error, not one per line */
                lex_error(lx, here(lx, lx->pos), "too many nested blocks (limit %s)", "100");
                *out = tok(PLD_T_ERROR, here(lx, lx->pos));
                pld_lex_stop(lx);
                return 1;
            }
            lx->indents[lx->nindent++] = col;
            *out = tok(PLD_T_INDENT, here(lx, lx->pos));
            return 1;
        }
        if (col < top) {
            int n = 0;
            while (lx->nindent > 1 && lx->indents[lx->nindent - 1] > col) {
                lx->nindent--;
                n++;
            }
            if (lx->indents[lx->nindent - 1] != col) {
                lex_error(lx, here(lx, lx->pos), "unindent does not match any outer indentation level%s", "");
                /* recover: read this line as part of the innermost block (a stray
                 * line), so the correctly indented lines after it parse normally */
                lx->nindent += n;
                n = 0;
            }
            if (n > 0) {
                lx->pending_dedents = n - 1;
                *out = tok(PLD_T_DEDENT, here(lx, lx->pos));
                return 1;
            }
        }
        return 0;
    }
}

pld_token_t pld_lex_next(pld_lexer_t *lx)
{
    pld_token_t t;
again:
    if (lx->stopped)
        return tok(PLD_T_EOF, here(lx, lx->pos < lx->len ? lx->pos : lx->len));
    if (lx->pending_newline) {
        lx->pending_newline = 0;
        lx->last_was_newline = 1;
        return tok(PLD_T_NEWLINE, here(lx, lx->pos));
    }
    if (lx->pending_dedents > 0) {
        lx->pending_dedents--;
        return tok(PLD_T_DEDENT, here(lx, lx->pos));
    }
    if (lx->at_line_start && lx->depth == 0) {
        if (do_indent(lx, &t)) {
            lx->last_was_newline = 0;
            return t;
        }
    }
    /* skip blanks, comments and continuations inside the line */
    for (;;) {
        int c = peekc(lx, 0);
        if (c == ' ' || c == '\t' || c == '\f') {
            lx->pos++;
        } else if (c == '#') {
            add_comment(lx, lx->pos);
        } else if (c == '\\' && is_nl(peekc(lx, 1))) {
            lx->pos++;
            eat_newline(lx);
        } else if (is_nl(c)) {
            size_t at = lx->pos;
            pld_span_t sp = here(lx, at);
            eat_newline(lx);
            if (lx->depth > 0)
                continue;
            lx->at_line_start = 1;
            if (lx->last_was_newline)
                goto again;
            lx->last_was_newline = 1;
            return tok(PLD_T_NEWLINE, sp);
        } else {
            break;
        }
    }
    size_t start = lx->pos;
    int c = peekc(lx, 0);
    if (c < 0) {
        if (lx->depth > 0) {
            pld_span_t o = lx->bracket_span[lx->depth - 1];
            char m[2] = {lx->bracket[lx->depth - 1], 0};
            lex_error(lx, o, "'%s' was never closed", m);
            lx->depth = 0;
            return tok(PLD_T_ERROR, o);
        }
        if (!lx->last_was_newline) {
            lx->last_was_newline = 1;
            lx->at_line_start = 1;
            return tok(PLD_T_NEWLINE, here(lx, start));
        }
        if (lx->nindent > 1) {
            lx->nindent--;
            return tok(PLD_T_DEDENT, here(lx, start));
        }
        return tok(PLD_T_EOF, here(lx, start));
    }
    if ((c == ')' || c == ']' || c == '}') && lx->depth == 0 && lx->swallow > 0) {
        /* closes a bracket that was already reported as never closed */
        lx->swallow--;
        lx->pos++;
        goto again;
    }
    lx->last_was_newline = 0;
    lx->any_token = 1;
    if (is_ident_start(c)) {
        while (lx->pos < lx->len && is_ident_char(peekc(lx, 0)))
            lx->pos++;
        size_t n = lx->pos - start;
        int q = peekc(lx, 0);
        if ((q == '\'' || q == '"') && n <= 2) {
            int raw = 0, fs = 0, okp = 1;
            for (size_t i = 0; i < n; i++) {
                int pc = lx->src[start + i] | 0x20;
                if (pc == 'r')
                    raw = 1;
                else if (pc == 'f')
                    fs = 1;
                else if (pc != 'b' && pc != 'u')
                    okp = 0;
            }
            if (okp)
                return lex_string(lx, start, raw, fs);
        }
        for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
            if (strlen(keywords[i].kw) == n && memcmp(keywords[i].kw, lx->src + start, n) == 0)
                return tok(keywords[i].kind, here(lx, start));
        t = tok(PLD_T_NAME, here(lx, start));
        t.text = pld_ast_intern(lx->p, lx->src + start, n);
        if (!t.text) {
            lx->p->diags.oom = 1;
            return tok(PLD_T_ERROR, here(lx, start)); /* out of memory: never hand out a NULL name */
        }
        t.text_len = n;
        return t;
    }
    if ((c >= '0' && c <= '9') || (c == '.' && peekc(lx, 1) >= '0' && peekc(lx, 1) <= '9'))
        return lex_number(lx);
    if (c == '\'' || c == '"')
        return lex_string(lx, start, 0, 0);
    int c1 = peekc(lx, 1), c2 = peekc(lx, 2);
    switch (c) {
    case '(': if (!open_bracket(lx, '(', start)) return op_token(lx, start, PLD_T_ERROR, 1);
        return op_token(lx, start, PLD_T_LPAREN, 1);
    case '[': if (!open_bracket(lx, '[', start)) return op_token(lx, start, PLD_T_ERROR, 1);
        return op_token(lx, start, PLD_T_LBRACK, 1);
    case '{': if (!open_bracket(lx, '{', start)) return op_token(lx, start, PLD_T_ERROR, 1);
        return op_token(lx, start, PLD_T_LBRACE, 1);
    case ')': return close_bracket(lx, ')', start, PLD_T_RPAREN);
    case ']': return close_bracket(lx, ']', start, PLD_T_RBRACK);
    case '}': return close_bracket(lx, '}', start, PLD_T_RBRACE);
    case ',': return op_token(lx, start, PLD_T_COMMA, 1);
    case ';': return op_token(lx, start, PLD_T_SEMI, 1);
    case '~': return op_token(lx, start, PLD_T_TILDE, 1);
    case '.':
        if (c1 == '.' && c2 == '.')
            return op_token(lx, start, PLD_T_ELLIPSIS, 3);
        return op_token(lx, start, PLD_T_DOT, 1);
    case ':':
        if (c1 == '=')
            return op_token(lx, start, PLD_T_WALRUS, 2);
        return op_token(lx, start, PLD_T_COLON, 1);
    case '+': return c1 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 2) : op_token(lx, start, PLD_T_PLUS, 1);
    case '-':
        if (c1 == '>')
            return op_token(lx, start, PLD_T_ARROW, 2);
        return c1 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 2) : op_token(lx, start, PLD_T_MINUS, 1);
    case '*':
        if (c1 == '*')
            return c2 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 3) : op_token(lx, start, PLD_T_DSTAR, 2);
        return c1 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 2) : op_token(lx, start, PLD_T_STAR, 1);
    case '/':
        if (c1 == '/')
            return c2 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 3) : op_token(lx, start, PLD_T_DSLASH, 2);
        return c1 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 2) : op_token(lx, start, PLD_T_SLASH, 1);
    case '%': return c1 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 2) : op_token(lx, start, PLD_T_PERCENT, 1);
    case '&': return c1 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 2) : op_token(lx, start, PLD_T_AMP, 1);
    case '|': return c1 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 2) : op_token(lx, start, PLD_T_PIPE, 1);
    case '^': return c1 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 2) : op_token(lx, start, PLD_T_CARET, 1);
    case '@': return c1 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 2) : op_token(lx, start, PLD_T_AT, 1);
    case '<':
        if (c1 == '<')
            return c2 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 3) : op_token(lx, start, PLD_T_LSHIFT, 2);
        return c1 == '=' ? op_token(lx, start, PLD_T_LE, 2) : op_token(lx, start, PLD_T_LT, 1);
    case '>':
        if (c1 == '>')
            return c2 == '=' ? op_token(lx, start, PLD_T_AUGASSIGN, 3) : op_token(lx, start, PLD_T_RSHIFT, 2);
        return c1 == '=' ? op_token(lx, start, PLD_T_GE, 2) : op_token(lx, start, PLD_T_GT, 1);
    case '=': return c1 == '=' ? op_token(lx, start, PLD_T_EQEQ, 2) : op_token(lx, start, PLD_T_ASSIGN, 1);
    case '!':
        if (c1 == '=')
            return op_token(lx, start, PLD_T_NE, 2);
        break;
    default:
        break;
    }
    /* invalid character: report once, skip it */
    lx->pos++;
    while (lx->pos < lx->len && ((unsigned char)lx->src[lx->pos] & 0xC0) == 0x80)
        lx->pos++;
    char m[32];
    if (c >= 0x20 && c < 0x7F)
        snprintf(m, sizeof m, "'%c'", c);
    else
        snprintf(m, sizeof m, "byte 0x%02X", (unsigned)c);
    lex_error(lx, here(lx, start), "invalid character %s in program text", m);
    return tok(PLD_T_ERROR, here(lx, start));
}

const char *pld_lex_capture_block(pld_lexer_t *lx, uint32_t header_indent, pld_span_t *span)
{
    size_t save = lx->pos;
    while (peekc(lx, 0) == ' ' || peekc(lx, 0) == '\t')
        lx->pos++;
    if (peekc(lx, 0) == '#') {
        add_comment(lx, lx->pos);
    }
    if (peekc(lx, 0) >= 0 && !is_nl(peekc(lx, 0))) {
        lx->pos = save;
        return NULL;
    }
    if (peekc(lx, 0) < 0) {
        lx->pending_newline = 1;
        lx->at_line_start = 1;
        return pld_arena_strndup(&lx->p->arena, "", 0);
    }
    eat_newline(lx);
    size_t body_start = lx->pos;
    uint32_t body_line = lx->line;
    size_t content_end = body_start; /* end of the last content line (after its newline) */
    uint32_t content_end_line = lx->line;
    uint32_t block_indent = 0;
    int have_block = 0;
    for (;;) {
        size_t ls = lx->pos;
        if (ls >= lx->len)
            break;
        uint32_t col = 0;
        size_t i = ls;
        while (i < lx->len && (lx->src[i] == ' ' || lx->src[i] == '\t')) {
            col = lx->src[i] == '\t' ? (col / 8 + 1) * 8 : col + 1;
            i++;
        }
        int blank = i >= lx->len || is_nl((unsigned char)lx->src[i]) || lx->src[i] == '#';
        if (!blank && col <= header_indent)
            break;
        if (!blank && !have_block) {
            have_block = 1;
            block_indent = col;
        }
        /* advance to the next line */
        while (lx->pos < lx->len && !is_nl(peekc(lx, 0)))
            lx->pos++;
        if (lx->pos < lx->len)
            eat_newline(lx);
        if (!blank) {
            content_end = lx->pos;
            content_end_line = lx->line;
        }
    }
    /* rewind to just after the last content line: trailing blank/comment lines
     * belong to what follows */
    lx->pos = content_end;
    lx->line = content_end_line;
    lx->line_start = content_end;
    lx->pending_newline = 1;
    lx->at_line_start = 1;
    if (span) {
        span->off = (uint32_t)body_start;
        span->len = (uint32_t)(content_end - body_start);
        span->line = body_line;
        span->col = 1;
    }
    /* dedent by block_indent columns */
    pld_buf_t b;
    pld_buf_init(&b);
    size_t i = body_start;
    while (i < content_end) {
        uint32_t col = 0;
        while (i < content_end && col < block_indent && (lx->src[i] == ' ' || lx->src[i] == '\t')) {
            col = lx->src[i] == '\t' ? (col / 8 + 1) * 8 : col + 1;
            i++;
        }
        size_t e = i;
        while (e < content_end && !is_nl((unsigned char)lx->src[e]))
            e++;
        pld_buf_putn(&b, lx->src + i, e - i);
        pld_buf_putc(&b, '\n');
        if (e < content_end && lx->src[e] == '\r' && e + 1 < content_end && lx->src[e + 1] == '\n')
            e++;
        i = e + 1;
    }
    const char *r = pld_arena_strndup(&lx->p->arena, b.p ? b.p : "", b.len);
    if (!r || b.oom)
        lx->p->diags.oom = 1;
    pld_buf_fini(&b);
    return r ? r : "";
}
