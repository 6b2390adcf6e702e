/* pld_lex.h - indentation-aware lexer for the Python-syntax IR text.
 *
 * Produces Python's token stream: NEWLINE at the end of each logical line,
 * INDENT/DEDENT from the indentation stack (tabs advance to the next multiple
 * of 8), implicit line joining inside (), [], {}, backslash continuation,
 * comments (collected for the parser), every string and number form of
 * docs/ir_text_grammar.md §5. Errors go to the program's diagnostic list. */
#ifndef PLD_LEX_H
#define PLD_LEX_H

#include "pld_ast.h"

typedef enum pld_tok_kind {
    PLD_T_EOF,
    PLD_T_NEWLINE,
    PLD_T_INDENT,
    PLD_T_DEDENT,
    PLD_T_NAME,
    PLD_T_INT,
    PLD_T_FLOAT,
    PLD_T_STRING,
    PLD_T_ERROR,  /* a lexical error was reported; the parser recovers */
    /* keywords */
    PLD_T_FALSE, PLD_T_NONE, PLD_T_TRUE, PLD_T_AND, PLD_T_AS, PLD_T_ASSERT, PLD_T_ASYNC,
    PLD_T_AWAIT, PLD_T_BREAK, PLD_T_CLASS, PLD_T_CONTINUE, PLD_T_DEF, PLD_T_DEL, PLD_T_ELIF,
    PLD_T_ELSE, PLD_T_EXCEPT, PLD_T_FINALLY, PLD_T_FOR, PLD_T_FROM, PLD_T_GLOBAL, PLD_T_IF,
    PLD_T_IMPORT, PLD_T_IN, PLD_T_IS, PLD_T_LAMBDA, PLD_T_NONLOCAL, PLD_T_NOT, PLD_T_OR,
    PLD_T_PASS, PLD_T_RAISE, PLD_T_RETURN, PLD_T_TRY, PLD_T_WHILE, PLD_T_WITH, PLD_T_YIELD,
    /* operators and delimiters */
    PLD_T_PLUS, PLD_T_MINUS, PLD_T_STAR, PLD_T_SLASH, PLD_T_DSLASH, PLD_T_PERCENT, PLD_T_DSTAR,
    PLD_T_LSHIFT, PLD_T_RSHIFT, PLD_T_AMP, PLD_T_PIPE, PLD_T_CARET, PLD_T_TILDE,
    PLD_T_LT, PLD_T_GT, PLD_T_LE, PLD_T_GE, PLD_T_EQEQ, PLD_T_NE, PLD_T_ASSIGN,
    PLD_T_LPAREN, PLD_T_RPAREN, PLD_T_LBRACK, PLD_T_RBRACK, PLD_T_LBRACE, PLD_T_RBRACE,
    PLD_T_COMMA, PLD_T_COLON, PLD_T_DOT, PLD_T_ARROW, PLD_T_AT, PLD_T_ELLIPSIS, PLD_T_SEMI,
    PLD_T_AUGASSIGN, /* +=, -=, ... (lexed so the parser can reject them clearly) */
    PLD_T_WALRUS,    /* := */
    PLD_T__COUNT
} pld_tok_kind_t;

typedef struct pld_token {
    pld_tok_kind_t kind;
    pld_span_t span;
    const char *text;    /* NAME: interned; STRING: decoded value (arena) */
    size_t text_len;     /* STRING: decoded length */
    int64_t ival;        /* INT */
    double fval;         /* FLOAT */
    int str_prefix_f;    /* STRING: had an f prefix */
} pld_token_t;

typedef struct pld_lexer pld_lexer_t;

/* Creates a lexer over p->src. Returns owned (free with pld_lex_destroy), NULL on OOM. */
pld_lexer_t *pld_lex_create(pld_program_t *p);
void pld_lex_destroy(pld_lexer_t *lx);

/* Returns the next token. After EOF, keeps returning EOF. */
pld_token_t pld_lex_next(pld_lexer_t *lx);

/* Comments seen since the last call (whole-line comments and trailing ones),
 * in source order, with the line each started on; the list is arena memory.
 * Returns the comments that start before line `before_line` and removes them. */
pld_comment_t *pld_lex_take_comments(pld_lexer_t *lx, uint32_t before_line);

/* Raw block capture for SubWorker bodies. Call when the last token returned was
 * the ':' ending a `def` header whose `def`/decorator line had indentation
 * `header_indent`. Skips the rest of the line, then captures every following
 * line that is blank or indented deeper than header_indent, dedented by the
 * block's first indentation. Returns the text (arena) or NULL when the body is
 * on the same line (then nothing is consumed and normal lexing goes on). */
const char *pld_lex_capture_block(pld_lexer_t *lx, uint32_t header_indent, pld_span_t *span);

/* The span of len bytes at byte offset off, with its line and column counted
 * as for tokens (line breaks \n, \r\n, \r; tabs to 8; a UTF-8 character is one
 * column), for diagnostics about raw bytes of the text. */
pld_span_t pld_lex_span_at(const pld_lexer_t *lx, size_t off, size_t len);

/* Indentation (in columns) of the line holding byte offset off. */
uint32_t pld_lex_line_indent(const pld_lexer_t *lx, uint32_t off);

/* Current bracket depth, and the span of the innermost open bracket. */
int pld_lex_depth(const pld_lexer_t *lx);
pld_span_t pld_lex_open_bracket(const pld_lexer_t *lx);
/* Forgets every open bracket (after the parser reported one as never closed). */
void pld_lex_reset_brackets(pld_lexer_t *lx);

/* For an error on a later line than a still-open bracket: looks ahead through
 * the rest of the text (strings and comments skipped). When every bracket open
 * now is closed later, changes nothing and returns 0: the error is real and
 * recovery goes on inside the brackets. Otherwise sets *open (may be NULL) to
 * the innermost bracket that stays open to the end of the text, forgets every
 * open bracket, skips silently the closers still due for them, and returns 1.
 * Once the error limit is reached it gives up without looking ahead. */
int pld_lex_give_up_brackets(pld_lexer_t *lx, pld_span_t *open);

/* Ends the token stream after a limit error: pld_lex_next returns only EOF from
 * now on (no DEDENT, no bracket errors). pld_lex_stopped tells whether it did. */
void pld_lex_stop(pld_lexer_t *lx);
int pld_lex_stopped(const pld_lexer_t *lx);

/* Human-readable description of a token kind ("'('", "name", "newline", ...). */
const char *pld_tok_name(pld_tok_kind_t k);

/* Limits enforced with a clear error. */
#define PLD_LEX_MAX_INDENT 100  /* nested indentation levels */
#define PLD_LEX_MAX_BRACKETS 200

#endif
