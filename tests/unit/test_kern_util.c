/* test_kern_util.c - the helpers of the numeric-kernel suite (see test_kern_util.h). */
#include "test_kern_util.h"

/* ---- helpers ---------------------------------------------------------------- */

pld_view_t vw(void *data, pld_dtype_t dt, int rank, const int64_t *shape)
{
    pld_view_t v;
    pld_view_packed(&v, data, dt, rank, shape);
    return v;
}

pld_view_t v1(void *data, pld_dtype_t dt, int64_t n)
{
    return vw(data, dt, 1, &n);
}

pld_view_t v2(void *data, pld_dtype_t dt, int64_t r, int64_t c)
{
    const int64_t s[2] = {r, c};
    return vw(data, dt, 2, s);
}

/* A strided 2-D view with explicit element strides. */
pld_view_t vs2(void *data, pld_dtype_t dt, int64_t r, int64_t c, int64_t sr, int64_t sc)
{
    pld_view_t v;
    memset(&v, 0, sizeof v);
    v.data = data;
    v.dt = dt;
    v.rank = 2;
    v.shape[0] = r;
    v.shape[1] = c;
    v.strides[0] = sr;
    v.strides[1] = sc;
    return v;
}

uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint64_t d2u(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* Independent decoders from the bit layouts (IEEE 754 §3.4). */
double dec16(uint16_t h)
{
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0x1f)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, -24);
    else
        v = ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

double decbf(uint16_t b)
{
    const int e = (b >> 7) & 0xff, m = b & 0x7f;
    double v;
    if (e == 0xff)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, -133);
    else
        v = ldexp(128 + m, e - 134);
    return (b & 0x8000) ? -v : v;
}

int is_nan16(uint16_t h)
{
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

int is_nanbf(uint16_t b)
{
    return (b & 0x7f80) == 0x7f80 && (b & 0x7f);
}

/* splitmix64: deterministic inputs */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A random double: random sign and 52-bit mantissa, exponent in [elo, ehi]. */
double rnd_double(int elo, int ehi)
{
    const uint64_t r = rng();
    const int e = elo + (int)(rng() % (uint64_t)(ehi - elo + 1));
    const double m = 1.0 + (double)(r >> 12) * 0x1p-52;
    const double v = ldexp(m, e);
    return (r & 1) ? -v : v;
}

/* ---- the table oracle ----------------------------------------------------------
 * tab[i] is the value of bit pattern i for every non-negative finite pattern
 * (increasing), n = number of them (= the pattern of +inf), top = the value
 * one step above the largest finite (what inf "stands for" when rounding). */
static double tab16[0x7c00], tabbf[0x7f80];

void tables_init(void)
{
    static int done;
    if (done)
        return;
    for (int i = 0; i < 0x7c00; i++)
        tab16[i] = dec16((uint16_t)i);
    for (int i = 0; i < 0x7f80; i++)
        tabbf[i] = decbf((uint16_t)i);
    done = 1;
}

/* Rounds finite or infinite non-NaN v to the table format. */
static uint16_t oracle_round(double v, const double *tab, int n, double top, pld_round_k_t mode)
{
    const int neg = signbit(v) != 0;
    const double a = fabs(v);
    const uint16_t sign = neg ? 0x8000 : 0;
    if (isinf(a))
        return (uint16_t)(sign | n);
    int i;
    if (a >= tab[n - 1]) {
        i = n - 1;
    } else {
        int lo = 0, hi = n - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (tab[mid] <= a)
                lo = mid;
            else
                hi = mid - 1;
        }
        i = lo;
    }
    if (tab[i] == a)
        return (uint16_t)(sign | i);
    const double up = i + 1 < n ? tab[i + 1] : top;
    int take_up;
    switch (mode) {
    case PLD_R_TRUNC: take_up = 0; break;
    case PLD_R_FLOOR: take_up = neg; break;
    case PLD_R_CEIL: take_up = !neg; break;
    case PLD_R_ODD: take_up = (i % 2) == 0; break; /* the odd neighbour */
    default: {                                    /* NONE/RINT/ROUND: nearest, ties to even */
        const double mid = (tab[i] + up) / 2;      /* exact: tab values have <= 11 significant bits */
        take_up = a > mid || (a == mid && (i % 2) == 1);
        break;
    }
    }
    return (uint16_t)(sign | (take_up ? i + 1 : i));
}

uint16_t oracle16(double v, pld_round_k_t mode)
{
    return oracle_round(v, tab16, 0x7c00, 65536.0, mode);
}

uint16_t oraclebf(double v, pld_round_k_t mode)
{
    return oracle_round(v, tabbf, 0x7f80, 0x1p128, mode);
}

/* FP32 oracle from nextafterf: lo = largest float <= |v|, hi the next. */
uint32_t oracle32(double v, pld_round_k_t mode)
{
    const int neg = signbit(v) != 0;
    const double a = fabs(v);
    float lo = (float)a; /* some neighbour; fix it up below */
    if ((double)lo > a)
        lo = nextafterf(lo, 0.0f);
    if ((double)lo == a)
        return f2u(neg ? -lo : lo);
    const float hi = nextafterf(lo, INFINITY);
    const uint32_t ulo = f2u(lo);
    int take_up;
    switch (mode) {
    case PLD_R_TRUNC: take_up = 0; break;
    case PLD_R_FLOOR: take_up = neg; break;
    case PLD_R_CEIL: take_up = !neg; break;
    case PLD_R_ODD: take_up = (ulo & 1) == 0; break;
    default: {
        const double mid = ((double)lo + (double)hi) / 2;
        take_up = a > mid || (a == mid && (ulo & 1));
        break;
    }
    }
    const float r = take_up ? hi : lo;
    return f2u(neg ? -r : r);
}

const pld_round_k_t all_modes[7] = {PLD_R_NONE, PLD_R_RINT,  PLD_R_ROUND, PLD_R_FLOOR,
                                          PLD_R_CEIL, PLD_R_TRUNC, PLD_R_ODD};
const char *const mode_names[7] = {"NONE", "RINT", "ROUND", "FLOOR", "CEIL", "TRUNC", "ODD"};
