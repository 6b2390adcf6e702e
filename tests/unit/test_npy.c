/* test_npy.c - CUnit suite for src/base/pld_npy.c (.npy I/O and the input
 * generators).
 *
 * Byte images that the reader must accept are written out literally here,
 * independently of the writer; expected generator values are literals (the
 * random:7 ones come from tests/data/gen_random_golden.py).
 *
 * Extra modes, used by tests/data/npy_check.py (CTest npy_python_check):
 *   test_npy --write-samples DIR   writes arange_<DT>.npy and random7_<DT>.npy
 *                                  for every dtype with a descr
 *   test_npy --check-samples DIR   reads every DIR/NAME.npy and compares it with
 *                                  NAME.npy.expect ("DT GEN RANK DIMS..." or
 *                                  "error SUBSTRING") */
#include "pld_npy.h"
#include "pld_test.h"

#include <dirent.h>
#include <stdint.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------- */

static char tmpdir[256];

static int suite_init(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/pld_npy_XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(tmpdir) ? 0 : 1;
}

static int suite_clean(void)
{
    DIR *d = opendir(tmpdir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(tmpdir);
    return 0;
}

static const char *tpath(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

static int write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(b, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* Whole file into malloc'd memory; *n its size. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    *n = 0;
    if (!f)
        return NULL;
    unsigned char *b = malloc(1 << 20);
    if (b)
        *n = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

/* A .npy image: "\x93NUMPY", version MAJOR.0, the header length (u16 for 1.x,
 * u32 otherwise) of `header` taken as is, then the data. */
static unsigned char *mkimg(int major, const char *header, size_t hlen, const void *data, size_t dn, size_t *n)
{
    size_t pre = major == 1 ? 10 : 12;
    unsigned char *b = malloc(pre + hlen + dn + 1);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    b[7] = 0;
    for (size_t i = 0; i < pre - 8; i++)
        b[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(b + pre, header, hlen);
    if (dn)
        memcpy(b + pre + hlen, data, dn);
    *n = pre + hlen + dn;
    return b;
}

/* Parses img and checks status, message ("<memory>: " + msg) and that out
 * stays empty. */
static void check_parse_err(const void *img, size_t n, pld_status_t want, const char *msg, int line)
{
    pld_npy_t a;
    char err[512] = "", full[600];
    pld_status_t st = pld_npy_parse(img, n, &a, err, sizeof err);
    snprintf(full, sizeof full, "<memory>: %s", msg);
    int ok = st == want && strcmp(err, full) == 0 && a.data == NULL && a.rank == 0;
    if (!ok)
        fprintf(stderr, "\n  line %d: status %d (want %d)\n    got:  %s\n    want: %s\n", line, (int)st, (int)want, err,
                full);
    CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, (unsigned)line, "parse error and message", __FILE__, "",
                            CU_FALSE);
    pld_npy_fini(&a);
}
#define PARSE_ERR(img, n, st, msg) check_parse_err(img, n, st, msg, __LINE__)

/* A version 1.0 image around header text (no data) must fail with msg. */
static void check_header_err(const char *header, const char *msg, int line)
{
    size_t n;
    unsigned char *b = mkimg(1, header, strlen(header), NULL, 0, &n);
    check_parse_err(b, n, PLD_E_USAGE, msg, line);
    free(b);
}
#define HEADER_ERR(h, msg) check_header_err(h, msg, __LINE__)

/* A header with this descr and shape (3,) must fail with msg. */
static void check_descr_err(const char *descr, const char *msg, int line)
{
    char h[256];
    snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }\n", descr);
    check_header_err(h, msg, line);
}
#define DESCR_ERR(d, msg) check_descr_err(d, msg, __LINE__)

/* Parses a version-1.0 image of `header` + data and returns the status. */
static pld_status_t parse_v1(const char *header, const void *data, size_t dn, pld_npy_t *out)
{
    size_t n;
    char err[512];
    unsigned char *b = mkimg(1, header, strlen(header), data, dn, &n);
    pld_status_t st = pld_npy_parse(b, n, out, err, sizeof err);
    if (st != PLD_OK)
        fprintf(stderr, "\n  unexpected: %s\n", err);
    free(b);
    return st;
}

static int host_le(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

#define SP4 "    "
#define SP8 SP4 SP4
#define SP16 SP8 SP8
#define SP32 SP16 SP16

/* Every dtype with a .npy descr. */
static const pld_dtype_t npy_dtypes[] = {
    PLD_DT_BOOL,   PLD_DT_INT8,   PLD_DT_INT16,  PLD_DT_INT32, PLD_DT_INT64, PLD_DT_INDEX, PLD_DT_UINT8,
    PLD_DT_UINT16, PLD_DT_UINT32, PLD_DT_UINT64, PLD_DT_FP16,  PLD_DT_BF16,  PLD_DT_FP32,  PLD_DT_FP64,
};
#define N_NPY_DTYPES (sizeof npy_dtypes / sizeof npy_dtypes[0])

/* ---- descr ------------------------------------------------------------------ */

static void test_npy_descr_table(void)
{
    static const struct { pld_dtype_t dt; const char *descr; } t[] = {
        {PLD_DT_BOOL, "|b1"},   {PLD_DT_INT8, "|i1"},   {PLD_DT_INT16, "<i2"},  {PLD_DT_INT32, "<i4"},
        {PLD_DT_INT64, "<i8"},  {PLD_DT_INDEX, "<i8"},  {PLD_DT_UINT8, "|u1"},  {PLD_DT_UINT16, "<u2"},
        {PLD_DT_UINT32, "<u4"}, {PLD_DT_UINT64, "<u8"}, {PLD_DT_FP16, "<f2"},   {PLD_DT_FP32, "<f4"},
        {PLD_DT_FP64, "<f8"},   {PLD_DT_BF16, "|V2"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        CU_ASSERT_STRING_EQUAL(pld_npy_descr(t[i].dt), t[i].descr);
    static const pld_dtype_t none[] = {PLD_DT_NONE,      PLD_DT_INT4,     PLD_DT_UINT4,    PLD_DT_FP4,
                                       PLD_DT_FP8E4M3FN, PLD_DT_FP8E5M2,  PLD_DT_FP8E8M0,  PLD_DT_HF4,
                                       PLD_DT_HF8,       PLD_DT_TASK_ID,  PLD_DT__COUNT};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        CU_ASSERT_PTR_NULL(pld_npy_descr(none[i]));
}

/* ---- writer: exact bytes --------------------------------------------------- */

static void check_file_bytes(const char *path, const char *want, size_t wn, int line)
{
    size_t n;
    unsigned char *b = slurp(path, &n);
    int ok = b && n == wn && memcmp(b, want, wn) == 0;
    if (!ok)
        fprintf(stderr, "\n  line %d: %s: %zu bytes, want %zu\n", line, path, n, wn);
    CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, (unsigned)line, "file bytes", __FILE__, "", CU_FALSE);
    free(b);
}

static void test_npy_write_exact_bytes(void)
{
    char err[256] = "";
    static const char w_int32[] =
        "\x93NUMPY\x01\x00\x76\x00"
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }" SP32 SP16 SP8 "  \n"
        "\x00\x00\x00\x00" "\x01\x00\x00\x00" "\x02\x00\x00\x00" "\x03\x00\x00\x00" "\x04\x00\x00\x00"
        "\x05\x00\x00\x00";
    int32_t i32[6] = {0, 1, 2, 3, 4, 5};
    int64_t s23[2] = {2, 3};
    CU_ASSERT_EQUAL(pld_npy_write(tpath("w1.npy"), PLD_DT_INT32, 2, s23, i32, err, sizeof err), PLD_OK);
    check_file_bytes(tpath("w1.npy"), w_int32, sizeof w_int32 - 1, __LINE__);

    static const char w_fp64_0d[] =
        "\x93NUMPY\x01\x00\x76\x00"
        "{'descr': '<f8', 'fortran_order': False, 'shape': (), }" SP32 SP16 SP8 SP4 "  \n"
        "\x00\x00\x00\x00\x00\x00\xf8\x3f";
    double d = 1.5;
    CU_ASSERT_EQUAL(pld_npy_write(tpath("w2.npy"), PLD_DT_FP64, 0, NULL, &d, err, sizeof err), PLD_OK);
    check_file_bytes(tpath("w2.npy"), w_fp64_0d, sizeof w_fp64_0d - 1, __LINE__);

    static const char w_bf16_1d[] =
        "\x93NUMPY\x01\x00\x76\x00"
        "{'descr': '|V2', 'fortran_order': False, 'shape': (5,), }" SP32 SP16 SP8 SP4 "\n"
        "\x00\x00" "\x80\x3f" "\x00\x40" "\x40\x40" "\x80\x40";
    uint16_t bf[5] = {0x0000, 0x3F80, 0x4000, 0x4040, 0x4080};
    int64_t s5[1] = {5};
    CU_ASSERT_EQUAL(pld_npy_write(tpath("w3.npy"), PLD_DT_BF16, 1, s5, bf, err, sizeof err), PLD_OK);
    check_file_bytes(tpath("w3.npy"), w_bf16_1d, sizeof w_bf16_1d - 1, __LINE__);

    static const char w_uint8_4d[] =
        "\x93NUMPY\x01\x00\x76\x00"
        "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2, 1, 3), }" SP32 SP16 SP4 "\n"
        "\x00\x01\x02\x03\x04\x05";
    uint8_t u8[6] = {0, 1, 2, 3, 4, 5};
    int64_t s4[4] = {1, 2, 1, 3};
    CU_ASSERT_EQUAL(pld_npy_write(tpath("w4.npy"), PLD_DT_UINT8, 4, s4, u8, err, sizeof err), PLD_OK);
    check_file_bytes(tpath("w4.npy"), w_uint8_4d, sizeof w_uint8_4d - 1, __LINE__);

    /* INDEX goes out as '<i8' and comes back as INT64. */
    int64_t idx[2] = {-1, 7};
    int64_t s2[1] = {2};
    pld_npy_t a;
    CU_ASSERT_EQUAL(pld_npy_write(tpath("w5.npy"), PLD_DT_INDEX, 1, s2, idx, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(pld_npy_read(tpath("w5.npy"), &a, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(a.dt, PLD_DT_INT64);
    CU_ASSERT_EQUAL(a.bytes, 16);
    CU_ASSERT(a.data && memcmp(a.data, idx, 16) == 0);
    pld_npy_fini(&a);

    /* Zero-size arrays: header only. */
    int64_t s03[2] = {0, 3};
    CU_ASSERT_EQUAL(pld_npy_write(tpath("w6.npy"), PLD_DT_FP32, 2, s03, NULL, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(pld_npy_read(tpath("w6.npy"), &a, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(a.rank, 2);
    CU_ASSERT_EQUAL(a.shape[0], 0);
    CU_ASSERT_EQUAL(a.shape[1], 3);
    CU_ASSERT_EQUAL(a.bytes, 0);
    CU_ASSERT_PTR_NOT_NULL(a.data);
    pld_npy_fini(&a);
}

/* ---- round trip: every dtype, ranks 0..4 ------------------------------------ */

static void test_npy_roundtrip_dtypes_ranks(void)
{
    static const int64_t shapes[5][4] = {{0}, {7}, {3, 5}, {2, 3, 4}, {2, 1, 3, 2}};
    char err[256] = "";
    for (size_t k = 0; k < N_NPY_DTYPES; k++) {
        pld_dtype_t dt = npy_dtypes[k];
        size_t item = (size_t)pld_dtype_bytes(dt);
        for (int rank = 0; rank <= 4; rank++) {
            int64_t numel = 1;
            for (int i = 0; i < rank; i++)
                numel *= shapes[rank][i];
            unsigned char *data = malloc((size_t)numel * item);
            char spec[32];
            snprintf(spec, sizeof spec, "random:%zu", k * 10 + (size_t)rank);
            CU_ASSERT_EQUAL_FATAL(pld_npy_generate(spec, dt, data, numel, err, sizeof err), PLD_OK);
            const char *path = tpath("rt.npy");
            CU_ASSERT_EQUAL(pld_npy_write(path, dt, rank, shapes[rank], data, err, sizeof err), PLD_OK);

            /* Layout: version 1.0, data at a multiple of 64 after a '\n'. */
            size_t n;
            unsigned char *file = slurp(path, &n);
            CU_ASSERT_FATAL(file != NULL && n >= 10);
            size_t hlen = (size_t)file[8] | (size_t)file[9] << 8;
            CU_ASSERT_EQUAL(file[6], 1);
            CU_ASSERT_EQUAL((10 + hlen) % 64, 0);
            CU_ASSERT_EQUAL(file[10 + hlen - 1], '\n');
            CU_ASSERT_EQUAL(n, 10 + hlen + (size_t)numel * item);

            pld_npy_t a;
            CU_ASSERT_EQUAL(pld_npy_read(path, &a, err, sizeof err), PLD_OK);
            CU_ASSERT_EQUAL(a.dt, dt == PLD_DT_INDEX ? PLD_DT_INT64 : dt);
            CU_ASSERT_EQUAL(a.rank, rank);
            for (int i = 0; i < rank; i++)
                CU_ASSERT_EQUAL(a.shape[i], shapes[rank][i]);
            CU_ASSERT_EQUAL(a.bytes, (size_t)numel * item);
            CU_ASSERT(a.data && memcmp(a.data, data, a.bytes) == 0);
            pld_npy_fini(&a);

            /* The same bytes through pld_npy_parse. */
            CU_ASSERT_EQUAL(pld_npy_parse(file, n, &a, err, sizeof err), PLD_OK);
            CU_ASSERT(a.data && a.bytes == (size_t)numel * item && memcmp(a.data, data, a.bytes) == 0);
            pld_npy_fini(&a);
            free(file);
            free(data);
            unlink(path);
        }
    }
}

/* ---- reader: hand-made images ----------------------------------------------- */

static void test_npy_parse_v1_literal(void)
{
    static const char img[] =
        "\x93NUMPY\x01\x00\x76\x00"
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }" SP32 SP16 SP8 SP4 "\n"
        "\x00\x00\x80\x3f" "\x00\x00\x00\xc0" "\x00\x00\x00\x3f";
    pld_npy_t a;
    char err[256] = "";
    CU_ASSERT_EQUAL_FATAL(pld_npy_parse(img, sizeof img - 1, &a, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(a.dt, PLD_DT_FP32);
    CU_ASSERT_EQUAL(a.rank, 1);
    CU_ASSERT_EQUAL(a.shape[0], 3);
    CU_ASSERT_EQUAL(a.bytes, 12);
    const float *f = a.data;
    CU_ASSERT(f[0] == 1.0f && f[1] == -2.0f && f[2] == 0.5f);
    pld_npy_fini(&a);
    CU_ASSERT_PTR_NULL(a.data);
}

static void test_npy_parse_v2_literal(void)
{
    /* Keys reordered, 16-byte alignment (as NumPy < 1.14 wrote). */
    static const char img[] =
        "\x93NUMPY\x02\x00\x44\x00\x00\x00"
        "{'shape': (2, 2), 'fortran_order': False, 'descr': '<i2', }" SP8 "\n"
        "\x01\x00" "\xff\xff" "\x2c\x01" "\xd4\xfe";
    pld_npy_t a;
    char err[256] = "";
    CU_ASSERT_EQUAL_FATAL(pld_npy_parse(img, sizeof img - 1, &a, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(a.dt, PLD_DT_INT16);
    CU_ASSERT_EQUAL(a.rank, 2);
    CU_ASSERT(a.shape[0] == 2 && a.shape[1] == 2);
    const int16_t *v = a.data;
    CU_ASSERT(v[0] == 1 && v[1] == -1 && v[2] == 300 && v[3] == -300);
    pld_npy_fini(&a);
}

static void test_npy_parse_v3_literal(void)
{
    /* Double quotes, no trailing comma, no padding and no final newline. */
    static const char img[] =
        "\x93NUMPY\x03\x00\x37\x00\x00\x00"
        "{\"descr\": \"<u8\", \"shape\": (2,), \"fortran_order\": False}"
        "\x01\x00\x00\x00\x00\x00\x00\x00" "\xff\xff\xff\xff\xff\xff\xff\xff";
    pld_npy_t a;
    char err[256] = "";
    CU_ASSERT_EQUAL_FATAL(pld_npy_parse(img, sizeof img - 1, &a, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(a.dt, PLD_DT_UINT64);
    CU_ASSERT_EQUAL(a.rank, 1);
    CU_ASSERT_EQUAL(a.shape[0], 2);
    const uint64_t *v = a.data;
    CU_ASSERT(v[0] == 1 && v[1] == UINT64_MAX);
    pld_npy_fini(&a);
}

static void test_npy_parse_header_variants(void)
{
    static const unsigned char six[6] = {1, 2, 3, 4, 5, 6};
    static const char *const ok[] = {
        /* every key order */
        "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }\n",
        "{'descr': '|u1', 'shape': (2, 3), 'fortran_order': False, }\n",
        "{'fortran_order': False, 'descr': '|u1', 'shape': (2, 3), }\n",
        "{'fortran_order': False, 'shape': (2, 3), 'descr': '|u1', }\n",
        "{'shape': (2, 3), 'descr': '|u1', 'fortran_order': False, }\n",
        "{'shape': (2, 3), 'fortran_order': False, 'descr': '|u1'}\n",
        /* whitespace and padding variants */
        "{'descr':'|u1','fortran_order':False,'shape':(2,3)}",
        "  {  'descr'  :  '|u1'  ,\t'fortran_order' : False ,\n 'shape' : ( 2 , 3 , ) , }  \r\n",
        "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }" SP32 SP32 SP32 SP32 "\n",
        "{\"descr\": '|u1', 'fortran_order': False, \"shape\": (2, 3)}\n",
        /* Python 2 long literals */
        "{'descr': '|u1', 'fortran_order': False, 'shape': (2L, 3L), }\n",
        /* byte order irrelevant for one-byte types */
        "{'descr': '<u1', 'fortran_order': False, 'shape': (2, 3), }\n",
        "{'descr': '>u1', 'fortran_order': False, 'shape': (2, 3), }\n",
        "{'descr': '=u1', 'fortran_order': False, 'shape': (2, 3), }\n",
        "{'descr': 'u1', 'fortran_order': False, 'shape': (6, 1), }\n",
        "{'descr': '|i1', 'fortran_order': False, 'shape': (1, 6), }\n",
        "{'descr': '|b1', 'fortran_order': False, 'shape': (6,), }\n",
        "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }\n",
        "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }\n",
        "{'descr': '|V2', 'fortran_order': False, 'shape': (3,), }\n",
        "{'descr': '<V2', 'fortran_order': False, 'shape': (3, 1), }\n",
        "{'descr': '=V2', 'fortran_order': False, 'shape': (1, 3), }\n",
    };
    static const pld_dtype_t want_dt[] = {
        PLD_DT_UINT8, PLD_DT_UINT8, PLD_DT_UINT8, PLD_DT_UINT8, PLD_DT_UINT8, PLD_DT_UINT8, PLD_DT_UINT8,
        PLD_DT_UINT8, PLD_DT_UINT8, PLD_DT_UINT8, PLD_DT_UINT8, PLD_DT_UINT8, PLD_DT_UINT8, PLD_DT_UINT8,
        PLD_DT_UINT8, PLD_DT_INT8,  PLD_DT_BOOL,  PLD_DT_UINT16, PLD_DT_FP16, PLD_DT_BF16, PLD_DT_BF16,
        PLD_DT_BF16,
    };
    CU_ASSERT_EQUAL_FATAL(sizeof ok / sizeof ok[0], sizeof want_dt / sizeof want_dt[0]);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        pld_npy_t a;
        if (strstr(ok[i], "'=V2") && !host_le())
            continue; /* '=' means big-endian on a big-endian host */
        pld_status_t st = parse_v1(ok[i], six, 6, &a);
        CU_ASSERT_EQUAL(st, PLD_OK);
        if (st != PLD_OK) {
            fprintf(stderr, "  header %zu: %s\n", i, ok[i]);
            continue;
        }
        CU_ASSERT_EQUAL(a.dt, want_dt[i]);
        int64_t numel = 1;
        for (int d = 0; d < a.rank; d++)
            numel *= a.shape[d];
        CU_ASSERT_EQUAL((size_t)numel * (size_t)pld_dtype_bytes(a.dt), 6);
        CU_ASSERT(memcmp(a.data, six, 6) == 0);
        if (i < 11) {
            CU_ASSERT(a.rank == 2 && a.shape[0] == 2 && a.shape[1] == 3);
        }
        pld_npy_fini(&a);
    }

    /* 0-d arrays: () with one element; 8-d is the limit. */
    pld_npy_t a;
    float one = 1.0f;
    CU_ASSERT_EQUAL(parse_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", &one, 4, &a), PLD_OK);
    CU_ASSERT(a.rank == 0 && a.bytes == 4 && *(float *)a.data == 1.0f);
    pld_npy_fini(&a);
    CU_ASSERT_EQUAL(parse_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1), }\n", &one, 4,
                             &a), PLD_OK);
    CU_ASSERT_EQUAL(a.rank, 8);
    pld_npy_fini(&a);
    /* A zero dim makes an empty array even next to large dims. */
    CU_ASSERT_EQUAL(parse_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 1000000000), }\n", NULL, 0, &a),
                    PLD_OK);
    CU_ASSERT(a.rank == 2 && a.bytes == 0 && a.shape[1] == 1000000000);
    pld_npy_fini(&a);
}

/* ---- reader: rejections ----------------------------------------------------- */

static void test_npy_reject_preamble(void)
{
    size_t n;
    PARSE_ERR("", 0, PLD_E_USAGE, "empty file (not a .npy file)");
    PARSE_ERR(NULL, 0, PLD_E_USAGE, "empty file (not a .npy file)");
    PARSE_ERR("abc", 3, PLD_E_USAGE, "not a .npy file (bad magic string)");
    PARSE_ERR("\x93NUMPZ\x01\x00\x10\x00", 10, PLD_E_USAGE, "not a .npy file (bad magic string)");
    PARSE_ERR("PK\x03\x04\x14\x00\x00\x00\x00\x00", 10, PLD_E_USAGE,
              "not a .npy file (a zip archive; .npz files are not supported)");
    PARSE_ERR("\x93NUM", 4, PLD_E_USAGE, "truncated file: 4 bytes is too short for a .npy preamble");
    PARSE_ERR("\x93NUMPY\x01\x00\x10", 9, PLD_E_USAGE, "truncated file: 9 bytes is too short for a .npy preamble");
    PARSE_ERR("\x93NUMPY\x02\x00\x10\x00", 10, PLD_E_USAGE,
              "truncated file: 10 bytes is too short for a .npy preamble");
    PARSE_ERR("\x93NUMPY\x04\x00\x10\x00\x00\x00", 12, PLD_E_USAGE,
              "unsupported .npy format version 4.0 (expected 1.0, 2.0 or 3.0)");
    PARSE_ERR("\x93NUMPY\x01\x01\x10\x00", 10, PLD_E_USAGE,
              "unsupported .npy format version 1.1 (expected 1.0, 2.0 or 3.0)");
    PARSE_ERR("\x93NUMPY\x00\x00\x10\x00", 10, PLD_E_USAGE,
              "unsupported .npy format version 0.0 (expected 1.0, 2.0 or 3.0)");
    /* header length beyond the buffer / beyond the limit */
    PARSE_ERR("\x93NUMPY\x01\x00\x64\x00{'descr'", 18, PLD_E_USAGE,
              "truncated header: header length 100 but only 8 bytes follow");
    PARSE_ERR("\x93NUMPY\x02\x00\x70\x11\x01\x00{", 13, PLD_E_USAGE,
              "header length 70000 exceeds the limit of 65536 bytes");
    PARSE_ERR("\x93NUMPY\x03\x00\xff\xff\xff\xff{", 13, PLD_E_USAGE,
              "header length 4294967295 exceeds the limit of 65536 bytes");
    /* A v2 header of exactly the limit is accepted (then fails on content). */
    char *big = malloc(PLD_NPY_MAX_HEADER_BYTES);
    memset(big, ' ', PLD_NPY_MAX_HEADER_BYTES);
    static const char h[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (), }";
    memcpy(big, h, sizeof h - 1);
    float f = 2.0f;
    unsigned char *b = mkimg(2, big, PLD_NPY_MAX_HEADER_BYTES, &f, 4, &n);
    pld_npy_t a;
    CU_ASSERT_EQUAL(pld_npy_parse(b, n, &a, NULL, 0), PLD_OK);
    CU_ASSERT(a.bytes == 4 && *(float *)a.data == 2.0f);
    pld_npy_fini(&a);
    free(b);
    free(big);
}

static void test_npy_reject_header(void)
{
    HEADER_ERR("", "malformed header: expected '{' starting the header dict, found the end of the header");
    HEADER_ERR("   \n", "malformed header: expected '{' starting the header dict, found the end of the header");
    HEADER_ERR("[1]", "malformed header: expected '{' starting the header dict at header byte 0, found '[1]'");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), ",
               "malformed header: expected a quoted key or '}', found the end of the header");
    HEADER_ERR("{descr: '<f4', 'fortran_order': False, 'shape': (3,)}",
               "malformed header: expected a quoted key or '}' at header byte 1, found 'descr: '<f4''");
    HEADER_ERR("{'descr' '<f4', 'fortran_order': False, 'shape': (3,)}",
               "malformed header: expected ':' after a key at header byte 9, found ''<f4', 'fort'");
    HEADER_ERR("{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}",
               "malformed header: expected ',' or '}' after a value at header byte 16, found ''fortran_ord'");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}x",
               "malformed header: expected only whitespace after the header dict at header byte 55, found 'x'");
    {
        static const char nul_pad[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}\n\0\0";
        size_t n;
        unsigned char *b = mkimg(1, nul_pad, sizeof nul_pad - 1, NULL, 0, &n);
        PARSE_ERR(b, n, PLD_E_USAGE,
                  "malformed header: expected only whitespace after the header dict at header byte 56, found "
                  "'\\x00\\x00'");
        free(b);
    }
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
               "header has an unknown key 'extra' at header byte 56 (expected 'descr', 'fortran_order', 'shape')");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'shape': (3,)}",
               "header repeats the key 'shape'");
    HEADER_ERR("{'descr': '<f4', 'shape': (3,)}", "header is missing the key 'fortran_order'");
    HEADER_ERR("{'fortran_order': False, 'shape': (3,)}", "header is missing the key 'descr'");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False}", "header is missing the key 'shape'");
    HEADER_ERR("{}", "header is missing the key 'descr'");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': false, 'shape': (3,)}",
               "malformed header: expected True or False for 'fortran_order' at header byte 34, found "
               "'false, 'shap'");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}",
               "malformed header: expected True or False for 'fortran_order' at header byte 34, found "
               "'0, 'shape': '");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2), }\n",
               "Fortran-order arrays are not supported; save with np.ascontiguousarray");
    HEADER_ERR("{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (3,)}",
               "structured dtypes (a list 'descr') are not supported");
    HEADER_ERR("{'descr': 3, 'fortran_order': False, 'shape': (3,)}",
               "malformed header: expected a quoted string for 'descr' at header byte 10, found '3, 'fortran_'");
    HEADER_ERR("{'descr': '<f4, 'fortran_order': False, 'shape': (3,)}",
               "malformed header: expected ',' or '}' after a value at header byte 17, found 'fortran_orde'");
    HEADER_ERR("{'descr': '<f4", "malformed header: unterminated string starting at header byte 10");
    HEADER_ERR("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (3,)}",
               "malformed header: unsupported escape in a string at header byte 13");
    HEADER_ERR("{'descr': '<f\n4', 'fortran_order': False, 'shape': (3,)}",
               "malformed header: unsupported newline in a string at header byte 13");
    HEADER_ERR("{\"descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
               "malformed header: unterminated string starting at header byte 1");
}

static void test_npy_reject_shape(void)
{
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (5)}",
               "malformed header: 'shape' (N) is not a tuple; a one-dimensional shape is written (N,)");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}",
               "malformed header: expected a tuple for 'shape' (a list is not a valid shape) at header byte 50, "
               "found '[2, 3]}'");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': 5}",
               "malformed header: expected '(' starting the 'shape' tuple at header byte 50, found '5}'");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}",
               "malformed header: expected ',' or ')' in 'shape' at header byte 53, found '3)}'");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}",
               "malformed header: expected a non-negative integer in 'shape' at header byte 53, found ',)}'");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3.0)}",
               "malformed header: expected ',' or ')' in 'shape' at header byte 55, found '.0)}'");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3",
               "malformed header: expected ',' or ')' in 'shape', found the end of the header");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1)}",
               "negative dimension in 'shape' at header byte 54");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808,)}",
               "dimension 0 of 'shape' does not fit in 64 bits");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 99999999999999999999999,)}",
               "dimension 1 of 'shape' does not fit in 64 bits");
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}",
               "'shape' has more than 8 dimensions (pldrun's limit)");
    /* products: overflow of 64 bits, and the 1 TiB limit */
    HEADER_ERR("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
               "array too large (the shape exceeds the limit of 1099511627776 bytes)");
    HEADER_ERR("{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807, 9223372036854775807, 2)}",
               "array too large (the shape exceeds the limit of 1099511627776 bytes)");
    HEADER_ERR("{'descr': '|u1', 'fortran_order': False, 'shape': (1099511627777,)}",
               "array too large (the shape exceeds the limit of 1099511627776 bytes)");
    HEADER_ERR("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 9223372036854775807)}",
               "array too large (the shape exceeds the limit of 1099511627776 bytes)");
    /* exactly the limit: accepted as a shape, then the data is missing (and
     * nothing was allocated for it) */
    HEADER_ERR("{'descr': '|u1', 'fortran_order': False, 'shape': (1099511627776,)}",
               "truncated data: the shape needs 1099511627776 bytes after the header, the file has 0");
}

static void test_npy_reject_dtypes(void)
{
    DESCR_ERR("<c8", "unsupported dtype '<c8' (complex)");
    DESCR_ERR("<c16", "unsupported dtype '<c16' (complex)");
    DESCR_ERR("<U3", "unsupported dtype '<U3' (unicode string)");
    DESCR_ERR("|S5", "unsupported dtype '|S5' (byte string)");
    DESCR_ERR("|O", "unsupported dtype '|O' (Python object)");
    DESCR_ERR("<M8[ns]", "unsupported dtype '<M8[ns]' (datetime)");
    DESCR_ERR("<m8[s]", "unsupported dtype '<m8[s]' (timedelta)");
    DESCR_ERR("|V4", "unsupported dtype '|V4' (raw void records; only 2-byte '|V2' is read, as bfloat16)");
    DESCR_ERR("<f16", "unsupported dtype '<f16' (long double)");
    DESCR_ERR("<f12", "unsupported dtype '<f12' (long double)");
    DESCR_ERR("<f1", "unsupported dtype '<f1' (no float of that size)");
    DESCR_ERR("<i3", "unsupported dtype '<i3' (no integer of that size)");
    DESCR_ERR("<u16", "unsupported dtype '<u16' (no integer of that size)");
    DESCR_ERR("|b2", "unsupported dtype '|b2' (bool must be 'b1')");
    DESCR_ERR("", "unsupported dtype '' (not a NumPy type string like '<f4')");
    DESCR_ERR("<", "unsupported dtype '<' (not a NumPy type string like '<f4')");
    DESCR_ERR("float32", "unsupported dtype 'float32' (not a NumPy type string like '<f4')");
    DESCR_ERR("<f4 ", "unsupported dtype '<f4 ' (not a NumPy type string like '<f4')");
    DESCR_ERR("<i0000004", "unsupported dtype '<i0000004' (not a NumPy type string like '<f4')");
    DESCR_ERR("<f\x01", "unsupported dtype '<f\\x01' (not a NumPy type string like '<f4')");
    DESCR_ERR("<x4", "unsupported dtype '<x4' (not a NumPy type string like '<f4')");
    DESCR_ERR("<ffffffffffffffffffffffffffffffffffffffffffffffffffff",
              "unsupported dtype '<fffffffffffffffffffffffffffffffffffffff...' (not a NumPy type string like '<f4')");
    DESCR_ERR(">f4", "big-endian dtype '>f4' is not supported (pldrun reads little-endian only); "
                     "convert with arr.astype(arr.dtype.newbyteorder('<'))");
    DESCR_ERR(">i8", "big-endian dtype '>i8' is not supported (pldrun reads little-endian only); "
                     "convert with arr.astype(arr.dtype.newbyteorder('<'))");
    DESCR_ERR(">V2", "big-endian dtype '>V2' is not supported (pldrun reads little-endian only); "
                     "convert with arr.astype(arr.dtype.newbyteorder('<'))");
    DESCR_ERR("|i4", "dtype '|i4' has no byte order ('|') but is 4 bytes wide; expected '<i4'");
    DESCR_ERR("|f2", "dtype '|f2' has no byte order ('|') but is 2 bytes wide; expected '<f2'");
}

static void test_npy_reject_data_length(void)
{
    static const char hdr[] = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }\n";
    int32_t v[7] = {0, 1, 2, 3, 4, 5, 6};
    size_t n;
    char err[512] = "";
    unsigned char *b = mkimg(1, hdr, sizeof hdr - 1, v, 23, &n);
    PARSE_ERR(b, n, PLD_E_USAGE, "truncated data: the shape needs 24 bytes after the header, the file has 23");
    PARSE_ERR(b, n - 23, PLD_E_USAGE, "truncated data: the shape needs 24 bytes after the header, the file has 0");
    CU_ASSERT_FATAL(write_bytes(tpath("short.npy"), b, n));
    free(b);
    b = mkimg(1, hdr, sizeof hdr - 1, v, 25, &n);
    PARSE_ERR(b, n, PLD_E_USAGE,
              "trailing bytes after the data: the shape needs 24 bytes after the header, the file has 25");
    CU_ASSERT_FATAL(write_bytes(tpath("long.npy"), b, n));
    /* the header alone, cut short */
    PARSE_ERR(b, 30, PLD_E_USAGE, "truncated header: header length 60 but only 20 bytes follow");
    CU_ASSERT_FATAL(write_bytes(tpath("cut.npy"), b, 30));
    free(b);

    /* The same through files (messages name the path). */
    pld_npy_t a;
    char want[1024];
    CU_ASSERT_EQUAL(pld_npy_read(tpath("short.npy"), &a, err, sizeof err), PLD_E_USAGE);
    snprintf(want, sizeof want, "%s: truncated data: the shape needs 24 bytes after the header, the file has 23",
             tpath("short.npy"));
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_PTR_NULL(a.data);
    CU_ASSERT_EQUAL(pld_npy_read(tpath("long.npy"), &a, err, sizeof err), PLD_E_USAGE);
    snprintf(want, sizeof want,
             "%s: trailing bytes after the data: the shape needs 24 bytes after the header, the file has 25",
             tpath("long.npy"));
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_EQUAL(pld_npy_read(tpath("cut.npy"), &a, err, sizeof err), PLD_E_USAGE);
    snprintf(want, sizeof want, "%s: truncated header: header length 60 but only 20 bytes follow", tpath("cut.npy"));
    CU_ASSERT_STRING_EQUAL(err, want);
    unlink(tpath("short.npy"));
    unlink(tpath("long.npy"));
    unlink(tpath("cut.npy"));
}

/* Streams (no fstat size): the data checks happen while reading. */
static void test_npy_read_fifo(void)
{
    static const char hdr[] = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }\n";
    int32_t v[7] = {0, 1, 2, 3, 4, 5, 6};
    const char *fifo = tpath("fifo.npy");
    for (int extra = -1; extra <= 1; extra++) {
        size_t n;
        unsigned char *b = mkimg(1, hdr, sizeof hdr - 1, v, (size_t)(24 + extra), &n);
        unlink(fifo);
        CU_ASSERT_FATAL(mkfifo(fifo, 0600) == 0);
        fflush(NULL);
        pid_t pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
            FILE *f = fopen(fifo, "wb");
            if (f) {
                fwrite(b, 1, n, f);
                fclose(f);
            }
            _exit(0);
        }
        pld_npy_t a;
        char err[512] = "", want[1024];
        pld_status_t st = pld_npy_read(fifo, &a, err, sizeof err);
        int status;
        waitpid(pid, &status, 0);
        if (extra == 0) {
            CU_ASSERT_EQUAL(st, PLD_OK);
            CU_ASSERT(a.bytes == 24 && memcmp(a.data, v, 24) == 0);
        } else if (extra < 0) {
            CU_ASSERT_EQUAL(st, PLD_E_USAGE);
            snprintf(want, sizeof want,
                     "%s: truncated data: the shape needs 24 bytes after the header, the file has 23", fifo);
            CU_ASSERT_STRING_EQUAL(err, want);
        } else {
            CU_ASSERT_EQUAL(st, PLD_E_USAGE);
            snprintf(want, sizeof want,
                     "%s: trailing bytes after the data: the shape needs 24 bytes after the header", fifo);
            CU_ASSERT_STRING_EQUAL(err, want);
        }
        pld_npy_fini(&a);
        free(b);
        unlink(fifo);
    }
}

static void test_npy_read_errors(void)
{
    pld_npy_t a;
    char err[512] = "", want[1024];
    CU_ASSERT_EQUAL(pld_npy_read(tpath("missing.npy"), &a, err, sizeof err), PLD_E_IO);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", tpath("missing.npy"));
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_PTR_NULL(a.data);

    CU_ASSERT_EQUAL(pld_npy_read(tmpdir, &a, err, sizeof err), PLD_E_IO);
    snprintf(want, sizeof want, "%s: read error: Is a directory", tmpdir);
    CU_ASSERT_STRING_EQUAL(err, want);

    /* A usage error in a file names the file. */
    CU_ASSERT_FATAL(write_bytes(tpath("x.npy"), "\x93NUMPY\x01\x00\x3a\x00"
                                                "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n"
                                                "\0\0\0\0\0\0\0\0", 76));
    CU_ASSERT_EQUAL(pld_npy_read(tpath("x.npy"), &a, err, sizeof err), PLD_E_USAGE);
    snprintf(want, sizeof want, "%s: unsupported dtype '<c8' (complex)", tpath("x.npy"));
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_FATAL(write_bytes(tpath("x.npy"), "", 0));
    CU_ASSERT_EQUAL(pld_npy_read(tpath("x.npy"), &a, err, sizeof err), PLD_E_USAGE);
    snprintf(want, sizeof want, "%s: empty file (not a .npy file)", tpath("x.npy"));
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_FATAL(write_bytes(tpath("x.npy"), "\x93NUMPY\x03\x00\x10", 9));
    CU_ASSERT_EQUAL(pld_npy_read(tpath("x.npy"), &a, err, sizeof err), PLD_E_USAGE);
    snprintf(want, sizeof want, "%s: truncated file: 9 bytes is too short for a .npy preamble", tpath("x.npy"));
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_FATAL(write_bytes(tpath("x.npy"), "\x93NUMPY\x03\x00\x10\x00\x00", 11));
    CU_ASSERT_EQUAL(pld_npy_read(tpath("x.npy"), &a, err, sizeof err), PLD_E_USAGE);
    snprintf(want, sizeof want, "%s: truncated file: 11 bytes is too short for a .npy preamble", tpath("x.npy"));
    CU_ASSERT_STRING_EQUAL(err, want);
    unlink(tpath("x.npy"));
}

static void test_npy_write_errors(void)
{
    char err[512] = "", want[1024];
    int64_t shape[9] = {2, 2, 1, 1, 1, 1, 1, 1, 1};
    float data[4] = {0};
    const char *p = tpath("we.npy");
    CU_ASSERT_EQUAL(pld_npy_write(p, PLD_DT_INT4, 1, shape, data, err, sizeof err), PLD_E_USAGE);
    snprintf(want, sizeof want, "%s: cannot write dtype INT4 to .npy (NumPy has no such type)", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_EQUAL(pld_npy_write(p, PLD_DT_TASK_ID, 1, shape, data, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_EQUAL(pld_npy_write(p, PLD_DT_FP8E4M3FN, 1, shape, data, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_EQUAL(pld_npy_write(p, PLD_DT_FP32, 9, shape, data, err, sizeof err), PLD_E_USAGE);
    snprintf(want, sizeof want, "%s: cannot write an array of rank 9 (0..8)", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_EQUAL(pld_npy_write(p, PLD_DT_FP32, -1, shape, data, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_EQUAL(pld_npy_write(p, PLD_DT_FP32, 2, NULL, data, err, sizeof err), PLD_E_USAGE);
    int64_t neg[2] = {2, -3};
    CU_ASSERT_EQUAL(pld_npy_write(p, PLD_DT_FP32, 2, neg, data, err, sizeof err), PLD_E_USAGE);
    snprintf(want, sizeof want, "%s: negative dimension -3 in the shape", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    int64_t huge[2] = {INT64_MAX, 3};
    CU_ASSERT_EQUAL(pld_npy_write(p, PLD_DT_FP32, 2, huge, data, err, sizeof err), PLD_E_USAGE);
    snprintf(want, sizeof want, "%s: array too large (the shape exceeds the limit of 1099511627776 bytes)", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_EQUAL(pld_npy_write(p, PLD_DT_FP32, 2, shape, NULL, err, sizeof err), PLD_E_USAGE);
    snprintf(want, sizeof want, "%s: no data to write", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    struct stat sb;
    CU_ASSERT(stat(p, &sb) != 0); /* nothing was created */

    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.npy", tmpdir);
    CU_ASSERT_EQUAL(pld_npy_write(bad, PLD_DT_FP32, 2, shape, data, err, sizeof err), PLD_E_IO);
    snprintf(want, sizeof want, "%s: cannot open for writing: No such file or directory", bad);
    CU_ASSERT_STRING_EQUAL(err, want);

    /* ENOSPC at fwrite/fclose; the device must not be removed afterwards. */
    if (access("/dev/full", W_OK) == 0) {
        CU_ASSERT_EQUAL(pld_npy_write("/dev/full", PLD_DT_FP32, 2, shape, data, err, sizeof err), PLD_E_IO);
        CU_ASSERT_STRING_EQUAL(err, "/dev/full: cannot write: No space left on device");
        CU_ASSERT(access("/dev/full", F_OK) == 0);
    }
}

/* Number of directory entries of tmpdir whose name starts with prefix. */
static int count_entries(const char *prefix)
{
    int n = 0;
    DIR *d = opendir(tmpdir);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* Nothing is lost: outputs go through a temporary file renamed over the
 * path, an existing file is replaced whole, a directory is refused without
 * touching it, and pld_npy_check_writable answers before a run what the write
 * would find, leaving nothing behind. */
static void test_npy_write_atomic(void)
{
    const int64_t shape[1] = {3};
    const float data[3] = {1, 2, 3};
    char err[512], want[700];
    const char *p = tpath("atomic.npy");
    char path[512];
    snprintf(path, sizeof path, "%s", p);
    CU_ASSERT_FATAL(write_bytes(path, "old", 3));
    CU_ASSERT_EQUAL(pld_npy_check_writable(path, err, sizeof err), PLD_OK);
    size_t n = 0;
    unsigned char *b = slurp(path, &n);
    CU_ASSERT(b && n == 3 && memcmp(b, "old", 3) == 0); /* the check leaves the file alone */
    free(b);
    CU_ASSERT_EQUAL(pld_npy_write(path, PLD_DT_FP32, 1, shape, data, err, sizeof err), PLD_OK);
    pld_npy_t a;
    CU_ASSERT_EQUAL_FATAL(pld_npy_read(path, &a, err, sizeof err), PLD_OK);
    CU_ASSERT(a.rank == 1 && a.shape[0] == 3 && memcmp(a.data, data, sizeof data) == 0);
    pld_npy_fini(&a);
    CU_ASSERT_EQUAL(count_entries("atomic.npy.tmp"), 0); /* no temporary file left */
    struct stat sb;
    const mode_t mask = umask(0);
    umask(mask);
    CU_ASSERT(stat(path, &sb) == 0 && (sb.st_mode & 0777) == (0666 & ~mask));

    /* a directory: refused by the check and by the write, and kept */
    const char *dp = tpath("outdir.npy");
    char dir[512];
    snprintf(dir, sizeof dir, "%s", dp);
    CU_ASSERT_FATAL(mkdir(dir, 0700) == 0);
    snprintf(want, sizeof want, "%s: cannot open for writing: Is a directory", dir);
    CU_ASSERT_EQUAL(pld_npy_check_writable(dir, err, sizeof err), PLD_E_IO);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_EQUAL(pld_npy_write(dir, PLD_DT_FP32, 1, shape, data, err, sizeof err), PLD_E_IO);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode));
    rmdir(dir);

    /* a missing directory: the check fails like the write would */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.npy", tmpdir);
    snprintf(want, sizeof want, "%s: cannot open for writing: No such file or directory", bad);
    CU_ASSERT_EQUAL(pld_npy_check_writable(bad, err, sizeof err), PLD_E_IO);
    CU_ASSERT_STRING_EQUAL(err, want);

    /* a write that fails part-way (the file size limit: EFBIG) keeps the old
     * file whole and leaves no temporary file */
    {
        enum { BIG = 1 << 16 };
        float *big = calloc(BIG, sizeof *big);
        const int64_t bshape[1] = {BIG};
        struct rlimit old_lim, lim;
        void (*old_sig)(int) = signal(SIGXFSZ, SIG_IGN);
        CU_ASSERT_FATAL(big && getrlimit(RLIMIT_FSIZE, &old_lim) == 0);
        lim = old_lim;
        lim.rlim_cur = 4096;
        CU_ASSERT_FATAL(setrlimit(RLIMIT_FSIZE, &lim) == 0);
        pld_status_t st = pld_npy_write(path, PLD_DT_FP32, 1, bshape, big, err, sizeof err);
        setrlimit(RLIMIT_FSIZE, &old_lim);
        signal(SIGXFSZ, old_sig);
        free(big);
        CU_ASSERT_EQUAL(st, PLD_E_IO);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot write: File too large"));
        CU_ASSERT_EQUAL_FATAL(pld_npy_read(path, &a, err, sizeof err), PLD_OK);
        CU_ASSERT(a.rank == 1 && a.shape[0] == 3 && memcmp(a.data, data, sizeof data) == 0);
        pld_npy_fini(&a);
        CU_ASSERT_EQUAL(count_entries("atomic.npy.tmp"), 0);
    }

    /* a new path: the check creates nothing */
    const char *np = tpath("fresh.npy");
    CU_ASSERT_EQUAL(pld_npy_check_writable(np, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(count_entries("fresh.npy"), 0);
    /* a device is written in place and never removed */
    if (access("/dev/null", W_OK) == 0) {
        CU_ASSERT_EQUAL(pld_npy_check_writable("/dev/null", err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(pld_npy_write("/dev/null", PLD_DT_FP32, 1, shape, data, err, sizeof err), PLD_OK);
        CU_ASSERT(stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode));
    }
}

/* err may be NULL, or too small: messages are cut, never overflow. */
static void test_npy_err_buffer(void)
{
    pld_npy_t a;
    char err[8];
    memset(err, 'x', sizeof err);
    CU_ASSERT_EQUAL(pld_npy_parse("abc", 3, &a, NULL, 0), PLD_E_USAGE);
    CU_ASSERT_EQUAL(pld_npy_parse("abc", 3, &a, err, 0), PLD_E_USAGE);
    CU_ASSERT_EQUAL(err[0], 'x');
    CU_ASSERT_EQUAL(pld_npy_parse("abc", 3, &a, err, 1), PLD_E_USAGE);
    CU_ASSERT_EQUAL(err[0], '\0');
    CU_ASSERT_EQUAL(pld_npy_parse("abc", 3, &a, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_STRING_EQUAL(err, "<memory");
    char err12[12];
    CU_ASSERT_EQUAL(pld_npy_parse("abc", 3, &a, err12, sizeof err12), PLD_E_USAGE); /* prefix + 1 char */
    CU_ASSERT_STRING_EQUAL(err12, "<memory>: n");
    CU_ASSERT_EQUAL(pld_npy_generate("bogus", PLD_DT_FP32, NULL, 0, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_STRING_EQUAL(err, "unknown");
    CU_ASSERT_EQUAL(pld_npy_generate("bogus", PLD_DT_FP32, NULL, 0, NULL, 0), PLD_E_USAGE);
    pld_npy_fini(NULL);
    pld_npy_fini(&a);
    pld_npy_fini(&a);
}

/* ---- generators -------------------------------------------------------------- */

static void test_npy_generate_zeros_ones(void)
{
    unsigned char buf[64];
    char err[256];
    for (size_t k = 0; k < N_NPY_DTYPES; k++) {
        pld_dtype_t dt = npy_dtypes[k];
        size_t item = (size_t)pld_dtype_bytes(dt);
        memset(buf, 0xAB, sizeof buf);
        CU_ASSERT_EQUAL(pld_npy_generate("zeros", dt, buf, 3, err, sizeof err), PLD_OK);
        for (size_t i = 0; i < 3 * item; i++)
            CU_ASSERT_EQUAL(buf[i], 0);
        CU_ASSERT_EQUAL(buf[3 * item], 0xAB);
        memset(buf, 0xAB, sizeof buf);
        CU_ASSERT_EQUAL(pld_npy_generate("ones", dt, buf, 3, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(buf[3 * item], 0xAB);
        for (size_t i = 0; i < 3; i++) {
            unsigned char *e = buf + i * item;
            switch (dt) {
            case PLD_DT_FP16: CU_ASSERT(e[0] == 0x00 && e[1] == 0x3C); break;
            case PLD_DT_BF16: CU_ASSERT(e[0] == 0x80 && e[1] == 0x3F); break;
            case PLD_DT_FP32: CU_ASSERT(memcmp(e, "\x00\x00\x80\x3f", 4) == 0); break;
            case PLD_DT_FP64: CU_ASSERT(memcmp(e, "\x00\x00\x00\x00\x00\x00\xf0\x3f", 8) == 0); break;
            default: {
                uint64_t v = 0;
                memcpy(&v, e, item); /* little-endian host assumed by the literals above */
                CU_ASSERT_EQUAL(v, 1);
                break;
            }
            }
        }
    }
}

static void test_npy_generate_arange(void)
{
    char err[256];
    int8_t i8[300];
    CU_ASSERT_EQUAL(pld_npy_generate("arange", PLD_DT_INT8, i8, 300, err, sizeof err), PLD_OK);
    CU_ASSERT(i8[0] == 0 && i8[1] == 1 && i8[126] == 126 && i8[127] == 127);
    CU_ASSERT(i8[128] == -128 && i8[129] == -127 && i8[255] == -1 && i8[256] == 0 && i8[299] == 43);
    uint8_t u8[300];
    CU_ASSERT_EQUAL(pld_npy_generate("arange", PLD_DT_UINT8, u8, 300, err, sizeof err), PLD_OK);
    CU_ASSERT(u8[127] == 127 && u8[128] == 128 && u8[255] == 255 && u8[256] == 0 && u8[299] == 43);
    uint8_t b[5];
    CU_ASSERT_EQUAL(pld_npy_generate("arange", PLD_DT_BOOL, b, 5, err, sizeof err), PLD_OK);
    CU_ASSERT(b[0] == 0 && b[1] == 1 && b[2] == 0 && b[3] == 1 && b[4] == 0);

    int16_t *i16 = malloc(32770 * sizeof *i16);
    CU_ASSERT_EQUAL(pld_npy_generate("arange", PLD_DT_INT16, i16, 32770, err, sizeof err), PLD_OK);
    CU_ASSERT(i16[32767] == 32767 && i16[32768] == -32768 && i16[32769] == -32767);
    free(i16);

    /* FP16: integers above 2048 round to even; 65520 and up overflow to inf. */
    uint16_t *h = malloc(65530 * sizeof *h);
    CU_ASSERT_EQUAL(pld_npy_generate("arange", PLD_DT_FP16, h, 65530, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(h[0], 0x0000);
    CU_ASSERT_EQUAL(h[1], 0x3C00);
    CU_ASSERT_EQUAL(h[3], 0x4200);
    CU_ASSERT_EQUAL(h[2047], 0x67FF);
    CU_ASSERT_EQUAL(h[2048], 0x6800);
    CU_ASSERT_EQUAL(h[2049], 0x6800); /* tie -> even */
    CU_ASSERT_EQUAL(h[2050], 0x6801);
    CU_ASSERT_EQUAL(h[2051], 0x6802); /* tie -> even */
    CU_ASSERT_EQUAL(h[65504], 0x7BFF);
    CU_ASSERT_EQUAL(h[65519], 0x7BFF);
    CU_ASSERT_EQUAL(h[65520], 0x7C00);
    CU_ASSERT_EQUAL(h[65529], 0x7C00);
    free(h);

    uint16_t bf[300];
    CU_ASSERT_EQUAL(pld_npy_generate("arange", PLD_DT_BF16, bf, 300, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(bf[1], 0x3F80);
    CU_ASSERT_EQUAL(bf[3], 0x4040);
    CU_ASSERT_EQUAL(bf[255], 0x437F);
    CU_ASSERT_EQUAL(bf[256], 0x4380);
    CU_ASSERT_EQUAL(bf[257], 0x4380); /* tie -> even */
    CU_ASSERT_EQUAL(bf[258], 0x4381);
    CU_ASSERT_EQUAL(bf[259], 0x4382); /* tie -> even */
    CU_ASSERT_EQUAL(bf[261], 0x4382);
    CU_ASSERT_EQUAL(bf[262], 0x4383);

    float f[4];
    CU_ASSERT_EQUAL(pld_npy_generate("arange", PLD_DT_FP32, f, 4, err, sizeof err), PLD_OK);
    CU_ASSERT(f[0] == 0.0f && f[1] == 1.0f && f[2] == 2.0f && f[3] == 3.0f);
    double d[3];
    CU_ASSERT_EQUAL(pld_npy_generate("arange", PLD_DT_FP64, d, 3, err, sizeof err), PLD_OK);
    CU_ASSERT(d[0] == 0.0 && d[1] == 1.0 && d[2] == 2.0);
    uint64_t u64[3];
    CU_ASSERT_EQUAL(pld_npy_generate("arange", PLD_DT_UINT64, u64, 3, err, sizeof err), PLD_OK);
    CU_ASSERT(u64[0] == 0 && u64[2] == 2);
    int64_t idx[3];
    CU_ASSERT_EQUAL(pld_npy_generate("arange", PLD_DT_INDEX, idx, 3, err, sizeof err), PLD_OK);
    CU_ASSERT(idx[0] == 0 && idx[2] == 2);
}

/* Pinned by tests/data/gen_random_golden.py 7 8 (do not edit by hand). */
static const uint16_t golden_fp16[8] = {0xB30D, 0xBBBB, 0x3A6A, 0x314F, 0xAE16, 0xB802, 0xAC1A, 0xB580};
static const uint16_t golden_bf16[8] = {0xBE62, 0xBF77, 0x3F4D, 0x3E2A, 0xBDC3, 0xBF00, 0xBD83, 0xBEB0};
static const uint32_t golden_fp32[8] = {0xBE61A0F8U, 0xBF776788U, 0x3F4D3080U, 0x3E29D758U,
                                        0xBDC2CC50U, 0xBF004A84U, 0xBD8343C0U, 0xBEB00CA8U};
static const uint64_t golden_fp64[8] = {0xBFCC341E1BA6CDF8ULL, 0xBFEEECF0CA02F0E8ULL, 0x3FE9A610202EAC4AULL,
                                        0x3FC53AEB70673E28ULL, 0xBFB85989332BC3C0ULL, 0xBFE009505E4D1056ULL,
                                        0xBFB06876BD987A60ULL, 0xBFD60194D7617EA4ULL};
static const int64_t golden_int[8] = {-2, -8, 7, 1, -1, -4, -1, -3};
static const int64_t golden_uint[8] = {6, 0, 14, 9, 7, 3, 7, 5};
static const int64_t golden_bool[8] = {0, 0, 1, 1, 0, 0, 0, 0};

static void test_npy_generate_random_golden(void)
{
    char err[256];
    uint16_t h[8];
    uint32_t f[8];
    uint64_t d[8];
    CU_ASSERT_EQUAL(pld_npy_generate("random:7", PLD_DT_FP16, h, 8, err, sizeof err), PLD_OK);
    CU_ASSERT(memcmp(h, golden_fp16, sizeof h) == 0);
    CU_ASSERT_EQUAL(pld_npy_generate("random:7", PLD_DT_BF16, h, 8, err, sizeof err), PLD_OK);
    CU_ASSERT(memcmp(h, golden_bf16, sizeof h) == 0);
    CU_ASSERT_EQUAL(pld_npy_generate("random:7", PLD_DT_FP32, f, 8, err, sizeof err), PLD_OK);
    CU_ASSERT(memcmp(f, golden_fp32, sizeof f) == 0);
    float f0;
    memcpy(&f0, &f[0], 4);
    CU_ASSERT(f0 == -0.22034060955047607f);
    CU_ASSERT_EQUAL(pld_npy_generate("random:7", PLD_DT_FP64, d, 8, err, sizeof err), PLD_OK);
    CU_ASSERT(memcmp(d, golden_fp64, sizeof d) == 0);

    static const pld_dtype_t ints[] = {PLD_DT_INT8,  PLD_DT_INT16,  PLD_DT_INT32,  PLD_DT_INT64,  PLD_DT_INDEX,
                                       PLD_DT_UINT8, PLD_DT_UINT16, PLD_DT_UINT32, PLD_DT_UINT64, PLD_DT_BOOL};
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        pld_dtype_t dt = ints[k];
        unsigned char buf[64];
        size_t item = (size_t)pld_dtype_bytes(dt);
        CU_ASSERT_EQUAL(pld_npy_generate("random:7", dt, buf, 8, err, sizeof err), PLD_OK);
        const int64_t *want = dt == PLD_DT_BOOL ? golden_bool : k >= 5 ? golden_uint : golden_int;
        for (size_t i = 0; i < 8; i++) {
            int64_t v;
            switch (item) {
            case 1: v = k >= 5 ? (int64_t)((uint8_t *)buf)[i] : ((int8_t *)buf)[i]; break;
            case 2: v = k >= 5 ? (int64_t)((uint16_t *)buf)[i] : ((int16_t *)buf)[i]; break;
            case 4: v = k >= 5 ? (int64_t)((uint32_t *)buf)[i] : ((int32_t *)buf)[i]; break;
            default: v = ((int64_t *)buf)[i]; break;
            }
            CU_ASSERT_EQUAL(v, want[i]);
        }
    }

    /* Ranges over a longer run: floats in [-1, 1], ints in [-8, 8], uints in [0, 16). */
    enum { N = 20000 };
    float *fl = malloc(N * sizeof *fl);
    int8_t *i8 = malloc(N);
    uint16_t *u16 = malloc(N * sizeof *u16);
    CU_ASSERT_EQUAL(pld_npy_generate("random:123", PLD_DT_FP32, fl, N, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(pld_npy_generate("random:123", PLD_DT_INT8, i8, N, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(pld_npy_generate("random:123", PLD_DT_UINT16, u16, N, err, sizeof err), PLD_OK);
    int seen_i[17] = {0}, seen_u[16] = {0}, in_range = 1;
    for (int i = 0; i < N; i++) {
        in_range &= fl[i] >= -1.0f && fl[i] < 1.0f && i8[i] >= -8 && i8[i] <= 8 && u16[i] < 16;
        if (i8[i] >= -8 && i8[i] <= 8)
            seen_i[i8[i] + 8] = 1;
        if (u16[i] < 16)
            seen_u[u16[i]] = 1;
    }
    CU_ASSERT(in_range);
    for (int i = 0; i < 17; i++)
        CU_ASSERT(seen_i[i]);
    for (int i = 0; i < 16; i++)
        CU_ASSERT(seen_u[i]);
    free(fl);
    free(i8);
    free(u16);

    /* Different seeds differ; the largest seed is accepted. */
    uint32_t a[4], b[4];
    CU_ASSERT_EQUAL(pld_npy_generate("random:0", PLD_DT_FP32, a, 4, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(pld_npy_generate("random:18446744073709551615", PLD_DT_FP32, b, 4, err, sizeof err), PLD_OK);
    CU_ASSERT(memcmp(a, b, sizeof a) != 0);
}

static void test_npy_generate_errors(void)
{
    char err[256] = "";
    float f[4];
    CU_ASSERT_EQUAL(pld_npy_generate("linspace", PLD_DT_FP32, f, 4, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_STRING_EQUAL(err, "unknown generator 'linspace' (expected arange, zeros, ones or random:SEED)");
    CU_ASSERT_EQUAL(pld_npy_generate("", PLD_DT_FP32, f, 4, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_STRING_EQUAL(err, "unknown generator '' (expected arange, zeros, ones or random:SEED)");
    CU_ASSERT_EQUAL(pld_npy_generate(NULL, PLD_DT_FP32, f, 4, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_EQUAL(pld_npy_generate("Zeros", PLD_DT_FP32, f, 4, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_EQUAL(pld_npy_generate("randomly", PLD_DT_FP32, f, 4, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_EQUAL(pld_npy_generate("random", PLD_DT_FP32, f, 4, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_STRING_EQUAL(err, "generator 'random' needs a seed: random:SEED");
    CU_ASSERT_EQUAL(pld_npy_generate("random:", PLD_DT_FP32, f, 4, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_STRING_EQUAL(err, "generator 'random:' needs a seed: random:SEED");
    CU_ASSERT_EQUAL(pld_npy_generate("random:-1", PLD_DT_FP32, f, 4, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_STRING_EQUAL(err, "bad seed in 'random:-1' (expected a decimal integer 0..18446744073709551615)");
    CU_ASSERT_EQUAL(pld_npy_generate("random:12x", PLD_DT_FP32, f, 4, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_EQUAL(pld_npy_generate("random:7 ", PLD_DT_FP32, f, 4, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_EQUAL(pld_npy_generate("random:18446744073709551616", PLD_DT_FP32, f, 4, err, sizeof err),
                    PLD_E_USAGE);
    CU_ASSERT_STRING_EQUAL(err, "seed in 'random:18446744073709551616' does not fit in 64 bits");
    CU_ASSERT_EQUAL(pld_npy_generate("random:\x01", PLD_DT_FP32, f, 4, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_STRING_EQUAL(err, "bad seed in 'random:\\x01' (expected a decimal integer 0..18446744073709551615)");
    CU_ASSERT_EQUAL(pld_npy_generate("arange", PLD_DT_INT4, f, 4, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_STRING_EQUAL(err, "generator 'arange' does not support dtype INT4");
    CU_ASSERT_EQUAL(pld_npy_generate("zeros", PLD_DT_TASK_ID, f, 1, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_EQUAL(pld_npy_generate("ones", PLD_DT_FP8E5M2, f, 1, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_EQUAL(pld_npy_generate("ones", PLD_DT_FP32, f, -1, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_STRING_EQUAL(err, "generator 'ones': bad element count -1");
    CU_ASSERT_EQUAL(pld_npy_generate("ones", PLD_DT_FP32, NULL, 2, err, sizeof err), PLD_E_USAGE);
    CU_ASSERT_STRING_EQUAL(err, "generator 'ones': bad element count 2");
    /* count 0 with no data validates only */
    CU_ASSERT_EQUAL(pld_npy_generate("random:5", PLD_DT_BF16, NULL, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(pld_npy_generate("zeros", PLD_DT_FP64, NULL, 0, err, sizeof err), PLD_OK);
}

/* ---- out of memory ------------------------------------------------------------ */

static void test_npy_oom_loop(void)
{
    static const int64_t shape[2] = {4, 8};
    float data[32];
    char err[512];
    CU_ASSERT_EQUAL_FATAL(pld_npy_generate("random:3", PLD_DT_FP32, data, 32, err, sizeof err), PLD_OK);
    const char *p = tpath("oom.npy");
    CU_ASSERT_EQUAL_FATAL(pld_npy_write(p, PLD_DT_FP32, 2, shape, data, err, sizeof err), PLD_OK);
    size_t n;
    unsigned char *img = slurp(p, &n);
    CU_ASSERT_FATAL(img != NULL);

    for (int mode = 0; mode < 3; mode++) {
        int done = 0;
        for (long k = 0; k < 50 && !done; k++) {
            pld_npy_t a;
            err[0] = '\0';
            pld_mem_fail_after(k);
            pld_status_t st = mode == 0   ? pld_npy_read(p, &a, err, sizeof err)
                              : mode == 1 ? pld_npy_parse(img, n, &a, err, sizeof err)
                                          : pld_npy_write(p, PLD_DT_FP32, 2, shape, data, err, sizeof err);
            long refused = pld_mem_failures();
            pld_mem_fail_after(-1);
            if (st == PLD_OK) {
                CU_ASSERT_EQUAL(refused, 0);
                if (mode < 2) {
                    CU_ASSERT(a.bytes == sizeof data && memcmp(a.data, data, sizeof data) == 0);
                    pld_npy_fini(&a);
                }
                done = 1;
            } else {
                CU_ASSERT_EQUAL(st, PLD_E_NOMEM);
                CU_ASSERT(refused > 0);
                CU_ASSERT_PTR_NOT_NULL(strstr(err, "out of memory"));
                CU_ASSERT_PTR_NULL(a.data);
            }
        }
        CU_ASSERT(done);
    }
    free(img);
    unlink(p);
}

/* ---- sample files for npy_check.py ------------------------------------------- */

static int write_samples(const char *dir)
{
    static const int64_t shapes[5][4] = {{0}, {7}, {3, 5}, {2, 3, 4}, {2, 1, 3, 2}};
    static const int64_t rnd_small[2] = {4, 100}, rnd_big[2] = {512, 512};
    char err[512], path[1024];
    for (size_t k = 0; k < N_NPY_DTYPES; k++) {
        pld_dtype_t dt = npy_dtypes[k];
        size_t item = (size_t)pld_dtype_bytes(dt);
        for (int g = 0; g < 2; g++) {
            int rank = g ? 2 : (int)(k % 5);
            const int64_t *shape = g ? (dt == PLD_DT_FP16 || dt == PLD_DT_BF16 ? rnd_big : rnd_small) : shapes[k % 5];
            int64_t numel = 1;
            for (int i = 0; i < rank; i++)
                numel *= shape[i];
            void *data = malloc((size_t)numel * item);
            snprintf(path, sizeof path, "%s/%s_%s.npy", dir, g ? "random7" : "arange", pld_dtype_name(dt));
            if (!data || pld_npy_generate(g ? "random:7" : "arange", dt, data, numel, err, sizeof err) != PLD_OK ||
                pld_npy_write(path, dt, rank, shape, data, err, sizeof err) != PLD_OK) {
                fprintf(stderr, "test_npy: %s\n", err);
                free(data);
                return 1;
            }
            free(data);
        }
    }
    printf("wrote %zu sample files to %s\n", 2 * N_NPY_DTYPES, dir);
    return 0;
}

static int check_one_sample(const char *dir, const char *name)
{
    char path[1024], line[512], err[512];
    snprintf(path, sizeof path, "%s/%s.expect", dir, name);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(line, sizeof line, f)) {
        if (f)
            fclose(f);
        fprintf(stderr, "%s: no expectation\n", path);
        return 1;
    }
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    snprintf(path, sizeof path, "%s/%s", dir, name);
    pld_npy_t a;
    pld_status_t st = pld_npy_read(path, &a, err, sizeof err);
    int bad = 0;
    if (strncmp(line, "error ", 6) == 0) {
        bad = st == PLD_OK || !strstr(err, line + 6);
        if (bad)
            fprintf(stderr, "%s: expected an error containing '%s', got status %d: %s\n", name, line + 6, (int)st,
                    st == PLD_OK ? "" : err);
        pld_npy_fini(&a);
        return bad;
    }
    char dtname[32], gen[64];
    int rank, used;
    if (sscanf(line, "%31s %63s %d%n", dtname, gen, &rank, &used) != 3 || rank < 0 || rank > PLD_NPY_MAX_RANK) {
        fprintf(stderr, "%s: bad expectation '%s'\n", name, line);
        pld_npy_fini(&a);
        return 1;
    }
    if (st != PLD_OK) {
        fprintf(stderr, "%s: %s\n", name, err);
        return 1;
    }
    int64_t shape[PLD_NPY_MAX_RANK], numel = 1;
    const char *s = line + used;
    for (int i = 0; i < rank; i++) {
        char *end;
        shape[i] = strtoll(s, &end, 10);
        s = end;
        numel *= shape[i];
    }
    bad = a.dt != pld_dtype_from_name(dtname) || a.rank != rank;
    for (int i = 0; i < rank && !bad; i++)
        bad = a.shape[i] != shape[i];
    size_t bytes = (size_t)numel * (size_t)pld_dtype_bytes(a.dt);
    void *want = malloc(bytes ? bytes : 1);
    if (!bad)
        bad = a.bytes != bytes || pld_npy_generate(gen, a.dt, want, numel, err, sizeof err) != PLD_OK ||
              memcmp(want, a.data, bytes) != 0;
    if (bad)
        fprintf(stderr, "%s: contents differ from '%s' (read %s rank %d, %zu bytes)\n", name, line,
                pld_dtype_name(a.dt), a.rank, a.bytes);
    free(want);
    pld_npy_fini(&a);
    return bad;
}

static int check_samples(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "test_npy: cannot open %s\n", dir);
        return 1;
    }
    int bad = 0, count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".npy") != 0)
            continue;
        bad |= check_one_sample(dir, e->d_name);
        count++;
    }
    closedir(d);
    printf("checked %d files\n", count);
    return bad;
}

/* ---- registration --------------------------------------------------------------- */

static CU_TestInfo tests[] = {
    {"test_npy_descr_table", test_npy_descr_table},
    {"test_npy_write_exact_bytes", test_npy_write_exact_bytes},
    {"test_npy_roundtrip_dtypes_ranks", test_npy_roundtrip_dtypes_ranks},
    {"test_npy_parse_v1_literal", test_npy_parse_v1_literal},
    {"test_npy_parse_v2_literal", test_npy_parse_v2_literal},
    {"test_npy_parse_v3_literal", test_npy_parse_v3_literal},
    {"test_npy_parse_header_variants", test_npy_parse_header_variants},
    {"test_npy_reject_preamble", test_npy_reject_preamble},
    {"test_npy_reject_header", test_npy_reject_header},
    {"test_npy_reject_shape", test_npy_reject_shape},
    {"test_npy_reject_dtypes", test_npy_reject_dtypes},
    {"test_npy_reject_data_length", test_npy_reject_data_length},
    {"test_npy_read_fifo", test_npy_read_fifo},
    {"test_npy_read_errors", test_npy_read_errors},
    {"test_npy_write_errors", test_npy_write_errors},
    {"test_npy_write_atomic", test_npy_write_atomic},
    {"test_npy_err_buffer", test_npy_err_buffer},
    {"test_npy_generate_zeros_ones", test_npy_generate_zeros_ones},
    {"test_npy_generate_arange", test_npy_generate_arange},
    {"test_npy_generate_random_golden", test_npy_generate_random_golden},
    {"test_npy_generate_errors", test_npy_generate_errors},
    {"test_npy_oom_loop", test_npy_oom_loop},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"npy", suite_init, suite_clean, NULL, NULL, tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-samples") == 0)
        return write_samples(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--check-samples") == 0)
        return check_samples(argv[2]);
    return pld_test_main(suites);
}
