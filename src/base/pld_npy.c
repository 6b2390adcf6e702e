/* pld_npy.c - NumPy .npy reader/writer and the quick input generators.
 *
 * Format (NEP 1, numpy.lib.format), as implemented here:
 *
 *   "\x93NUMPY" major minor      8 bytes
 *   HEADER_LEN                   u16 LE (1.0) or u32 LE (2.0, 3.0)
 *   header                       HEADER_LEN bytes: a Python dict literal
 *                                {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 *                                padded with spaces and ended by '\n' (the
 *                                reader accepts any trailing whitespace and any
 *                                alignment; the writer aligns the data to 64)
 *   data                         exactly prod(shape) * itemsize bytes, C order
 *
 * The header parser is a small recursive-descent reader for the subset of
 * Python literals NumPy writes: strings in ' or ", True/False, tuples of
 * non-negative integers (Python 2's "3L" suffix accepted), any key order, any
 * whitespace, an optional trailing comma. Every read is bounds-checked against
 * HEADER_LEN; the shape product is checked against PLD_NPY_MAX_DATA_BYTES and
 * SIZE_MAX before anything is allocated, and the data length must match it
 * exactly (truncated files and trailing bytes are both rejected).
 *
 * Data is little-endian on disk and native in memory (byte-swapped on a
 * big-endian host). The generators round FP16/BF16 with the kernels'
 * conversions (pld_dtype.h), so generated and computed values agree bit for
 * bit. */
#include "pld_npy.h"

#include "pld_dtype.h" /* pld_f32_to_f16 / pld_f32_to_bf16: the one RNE conversion of pldrun */
#include "pld_mem.h"
#include "pld_size.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__GNUC__) || defined(__clang__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* Name used in messages of pld_npy_parse (there is no file). */
#define MEM_NAME "<memory>"

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* ---- messages ------------------------------------------------------------- */

/* err = "NAME: message" (just the message when name is NULL), truncated to
 * errn; nothing when err is NULL. */
static void PRINTF_LIKE(4, 5) set_err(char *err, size_t errn, const char *name, const char *fmt, ...)
{
    if (!err || errn == 0)
        return;
    int n = name ? snprintf(err, errn, "%s: ", name) : 0;
    if (n < 0 || (size_t)n >= errn)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errn - (size_t)n, fmt, ap);
    va_end(ap);
}

/* Copies untrusted text for a message: printable ASCII kept, the rest as
 * \xNN, cut after 40 source bytes with "...". dst holds at least 180 bytes. */
static void quote_text(char *dst, size_t dn, const unsigned char *s, size_t n)
{
    size_t o = 0, lim = n > 40 ? 40 : n;
    for (size_t i = 0; i < lim && o + 5 < dn; i++) {
        unsigned char c = s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            dst[o++] = (char)c;
        else
            o += (size_t)snprintf(dst + o, dn - o, "\\x%02x", c);
    }
    if (lim < n && o + 4 < dn) {
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    dst[o < dn ? o : dn - 1] = '\0';
}

/* ---- dtypes --------------------------------------------------------------- */

const char *pld_npy_descr(pld_dtype_t dt)
{
    switch (dt) {
    case PLD_DT_BOOL: return "|b1";
    case PLD_DT_INT8: return "|i1";
    case PLD_DT_INT16: return "<i2";
    case PLD_DT_INT32: return "<i4";
    case PLD_DT_INT64: return "<i8";
    case PLD_DT_INDEX: return "<i8";
    case PLD_DT_UINT8: return "|u1";
    case PLD_DT_UINT16: return "<u2";
    case PLD_DT_UINT32: return "<u4";
    case PLD_DT_UINT64: return "<u8";
    case PLD_DT_FP16: return "<f2";
    case PLD_DT_FP32: return "<f4";
    case PLD_DT_FP64: return "<f8";
    case PLD_DT_BF16: return "|V2";
    default: return NULL;
    }
}

static int host_is_le(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static void swap_elems(unsigned char *p, size_t bytes, size_t item)
{
    if (item < 2)
        return;
    for (size_t i = 0; i + item <= bytes; i += item)
        for (size_t a = 0, b = item - 1; a < b; a++, b--) {
            unsigned char t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

/* What an unsupported NumPy kind letter is, for the message. */
static const char *kind_what(char k)
{
    switch (k) {
    case 'c': return "complex";
    case 'U': return "unicode string";
    case 'S': case 'a': return "byte string";
    case 'O': return "Python object";
    case 'M': return "datetime";
    case 'm': return "timedelta";
    case 'V': return "raw void records; only 2-byte '|V2' is read, as bfloat16";
    case 'b': return "bool must be 'b1'";
    case 'f': return "no float of that size";
    case 'i': case 'u': return "no integer of that size";
    default: return "not a NumPy type string like '<f4'";
    }
}

/* descr (s, n bytes, untrusted) -> dtype. Accepts an optional byte-order
 * char, a kind letter and a decimal size: b1, i1/2/4/8, u1/2/4/8, f2/4/8 and
 * V2 (bfloat16). */
static pld_status_t decode_descr(const char *name, const unsigned char *s, size_t n, pld_dtype_t *dt, char *err,
                                 size_t errn)
{
    char q[200];
    quote_text(q, sizeof q, s, n);
    size_t i = 0;
    char order = '=';
    if (n > 0 && (s[0] == '<' || s[0] == '>' || s[0] == '=' || s[0] == '|'))
        order = (char)s[i++];
    char kind = i < n ? (char)s[i++] : '\0';
    size_t size = 0, ndig = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9' && ndig < 6) {
        size = size * 10 + (size_t)(s[i++] - '0');
        ndig++;
    }
    int tail = i < n; /* "[ns]" of datetimes, junk, or a too-long size */
    pld_dtype_t d = PLD_DT_NONE;
    if (!tail && ndig > 0) {
        switch (kind) {
        case 'b': d = size == 1 ? PLD_DT_BOOL : PLD_DT_NONE; break;
        case 'i':
            d = size == 1 ? PLD_DT_INT8 : size == 2 ? PLD_DT_INT16 : size == 4 ? PLD_DT_INT32
                : size == 8 ? PLD_DT_INT64 : PLD_DT_NONE;
            break;
        case 'u':
            d = size == 1 ? PLD_DT_UINT8 : size == 2 ? PLD_DT_UINT16 : size == 4 ? PLD_DT_UINT32
                : size == 8 ? PLD_DT_UINT64 : PLD_DT_NONE;
            break;
        case 'f': d = size == 2 ? PLD_DT_FP16 : size == 4 ? PLD_DT_FP32 : size == 8 ? PLD_DT_FP64 : PLD_DT_NONE; break;
        case 'V': d = size == 2 ? PLD_DT_BF16 : PLD_DT_NONE; break;
        default: break;
        }
    }
    if (d == PLD_DT_NONE) {
        int other_kind = kind != '\0' && strchr("cUSaOMmV", kind) != NULL;
        if (kind == 'f' && (size == 12 || size == 16) && !tail)
            set_err(err, errn, name, "unsupported dtype '%s' (long double)", q);
        else if (!other_kind && (tail || ndig == 0))
            set_err(err, errn, name, "unsupported dtype '%s' (not a NumPy type string like '<f4')", q);
        else
            set_err(err, errn, name, "unsupported dtype '%s' (%s)", q, kind_what(kind));
        return PLD_E_USAGE;
    }
    if (size == 1)
        order = '|'; /* byte order is meaningless for one byte */
    if (order == '>' || (order == '=' && !host_is_le())) {
        set_err(err, errn, name,
                "big-endian dtype '%s' is not supported (pldrun reads little-endian only); "
                "convert with arr.astype(arr.dtype.newbyteorder('<'))", q);
        return PLD_E_USAGE;
    }
    if (order == '|' && size != 1 && d != PLD_DT_BF16) {
        set_err(err, errn, name, "dtype '%s' has no byte order ('|') but is %zu bytes wide; expected '<%c%zu'", q,
                size, kind, size);
        return PLD_E_USAGE;
    }
    *dt = d;
    return PLD_OK;
}

/* ---- header dict ---------------------------------------------------------- */

typedef struct hdr {
    pld_dtype_t dt;
    int rank;
    int64_t shape[PLD_NPY_MAX_RANK];
    size_t bytes;
} hdr_t;

typedef struct cur {
    const unsigned char *b; /* header start */
    size_t n, i;
    const char *name;
    char *err;
    size_t errn;
} cur_t;

static pld_status_t syntax(cur_t *c, const char *expected)
{
    if (c->i >= c->n) {
        set_err(c->err, c->errn, c->name, "malformed header: expected %s, found the end of the header", expected);
    } else {
        char q[200];
        quote_text(q, sizeof q, c->b + c->i, c->n - c->i > 12 ? 12 : c->n - c->i);
        set_err(c->err, c->errn, c->name, "malformed header: expected %s at header byte %zu, found '%s'", expected,
                c->i, q);
    }
    return PLD_E_USAGE;
}

static void skip_ws(cur_t *c)
{
    while (c->i < c->n && (c->b[c->i] == ' ' || c->b[c->i] == '\t' || c->b[c->i] == '\n' || c->b[c->i] == '\r' ||
                           c->b[c->i] == '\f' || c->b[c->i] == '\v'))
        c->i++;
}

static int peek(cur_t *c)
{
    return c->i < c->n ? c->b[c->i] : -1;
}

/* A quoted string without escapes; s and len point into the header. */
static pld_status_t parse_string(cur_t *c, const unsigned char **s, size_t *len, const char *what)
{
    int q = peek(c);
    if (q != '\'' && q != '"')
        return syntax(c, what);
    size_t start = ++c->i;
    while (c->i < c->n && c->b[c->i] != q) {
        if (c->b[c->i] == '\\' || c->b[c->i] == '\n') {
            set_err(c->err, c->errn, c->name, "malformed header: unsupported %s in a string at header byte %zu",
                    c->b[c->i] == '\\' ? "escape" : "newline", c->i);
            return PLD_E_USAGE;
        }
        c->i++;
    }
    if (c->i >= c->n) {
        set_err(c->err, c->errn, c->name, "malformed header: unterminated string starting at header byte %zu",
                start - 1);
        return PLD_E_USAGE;
    }
    *s = c->b + start;
    *len = c->i - start;
    c->i++;
    return PLD_OK;
}

static int is_ident(int ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

static pld_status_t parse_bool(cur_t *c, int *v)
{
    size_t s = c->i;
    while (c->i < c->n && is_ident(c->b[c->i]))
        c->i++;
    size_t len = c->i - s;
    if (len == 4 && memcmp(c->b + s, "True", 4) == 0) {
        *v = 1;
        return PLD_OK;
    }
    if (len == 5 && memcmp(c->b + s, "False", 5) == 0) {
        *v = 0;
        return PLD_OK;
    }
    c->i = s;
    return syntax(c, "True or False for 'fortran_order'");
}

/* '(' [int (',' int)* [',']] ')' ; a one-element tuple needs its comma. */
static pld_status_t parse_shape(cur_t *c, hdr_t *h)
{
    if (peek(c) != '(') {
        if (peek(c) == '[')
            return syntax(c, "a tuple for 'shape' (a list is not a valid shape)");
        return syntax(c, "'(' starting the 'shape' tuple");
    }
    c->i++;
    int rank = 0, commas = 0;
    for (;;) {
        skip_ws(c);
        if (peek(c) == ')')
            break;
        if (rank > 0 && commas < rank)
            return syntax(c, "',' or ')' in 'shape'");
        if (peek(c) == '-') {
            set_err(c->err, c->errn, c->name, "negative dimension in 'shape' at header byte %zu", c->i);
            return PLD_E_USAGE;
        }
        if (peek(c) < '0' || peek(c) > '9')
            return syntax(c, "a non-negative integer in 'shape'");
        uint64_t v = 0;
        while (peek(c) >= '0' && peek(c) <= '9') {
            unsigned dig = (unsigned)(c->b[c->i] - '0');
            if (v > ((uint64_t)INT64_MAX - dig) / 10) {
                set_err(c->err, c->errn, c->name, "dimension %d of 'shape' does not fit in 64 bits", rank);
                return PLD_E_USAGE;
            }
            v = v * 10 + dig;
            c->i++;
        }
        if (peek(c) == 'L' || peek(c) == 'l') /* Python 2 long literal */
            c->i++;
        if (rank == PLD_NPY_MAX_RANK) {
            set_err(c->err, c->errn, c->name, "'shape' has more than %d dimensions (pldrun's limit)",
                    PLD_NPY_MAX_RANK);
            return PLD_E_USAGE;
        }
        h->shape[rank++] = (int64_t)v;
        skip_ws(c);
        if (peek(c) == ',') {
            c->i++;
            commas++;
        }
    }
    if (rank == 1 && commas == 0) {
        set_err(c->err, c->errn, c->name,
                "malformed header: 'shape' (N) is not a tuple; a one-dimensional shape is written (N,)");
        return PLD_E_USAGE;
    }
    c->i++; /* ')' */
    h->rank = rank;
    return PLD_OK;
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

static pld_status_t parse_dict(cur_t *c, hdr_t *h)
{
    const unsigned char *descr = NULL;
    size_t descr_len = 0;
    int fortran = 0, seen = 0;
    pld_status_t st;
    skip_ws(c);
    if (peek(c) != '{')
        return syntax(c, "'{' starting the header dict");
    c->i++;
    for (;;) {
        skip_ws(c);
        if (peek(c) == '}')
            break;
        const unsigned char *k;
        size_t klen;
        size_t kpos = c->i;
        if ((st = parse_string(c, &k, &klen, "a quoted key or '}'")) != PLD_OK)
            return st;
        int key = klen == 5 && memcmp(k, "descr", 5) == 0           ? KEY_DESCR
                  : klen == 13 && memcmp(k, "fortran_order", 13) == 0 ? KEY_FORTRAN
                  : klen == 5 && memcmp(k, "shape", 5) == 0           ? KEY_SHAPE
                                                                      : 0;
        char q[200];
        quote_text(q, sizeof q, k, klen);
        if (!key) {
            set_err(c->err, c->errn, c->name,
                    "header has an unknown key '%s' at header byte %zu (expected 'descr', 'fortran_order', 'shape')",
                    q, kpos);
            return PLD_E_USAGE;
        }
        if (seen & key) {
            set_err(c->err, c->errn, c->name, "header repeats the key '%s'", q);
            return PLD_E_USAGE;
        }
        seen |= key;
        skip_ws(c);
        if (peek(c) != ':')
            return syntax(c, "':' after a key");
        c->i++;
        skip_ws(c);
        if (key == KEY_DESCR) {
            if (peek(c) == '[') {
                set_err(c->err, c->errn, c->name, "structured dtypes (a list 'descr') are not supported");
                return PLD_E_USAGE;
            }
            st = parse_string(c, &descr, &descr_len, "a quoted string for 'descr'");
        } else if (key == KEY_FORTRAN) {
            st = parse_bool(c, &fortran);
        } else {
            st = parse_shape(c, h);
        }
        if (st != PLD_OK)
            return st;
        skip_ws(c);
        if (peek(c) == ',') {
            c->i++;
            continue;
        }
        if (peek(c) != '}')
            return syntax(c, "',' or '}' after a value");
    }
    c->i++; /* '}' */
    skip_ws(c);
    if (c->i < c->n)
        return syntax(c, "only whitespace after the header dict");
    static const struct { int bit; const char *name; } keys[] = {
        {KEY_DESCR, "descr"}, {KEY_FORTRAN, "fortran_order"}, {KEY_SHAPE, "shape"}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!(seen & keys[i].bit)) {
            set_err(c->err, c->errn, c->name, "header is missing the key '%s'", keys[i].name);
            return PLD_E_USAGE;
        }
    if ((st = decode_descr(c->name, descr, descr_len, &h->dt, c->err, c->errn)) != PLD_OK)
        return st;
    if (fortran) {
        set_err(c->err, c->errn, c->name,
                "Fortran-order arrays are not supported; save with np.ascontiguousarray");
        return PLD_E_USAGE;
    }
    return PLD_OK;
}

/* prod(shape) * itemsize with overflow checks (pld_size.h). Zero dims give
 * 0 bytes, but the product of the other dims must still fit in int64. */
static pld_status_t shape_bytes(const char *name, pld_dtype_t dt, int rank, const int64_t *shape, size_t *out,
                                char *err, size_t errn)
{
    uint64_t limit = PLD_NPY_MAX_DATA_BYTES;
    if (limit > SIZE_MAX)
        limit = SIZE_MAX;
    if (limit > INT64_MAX)
        limit = INT64_MAX;
    int64_t bytes;
    const int rc = pld_size_bytes(rank, shape, pld_dtype_bytes(dt), (int64_t)limit, &bytes);
    if (rc == PLD_SIZE_NEGATIVE) {
        int i = 0;
        while (i < rank - 1 && shape[i] >= 0)
            i++;
        set_err(err, errn, name, "negative dimension %lld in the shape", (long long)shape[i]);
        return PLD_E_USAGE;
    }
    if (rc != PLD_SIZE_OK) {
        set_err(err, errn, name, "array too large (the shape exceeds the limit of %llu bytes)",
                (unsigned long long)limit);
        return PLD_E_USAGE;
    }
    *out = (size_t)bytes;
    return PLD_OK;
}

/* Checks magic and version in the first (up to) 10 bytes; *lensz is the size
 * of the HEADER_LEN field (2 or 4). */
static pld_status_t check_preamble(const char *name, const unsigned char *b, size_t n, int *lensz, char *err,
                                   size_t errn)
{
    if (n == 0) {
        set_err(err, errn, name, "empty file (not a .npy file)");
        return PLD_E_USAGE;
    }
    if (memcmp(b, npy_magic, n < 6 ? n : 6) != 0) {
        if (n >= 2 && b[0] == 'P' && b[1] == 'K')
            set_err(err, errn, name, "not a .npy file (a zip archive; .npz files are not supported)");
        else
            set_err(err, errn, name, "not a .npy file (bad magic string)");
        return PLD_E_USAGE;
    }
    if (n < 10) {
        set_err(err, errn, name, "truncated file: %zu bytes is too short for a .npy preamble", n);
        return PLD_E_USAGE;
    }
    if ((b[6] != 1 && b[6] != 2 && b[6] != 3) || b[7] != 0) {
        set_err(err, errn, name, "unsupported .npy format version %u.%u (expected 1.0, 2.0 or 3.0)", b[6], b[7]);
        return PLD_E_USAGE;
    }
    *lensz = b[6] == 1 ? 2 : 4;
    return PLD_OK;
}

static uint32_t get_le(const unsigned char *p, int n)
{
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static pld_status_t check_header_len(const char *name, uint32_t hlen, char *err, size_t errn)
{
    if (hlen > PLD_NPY_MAX_HEADER_BYTES) {
        set_err(err, errn, name, "header length %lu exceeds the limit of %d bytes", (unsigned long)hlen,
                PLD_NPY_MAX_HEADER_BYTES);
        return PLD_E_USAGE;
    }
    return PLD_OK;
}

static pld_status_t parse_header(const char *name, const unsigned char *b, size_t n, hdr_t *h, char *err,
                                 size_t errn)
{
    cur_t c = {b, n, 0, name, err, errn};
    memset(h, 0, sizeof *h);
    pld_status_t st = parse_dict(&c, h);
    if (st == PLD_OK)
        st = shape_bytes(name, h->dt, h->rank, h->shape, &h->bytes, err, errn);
    return st;
}

static void fill_out(pld_npy_t *out, const hdr_t *h, void *data)
{
    out->dt = h->dt;
    out->rank = h->rank;
    memcpy(out->shape, h->shape, sizeof out->shape);
    out->data = data;
    out->bytes = h->bytes;
    if (!host_is_le())
        swap_elems(data, h->bytes, (size_t)pld_dtype_bytes(h->dt));
}

static void *alloc_data(const char *name, size_t bytes, char *err, size_t errn)
{
    /* large arrays start on a page, like the interpreter's own buffers */
    void *p = bytes >= 65536 ? pld_mem_alloc_aligned(4096, bytes, 0) : pld_mem_alloc(bytes);
    if (!p)
        set_err(err, errn, name, "out of memory (%zu bytes)", bytes);
    return p;
}

static pld_status_t data_len_mismatch(const char *name, size_t want, unsigned long long found, char *err,
                                      size_t errn)
{
    set_err(err, errn, name, "%s data: the shape needs %zu bytes after the header, the file has %llu",
            found < want ? "truncated" : "trailing bytes after the", want, found);
    return PLD_E_USAGE;
}

/* ---- public: read / parse ------------------------------------------------ */

pld_status_t pld_npy_parse(const void *buf, size_t len, pld_npy_t *out, char *err, size_t errn)
{
    const unsigned char *b = buf;
    int lensz = 0;
    pld_status_t st;
    memset(out, 0, sizeof *out);
    if (!b && len > 0)
        len = 0;
    unsigned char pre[10] = {0};
    if (len)
        memcpy(pre, b, len < 10 ? len : 10);
    if ((st = check_preamble(MEM_NAME, pre, len < 10 ? len : 10, &lensz, err, errn)) != PLD_OK)
        return st;
    size_t off = 8 + (size_t)lensz;
    if (len < off) {
        set_err(err, errn, MEM_NAME, "truncated file: %zu bytes is too short for a .npy preamble", len);
        return PLD_E_USAGE;
    }
    uint32_t hlen = get_le(b + 8, lensz);
    if ((st = check_header_len(MEM_NAME, hlen, err, errn)) != PLD_OK)
        return st;
    if (hlen > len - off) {
        set_err(err, errn, MEM_NAME, "truncated header: header length %lu but only %zu bytes follow",
                (unsigned long)hlen, len - off);
        return PLD_E_USAGE;
    }
    hdr_t h;
    if ((st = parse_header(MEM_NAME, b + off, hlen, &h, err, errn)) != PLD_OK)
        return st;
    off += hlen;
    if (len - off != h.bytes)
        return data_len_mismatch(MEM_NAME, h.bytes, (unsigned long long)(len - off), err, errn);
    void *data = alloc_data(MEM_NAME, h.bytes, err, errn);
    if (!data)
        return PLD_E_NOMEM;
    if (h.bytes)
        memcpy(data, b + off, h.bytes);
    fill_out(out, &h, data);
    return PLD_OK;
}

static pld_status_t read_error(FILE *f, const char *path, char *err, size_t errn)
{
    if (ferror(f))
        set_err(err, errn, path, "read error: %s", strerror(errno ? errno : EIO));
    return PLD_E_IO;
}

/* Reads exactly n bytes; on a short read returns the count in *got. */
static int read_full(FILE *f, void *p, size_t n, size_t *got)
{
    *got = n ? fread(p, 1, n, f) : 0;
    return *got == n;
}

static pld_status_t read_file(FILE *f, const char *path, pld_npy_t *out, char *err, size_t errn)
{
    unsigned char pre[12];
    size_t got;
    int lensz = 0;
    pld_status_t st;
    struct stat sb;
    int regular = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode);
    unsigned long long fsize = regular ? (unsigned long long)sb.st_size : 0;

    errno = 0;
    if (!read_full(f, pre, 10, &got) && ferror(f))
        return read_error(f, path, err, errn);
    if ((st = check_preamble(path, pre, got, &lensz, err, errn)) != PLD_OK)
        return st;
    if (lensz == 4 && !read_full(f, pre + 10, 2, &got)) {
        if (ferror(f))
            return read_error(f, path, err, errn);
        set_err(err, errn, path, "truncated file: %zu bytes is too short for a .npy preamble", 10 + got);
        return PLD_E_USAGE;
    }
    size_t off = 8 + (size_t)lensz;
    uint32_t hlen = get_le(pre + 8, lensz);
    if ((st = check_header_len(path, hlen, err, errn)) != PLD_OK)
        return st;
    if (regular && hlen > fsize - off) {
        set_err(err, errn, path, "truncated header: header length %lu but only %llu bytes follow",
                (unsigned long)hlen, fsize - off);
        return PLD_E_USAGE;
    }
    unsigned char *hb = pld_mem_alloc(hlen);
    if (!hb) {
        set_err(err, errn, path, "out of memory (%lu bytes)", (unsigned long)hlen);
        return PLD_E_NOMEM;
    }
    if (!read_full(f, hb, hlen, &got)) {
        pld_mem_free(hb);
        if (ferror(f))
            return read_error(f, path, err, errn);
        set_err(err, errn, path, "truncated header: header length %lu but only %zu bytes follow",
                (unsigned long)hlen, got);
        return PLD_E_USAGE;
    }
    hdr_t h;
    st = parse_header(path, hb, hlen, &h, err, errn);
    pld_mem_free(hb);
    if (st != PLD_OK)
        return st;
    off += hlen;
    if (regular && fsize - off != h.bytes)
        return data_len_mismatch(path, h.bytes, fsize - off, err, errn);
    void *data = alloc_data(path, h.bytes, err, errn);
    if (!data)
        return PLD_E_NOMEM;
    if (!read_full(f, data, h.bytes, &got) || fgetc(f) != EOF || ferror(f)) {
        pld_mem_free(data);
        if (ferror(f))
            return read_error(f, path, err, errn);
        if (got < h.bytes)
            return data_len_mismatch(path, h.bytes, got, err, errn);
        set_err(err, errn, path, "trailing bytes after the data: the shape needs %zu bytes after the header",
                h.bytes);
        return PLD_E_USAGE;
    }
    fill_out(out, &h, data);
    return PLD_OK;
}

pld_status_t pld_npy_read(const char *path, pld_npy_t *out, char *err, size_t errn)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(err, errn, path, "cannot open: %s", strerror(errno));
        return PLD_E_IO;
    }
    pld_status_t st = read_file(f, path, out, err, errn);
    fclose(f);
    return st;
}

void pld_npy_fini(pld_npy_t *n)
{
    if (!n)
        return;
    pld_mem_free(n->data);
    memset(n, 0, sizeof *n);
}

/* ---- write ------------------------------------------------------------------ */

/* Preamble + header for (descr, shape), padded so the total is a multiple of
 * 64. Returns its length (0 if buf is too small, which cannot happen for
 * rank <= PLD_NPY_MAX_RANK). */
static size_t make_header(unsigned char *buf, size_t cap, const char *descr, int rank, const int64_t *shape)
{
    char dict[512], dims[PLD_NPY_MAX_RANK * 24 + 4];
    size_t o = 0;
    dims[0] = '\0';
    for (int i = 0; i < rank; i++)
        o += (size_t)snprintf(dims + o, sizeof dims - o, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (rank == 1)
        snprintf(dims + o, sizeof dims - o, ",");
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, dims);
    if (dl < 0 || (size_t)dl >= sizeof dict)
        return 0;
    size_t pre = 10;
    size_t total = pre + (size_t)dl + 1;
    total += (64 - total % 64) % 64;
    if (total - pre > 65535) { /* version 2.0: u32 header length */
        pre = 12;
        total = pre + (size_t)dl + 1;
        total += (64 - total % 64) % 64;
    }
    if (total > cap)
        return 0;
    size_t hlen = total - pre;
    memcpy(buf, npy_magic, 6);
    buf[6] = pre == 10 ? 1 : 2;
    buf[7] = 0;
    for (size_t i = 0; i < pre - 8; i++)
        buf[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(buf + pre, dict, (size_t)dl);
    memset(buf + pre + (size_t)dl, ' ', hlen - (size_t)dl - 1);
    buf[total - 1] = '\n';
    return total;
}

static int write_data(FILE *f, const unsigned char *p, size_t bytes, size_t item)
{
    if (host_is_le() || item < 2)
        return bytes == 0 || fwrite(p, 1, bytes, f) == bytes;
    unsigned char tmp[4096];
    while (bytes) {
        size_t n = bytes < sizeof tmp ? bytes : sizeof tmp;
        memcpy(tmp, p, n);
        swap_elems(tmp, n, item);
        if (fwrite(tmp, 1, n, f) != n)
            return 0;
        p += n;
        bytes -= n;
    }
    return 1;
}

/* Opens the file that pld_npy_write fills: for a new or regular path a
 * temporary file beside it (its name in tmp, renamed over path by the caller),
 * else (a device, a FIFO, a symbolic link) path itself in place (tmp = ""). */
static pld_status_t open_output(const char *path, char *tmp, size_t tmpn, FILE **out, char *err, size_t errn)
{
    struct stat sb;
    tmp[0] = '\0';
    *out = NULL;
    if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        set_err(err, errn, path, "cannot open for writing: Is a directory");
        return PLD_E_IO;
    }
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        *out = fopen(path, "wb");
        if (!*out) {
            set_err(err, errn, path, "cannot open for writing: %s", strerror(errno));
            return PLD_E_IO;
        }
        return PLD_OK;
    }
    if ((size_t)snprintf(tmp, tmpn, "%s.tmpXXXXXX", path) >= tmpn) {
        tmp[0] = '\0';
        set_err(err, errn, path, "cannot open for writing: %s", strerror(ENAMETOOLONG));
        return PLD_E_IO;
    }
    const int fd = mkstemp(tmp);
    if (fd < 0) {
        const int saved = errno;
        tmp[0] = '\0';
        set_err(err, errn, path, "cannot open for writing: %s", strerror(saved));
        return PLD_E_IO;
    }
    const mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || !(*out = fdopen(fd, "wb"))) {
        const int saved = errno;
        close(fd);
        remove(tmp);
        tmp[0] = '\0';
        set_err(err, errn, path, "cannot open for writing: %s", strerror(saved));
        return PLD_E_IO;
    }
    return PLD_OK;
}

pld_status_t pld_npy_write(const char *path, pld_dtype_t dt, int rank, const int64_t *shape, const void *data,
                           char *err, size_t errn)
{
    const char *descr = pld_npy_descr(dt);
    if (!descr) {
        set_err(err, errn, path, "cannot write dtype %s to .npy (NumPy has no such type)", pld_dtype_name(dt));
        return PLD_E_USAGE;
    }
    if (rank < 0 || rank > PLD_NPY_MAX_RANK || (rank > 0 && !shape)) {
        set_err(err, errn, path, "cannot write an array of rank %d (0..%d)", rank, PLD_NPY_MAX_RANK);
        return PLD_E_USAGE;
    }
    size_t bytes;
    pld_status_t st = shape_bytes(path, dt, rank, shape, &bytes, err, errn);
    if (st != PLD_OK)
        return st;
    if (bytes && !data) {
        set_err(err, errn, path, "no data to write");
        return PLD_E_USAGE;
    }
    unsigned char hdr[1024];
    size_t hn = make_header(hdr, sizeof hdr, descr, rank, shape);
    if (hn == 0) {
        set_err(err, errn, path, "internal error: .npy header does not fit");
        return PLD_E_USAGE;
    }
    char tmp[PATH_MAX];
    FILE *f;
    st = open_output(path, tmp, sizeof tmp, &f, err, errn);
    if (st != PLD_OK)
        return st;
    errno = 0;
    int ok = fwrite(hdr, 1, hn, f) == hn && write_data(f, data, bytes, (size_t)pld_dtype_bytes(dt));
    int saved = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (ok && tmp[0] && rename(tmp, path) != 0) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        if (tmp[0]) /* never remove the device or FIFO the user named: only our temporary file */
            remove(tmp);
        set_err(err, errn, path, "cannot write: %s", strerror(saved ? saved : EIO));
        return PLD_E_IO;
    }
    return PLD_OK;
}

pld_status_t pld_npy_check_writable(const char *path, char *err, size_t errn)
{
    char tmp[PATH_MAX];
    FILE *f;
    pld_status_t st = open_output(path, tmp, sizeof tmp, &f, err, errn);
    if (st != PLD_OK)
        return st;
    fclose(f);
    if (tmp[0])
        remove(tmp);
    return PLD_OK;
}

/* ---- generators ------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void store_f(void *data, pld_dtype_t dt, int64_t i, double v)
{
    unsigned char *p = data;
    size_t k = (size_t)i;
    switch (dt) {
    case PLD_DT_FP64: memcpy(p + k * 8, &v, 8); break;
    case PLD_DT_FP32: {
        float x = (float)v;
        memcpy(p + k * 4, &x, 4);
        break;
    }
    case PLD_DT_FP16: {
        uint16_t x = pld_f32_to_f16((float)v);
        memcpy(p + k * 2, &x, 2);
        break;
    }
    default: { /* BF16 */
        uint16_t x = pld_f32_to_bf16((float)v);
        memcpy(p + k * 2, &x, 2);
        break;
    }
    }
}

/* Stores the low bits of v (two's complement wrap to the element width). */
static void store_i(void *data, int width, int64_t i, uint64_t v)
{
    unsigned char *p = (unsigned char *)data + (size_t)i * (size_t)width;
    switch (width) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
}

enum gen_kind { GEN_ZEROS, GEN_ONES, GEN_ARANGE, GEN_RANDOM };

static pld_status_t parse_spec(const char *spec, enum gen_kind *kind, uint64_t *seed, char *err, size_t errn)
{
    char q[200];
    quote_text(q, sizeof q, (const unsigned char *)spec, strlen(spec));
    if (strcmp(spec, "zeros") == 0) {
        *kind = GEN_ZEROS;
    } else if (strcmp(spec, "ones") == 0) {
        *kind = GEN_ONES;
    } else if (strcmp(spec, "arange") == 0) {
        *kind = GEN_ARANGE;
    } else if (strncmp(spec, "random:", 7) == 0 || strcmp(spec, "random") == 0) {
        const char *s = spec[6] ? spec + 7 : "";
        uint64_t v = 0;
        if (!*s) {
            set_err(err, errn, NULL, "generator '%s' needs a seed: random:SEED", q);
            return PLD_E_USAGE;
        }
        for (; *s; s++) {
            if (*s < '0' || *s > '9') {
                set_err(err, errn, NULL, "bad seed in '%s' (expected a decimal integer 0..18446744073709551615)",
                        q);
                return PLD_E_USAGE;
            }
            unsigned d = (unsigned)(*s - '0');
            if (v > (UINT64_MAX - d) / 10) {
                set_err(err, errn, NULL, "seed in '%s' does not fit in 64 bits", q);
                return PLD_E_USAGE;
            }
            v = v * 10 + d;
        }
        *kind = GEN_RANDOM;
        *seed = v;
    } else {
        set_err(err, errn, NULL, "unknown generator '%s' (expected arange, zeros, ones or random:SEED)", q);
        return PLD_E_USAGE;
    }
    return PLD_OK;
}

pld_status_t pld_npy_generate(const char *spec, pld_dtype_t dt, void *data, int64_t count, char *err, size_t errn)
{
    enum gen_kind kind = GEN_ZEROS;
    uint64_t seed = 0;
    pld_status_t st = parse_spec(spec ? spec : "", &kind, &seed, err, errn);
    if (st != PLD_OK)
        return st;
    if (!pld_npy_descr(dt)) {
        set_err(err, errn, NULL, "generator '%s' does not support dtype %s", spec, pld_dtype_name(dt));
        return PLD_E_USAGE;
    }
    if (count < 0 || (count > 0 && !data)) {
        set_err(err, errn, NULL, "generator '%s': bad element count %lld", spec, (long long)count);
        return PLD_E_USAGE;
    }
    int width = pld_dtype_bytes(dt);
    int is_float = pld_dtype_is_float(dt);
    int is_unsigned = dt == PLD_DT_UINT8 || dt == PLD_DT_UINT16 || dt == PLD_DT_UINT32 || dt == PLD_DT_UINT64;
    if (kind == GEN_ZEROS) {
        if (count)
            memset(data, 0, (size_t)count * (size_t)width);
        return PLD_OK;
    }
    for (int64_t i = 0; i < count; i++) {
        if (kind == GEN_ONES) {
            if (is_float)
                store_f(data, dt, i, 1.0);
            else
                store_i(data, width, i, 1);
        } else if (kind == GEN_ARANGE) {
            if (dt == PLD_DT_FP64)
                store_f(data, dt, i, (double)i);
            else if (is_float)
                store_f(data, dt, i, (double)(float)i); /* int64 -> float (RNE), then to storage */
            else if (dt == PLD_DT_BOOL)
                store_i(data, width, i, (uint64_t)i & 1u);
            else
                store_i(data, width, i, (uint64_t)i);
        } else {
            uint64_t z = splitmix64(&seed);
            if (dt == PLD_DT_FP64)
                store_f(data, dt, i, (double)((int64_t)(z >> 11) - ((int64_t)1 << 52)) * 0x1p-52);
            else if (is_float) /* exact in float: k * 2^-23, k in [-2^23, 2^23) */
                store_f(data, dt, i, (double)((int32_t)(z >> 40) - (1 << 23)) * 0x1p-23);
            else if (dt == PLD_DT_BOOL)
                store_i(data, width, i, z >> 63);
            else if (is_unsigned)
                store_i(data, width, i, z >> 60);
            else
                store_i(data, width, i, (uint64_t)((int64_t)(((z >> 32) * 17u) >> 32) - 8));
        }
    }
    return PLD_OK;
}
