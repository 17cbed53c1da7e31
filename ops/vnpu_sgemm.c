// SPDX-License-Identifier: MIT
/*
 * Blocked fp32 GEMM (vnpu_sgemm.h), laid out as GotoBLAS/BLIS do: B is
 * packed into NR-column strips of a K block, and an MR x NR register
 * block of C accumulates one strip against MR rows of A, one k at a
 * time.  A is read where it lies but for a short last panel: the
 * engine's A is im2col rows or activations, and a panel stays in L1
 * while it meets every strip, so packing it would only copy it (a
 * transposed A, rare in models, pays a cache line per k for that).  MR and NR are picked per ISA so the accumulators, one strip row
 * and a broadcast of A fill the vector registers without spilling:
 * 8 x 32 in 16 zmm on AVX-512, 6 x 16 in 12 ymm on AVX2, 4 x 8 in 8
 * vectors of 16 bytes anywhere else (SSE2, NEON, a TCG guest), each with
 * a half-width twin for a last strip that narrow.  One kernel source, in
 * GCC's vector extension, is instantiated per ISA.
 *
 * Built with -ffp-contract=off like the rest of the engine: a product is
 * rounded before it is added, as the reference does, so FMA, which every
 * AVX-512 host has, must not fuse them.  K blocks are added to C in
 * ascending order, so each C element still sums its products in k order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vnpu_sgemm.h"

/* Clang contracts a * b + c within a statement unless told not to. */
#ifdef __clang__
#pragma clang fp contract(off)
#endif

/*
 * k of a block: an AVX-512 strip (256 x 32 floats, 32 KiB) stays in L1
 * while every panel of A goes past it.
 */
#define KC		256
/* Columns of B packed at once: a K block of them (256 KiB) stays in L2. */
#define NC		256
/*
 * A product of at most this many panels of A reads B where it lies:
 * packing B costs as much as that product of one or two panels.
 */
#define DIRECT_B_PANELS	2
/* The largest register block, for the scratch tile of edge blocks. */
#define MR_MAX		8
#define NR_MAX		32

/*
 * C[0..mr)[0..nr) (+)= A * B over kc: A's row r at k is a[r * ars + k * acs],
 * B's row k is the nr floats at b + k * bks.  C is loaded unless @first.
 */
typedef void sgemm_kernel_fn(size_t kc, const float *a, size_t ars,
			     size_t acs, const float *b, size_t bks, float *c,
			     size_t ldc, bool first);

/*
 * @half: the same block on the first nr / 2 columns, for the last strip
 * of an N that leaves no more (24 = 16 + 8, a common channel count).
 */
struct sgemm_kernel {
	unsigned int mr, nr;
	sgemm_kernel_fn *fn, *half;
};

/*
 * One kernel per ISA: @mr rows of @nv vectors of @bytes.  Unaligned
 * vectors (aligned(4)) since C and an unpacked B have any alignment;
 * accessed through pointers, not memcpy, so that the accumulators, whose
 * address is then never taken, live in registers.
 */
#define SGEMM_KERNEL(name, attr, bytes, mr, nv)				\
typedef float name##_vec							\
	__attribute__((vector_size(bytes), aligned(4), may_alias));		\
attr static void name(size_t kc, const float *a, size_t ars, size_t acs,		\
		 const float *b, size_t bks, float *c, size_t ldc, bool first)	\
{										\
	const size_t lanes = (bytes) / sizeof(float);				\
	name##_vec acc[mr][nv], bv[nv];						\
	size_t k;								\
	int r, v;								\
										\
	_Pragma("GCC unroll 8")							\
	for (r = 0; r < (mr); r++) {						\
		_Pragma("GCC unroll 4")						\
		for (v = 0; v < (nv); v++) {					\
			if (first)						\
				acc[r][v] = (name##_vec){ 0 };			\
			else							\
				acc[r][v] = *(name##_vec *)(c + r * ldc + v * lanes); \
		}								\
	}									\
	for (k = 0; k < kc; k++, a += acs, b += bks) {				\
		_Pragma("GCC unroll 4")						\
		for (v = 0; v < (nv); v++)					\
			bv[v] = *(const name##_vec *)(b + v * lanes);		\
		_Pragma("GCC unroll 8")						\
		for (r = 0; r < (mr); r++) {					\
			float s = a[r * ars];					\
										\
			_Pragma("GCC unroll 4")					\
			for (v = 0; v < (nv); v++)				\
				acc[r][v] += s * bv[v];				\
		}								\
	}									\
	_Pragma("GCC unroll 8")							\
	for (r = 0; r < (mr); r++) {						\
		_Pragma("GCC unroll 4")						\
		for (v = 0; v < (nv); v++)					\
			*(name##_vec *)(c + r * ldc + v * lanes) = acc[r][v];	\
	}									\
}

#if defined(__x86_64__) || defined(__i386__)
SGEMM_KERNEL(kernel_avx512, __attribute__((target("avx512f"))), 64, 8, 2)
SGEMM_KERNEL(kernel_avx512_half, __attribute__((target("avx512f"))), 64, 8, 1)
SGEMM_KERNEL(kernel_avx2, __attribute__((target("avx2"))), 32, 6, 2)
SGEMM_KERNEL(kernel_avx2_half, __attribute__((target("avx2"))), 32, 6, 1)
#define SGEMM_HAVE_X86
#endif
SGEMM_KERNEL(kernel_portable, , 16, 4, 2)
SGEMM_KERNEL(kernel_portable_half, , 16, 4, 1)

static const struct sgemm_kernel kernels[] = {
	[VNPU_SGEMM_PORTABLE] = { 4, 8, kernel_portable, kernel_portable_half },
#ifdef SGEMM_HAVE_X86
	[VNPU_SGEMM_AVX2] = { 6, 16, kernel_avx2, kernel_avx2_half },
	[VNPU_SGEMM_AVX512] = { 8, 32, kernel_avx512, kernel_avx512_half },
#endif
};

/*
 * No __builtin_cpu_init(): the compiler runtime's constructor fills in
 * the CPU's features before any caller of the engine runs; it is needed
 * only in code that runs before constructors do.
 */
bool vnpu_sgemm_isa_ok(enum vnpu_sgemm_isa isa)
{
	switch (isa) {
	case VNPU_SGEMM_PORTABLE:
		return true;
#ifdef SGEMM_HAVE_X86
	case VNPU_SGEMM_AVX2:
		return __builtin_cpu_supports("avx2");
	case VNPU_SGEMM_AVX512:
		return __builtin_cpu_supports("avx512f");
#endif
	default:
		return false;
	}
}

enum vnpu_sgemm_isa vnpu_sgemm_best_isa(void)
{
	if (vnpu_sgemm_isa_ok(VNPU_SGEMM_AVX512))
		return VNPU_SGEMM_AVX512;
	if (vnpu_sgemm_isa_ok(VNPU_SGEMM_AVX2))
		return VNPU_SGEMM_AVX2;
	return VNPU_SGEMM_PORTABLE;
}

typedef float v4f __attribute__((vector_size(16), aligned(4), may_alias));

/*
 * Columns j0..j0+4 of a transposed B (rows of it, k-contiguous) over
 * k0..k0+kc into the strip at @bp: 4 x 4 blocks transposed in registers,
 * since the strip is read by k and the conv weights are stored by column.
 */
static void pack_bt_4(const float *b, size_t ldb, size_t j0, size_t k0,
		      size_t kc, size_t nr, float *bp)
{
	const float *s0 = b + j0 * ldb + k0, *s1 = s0 + ldb;
	const float *s2 = s1 + ldb, *s3 = s2 + ldb;
	size_t k;

	for (k = 0; k + 4 <= kc; k += 4) {
		v4f r0 = *(const v4f *)(s0 + k), r1 = *(const v4f *)(s1 + k);
		v4f r2 = *(const v4f *)(s2 + k), r3 = *(const v4f *)(s3 + k);
		v4f t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5);
		v4f t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
		v4f t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5);
		v4f t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);

		*(v4f *)(bp + k * nr) = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
		*(v4f *)(bp + (k + 1) * nr) = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
		*(v4f *)(bp + (k + 2) * nr) = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
		*(v4f *)(bp + (k + 3) * nr) = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
	}
	for (; k < kc; k++) {
		bp[k * nr] = s0[k];
		bp[k * nr + 1] = s1[k];
		bp[k * nr + 2] = s2[k];
		bp[k * nr + 3] = s3[k];
	}
}

/* B rows k0..k0+kc, columns j0..j0+w as one kc x nr strip, zero past w. */
static void pack_b_strip(bool tb, const float *b, size_t ldb, size_t j0,
			 size_t w, size_t k0, size_t kc, size_t nr, float *bp)
{
	size_t k, j;

	if (!tb) {
		for (k = 0; k < kc; k++) {
			memcpy(bp + k * nr, b + (k0 + k) * ldb + j0, w * sizeof(float));
			memset(bp + k * nr + w, 0, (nr - w) * sizeof(float));
		}
		return;
	}
	for (j = 0; j + 4 <= w; j += 4)
		pack_bt_4(b, ldb, j0 + j, k0, kc, nr, bp + j);
	for (; j < w; j++) {
		const float *src = b + (j0 + j) * ldb + k0;

		for (k = 0; k < kc; k++)
			bp[k * nr + j] = src[k];
	}
	if (w < nr)
		for (k = 0; k < kc; k++)
			memset(bp + k * nr + w, 0, (nr - w) * sizeof(float));
}

/* A rows i0..i0+rows, k0..k0+kc, as kc groups of mr; zero past @rows. */
static void pack_a_panel(bool ta, const float *a, size_t lda, size_t i0,
			 size_t rows, size_t k0, size_t kc, size_t mr, float *ap)
{
	size_t k, r;

	for (k = 0; k < kc; k++)
		for (r = 0; r < mr; r++)
			ap[k * mr + r] = r >= rows ? 0.0f :
					 ta ? a[(k0 + k) * lda + i0 + r] :
					 a[(i0 + r) * lda + k0 + k];
}

/*
 * @n floats of an edge block's row: inline 16-byte moves, as a
 * libc call per row of an edge block cost as much as its arithmetic
 * when K is small (1x1 convs over 24 to 96 channels).
 */
static inline void copy_row(float *dst, const float *src, size_t n)
{
	size_t j = 0;

	for (; j + 4 <= n; j += 4)
		*(v4f *)(dst + j) = *(const v4f *)(src + j);
	for (; j < n; j++)
		dst[j] = src[j];
}

/*
 * One register block of C at @c, of @rows x @cols <= mr x nr: a block
 * of half the columns or fewer takes the half-width kernel, and a block
 * cut by the edge of C goes through a full-size tile.
 */
static void block(const struct sgemm_kernel *kn, size_t kc, const float *a,
		  size_t ars, size_t acs, const float *b, size_t bks, float *c,
		  size_t ldc, size_t rows, size_t cols, bool first)
{
	float tile[MR_MAX * NR_MAX];
	sgemm_kernel_fn *fn = kn->fn;
	size_t width = kn->nr, r;

	if (cols <= kn->nr / 2) {
		fn = kn->half;
		width = kn->nr / 2;
	}
	if (rows == kn->mr && cols == width) {
		fn(kc, a, ars, acs, b, bks, c, ldc, first);
		return;
	}
	if (!first)
		for (r = 0; r < rows; r++)
			copy_row(tile + r * width, c + r * ldc, cols);
	fn(kc, a, ars, acs, b, bks, tile, width, first);
	for (r = 0; r < rows; r++)
		copy_row(c + r * ldc, tile + r * width, cols);
}

int vnpu_sgemm_isa(enum vnpu_sgemm_isa isa, bool ta, bool tb, size_t m,
		   size_t n, size_t k, const float *a, size_t lda,
		   const float *b, size_t ldb, float *c, size_t ldc)
{
	const struct sgemm_kernel *kn;
	size_t mr, nr, full_rows, ncb, kcb, j0, k0, i0, j;
	bool direct_b;
	float *bp, *ap;

	if (!vnpu_sgemm_isa_ok(isa))
		return -EOPNOTSUPP;
	kn = &kernels[isa];
	mr = kn->mr;
	nr = kn->nr;
	if (!m || !n)
		return 0;
	if (!k) {
		for (i0 = 0; i0 < m; i0++)
			memset(c + i0 * ldc, 0, n * sizeof(float));
		return 0;
	}
	/*
	 * Full panels of A are read where they lie (row r at k is
	 * a[r * lda + k], or a[k * lda + r] transposed); only the last,
	 * short one is packed, its missing rows zero.
	 */
	full_rows = m / mr * mr;
	direct_b = !tb && m <= DIRECT_B_PANELS * mr;
	ncb = n < NC ? (n + nr - 1) / nr * nr : NC;
	kcb = k < KC ? k : KC;
	bp = malloc(((direct_b ? nr : ncb) * kcb + mr * kcb) * sizeof(float));
	if (!bp)
		return -ENOMEM;
	ap = bp + (direct_b ? nr : ncb) * kcb;
	for (j0 = 0; j0 < n; j0 += NC) {
		size_t nc = n - j0 < NC ? n - j0 : NC;

		for (k0 = 0; k0 < k; k0 += KC) {
			size_t kc = k - k0 < KC ? k - k0 : KC;

			for (j = 0; j < nc && !direct_b; j += nr)
				pack_b_strip(tb, b, ldb, j0 + j,
					     nc - j < nr ? nc - j : nr, k0, kc,
					     nr, bp + j * kc);
			if (direct_b && nc % nr)
				pack_b_strip(tb, b, ldb, j0 + nc / nr * nr,
					     nc % nr, k0, kc, nr, bp);
			if (full_rows < m)
				pack_a_panel(ta, a, lda, full_rows, m - full_rows,
					     k0, kc, mr, ap);
			for (i0 = 0; i0 < m; i0 += mr) {
				size_t rows = m - i0 < mr ? m - i0 : mr;
				const float *pa = ap;
				size_t ars = 1, acs = mr;

				if (i0 < full_rows) {
					pa = ta ? a + k0 * lda + i0 : a + i0 * lda + k0;
					ars = ta ? 1 : lda;
					acs = ta ? lda : 1;
				}
				for (j = 0; j < nc; j += nr) {
					size_t cols = nc - j < nr ? nc - j : nr;
					const float *pb = bp + j * kc;
					size_t bks = nr;

					if (direct_b && cols == nr) {
						pb = b + k0 * ldb + j0 + j;
						bks = ldb;
					} else if (direct_b) {
						pb = bp;
					}
					block(kn, kc, pa, ars, acs, pb, bks,
					      c + i0 * ldc + j0 + j, ldc, rows,
					      cols, k0 == 0);
				}
			}
		}
	}
	free(bp);
	return 0;
}

int vnpu_sgemm(bool ta, bool tb, size_t m, size_t n, size_t k,
	       const float *a, size_t lda, const float *b, size_t ldb,
	       float *c, size_t ldc)
{
	return vnpu_sgemm_isa(vnpu_sgemm_best_isa(), ta, tb, m, n, k, a, lda,
			      b, ldb, c, ldc);
}
