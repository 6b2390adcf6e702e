/* fuzz_parse.c - libFuzzer harness over the front end.
 *
 * For every input: parse it (never crash, never leak), render the diagnostics
 * (exercises span/caret code on arbitrary text), run the checker when it is
 * linked (PLD_HAVE_CHECK; with P = 4, then again with P unknown when that
 * passed), and for inputs that parse cleanly enforce the
 * printer contract of pld_ast.h: print -> parse -> print is a fixed point.
 * A broken contract calls abort() so the fuzzer saves the input.
 *
 * Inputs starting with the byte 0xFF run in OOM mode instead: byte 1 selects N
 * for pld_mem_fail_after(N) and the rest is the program text; the parse must
 * fail cleanly (or succeed) without crashing or leaking. Setting the
 * environment variable PLD_FUZZ_OOM=0 turns OOM mode off (to look for other
 * bugs while an OOM bug is open).
 *
 * Built two ways: with -fsanitize=fuzzer (PLD_FUZZ=ON, tests/fuzz/run.sh) and
 * with replay_main.c as an ordinary ASan executable that replays saved inputs
 * (CTest fuzz_regress_*). */
#include "pld_mem.h"
#include "pld_parse.h"
#ifdef PLD_HAVE_CHECK
#include "pld_check.h"
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail_contract(const char *what, const pld_buf_t *first, const pld_buf_t *second,
                          const pld_program_t *q)
{
    fprintf(stderr, "fuzz_parse: printer contract broken: %s\n", what);
    fprintf(stderr, "---- first print ----\n%s\n", pld_buf_str(first));
    if (second)
        fprintf(stderr, "---- second print ----\n%s\n", pld_buf_str(second));
    if (q) {
        pld_buf_t d;
        pld_buf_init(&d);
        pld_diag_render(&q->diags, "", &d);
        fprintf(stderr, "---- diagnostics of the reparse ----\n%s\n", pld_buf_str(&d));
        pld_buf_fini(&d);
    }
    abort();
}

/* print -> parse -> print must reproduce the first print exactly. */
static void check_roundtrip(const pld_program_t *p)
{
    pld_buf_t a, b;
    pld_buf_init(&a);
    pld_buf_init(&b);
    pld_ast_print(p, &a);
    if (a.oom) {
        pld_buf_fini(&a);
        return;
    }
    pld_program_t *q = pld_parse_text("<printed>", pld_buf_str(&a), a.len);
    if (!q)
        fail_contract("reparse ran out of memory", &a, NULL, NULL);
    if (pld_diag_has_errors(&q->diags))
        fail_contract("the printed text does not parse", &a, NULL, q);
    pld_ast_print(q, &b);
    if (a.len != b.len || memcmp(pld_buf_str(&a), pld_buf_str(&b), a.len) != 0)
        fail_contract("print(parse(print(p))) != print(p)", &a, &b, q);
    pld_program_destroy(q);
    pld_buf_fini(&a);
    pld_buf_fini(&b);
}

static int oom_mode_enabled(void)
{
    static int enabled = -1;
    if (enabled < 0) {
        const char *e = getenv("PLD_FUZZ_OOM");
        enabled = !(e && strcmp(e, "0") == 0);
    }
    return enabled;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int oom_mode = size >= 2 && data[0] == 0xFF && oom_mode_enabled();
    if (oom_mode) {
        pld_mem_fail_after((long)data[1]);
        data += 2;
        size -= 2;
    }
    pld_program_t *p = pld_parse_text("fuzz.pld", (const char *)data, size);
    if (p) {
#ifdef PLD_HAVE_CHECK
        pld_check_opts_t opts;
        memset(&opts, 0, sizeof opts);
        opts.ranks = 4;
        pld_status_t st = pld_check_program(p, &opts);
        /* the API allows re-checking with other options (the real P at run
         * time): earlier sema results must be replaced without leaks */
        if (st == PLD_OK) {
            opts.ranks = 0;
            (void)pld_check_program(p, &opts);
        }
#endif
        pld_buf_t out;
        pld_buf_init(&out);
        pld_diag_render(&p->diags, "[rank 0/4] ", &out);
        pld_buf_fini(&out);
        if (!oom_mode && p->parsed_ok)
            check_roundtrip(p);
    }
    pld_program_destroy(p);
    pld_mem_fail_after(-1);
    return 0;
}
