#include "pld_parse.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
int main(int argc, char **argv)
{
    (void)MPI_Init;
    const char *path = argv[argc-1];
    FILE *f = fopen(path, "rb");
    if (!f) return 74;
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1); fread(s, 1, (size_t)n, f); fclose(f);
    pld_program_t *p = pld_parse_text(path, s, (size_t)n);
    free(s);
    pld_buf_t b; pld_buf_init(&b);
    pld_diag_render(&p->diags, "", &b);
    fputs(pld_buf_str(&b), stderr);
    pld_buf_reset(&b);
    if (argc > 2 && strcmp(argv[1], "--print") == 0) { pld_ast_print(p, &b); fputs(pld_buf_str(&b), stdout); }
    pld_buf_fini(&b);
    int rc = pld_diag_has_errors(&p->diags) ? 65 : 0;
    pld_program_destroy(p);
    return rc;
}
