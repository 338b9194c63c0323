/* The body of the kernel, compiled once per instruction set: _kernels.c includes it with NAME(x)
   giving each copy's names, VEC / VI its vectors of VW floats / ints, TM x TN its tile of
   accumulators (what its registers hold), and the target set by a pragma around the include.

   Lanes: VW clients run side by side, client g of a group in lane g of every vector. Each number of
   a client (a weight, a feature, an activation, a gradient) is one lane of a vector, so every
   operation is elementwise across the group's clients: a step of VW clients costs the vector
   instructions that one client's step costs in scalars, whatever the widths (no width padded to
   whole vectors, no horizontal sum or maximum, the loops' overhead shared by VW clients). Arrays
   are of vectors, row-major; the steps are those of fedbound/tasks/mlp.py (_compiled_steps). */

/* C(i, j) = acc or C(i, j) + sign acc (add), acc = sum_k A(i, k) B(k, j), for a tile of MM <= TM
   rows and NN <= TN columns held in registers: A(i, k) = A[i am + k ak], B(k, j) = B[k bk + j bn],
   C(i, j) = C[i cm + j] (strides in vectors: a transposed operand is its strides swapped) */
static inline __attribute__((always_inline)) void NAME(tile)(const int MM, const int NN, int K,
        const VEC *A, long am, long ak, const VEC *B, long bk, long bn, VEC *C, long cm, float sign,
        int add) {
    VEC acc[TM][TN];
    for (int i = 0; i < MM; i++) for (int j = 0; j < NN; j++) acc[i][j] = (VEC){0};
    for (int k = 0; k < K; k++) {
        VEC a[TM];
        for (int i = 0; i < MM; i++) a[i] = A[i * am + k * ak];
        for (int j = 0; j < NN; j++) {
            const VEC b = B[k * bk + j * bn];
            for (int i = 0; i < MM; i++) acc[i][j] += a[i] * b;
        }
    }
    for (int i = 0; i < MM; i++)
        for (int j = 0; j < NN; j++) {
            if (add) C[i * cm + j] += sign * acc[i][j];
            else C[i * cm + j] = acc[i][j];
        }
}

/* the tiles of MM rows (NN = nn <= TN columns: one copy of the tile per width) */
static inline __attribute__((always_inline)) void NAME(tiles)(const int MM, int nn, int K,
        const VEC *A, long am, long ak, const VEC *B, long bk, long bn, VEC *C, long cm, float sign,
        int add) {
#define T(N) NAME(tile)(MM, N, K, A, am, ak, B, bk, bn, C, cm, sign, add)
    if (nn == TN) T(TN);
    else if (nn == 1) T(1);
    else if (nn == 2) T(2);
    else if (TN > 3 && nn == 3) T(3);
#undef T
}

/* C (M, N) = A B, or C + sign A B (add), in tiles of TM x TN (the strides of tile()) */
static void NAME(product)(int M, int N, int K, const VEC *A, long am, long ak, const VEC *B,
                          long bk, long bn, VEC *C, long cm, float sign, int add) {
    for (int i0 = 0; i0 < M; i0 += TM) {
        const int mm = M - i0 < TM ? M - i0 : TM;
        for (int j0 = 0; j0 < N; j0 += TN) {
            const int nn = N - j0 < TN ? N - j0 : TN;
#define T(R) NAME(tiles)(R, nn, K, A + i0 * am, am, ak, B + j0 * bn, bk, bn, C + i0 * cm + j0, cm, sign, add)
            if (mm == TM) T(TM);
            else if (mm == 1) T(1);
            else if (mm == 2) T(2);
            else if (TM > 3 && mm == 3) T(3);
#undef T
        }
    }
}

/* exp of VW floats: x clamped to [-87.3, 88.7], e^x = 2^n e^r with n = floor(x log2 e + 1/2),
   r = x - n ln 2 in two parts, e^r by Cephes' degree-7 polynomial (expf: 1-2 ulp) */
static inline __attribute__((always_inline)) VEC NAME(vexp)(VEC x) {
    x = MIN(MAX(x, (VEC){0} - 87.3f), (VEC){0} + 88.7f);
    const VEC t = x * 1.44269504088896341f + 0.5f;
    VI n = __builtin_convertvector(t, VI);
    n += (VI)(__builtin_convertvector(n, VEC) > t);   /* floor: truncation, one less below 0 */
    const VEC fn = __builtin_convertvector(n, VEC);
    const VEC r = x - fn * 0.693359375f + fn * 2.12194440e-4f;
    VEC p = r * 1.9875691500e-4f + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.f;
    return p * (VEC)((n + 127) << 23);
}

/* tanh of VW floats: Eigen's rational approximation x P(x^2) / Q(x^2) on [-7.905, 7.905] (its
   clamp: tanh is +-1 to float32 beyond), x itself below 4e-4, 1 / Q the instruction set's
   reciprocal estimate (RCP: 12 or 14 bits) and a Newton step (a division costs 10-16 cycles a
   vector: with clients in lanes, more than the products of a layer's forward); within 4.5e-7 of
   tanh (measured against float64 over [-10, 10] in steps of 1e-5) */
static inline __attribute__((always_inline)) VEC NAME(vtanh)(VEC x) {
    const VEC c = (VEC){0} + 7.90531110763549805f, y = MIN(MAX(x, -c), c);
    const VEC y2 = y * y;
    VEC p = y2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
    p = p * y2 - 8.60467152213735e-11f;
    p = p * y2 + 5.12229709037114e-08f;
    p = p * y2 + 1.48572235717979e-05f;
    p = p * y2 + 6.37261928875436e-04f;
    p = p * y2 + 4.89352455891786e-03f;
    VEC q = y2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
    q = q * y2 + 2.26843463243900e-03f;
    q = q * y2 + 4.89352518554385e-03f;
    const VEC e = (VEC)RCP(q), inv = e * (2.f - q * e), t = y * p * inv, a = y * y;
    const VI small = (VI)(a < 1.6e-7f);
    return (VEC)(((VI)x & small) | ((VI)t & ~small));
}

/* v[t][g] <- v[g][t]: VW vectors of VW floats transposed in registers, in log2 VW rounds of
   two-vector shuffles; round b swaps bit b of a vector's number with bit b of its lanes': vector g
   (bit b 0) takes lane i of g where i's bit b is 0, else lane i ^ 2^b of g ^ 2^b (SWAPS[2 b]), and
   vector g ^ 2^b the others (SWAPS[2 b + 1]; an index >= VW: the second vector's lane). Both loops
   unrolled: the vectors stay in registers and the test of bit b is gone (as loops, GCC kept them on
   the stack: the moves into and out of lanes took 18 % of the kernel, 9 % unrolled; 100 clients of
   digits' MLP 667 -> 596 us with AVX-512) */
#if VW == 16
#define SWAPS { \
    (VI){0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30}, \
    (VI){1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31}, \
    (VI){0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29}, \
    (VI){2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31}, \
    (VI){0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27}, \
    (VI){4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31}, \
    (VI){0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23}, \
    (VI){8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31} \
}
#elif VW == 8
#define SWAPS { \
    (VI){0, 8, 2, 10, 4, 12, 6, 14}, \
    (VI){1, 9, 3, 11, 5, 13, 7, 15}, \
    (VI){0, 1, 8, 9, 4, 5, 12, 13}, \
    (VI){2, 3, 10, 11, 6, 7, 14, 15}, \
    (VI){0, 1, 2, 3, 8, 9, 10, 11}, \
    (VI){4, 5, 6, 7, 12, 13, 14, 15} \
}
#else
#define SWAPS { \
    (VI){0, 4, 2, 6}, \
    (VI){1, 5, 3, 7}, \
    (VI){0, 1, 4, 5}, \
    (VI){2, 3, 6, 7} \
}
#endif
static inline __attribute__((always_inline)) void NAME(transpose)(VEC *v) {
    static const VI swaps[] = SWAPS;
#pragma GCC unroll 4
    for (int round = 0, bit = 1; bit < VW; round++, bit <<= 1)
#pragma GCC unroll 16
        for (int g = 0; g < VW; g++)
            if (!(g & bit)) {
                const VEC a = v[g], b = v[g | bit];
                v[g] = __builtin_shuffle(a, b, swaps[2 * round]);
                v[g | bit] = __builtin_shuffle(a, b, swaps[2 * round + 1]);
            }
}
#undef SWAPS

/* between rows and lanes: the floats rows[g][at + t] (g < nl, t < n <= VW) and lane g of the
   vectors v[t step]: into the vectors (their other lanes 0), or out of them into the rows where
   `store`; whole blocks (n = VW) transposed in registers */
static void NAME(lanes)(const float *const *rows, long at, int nl, int n, VEC *v, long step, int store) {
    VEC b[VW];
    if (n == VW && store) {
        for (int t = 0; t < VW; t++) b[t] = v[t * step];
        NAME(transpose)(b);
        for (int g = 0; g < nl; g++) *(VEC *)(rows[g] + at) = b[g];
    } else if (n == VW) {
        for (int g = 0; g < VW; g++) b[g] = g < nl ? *(const VEC *)(rows[g] + at) : (VEC){0};
        NAME(transpose)(b);
        for (int t = 0; t < VW; t++) v[t * step] = b[t];
    } else {
        for (int t = 0; t < n; t++) {
            float *lane = (float *)(v + t * step);
            if (store) for (int g = 0; g < nl; g++) ((float *)rows[g])[at + t] = lane[g];
            else for (int g = 0; g < VW; g++) lane[g] = g < nl ? rows[g][at + t] : 0.f;
        }
    }
}

/* the group's layers V_l = [W_l | b_l] (out, in + 1) from the flat models x (stride 0: one model
   for all; else lane g's from x + g stride, g < nl, the other lanes 0), or into out (lane g to
   out + g stride, g < nl) where out is given */
static void NAME(models)(const Net *s, VEC **V, const float *x, float *out, long stride, int nl) {
    const float *rows[VW];
    for (int g = 0; g < nl; g++) rows[g] = (out ? out : x) + g * stride;
    for (int l = 1; l <= s->layers; l++) {
        const int n = s->width[l], in = s->width[l - 1] - (l == 1);
        const long W = s->offset[l], b = W + (long)n * in;   /* W_l (n, in), then b_l */
        if (!out && !stride) {
            for (int o = 0; o < n; o++) {
                for (int i = 0; i < in; i++) V[l][(long)o * (in + 1) + i] = (VEC){0} + x[W + (long)o * in + i];
                V[l][(long)o * (in + 1) + in] = (VEC){0} + x[b + o];
            }
            continue;
        }
        for (int o = 0; o < n; o++)
            for (int i = 0; i < in; i += VW)
                NAME(lanes)(rows, W + (long)o * in + i, nl, in - i < VW ? in - i : VW,
                            V[l] + (long)o * (in + 1) + i, 1, out != NULL);
        for (int o = 0; o < n; o += VW)
            NAME(lanes)(rows, b + o, nl, n - o < VW ? n - o : VW, V[l] + (long)o * (in + 1) + in, in + 1,
                        out != NULL);
    }
}

/* act(Z) (rows of `out`) into the rows of A (rows of out + 1: the last, the one, left) */
static void NAME(activate)(const VEC *Z, VEC *A, int m, int out, int relu) {
    for (int q = 0; q < m; q++)
        for (int o = 0; o < out; o++) {
            const VEC z = Z[(long)q * out + o];
            if (relu) A[(long)q * (out + 1) + o] = MAX(z, (VEC){0});
            else A[(long)q * (out + 1) + o] = NAME(vtanh)(z);
        }
}

/* dA act'(A) in place (dA rows of `in`, A rows of in + 1): tanh' = 1 - A^2, relu' = [A > 0] */
static void NAME(derivative)(VEC *dA, const VEC *A, int m, int in, int relu) {
    for (int q = 0; q < m; q++)
        for (int i = 0; i < in; i++) {
            const VEC a = A[(long)q * (in + 1) + i];
            VEC *d = &dA[(long)q * in + i];
            if (relu) *d = (VEC)((VI)*d & (VI)(a > 0.f));
            else *d *= 1.f - a * a;
        }
}

/* the logits Z (m rows of C) into the gradient lr w (softmax(Z) - onehot(y)) = lr w softmax(Z) +
   lr T, in place: each lane's row shifted by its max (w, T: lr times the weights and targets) */
static void NAME(softmax)(VEC *Z, int m, int C, const VEC *w, const VEC *T) {
    for (int q = 0; q < m; q++) {
        VEC *z = Z + (long)q * C, top = z[0], total = (VEC){0};
        for (int c = 1; c < C; c++) top = MAX(top, z[c]);
        for (int c = 0; c < C; c++) { z[c] = NAME(vexp)(z[c] - top); total += z[c]; }
        const VEC scale = w[q] / total;
        for (int c = 0; c < C; c++) z[c] = z[c] * scale + T[(long)q * C + c];
    }
}

/* the steps of a group of nl <= VW clients, j0..j0 + nl - 1 (mlp.py, _compiled_steps): prepare()
   puts their rows in lanes (features with their one R (r, Di), lr times their targets T (r, C),
   lr times their weights w (r,)); layer l's input X_l is R (l = 1) or [act(Z_{l-1}) | 1]
   (r, in + 1), its logits Z_l in the rows of its gradient dZ_l (r, out) until the backward, which
   writes dZ_l V_l's first columns into dZ_{l-1} (times act'). The first layer steps in weight
   space (V_1 -= dZ_1^T R_batch at every step) or in sample space (s->samples: P = R V_1^T and the
   Gram matrix G = R R^T once, Z_1 = P - G D with D the sum of the earlier steps' dZ_1 by row,
   V_1 -= D^T R once at the end). Its arrays lie in buf where `at` says (_kernels.c, layout()). */
static void NAME(group)(const Net *s, const Layout *at, const int *spans, const Source *src,
                        Py_ssize_t j0, int nl, const float *X, float *out, const float **rows, VEC *buf) {
    const int r = s->rows, Di = s->width[0], L = s->layers, C = s->width[L], h = s->width[1];
    VEC *V[MAXL + 1], *In[MAXL + 1], *dZ[MAXL + 1];
    VEC *R = buf + at->R, *T = buf + at->T, *w = buf + at->w, *P = buf + at->P, *G = buf + at->G,
        *D = buf + at->D;
    for (int l = 1; l <= L; l++) {
        const int i = s->width[l - 1] + 1;   /* a later layer's inputs with their one */
        V[l] = buf + at->V[l]; dZ[l] = buf + at->dZ[l]; In[l] = buf + at->In[l];
        if (l > 1) for (int q = 0; q < r; q++) In[l][(long)q * i + i - 1] = (VEC){0} + 1.f;
    }
    prepare(s, src, j0, nl, VW, rows, (float *)T, (float *)w);
    for (int q = 0; q < r; q++)
        for (int i = 0; i < Di; i += VW)
            NAME(lanes)(rows + q * VW, i, nl, Di - i < VW ? Di - i : VW, R + (long)q * Di + i, 1, 0);
    NAME(models)(s, V, X + (s->shared ? 0 : j0 * s->d), NULL, s->shared ? 0 : s->d, nl);
    if (s->samples) {
        NAME(product)(r, h, Di, R, Di, 1, V[1], 1, Di, P, h, 1.f, 0);
        NAME(product)(r, r, Di, R, Di, 1, R, 1, Di, G, r, 1.f, 0);
        memset(D, 0, sizeof(VEC) * r * h);
    }
    for (int st = 0; st < s->steps; st++) {
        const int a = spans[3 * st], b = spans[3 * st + 1], seen = spans[3 * st + 2], m = b - a;
        if (s->samples) {
            memcpy(dZ[1] + (long)a * h, P + (long)a * h, sizeof(VEC) * m * h);
            if (seen) NAME(product)(m, h, seen, G + (long)a * r, r, 1, D, h, 1, dZ[1] + (long)a * h, h, -1.f, 1);
        } else {
            NAME(product)(m, h, Di, R + (long)a * Di, Di, 1, V[1], 1, Di, dZ[1] + (long)a * h, h, 1.f, 0);
        }
        for (int l = 1; l < L; l++) {   /* X_{l+1} = [act(Z_l) | 1], Z_{l+1} = X_{l+1} V_{l+1}^T */
            const int o = s->width[l], n = s->width[l + 1];
            NAME(activate)(dZ[l] + (long)a * o, In[l + 1] + (long)a * (o + 1), m, o, s->relu);
            NAME(product)(m, n, o + 1, In[l + 1] + (long)a * (o + 1), o + 1, 1, V[l + 1], 1, o + 1,
                          dZ[l + 1] + (long)a * n, n, 1.f, 0);
        }
        NAME(softmax)(dZ[L] + (long)a * C, m, C, w + a, T + (long)a * C);
        for (int l = L; l > 1; l--) {   /* dZ_{l-1} = dZ_l W_l * act'; V_l -= dZ_l^T X_l */
            const int o = s->width[l], i = s->width[l - 1];
            const VEC *g = dZ[l] + (long)a * o, *x = In[l] + (long)a * (i + 1);
            NAME(product)(m, i, o, g, o, 1, V[l], i + 1, 1, dZ[l - 1] + (long)a * i, i, 1.f, 0);
            NAME(derivative)(dZ[l - 1] + (long)a * i, x, m, i, s->relu);
            NAME(product)(o, i + 1, m, g, 1, o, x, i + 1, 1, V[l], i + 1, -1.f, 1);
        }
        if (s->samples)
            for (long e = (long)a * h; e < (long)b * h; e++) D[e] += dZ[1][e];
        else
            NAME(product)(h, Di, m, dZ[1] + (long)a * h, 1, h, R + (long)a * Di, Di, 1, V[1], Di, -1.f, 1);
    }
    if (s->samples) NAME(product)(h, Di, r, D, 1, h, R, Di, 1, V[1], Di, -1.f, 1);
    NAME(models)(s, V, NULL, out + j0 * s->d, s->d, nl);
}

static void NAME(descend)(const Net *s, const Layout *at, Py_ssize_t k, const int *spans,
                          const Source *src, const float *X, float *out, const float **rows, float *buf) {
    for (Py_ssize_t j0 = 0; j0 < k; j0 += VW)
        NAME(group)(s, at, spans, src, j0, k - j0 < VW ? (int)(k - j0) : VW, X, out, rows, (VEC *)buf);
}
