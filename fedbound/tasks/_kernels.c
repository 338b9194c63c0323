/* fedbound's compiled kernels (issue 35), each equal to its numpy reference (tests/tasks/
   test_mlp_kernel.py, tests/tasks/test_batches.py):

   descend(models, out, widths, rows, spans, lr, relu, samples, isa): the MLP's local SGD steps
   (fedbound/tasks/mlp.py, _compiled_steps, says what they compute and why). For each client j, its
   flat model models[j] (layers W_l (out, in) then b_l, for widths = (D, hidden..., classes);
   models[0] for all where models has one row) after the steps spans[s] = (a, b, seen): step s on
   the rows a..b-1 of its batch rows, the rows 0..seen-1 those of the earlier steps; written to
   out[j]. rows: the arrays (inputs (k, r, D + 1): features with their one, targets (k, r, C):
   -w onehot(y), weights w (k, r)), or where they are in the task's arrays (features (n, m, D + 1),
   labels (n, m), presence (n, m), ids (k,), positions (k, r) or None: every sample, valid (k, r)
   or None, width): client j's row q is sample positions[j, q] of client ids[j], its weight its
   validity (valid, or else presence) over that of its block of width rows (a step's batch; mlp.py,
   GatheredRows). The clients run in groups of a vector's lanes, client g of a group in lane g
   (_mlp_steps.h). One copy of the code per instruction set (_mlp_steps.h under a target pragma:
   AVX-512F, AVX2+FMA, the compiler's baseline), chosen by the caller from isas(); equal to numpy's
   steps (mlp.descend, backend "numpy") to float32 rounding.

   seeded_positions(key, ids, sizes, round, step, steps, batch, positions, valid): the minibatch
   positions of SeededBatches (fedbound/tasks/batches.py, whose numpy code is the reference and
   whose module doc gives the formula) for the clients ids with sizes samples, written to
   positions and valid; the same integers. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define MAXL 16   /* layers at most */

#if defined(__x86_64__) || defined(__SSE2__)
#include <immintrin.h>
#define HAVE_MXCSR 1
#endif

/* vectors of 4, 8 and 16 floats (and ints, for masks), loaded from any float's address */
typedef float v4 __attribute__((vector_size(16), aligned(4), may_alias));
typedef int vi4 __attribute__((vector_size(16), aligned(4), may_alias));
typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef int vi8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef float v16 __attribute__((vector_size(64), aligned(4), may_alias));
typedef int vi16 __attribute__((vector_size(64), aligned(4), may_alias));

typedef struct {
    int layers, rows, steps, relu, samples;
    float lr;   /* the step size */
    int width[MAXL + 1];   /* width[0]: inputs with their one; width[l]: outputs of layer l */
    long offset[MAXL + 1], d;   /* where layer l's weight starts in a flat model; its size */
    int shared;                 /* one model for every client (the round's global model) */
} Net;

/* where a group's arrays lie in the kernel's scratch, in vectors (_mlp_steps.h, group()): R (r, Di)
   its rows, T (r, C), w (r,); per layer V_l (out, in + 1), dZ_l (r, out) and its input X_l
   (r, in + 1; X_1 is R); P (r, h), G (r, r), D (r, h) of the first layer in sample space; end:
   the vectors in all (the scratch's size and its carving, from one place) */
typedef struct { long R, T, w, V[MAXL + 1], dZ[MAXL + 1], In[MAXL + 1], P, G, D, end; } Layout;

static Layout layout(const Net *s) {
    const long r = s->rows, h = s->width[1];
    Layout at;
    long n = 0;
    at.R = n; n += r * s->width[0];
    at.T = n; n += r * s->width[s->layers];
    at.w = n; n += r;
    for (int l = 1; l <= s->layers; l++) {
        const long o = s->width[l], i = s->width[l - 1] + (l > 1);
        at.V[l] = n; n += o * i;
        at.dZ[l] = n; n += r * o;
        at.In[l] = l == 1 ? at.R : n;
        n += l == 1 ? 0 : r * i;
    }
    at.P = n; n += r * h;
    at.G = n; n += r * r;
    at.D = n; n += r * h;
    at.end = n;
    return at;
}

/* where the clients' batch rows are (descend's rows): given as arrays, or gathered */
typedef struct {
    int gathered, width;
    const float *R, *T, *w;                       /* given: (k, r, D + 1), (k, r, C), (k, r) */
    const float *F, *presence;                    /* gathered: (n, m, D + 1), (n, m) */
    const int64_t *labels, *ids, *pos;            /* (n, m), (k,), (k, r) or NULL */
    const char *valid;                            /* (k, r) or NULL */
    long m;
} Source;

/* the sample of client j's row q in its client's samples (gathered rows: positions, or row q) */
static inline int64_t position(const Source *src, Py_ssize_t j, int r, int q) {
    return src->pos ? src->pos[(long)j * r + q] : q;
}

/* the validity of client j's row q (gathered rows: valid, or the presence of its sample q; client:
   where its samples start) */
static inline float validity(const Source *src, Py_ssize_t j, int r, int q, long client) {
    return src->pos ? (float)(src->valid[(long)j * r + q] != 0) : src->presence[client + q];
}

/* the rows of clients j0..j0 + nl - 1 from src, client j0 + g in lane g of `lanes` (the other
   lanes' T and w 0): rows[q lanes + g] its row q's features with their one, T (r, C) lr times
   their targets, w (r,) lr times their weights (lr: the step size in the logits' gradient) */
static void prepare(const Net *s, const Source *src, Py_ssize_t j0, int nl, int lanes,
                    const float **rows, float *T, float *w) {
    const int r = s->rows, Di = s->width[0], C = s->width[s->layers];
    memset(T, 0, sizeof(float) * lanes * r * C);
    memset(w, 0, sizeof(float) * lanes * r);
    for (int g = 0; g < nl; g++) {
        const Py_ssize_t j = j0 + g;
        if (!src->gathered) {
            const float *Tj = src->T + (long)j * r * C;
            for (int q = 0; q < r; q++) {
                rows[q * lanes + g] = src->R + ((long)j * r + q) * Di;
                for (int c = 0; c < C; c++) T[((long)q * C + c) * lanes + g] = s->lr * Tj[(long)q * C + c];
                w[q * lanes + g] = s->lr * src->w[(long)j * r + q];
            }
            continue;
        }
        const long client = (long)src->ids[j] * src->m;
        for (int b0 = 0; b0 < r; b0 += src->width) {   /* w = validity / its block's (numpy's order) */
            float total = 0.f;
            for (int q = b0; q < b0 + src->width; q++) total += validity(src, j, r, q, client);
            for (int q = b0; q < b0 + src->width; q++) {
                const long at = client + position(src, j, r, q);
                const float v = validity(src, j, r, q, client);
                rows[q * lanes + g] = src->F + at * Di;
                w[q * lanes + g] = s->lr * (v / total);
                T[((long)q * C + src->labels[at]) * lanes + g] = s->lr * -(v / total);
            }
        }
    }
}

#define WIDEST 16   /* the widest vector of any copy, in floats (AVX-512) */

/* each copy: its vectors; its reciprocal estimate, min and max (RCP, MIN, MAX: the instruction
   set's, or plain C where there is no x86); its tile of TM x TN accumulators (both <= 4): with 16
   registers (SSE2, AVX2) 3 x 3 and a column of A (9 + 3 + 1), with AVX-512's 32 4 x 4 (16 + 4 + 1) */
#define NAME(x) x##_base
#define VEC v4
#define VI vi4
#define VW 4
#ifdef HAVE_MXCSR
#define RCP(x) _mm_rcp_ps((__m128)(x))
#define MAX(a, b) (v4)_mm_max_ps((__m128)(a), (__m128)(b))
#define MIN(a, b) (v4)_mm_min_ps((__m128)(a), (__m128)(b))
#else
#define RCP(x) (1.f / (x))   /* no estimate: the division (the Newton step keeps it) */
#define MAX(a, b) (v4)(((vi4)(a) & (vi4)((a) >= (b))) | ((vi4)(b) & (vi4)((a) < (b))))
#define MIN(a, b) (v4)(((vi4)(a) & (vi4)((a) <= (b))) | ((vi4)(b) & (vi4)((a) > (b))))
#endif
#define TM 3
#define TN 3
#include "_mlp_steps.h"
#undef NAME
#undef VEC
#undef VI
#undef VW
#undef TM
#undef TN
#undef RCP
#undef MAX
#undef MIN

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define NAME(x) x##_avx2
#define VEC v8
#define VI vi8
#define VW 8
#define RCP(x) _mm256_rcp_ps((__m256)(x))
#define MAX(a, b) (v8)_mm256_max_ps((__m256)(a), (__m256)(b))
#define MIN(a, b) (v8)_mm256_min_ps((__m256)(a), (__m256)(b))
#define TM 3
#define TN 3
#include "_mlp_steps.h"
#undef NAME
#undef VEC
#undef VI
#undef VW
#undef TM
#undef TN
#undef RCP
#undef MAX
#undef MIN
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
#define NAME(x) x##_avx512
#define VEC v16
#define VI vi16
#define VW 16
#define RCP(x) _mm512_rcp14_ps((__m512)(x))
#define MAX(a, b) (v16)_mm512_max_ps((__m512)(a), (__m512)(b))
#define MIN(a, b) (v16)_mm512_min_ps((__m512)(a), (__m512)(b))
#define TM 4
#define TN 4
#include "_mlp_steps.h"
#undef NAME
#undef VEC
#undef VI
#undef VW
#undef TM
#undef TN
#undef RCP
#undef MAX
#undef MIN
#pragma GCC pop_options
#define HAVE_X86_COPIES 1   /* the AVX2 and AVX-512 copies */
#endif

static int get(PyObject *o, Py_buffer *b, int writable, int ndim, const char *fmt, const char *what) {
    if (PyObject_GetBuffer(o, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    const int int64 = fmt[0] == 'l' && (strcmp(b->format, "l") == 0 || strcmp(b->format, "q") == 0)
                      && b->itemsize == 8;
    if (b->ndim != ndim || (strcmp(b->format, fmt) != 0 && !int64)) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_ValueError, "%s: a C-contiguous %s array of %d dimensions expected", what,
                     fmt[0] == 'f' ? "float32" : fmt[0] == 'i' ? "int32" : fmt[0] == 'l' ? "int64" : "bool", ndim);
        return -1;
    }
    return 0;
}

/* the buffers of descend's rows: the arrays (3) or the task's arrays and indices (6) */
#define NROWS 6
static void release(Py_buffer *b, int n) { for (int i = 0; i < n; i++) PyBuffer_Release(&b[i]); }

/* descend's rows into src and its buffers (see the module doc); r: the rows per client; -1 with
   an error set (every buffer it took released) */
static int rows_from(PyObject *rows, Py_ssize_t k, const Net *s, Source *src, Py_buffer *b, int *taken,
                     int *r) {
    const int C = s->width[s->layers], Di = s->width[0];
    const Py_ssize_t n = PyTuple_GET_SIZE(rows);
    *taken = 0;
    memset(src, 0, sizeof(Source));
    if (n == 3) {
        static const char *fmt[3] = {"f", "f", "f"}, *what[3] = {"inputs", "targets", "weights"};
        static const int ndim[3] = {3, 3, 2};
        for (int i = 0; i < 3; i++, (*taken)++)
            if (get(PyTuple_GET_ITEM(rows, i), &b[i], 0, ndim[i], fmt[i], what[i]) < 0) goto fail;
        *r = (int)b[0].shape[1];
        if (b[0].shape[0] != k || b[0].shape[2] != Di || b[1].shape[0] != k || b[1].shape[1] != *r
                || b[1].shape[2] != C || b[2].shape[0] != k || b[2].shape[1] != *r) {
            PyErr_SetString(PyExc_ValueError, "array shapes do not match the widths"); goto fail;
        }
        src->R = b[0].buf; src->T = b[1].buf; src->w = b[2].buf;
        return 0;
    }
    long width;
    if (n != 7 || (width = PyLong_AsLong(PyTuple_GET_ITEM(rows, 6))) < 1) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "rows: (inputs, targets, weights) or (features, labels, "
                            "presence, ids, positions, valid, width), width >= 1");
        return -1;
    }
    static const char *fmt[6] = {"f", "l", "f", "l", "l", "?"};
    static const char *what[6] = {"features", "labels", "presence", "ids", "positions", "valid"};
    static const int ndim[6] = {3, 2, 2, 1, 2, 2};
    const int given = PyTuple_GET_ITEM(rows, 4) != Py_None;
    if (given != (PyTuple_GET_ITEM(rows, 5) != Py_None)) {
        PyErr_SetString(PyExc_ValueError, "positions and valid: both or neither"); return -1;
    }
    for (int i = 0; i < (given ? 6 : 4); i++, (*taken)++)
        if (get(PyTuple_GET_ITEM(rows, i), &b[i], 0, ndim[i], fmt[i], what[i]) < 0) goto fail;
    const Py_ssize_t N = b[0].shape[0], m = b[0].shape[1];
    *r = given ? (int)b[4].shape[1] : (int)m;
    if (b[0].shape[2] != Di || b[1].shape[0] != N || b[1].shape[1] != m || b[2].shape[0] != N
            || b[2].shape[1] != m || b[3].shape[0] != k || (given && (b[4].shape[0] != k
            || b[5].shape[0] != k || b[5].shape[1] != *r)) || *r % width != 0) {
        PyErr_SetString(PyExc_ValueError, "array shapes do not match the widths"); goto fail;
    }
    src->gathered = 1; src->width = (int)width; src->m = (long)m;
    src->F = b[0].buf; src->labels = b[1].buf; src->presence = b[2].buf; src->ids = b[3].buf;
    src->pos = given ? b[4].buf : NULL; src->valid = given ? b[5].buf : NULL;
    for (Py_ssize_t j = 0; j < k; j++) {   /* every index in bounds: no read or write outside */
        const int64_t id = src->ids[j];
        if (id < 0 || id >= N) { PyErr_SetString(PyExc_ValueError, "ids: a client outside the features"); goto fail; }
        for (int q = 0; q < *r; q++) {
            const int64_t p = position(src, j, *r, q);
            if (p < 0 || p >= m) { PyErr_SetString(PyExc_ValueError, "positions: a sample outside the features"); goto fail; }
            const int64_t y = src->labels[id * m + p];
            if (y < 0 || y >= C) { PyErr_SetString(PyExc_ValueError, "labels: a class outside the widths"); goto fail; }
        }
    }
    return 0;
fail:
    release(b, *taken);
    return -1;
}

/* the kernel's scratch, kept from call to call and grown where a call needs more (a few hundred
   kB: allocated and freed per call, its pages came back from the system at every round, 50-70 us
   of a round of 10 clients); aligned to the widest vectors; one at a time (the kernel holds the
   GIL); NULL where no memory */
static float *scratch(size_t bytes) {
    static float *held = NULL;
    static size_t size = 0;
    const size_t vector = sizeof(float) * WIDEST;
    bytes = bytes ? (bytes + vector - 1) / vector * vector : vector;   /* (aligned_alloc: a multiple) */
    if (bytes > size) {
        free(held);
        held = aligned_alloc(vector, bytes);
        size = held ? bytes : 0;
    }
    return held;
}

static PyObject *descend(PyObject *self, PyObject *args) {
    PyObject *oX, *oout, *owidths, *orows, *ospans; int relu, samples; const char *isa;
    double lr;
    if (!PyArg_ParseTuple(args, "OOO!O!Odpps", &oX, &oout, &PyTuple_Type, &owidths, &PyTuple_Type,
                          &orows, &ospans, &lr, &relu, &samples, &isa))
        return NULL;
    Py_buffer bX, bo, bs, brows[NROWS]; PyObject *result = NULL;
    Net s; Source src; int taken = 0, r;
    const Py_ssize_t nw = PyTuple_GET_SIZE(owidths);
    if (nw < 2 || nw > MAXL + 1) {
        PyErr_SetString(PyExc_ValueError, "widths: inputs, up to 15 hidden layers, classes"); return NULL;
    }
    s.layers = (int)nw - 1; s.d = 0;
    for (int l = 0; l <= s.layers; l++) {
        long v = PyLong_AsLong(PyTuple_GET_ITEM(owidths, l));
        if (v < 1 || v > 1 << 20) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "widths must be in [1, 2^20]");
            return NULL;
        }
        s.width[l] = (int)v;
        if (l) { s.offset[l] = s.d; s.d += (long)s.width[l] * (s.width[l - 1] + 1); }
    }
    s.width[0] += 1;   /* the inputs with their one */
    typedef void (*Copy)(const Net *, const Layout *, Py_ssize_t, const int *, const Source *,
                         const float *, float *, const float **, float *);
    Copy copy = strcmp(isa, "base") == 0 ? descend_base : NULL;
#ifdef HAVE_X86_COPIES
    if (strcmp(isa, "avx512") == 0) copy = descend_avx512;
    if (strcmp(isa, "avx2") == 0) copy = descend_avx2;
#endif
    if (!copy) { PyErr_Format(PyExc_ValueError, "no kernel for the instruction set %s", isa); return NULL; }
    if (get(oX, &bX, 0, 2, "f", "models") < 0) return NULL;
    if (get(oout, &bo, 1, 2, "f", "out") < 0) goto r1;
    if (get(ospans, &bs, 0, 2, "i", "spans") < 0) goto r2;
    const Py_ssize_t k = bo.shape[0];   /* models: one row per client, or one row for all */
    if (rows_from(orows, k, &s, &src, brows, &taken, &r) < 0) goto r3;
    s.rows = r; s.lr = (float)lr; s.relu = relu; s.samples = samples; s.steps = (int)bs.shape[0];
    s.shared = bX.shape[0] == 1;
    if ((bX.shape[0] != k && !s.shared) || bX.shape[1] != s.d || bo.shape[1] != s.d || bs.shape[1] != 3) {
        PyErr_SetString(PyExc_ValueError, "array shapes do not match the widths"); goto r4;
    }
    const int *spans = (const int *)bs.buf;
    for (int st = 0; st < s.steps; st++)
        if (spans[3 * st] < 0 || spans[3 * st] > spans[3 * st + 1] || spans[3 * st + 1] > r
                || spans[3 * st + 2] < 0 || spans[3 * st + 2] > r) {
            PyErr_SetString(PyExc_ValueError, "a step's rows are outside the inputs"); goto r4;
        }
    /* a group's arrays in vectors of the widest copy's floats (a bound for every copy), then the
       pointers to its rows */
    const Layout at = layout(&s);
    float *buf = scratch(sizeof(float) * WIDEST * at.end + sizeof(float *) * WIDEST * r);
    if (!buf) { PyErr_NoMemory(); goto r4; }
    const float **rows = (const float **)(buf + WIDEST * at.end);
#ifdef HAVE_MXCSR
    /* subnormal numbers flushed to zero while the kernel runs (a softmax entry below e^-87 took
       100x the time of a step: each subnormal operand is a microcode assist); they change no
       number above 1.2e-38, and the caller's setting is restored */
    const unsigned int csr = _mm_getcsr();
    _mm_setcsr(csr | 0x8040);   /* flush to zero, denormals are zero */
#endif
    copy(&s, &at, k, spans, &src, bX.buf, bo.buf, rows, buf);
#ifdef HAVE_MXCSR
    _mm_setcsr(csr);
#endif
    result = Py_None; Py_INCREF(result);
r4: release(brows, taken);
r3: PyBuffer_Release(&bs);
r2: PyBuffer_Release(&bo);
r1: PyBuffer_Release(&bX);
    return result;
}

/* SplitMix64's mixer (fedbound/tasks/batches.py, _mix) */
static inline uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

typedef struct { uint64_t key; int64_t r; } Keyed;

/* the keys of one client are distinct (mix64 is a bijection): any sort is the stable one */
static int by_key(const void *a, const void *b) {
    const uint64_t x = ((const Keyed *)a)->key, y = ((const Keyed *)b)->key;
    return (x > y) - (x < y);
}

static PyObject *seeded_positions(PyObject *self, PyObject *args) {
    unsigned long long key; long long round_index, step, steps, batch;
    PyObject *oids, *osizes, *opos, *ovalid;
    if (!PyArg_ParseTuple(args, "KOOLLLLOO", &key, &oids, &osizes, &round_index, &step, &steps, &batch,
                          &opos, &ovalid))
        return NULL;
    Py_buffer bi, bm, bp, bv; PyObject *result = NULL; Keyed *keyed = NULL;
    if (get(oids, &bi, 0, 1, "l", "ids") < 0) return NULL;
    if (get(osizes, &bm, 0, 1, "l", "sizes") < 0) goto s1;
    if (get(opos, &bp, 1, 2, "l", "positions") < 0) goto s2;
    if (get(ovalid, &bv, 1, 2, "?", "valid") < 0) goto s3;
    const Py_ssize_t k = bi.shape[0], width = bp.shape[1];
    const int64_t *ids = bi.buf, *sizes = bm.buf;
    int64_t most = 0;
    for (Py_ssize_t j = 0; j < k; j++) most = sizes[j] > most ? sizes[j] : most;
    const int64_t slots = batch < most ? batch : most;   /* B' = min(B, max m_i) */
    if (bm.shape[0] != k || bp.shape[0] != k || bv.shape[0] != k || bv.shape[1] != width
            || steps < 0 || batch < 1 || width != steps * slots) {
        PyErr_SetString(PyExc_ValueError, "seeded_positions: shapes do not match"); goto s4;
    }
    keyed = malloc(sizeof(Keyed) * (most ? most : 1));
    if (!keyed) { PyErr_NoMemory(); goto s4; }
    int64_t *pos = bp.buf; char *valid = bv.buf;
    for (Py_ssize_t j = 0; j < k; j++) {
        const int64_t m = sizes[j], B = batch < m ? batch : m, wrap = m > 1 ? m : 1;
        const uint64_t base = mix64(mix64(key + (uint64_t)ids[j]) + (uint64_t)round_index);
        for (int64_t r = 0; r < m; r++) { keyed[r].key = mix64(base + (uint64_t)r); keyed[r].r = r; }
        if (m <= 32)   /* a few keys: an insertion sort (qsort's calls cost more than the keys) */
            for (int64_t r = 1; r < m; r++) {
                const Keyed x = keyed[r];
                int64_t i = r;
                for (; i > 0 && keyed[i - 1].key > x.key; i--) keyed[i] = keyed[i - 1];
                keyed[i] = x;
            }
        else
            qsort(keyed, (size_t)m, sizeof(Keyed), by_key);
        for (int64_t s = 0; s < steps; s++)
            for (int64_t slot = 0; slot < slots; slot++) {
                const int64_t at = j * width + s * slots + slot, ok = slot < B;
                pos[at] = ok ? keyed[((step + s) * B + slot) % wrap].r : 0;
                valid[at] = (char)ok;
            }
    }
    free(keyed);
    result = Py_None; Py_INCREF(result);
s4: PyBuffer_Release(&bv);
s3: PyBuffer_Release(&bp);
s2: PyBuffer_Release(&bm);
s1: PyBuffer_Release(&bi);
    return result;
}

/* the instruction sets this machine runs, best first */
static PyObject *isas(PyObject *self, PyObject *args) {
#ifdef HAVE_X86_COPIES
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return Py_BuildValue("(sss)", "avx512", "avx2", "base");
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return Py_BuildValue("(ss)", "avx2", "base");
#endif
    return Py_BuildValue("(s)", "base");
}

static PyMethodDef methods[] = {
    {"descend", descend, METH_VARARGS, "descend(models, out, widths, rows, spans, lr, relu, samples, isa)"},
    {"isas", isas, METH_NOARGS, "the instruction sets this machine runs, best first"},
    {"seeded_positions", seeded_positions, METH_VARARGS,
     "seeded_positions(key, ids, sizes, round, step, steps, batch, positions, valid)"},
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernels", NULL, -1, methods};
PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&module); }
