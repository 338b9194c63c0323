/* The body of the kernel, compiled once per instruction set (_kernels.c includes it with
   NAME(x) giving each copy's names and the target set by a pragma around the include). */

/* C[i, :] (+)= alpha sum_k A(i, k) B[k, :] for a tile of MM <= 4 rows and NV <= 2 vectors of VW
   columns, held in registers; A(i, k) = A[i sam + k sak] (so a transposed A is strides) */
static inline __attribute__((always_inline)) void NAME(tile)(const int MM, const int NV, int K,
        const float *A, long sam, long sak, const float *B, long ldb, float *C, long ldc, float alpha,
        int add) {
    VEC acc[4][2];
    for (int i = 0; i < MM; i++) for (int v = 0; v < NV; v++) acc[i][v] = (VEC){0};
    for (int k = 0; k < K; k++) {
        const float *b = B + k * ldb;
        VEC b0 = *(const VEC *)b, b1 = NV == 2 ? *(const VEC *)(b + VW) : b0;
        for (int i = 0; i < MM; i++) {
            const float a = A[i * sam + k * sak];
            acc[i][0] += a * b0;
            if (NV == 2) acc[i][1] += a * b1;
        }
    }
    for (int i = 0; i < MM; i++)
        for (int v = 0; v < NV; v++) {
            VEC *c = (VEC *)(C + i * ldc + VW * v);
            *c = add ? *c + alpha * acc[i][v] : alpha * acc[i][v];
        }
}

/* C (M, N8) (+)= alpha A (M, K) B (K, N8), N8 a multiple of VW: tiles of 4 rows x 2 VW columns */
static void NAME(product)(int M, int N8, int K, const float *A, long sam, long sak, const float *B,
                          long ldb, float *C, long ldc, float alpha, int add) {
    for (int m0 = 0; m0 < M; m0 += 4) {
        const float *a = A + m0 * sam;
        float *c = C + m0 * ldc;
        for (int n0 = 0; n0 < N8; n0 += 2 * VW) {
            const int nv = N8 - n0 >= 2 * VW ? 2 : 1;
            const int mm = M - m0 >= 4 ? 4 : M - m0;
#define TILE(R, N) NAME(tile)(R, N, K, a, sam, sak, B + n0, ldb, c + n0, ldc, alpha, add)
            if (nv == 2) {
                if (mm == 4) TILE(4, 2); else if (mm == 3) TILE(3, 2); else if (mm == 2) TILE(2, 2); else TILE(1, 2);
            } else {
                if (mm == 4) TILE(4, 1); else if (mm == 3) TILE(3, 1); else if (mm == 2) TILE(2, 1); else TILE(1, 1);
            }
#undef TILE
        }
    }
}

/* exp of VW floats: x clamped to [-87.3, 88.7], e^x = 2^n e^r with n = floor(x log2 e + 1/2),
   r = x - n ln 2 in two parts, e^r by Cephes' degree-7 polynomial (expf: 1-2 ulp) */
static inline __attribute__((always_inline)) VEC NAME(vexp)(VEC x) {
    const VEC lo = x * 0.f - 87.3f, hi = x * 0.f + 88.7f;
    x = (VEC)(((VI)x & (VI)(x >= lo)) | ((VI)lo & (VI)(x < lo)));
    x = (VEC)(((VI)x & (VI)(x <= hi)) | ((VI)hi & (VI)(x > hi)));
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
   clamp: tanh is +-1 to float32 beyond), x itself below 4e-4; within 4e-7 of tanh (3.9e-7
   measured against float64 over [-10, 10] in steps of 1e-5) */
static inline __attribute__((always_inline)) VEC NAME(vtanh)(VEC x) {
    const VEC c = x * 0.f + 7.90531110763549805f;
    VEC y = (VEC)(((VI)x & (VI)(x <= c)) | ((VI)c & (VI)(x > c)));
    y = (VEC)(((VI)y & (VI)(y >= -c)) | ((VI)-c & (VI)(y < -c)));
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
    const VEC t = y * p / q, a = y * y;
    const VI small = (VI)(a < 1.6e-7f);
    return (VEC)(((VI)x & small) | ((VI)t & ~small));
}

static inline __attribute__((always_inline)) VEC NAME(vmax)(VEC a, VEC b) {
    return (VEC)(((VI)a & (VI)(a >= b)) | ((VI)b & (VI)(a < b)));
}

/* the largest and the sum of a vector's VW lanes: halves folded onto each other in registers */
#if VW == 16
#define FOLDS {(VI){8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7}, \
               (VI){4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11}, \
               (VI){2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13}, \
               (VI){1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14}}
#define NFOLDS 4
#elif VW == 8
#define FOLDS {(VI){4, 5, 6, 7, 0, 1, 2, 3}, (VI){2, 3, 0, 1, 6, 7, 4, 5}, (VI){1, 0, 3, 2, 5, 4, 7, 6}}
#define NFOLDS 3
#else
#define FOLDS {(VI){2, 3, 0, 1}, (VI){1, 0, 3, 2}}
#define NFOLDS 2
#endif
static inline __attribute__((always_inline)) float NAME(hmax)(VEC v) {
    const VI folds[NFOLDS] = FOLDS;
    for (int i = 0; i < NFOLDS; i++) v = NAME(vmax)(v, __builtin_shuffle(v, folds[i]));
    return v[0];
}

static inline __attribute__((always_inline)) float NAME(hsum)(VEC v) {
    const VI folds[NFOLDS] = FOLDS;
    for (int i = 0; i < NFOLDS; i++) v += __builtin_shuffle(v, folds[i]);
    return v[0];
}
#undef FOLDS
#undef NFOLDS

/* act(Z) (n a multiple of VW, into A) */
static void NAME(activate)(const float *Z, float *A, long n, int relu) {
    if (relu) for (long i = 0; i < n; i++) A[i] = Z[i] > 0.f ? Z[i] : 0.f;
    else for (long i = 0; i < n; i += VW) *(VEC *)(A + i) = NAME(vtanh)(*(const VEC *)(Z + i));
}

/* dA act'(A) in place: tanh' = 1 - A^2, relu' = [A > 0] */
static void NAME(derivative)(float *dA, const float *A, long n, int relu) {
    if (relu) for (long i = 0; i < n; i++) dA[i] = A[i] > 0.f ? dA[i] : 0.f;
    else for (long i = 0; i < n; i++) dA[i] *= 1.f - A[i] * A[i];
}

/* B (cols x rows8) = A (rows x cols)^T, A's rows of stride lda, B's of stride ldb */
static void NAME(transpose)(const float *A, int rows, int cols, long lda, float *B, long ldb) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) B[j * ldb + i] = A[i * lda + j];
}

/* one client's steps (fedbound/tasks/mlp.py, _compiled_steps) on its rows (prepare(): its
   features with their one, lr times its targets padded to whole vectors, lr times its weights).
   The first layer held as V_1 = [W_1 | b_1] (h, D + 1) in rows of Di8 floats, its inputs R as
   rows (Rp) and columns (Rt); every activation and gradient as rows of whole vectors (PAD), the
   padding 0; a later layer as W_l (out, in) and W_l^T (in, out), both updated at every step (a
   product each: the forward takes W_l^T, the backward W_l) */
static void NAME(client)(const Net *s, const int *spans, const Batch *batch, const float *x,
                         float *out_x, float *buf) {
    const int r = s->rows, r8 = PAD(r), rt = r8 + VW, Di = s->width[0], Di8 = PAD(Di);
    const int L = s->layers, C = s->width[L], h = s->width[1], h8 = PAD(h), c8 = PAD(C);
    Layer ly[MAXL + 1];
    float *V1 = carve(&buf, (long)h * Di8), *Rp = carve(&buf, (long)r * Di8), *Rt = carve(&buf, (long)Di * rt);
    float *D = carve(&buf, (long)r * h8), *PT = carve(&buf, (long)h * rt), *P = NULL, *G = NULL;
    for (int l = 1; l <= L; l++) {
        const int out = s->width[l], o8 = PAD(out), in = s->width[l - 1], i8 = PAD(in);
        ly[l].A = l < L ? carve(&buf, (long)r * o8) : NULL;
        ly[l].dZ = carve(&buf, (long)r * o8);
        if (l > 1) {
            ly[l].W = carve(&buf, (long)out * i8);
            ly[l].Wt = carve(&buf, (long)in * o8);
            ly[l].b = carve(&buf, o8);
            const float *Wx = x + s->offset[l], *bx = Wx + out * in;
            memset(ly[l].W, 0, sizeof(float) * out * i8);   /* the padding stays 0 */
            memset(ly[l].Wt, 0, sizeof(float) * in * o8);
            memset(ly[l].b, 0, sizeof(float) * o8);
            for (int o = 0; o < out; o++) {
                memcpy(ly[l].W + o * i8, Wx + o * in, sizeof(float) * in);
                for (int i = 0; i < in; i++) ly[l].Wt[i * o8 + o] = Wx[o * in + i];
                ly[l].b[o] = bx[o];
            }
        }
    }
    memset(V1, 0, sizeof(float) * h * Di8);
    memset(Rp, 0, sizeof(float) * r * Di8);
    memset(Rt, 0, sizeof(float) * Di * rt);
    for (int o = 0; o < h; o++) {
        memcpy(V1 + o * Di8, x + o * (Di - 1), sizeof(float) * (Di - 1));
        V1[o * Di8 + Di - 1] = x[(long)h * (Di - 1) + o];
    }
    for (int q = 0; q < r; q++) {
        const float *row = batch->row[q];
        memcpy(Rp + q * Di8, row, sizeof(float) * Di);
        for (int j = 0; j < Di; j++) Rt[j * rt + q] = row[j];
    }
    if (s->samples) {   /* P = R V_1^T as (V_1 R^T)^T, the Gram matrix R R^T */
        P = carve(&buf, (long)r * h8); G = carve(&buf, (long)r * r8);
        memset(P, 0, sizeof(float) * r * h8);
        NAME(product)(h, r8, Di, V1, Di8, 1, Rt, rt, PT, rt, 1.f, 0);
        NAME(transpose)(PT, h, r, rt, P, h8);
        NAME(product)(r, r8, Di, Rp, Di8, 1, Rt, rt, G, r8, 1.f, 0);
        memset(D, 0, sizeof(float) * r * h8);
    }
    for (int st = 0; st < s->steps; st++) {
        const int a = spans[3 * st], b = spans[3 * st + 1], seen = spans[3 * st + 2], m = b - a;
        float *Z1 = ly[1].dZ + (long)a * h8;   /* Z_1 in dZ_1's rows until the backward */
        if (s->samples) {
            memcpy(Z1, P + (long)a * h8, sizeof(float) * m * h8);
            if (seen) NAME(product)(m, h8, seen, G + (long)a * r8, r8, 1, D, h8, Z1, h8, -1.f, 1);
        } else {   /* Z_1 = R V_1^T as (V_1 R^T)^T */
            memset(Z1, 0, sizeof(float) * m * h8);
            NAME(product)(h, PAD(m), Di, V1, Di8, 1, Rt + a, rt, PT, rt, 1.f, 0);
            NAME(transpose)(PT, h, m, rt, Z1, h8);
        }
        for (int l = 1; l <= L; l++) {
            const int out = s->width[l], o8 = PAD(out), in = s->width[l - 1];
            float *Z = ly[l].dZ + (long)a * o8;
            if (l > 1) {
                NAME(product)(m, o8, in, ly[l - 1].A + (long)a * PAD(in), PAD(in), 1, ly[l].Wt, o8, Z, o8, 1.f, 0);
                for (int q = 0; q < m; q++)
                    for (int c = 0; c < o8; c += VW) *(VEC *)(Z + q * o8 + c) += *(const VEC *)(ly[l].b + c);
            }
            if (l < L) NAME(activate)(Z, ly[l].A + (long)a * o8, (long)m * o8, s->relu);
        }
        float *ZL = ly[L].dZ + (long)a * c8;
        VI lane;   /* a vector's lane numbers: lane + c < C where a row's vector at c holds logits */
        for (int j = 0; j < VW; j++) lane[j] = j;
        const VEC pad = (VEC){0} - 1000.f;
        for (int q = 0; q < m; q++) {   /* exp(Z - max Z), the padding at -1000 (exp: 0) */
            float *z = ZL + q * c8;
            VEC top = pad;
            for (int c = 0; c < c8; c += VW) {
                const VI logit = lane + c < C;
                *(VEC *)(z + c) = (VEC)(((VI)*(const VEC *)(z + c) & logit) | ((VI)pad & ~logit));
                top = NAME(vmax)(top, *(const VEC *)(z + c));
            }
            const float shift = NAME(hmax)(top);
            for (int c = 0; c < c8; c += VW) *(VEC *)(z + c) = NAME(vexp)(*(const VEC *)(z + c) - shift);
        }
        for (int q = 0; q < m; q++) {   /* lr w (softmax(Z) - onehot(y)) = lr w softmax(Z) + lr T */
            float *z = ZL + q * c8;
            const float *t = batch->T + (long)(a + q) * c8;
            VEC total = *(const VEC *)z;
            for (int c = VW; c < c8; c += VW) total += *(const VEC *)(z + c);
            const float scale = batch->w[a + q] / NAME(hsum)(total);
            for (int c = 0; c < c8; c += VW)   /* the padding 0 (its exp is tiny, not 0) */
                *(VEC *)(z + c) = (VEC)((VI)(*(const VEC *)(z + c) * scale + *(const VEC *)(t + c)) & (VI)(lane + c < C));
        }
        for (int l = L; l > 1; l--) {
            const int out = s->width[l], o8 = PAD(out), in = s->width[l - 1], i8 = PAD(in);
            const float *dZ = ly[l].dZ + (long)a * o8, *Ap = ly[l - 1].A + (long)a * i8;
            float *dA = ly[l - 1].dZ + (long)a * i8;
            NAME(product)(m, i8, out, dZ, o8, 1, ly[l].W, i8, dA, i8, 1.f, 0);
            NAME(derivative)(dA, Ap, (long)m * i8, s->relu);
            NAME(product)(out, i8, m, dZ, 1, o8, Ap, i8, ly[l].W, i8, -1.f, 1);
            NAME(product)(in, o8, m, Ap, 1, i8, dZ, o8, ly[l].Wt, o8, -1.f, 1);
            for (int c = 0; c < o8; c += VW) {
                VEC g = (VEC){0};
                for (int q = 0; q < m; q++) g += *(const VEC *)(dZ + q * o8 + c);
                *(VEC *)(ly[l].b + c) -= g;
            }
        }
        if (s->samples) {
            float *d = D + (long)a * h8; const float *dz = ly[1].dZ + (long)a * h8;
            for (long i = 0; i < (long)m * h8; i++) d[i] += dz[i];
        } else {   /* V_1 -= dZ_1^T R */
            NAME(product)(h, Di8, m, ly[1].dZ + (long)a * h8, 1, h8, Rp + (long)a * Di8, Di8, V1, Di8, -1.f, 1);
        }
    }
    if (s->samples) NAME(product)(h, Di8, r, D, 1, h8, Rp, Di8, V1, Di8, -1.f, 1);   /* V_1 -= D^T R */
    for (int o = 0; o < h; o++) {
        memcpy(out_x + o * (Di - 1), V1 + o * Di8, sizeof(float) * (Di - 1));
        out_x[(long)h * (Di - 1) + o] = V1[o * Di8 + Di - 1];
    }
    for (int l = 2; l <= L; l++) {
        const int out = s->width[l], in = s->width[l - 1], i8 = PAD(in);
        float *Wx = out_x + s->offset[l], *bx = Wx + out * in;
        for (int o = 0; o < out; o++) {
            for (int i = 0; i < in; i++) Wx[o * in + i] = ly[l].W[o * i8 + i];
            bx[o] = ly[l].b[o];
        }
    }
}

static void NAME(descend)(const Net *s, Py_ssize_t k, const int *spans, const Source *src,
                          const float *X, float *out, Batch *batch, float *buf) {
    for (Py_ssize_t j = 0; j < k; j++) {
        prepare(s, src, j, PAD(s->width[s->layers]), batch);
        NAME(client)(s, spans, batch, X + (s->shared ? 0 : (long)j * s->d), out + (long)j * s->d, buf);
    }
}
