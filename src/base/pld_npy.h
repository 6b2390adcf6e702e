/* pld_npy.h - NumPy .npy files (format versions 1.0, 2.0, 3.0), C order,
 * little-endian, and the quick input generators (arange, zeros, ones,
 * random:SEED). dtypes: bool, int8/16/32/64, uint8/16/32/64, float16, float32,
 * float64, and bfloat16 (NumPy has no bfloat16 type: pldrun writes it with the
 * 2-byte void descr '|V2', which NumPy loads as raw 2-byte records, and reads
 * '|V2' / '<V2' back as bfloat16; docs/npy.md documents the convention).
 * Library code: never prints. */
#ifndef PLD_NPY_H
#define PLD_NPY_H

#include "pld_status.h"
#include "pld_dtype.h"

#include <stddef.h>
#include <stdint.h>

#define PLD_NPY_MAX_RANK 8
/* Readers reject a header longer than this (NumPy itself refuses headers over
 * 10000 bytes by default) and arrays whose data would exceed
 * PLD_NPY_MAX_DATA_BYTES (or SIZE_MAX), before allocating anything. */
#define PLD_NPY_MAX_HEADER_BYTES 65536
#define PLD_NPY_MAX_DATA_BYTES ((uint64_t)1 << 40)

typedef struct pld_npy {
    pld_dtype_t dt;
    int rank;
    int64_t shape[PLD_NPY_MAX_RANK];
    void *data;        /* packed row-major, native byte order, owned (pld_mem_free via
                          pld_npy_fini); non-NULL after a successful read even when bytes == 0 */
    size_t bytes;
} pld_npy_t;

/* Reads path into out (zeroed first, so pld_npy_fini is always safe).
 * Descrs read: '|b1' BOOL, '|i1' '<i2' '<i4' '<i8' INT8..INT64 (never INDEX),
 * '|u1' '<u2' '<u4' '<u8' UINT8..UINT64, '<f2' '<f4' '<f8' FP16/FP32/FP64,
 * '|V2' / '<V2' BF16; '=' (native) is accepted on a little-endian host and any
 * byte-order char for 1-byte types. Returns owned data in out->data.
 * Errors, each with a message in err (size errn; err may be NULL) of the form
 * "PATH: what is wrong":
 *   PLD_E_IO     cannot open or read the file;
 *   PLD_E_USAGE  not a valid .npy (bad magic, version other than 1.0/2.0/3.0,
 *                malformed/oversized header, missing/unknown/repeated key,
 *                Fortran order, big-endian, unsupported dtype, rank over
 *                PLD_NPY_MAX_RANK, shape too large, data shorter or longer than
 *                the shape needs);
 *   PLD_E_NOMEM  out of memory. */
pld_status_t pld_npy_read(const char *path, pld_npy_t *out, char *err, size_t errn);
/* Parses an in-memory .npy image (borrows buf; same checks and errors as
 * pld_npy_read, except PLD_E_IO; messages name the file "<memory>"). */
pld_status_t pld_npy_parse(const void *buf, size_t len, pld_npy_t *out, char *err, size_t errn);
/* Writes a packed row-major array (borrows shape[rank] and data) as .npy
 * version 1.0 (2.0 when the header needs it): header
 * "{'descr': D, 'fortran_order': False, 'shape': (..), }" padded with spaces
 * and a final '\n' so the data starts at a multiple of 64. INDEX is written as
 * '<i8', BF16 as '|V2'. Returns PLD_E_USAGE for a dtype without a descr (INT4,
 * FP8*, TASK_ID, ...), a bad rank/shape or NULL data; PLD_E_IO when the file
 * cannot be written.
 * Nothing is lost: a regular file (new or existing) is written to a temporary
 * file in the same directory ("PATH.tmpXXXXXX", mode 0666 less the umask) and
 * renamed over path only when complete, so a failed write leaves the old file
 * (or none) and no partial one. An existing non-regular file (a device, a FIFO)
 * or a symbolic link is written in place. */
pld_status_t pld_npy_write(const char *path, pld_dtype_t dt, int rank, const int64_t *shape, const void *data,
                           char *err, size_t errn);
/* Checks, before a long run, that pld_npy_write(path, ...) will be able to
 * create its file: path is not a directory, and its directory accepts a new
 * file (a temporary one is created and removed) or, for an existing device,
 * FIFO or link, the file is writable. PLD_E_IO with the reason in err ("PATH:
 * cannot open for writing: ..."). */
pld_status_t pld_npy_check_writable(const char *path, char *err, size_t errn);
/* Frees n->data and zeroes n (NULL and already-finished structs are fine). */
void pld_npy_fini(pld_npy_t *n);

/* NumPy descr for a dtype ("<f4"; "|V2" for BF16, "<i8" for INDEX), NULL when
 * it has none. Returns a static string. */
const char *pld_npy_descr(pld_dtype_t dt);

/* Generators for --in NAME=arange|zeros|ones|random:SEED: fills `count`
 * elements of dtype dt at data. arange: 0,1,2,... (wrapping for narrow ints,
 * BOOL alternates 0,1; floats: (float)i, then RNE to FP16/BF16; FP64: (double)i);
 * random: a documented deterministic generator
 * (splitmix64) giving floats uniform in [-1, 1) and integers in [-8, 8]
 * (unsigned: [0, 16); BOOL: 0/1), identical on every platform; the exact
 * formulas are in docs/npy.md. Only dtypes with a descr are supported.
 * Returns PLD_E_USAGE, with a message (no file prefix), for an unknown spec, a
 * bad seed, an unsupported dtype, count < 0, or NULL data with count > 0.
 * count == 0 with data NULL just validates spec and dtype. */
pld_status_t pld_npy_generate(const char *spec, pld_dtype_t dt, void *data, int64_t count, char *err, size_t errn);

#endif
