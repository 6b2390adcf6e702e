/* fuzz_npy.c - libFuzzer harness for the .npy reader (pld_npy_parse) and the
 * input-generator spec parser (pld_npy_generate).
 *
 * Input modes, chosen by the first byte:
 *   0xFF N rest   OOM mode: pld_mem_fail_after(N), then parse `rest`; the
 *                 parse must succeed or fail cleanly (PLD_E_NOMEM or a usage
 *                 error), never crash or leak.
 *   0xFE D rest   generator mode: `rest` (cut at 63 bytes) is a spec for
 *                 pld_npy_generate over 16 elements of dtype D % PLD_DT__COUNT.
 *   anything else the bytes are a .npy image for pld_npy_parse.
 * A successful parse must describe its data exactly (rank <= 8, bytes equal
 * to prod(shape) * itemsize, a supported dtype); otherwise abort() so the
 * fuzzer saves the input. Every failure must leave a message.
 *
 * Built like fuzz_parse: with -fsanitize=fuzzer (PLD_FUZZ=ON) and with
 * replay_main.c as fuzz_npy_replay (CTest fuzz_npy_replay_seeds). */
#include "pld_mem.h"
#include "pld_npy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_npy: contract broken: %s\n", what);
    abort();
}

static void check_parse(const uint8_t *data, size_t size, int oom)
{
    pld_npy_t a;
    char err[512] = "";
    pld_status_t st = pld_npy_parse(data, size, &a, err, sizeof err);
    if (st != PLD_OK) {
        if (a.data || a.rank || a.bytes)
            fail("a failed parse left data in out");
        if (strncmp(err, "<memory>: ", 10) != 0 || err[10] == '\0')
            fail("a failed parse left no message");
        if (st != PLD_E_USAGE && !(oom && st == PLD_E_NOMEM))
            fail("unexpected status");
        return;
    }
    if (a.rank < 0 || a.rank > PLD_NPY_MAX_RANK || !a.data || !pld_npy_descr(a.dt))
        fail("bad rank, data or dtype after a successful parse");
    uint64_t n = (uint64_t)pld_dtype_bytes(a.dt);
    for (int i = 0; i < a.rank; i++) {
        if (a.shape[i] < 0)
            fail("negative dim");
        n *= (uint64_t)a.shape[i];
    }
    if (n != a.bytes || a.bytes > size)
        fail("bytes != prod(shape) * itemsize");
    /* touch every byte so ASan checks the allocation size */
    volatile unsigned char sink = 0;
    for (size_t i = 0; i < a.bytes; i++)
        sink ^= ((const unsigned char *)a.data)[i];
    (void)sink;
    pld_npy_fini(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 2 && data[0] == 0xFF) {
        pld_mem_fail_after((long)data[1]);
        check_parse(data + 2, size - 2, 1);
        pld_mem_fail_after(-1);
    } else if (size >= 2 && data[0] == 0xFE) {
        char spec[64];
        size_t n = size - 2 < sizeof spec - 1 ? size - 2 : sizeof spec - 1;
        memcpy(spec, data + 2, n);
        spec[n] = '\0';
        pld_dtype_t dt = (pld_dtype_t)(data[1] % PLD_DT__COUNT);
        uint64_t buf[16];
        char err[256] = "";
        pld_status_t st = pld_npy_generate(spec, dt, buf, 16, err, sizeof err);
        if (st != PLD_OK && (st != PLD_E_USAGE || err[0] == '\0'))
            fail("generator failed without a usage message");
    } else {
        check_parse(data, size, 0);
    }
    return 0;
}
