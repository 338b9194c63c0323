/* Compiled local SGD steps of the batched MLP (issue 35): fedbound/tasks/mlp.py, _compiled_steps,
   says what they compute and why; numpy's steps (mlp.descend, backend "numpy") are the reference
   they equal to float32 rounding (tests/tasks/test_mlp_kernel.py).

   descend(models, out, widths, inputs, targets, weights, spans, lr, relu, samples, isa): for each
   client j, its flat model models[j] (layers W_l (out, in) then b_l, for widths = (D, hidden...,
   classes)) after the steps spans[s] = (a, b, seen): step s on the rows a..b-1 of its inputs
   (features with their one), targets (-w onehot(y)) and weights w, written to out[j]. One copy of
   the code per instruction set (_mlp_kernel_body.h under a target pragma: AVX-512F, AVX2+FMA, the
   compiler's baseline), chosen by the caller from isas(). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXL 16   /* layers at most */

#if defined(__x86_64__) || defined(__SSE2__)
#include <xmmintrin.h>
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
} Net;

typedef struct { float *A, *dZ, *W, *Wt, *b; } Layer;

/* n rounded up to a multiple of w (a power of 2): the kernel's rows are whole vectors */
static inline int ceil_to(int n, int w) { return (n + w - 1) & ~(w - 1); }
#define PAD(n) ceil_to(n, VW)
#define WIDEST 16   /* the widest vector of any copy, in floats (AVX-512) */

static inline float *carve(float **buf, long n) { float *p = *buf; *buf += n; return p; }

#define NAME(x) x##_base
#define VEC v4
#define VI vi4
#define VW 4
#include "_mlp_kernel_body.h"
#undef NAME
#undef VEC
#undef VI
#undef VW

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define NAME(x) x##_avx2
#define VEC v8
#define VI vi8
#define VW 8
#include "_mlp_kernel_body.h"
#undef NAME
#undef VEC
#undef VI
#undef VW
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
#define NAME(x) x##_avx512
#define VEC v16
#define VI vi16
#define VW 16
#include "_mlp_kernel_body.h"
#undef NAME
#undef VEC
#undef VI
#undef VW
#pragma GCC pop_options
#define HAVE_AVX2 1
#endif

static int get(PyObject *o, Py_buffer *b, int writable, int ndim, const char *fmt, const char *what) {
    if (PyObject_GetBuffer(o, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (b->ndim != ndim || strcmp(b->format, fmt) != 0) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_ValueError, "%s: a C-contiguous %s array of %d dimensions expected", what,
                     fmt[0] == 'f' ? "float32" : "int32", ndim);
        return -1;
    }
    return 0;
}

static PyObject *descend(PyObject *self, PyObject *args) {
    PyObject *oX, *oout, *owidths, *oR, *oT, *ow, *ospans; int relu, samples; const char *isa;
    double lr;
    if (!PyArg_ParseTuple(args, "OOO!OOOOdpps", &oX, &oout, &PyTuple_Type, &owidths, &oR, &oT, &ow,
                          &ospans, &lr, &relu, &samples, &isa))
        return NULL;
    Py_buffer bX, bo, bR, bT, bw, bs; PyObject *result = NULL; float *buf = NULL;
    Net s;
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
    if (get(oX, &bX, 0, 2, "f", "models") < 0) return NULL;
    if (get(oout, &bo, 1, 2, "f", "out") < 0) goto r1;
    if (get(oR, &bR, 0, 3, "f", "inputs") < 0) goto r2;
    if (get(oT, &bT, 0, 3, "f", "targets") < 0) goto r3;
    if (get(ow, &bw, 0, 2, "f", "weights") < 0) goto r4;
    if (get(ospans, &bs, 0, 2, "i", "spans") < 0) goto r5;
    const Py_ssize_t k = bX.shape[0];
    s.rows = (int)bR.shape[1]; s.lr = (float)lr; s.relu = relu; s.samples = samples; s.steps = (int)bs.shape[0];
    const int r = s.rows, C = s.width[s.layers];
    if (bX.shape[1] != s.d || bo.shape[0] != k || bo.shape[1] != s.d || bR.shape[0] != k
            || bR.shape[2] != s.width[0] || bT.shape[0] != k || bT.shape[1] != r || bT.shape[2] != C
            || bw.shape[0] != k || bw.shape[1] != r || bs.shape[1] != 3) {
        PyErr_SetString(PyExc_ValueError, "array shapes do not match the widths"); goto r6;
    }
    const int *spans = (const int *)bs.buf;
    for (int st = 0; st < s.steps; st++)
        if (spans[3 * st] < 0 || spans[3 * st] > spans[3 * st + 1] || spans[3 * st + 1] > r
                || spans[3 * st + 2] < 0 || spans[3 * st + 2] > r) {
            PyErr_SetString(PyExc_ValueError, "a step's rows are outside the inputs"); goto r6;
        }
    /* the scratch of client() at the widest vectors' padding (a bound for every copy) */
    const long r8 = ceil_to(r, WIDEST), Di8 = ceil_to(s.width[0], WIDEST), h8 = ceil_to(s.width[1], WIDEST);
    long per = h8 * Di8 + r * Di8 + (long)s.width[0] * (r8 + WIDEST) + r * h8 + h8 * (r8 + WIDEST) + r * h8 + r * r8;
    for (int l = 1; l <= s.layers; l++) {
        const long o8 = ceil_to(s.width[l], WIDEST), i8 = ceil_to(s.width[l - 1], WIDEST);
        per += 2L * r * o8 + 2L * o8 * i8 + o8;
    }
    buf = malloc(sizeof(float) * per);
    if (!buf) { PyErr_NoMemory(); goto r6; }
#ifdef HAVE_MXCSR
    /* subnormal numbers flushed to zero while the kernel runs (a softmax entry below e^-87 took
       100x the time of a step: each subnormal operand is a microcode assist); they change no
       number above 1.2e-38, and the caller's setting is restored */
    const unsigned int csr = _mm_getcsr();
    _mm_setcsr(csr | 0x8040);   /* flush to zero, denormals are zero */
#endif
#ifdef HAVE_AVX2
    if (strcmp(isa, "avx512") == 0)
        descend_avx512(&s, k, spans, bR.buf, bT.buf, bw.buf, bX.buf, bo.buf, buf);
    else if (strcmp(isa, "avx2") == 0)
        descend_avx2(&s, k, spans, bR.buf, bT.buf, bw.buf, bX.buf, bo.buf, buf);
    else
#endif
    if (strcmp(isa, "base") == 0)
        descend_base(&s, k, spans, bR.buf, bT.buf, bw.buf, bX.buf, bo.buf, buf);
    else {
#ifdef HAVE_MXCSR
        _mm_setcsr(csr);
#endif
        PyErr_Format(PyExc_ValueError, "no kernel for the instruction set %s", isa); free(buf); goto r6;
    }
#ifdef HAVE_MXCSR
    _mm_setcsr(csr);
#endif
    free(buf);
    result = Py_None; Py_INCREF(result);
r6: PyBuffer_Release(&bs);
r5: PyBuffer_Release(&bw);
r4: PyBuffer_Release(&bT);
r3: PyBuffer_Release(&bR);
r2: PyBuffer_Release(&bo);
r1: PyBuffer_Release(&bX);
    return result;
}

/* the instruction sets this machine runs, best first */
static PyObject *isas(PyObject *self, PyObject *args) {
#ifdef HAVE_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return Py_BuildValue("(sss)", "avx512", "avx2", "base");
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return Py_BuildValue("(ss)", "avx2", "base");
#endif
    return Py_BuildValue("(s)", "base");
}

static PyMethodDef methods[] = {
    {"descend", descend, METH_VARARGS, "descend(models, out, widths, inputs, targets, weights, spans, lr, relu, samples, isa)"},
    {"isas", isas, METH_NOARGS, "the instruction sets this machine runs, best first"},
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mlp_kernel", NULL, -1, methods};
PyMODINIT_FUNC PyInit__mlp_kernel(void) { return PyModule_Create(&module); }
