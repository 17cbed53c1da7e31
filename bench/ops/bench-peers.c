// SPDX-License-Identifier: MIT
/*
 * The benchmark's peers: XNNPACK and oneDNN running the convolutions the
 * engine runs, on the same data in the same layout, one thread each.
 * Linked into the benchmark only; neither library may ever be linked
 * into the engine or the device.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <oneapi/dnnl/dnnl.h>
#include <xnnpack.h>

#include "bench-peers.h"

double bench_cpu_now(void);
static double cpu_now(void);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double bench_cpu_now(void)
{
	return cpu_now();
}

double peer_cpu_per_wall;

/*
 * Process CPU time, not wall time: the host's two cores are shared with
 * other jobs, and a process that is descheduled is not slower.  It counts
 * every thread of the process, so a peer that used helper threads would
 * be charged for them (peer_cpu_per_wall then exceeds 1).
 */
double peer_time(void (*fn)(void *), void *arg)
{
	double best = 1e30, c0 = cpu_now(), w0 = now();
	int rep;

	for (rep = 0; rep < PEER_REPS; rep++) {
		double t0 = cpu_now(), t;
		int n = 0;

		do {
			fn(arg);
			n++;
			t = cpu_now() - t0;
		} while (t < PEER_MIN_SECONDS);
		if (t / n < best)
			best = t / n;
	}
	/* Process CPU time over wall time: 1.0 when the peer used one thread. */
	peer_cpu_per_wall = (cpu_now() - c0) / (now() - w0);
	return best;
}

void peers_init(void)
{
	/*
	 * Debian's oneDNN is built with the OpenMP runtime: pin its team
	 * to one thread (OMP_NUM_THREADS is read at start-up, too late
	 * from here).  XNNPACK runs without a pthreadpool: one thread.
	 */
	omp_set_num_threads(1);
	if (omp_get_max_threads() != 1) {
		fprintf(stderr, "cannot limit OpenMP to one thread\n");
		exit(1);
	}
	if (xnn_initialize(NULL) != xnn_status_success) {
		fprintf(stderr, "xnn_initialize failed\n");
		exit(1);
	}
}

/* ---- XNNPACK ---------------------------------------------------------- */

struct xnn_run {
	xnn_operator_t op;
};

static void xnn_run_fn(void *arg)
{
	struct xnn_run *r = arg;

	if (xnn_run_operator(r->op, NULL) != xnn_status_success) {
		fprintf(stderr, "xnn_run_operator failed\n");
		exit(1);
	}
}

double peer_xnn_conv(const struct peer_conv *p, enum peer_xnn_kind kind)
{
	size_t cig = p->ci / p->groups, cog = p->co / p->groups;
	size_t xn = (size_t)p->h * p->w * p->ci, yn = (size_t)p->oh * p->ow * p->co;
	size_t wn = (size_t)p->co * p->kh * p->kw * cig, i;
	struct xnn_run r = { NULL };
	enum xnn_status st;
	void *x = NULL, *w = NULL, *y = NULL;
	double t;

	if (kind == PEER_XNN_F32) {
		st = xnn_create_convolution2d_nhwc_f32(p->pt, p->pr, p->pb, p->pl,
			p->kh, p->kw, p->sh, p->sw, 1, 1, p->groups, cig, cog,
			p->ci, p->co, p->w_f32, p->b_f32, 0.0f, INFINITY, 0, &r.op);
		if (st == xnn_status_success)
			st = xnn_setup_convolution2d_nhwc_f32(r.op, 1, p->h, p->w,
							      p->x_f32, p->y_f32, NULL);
	} else if (kind == PEER_XNN_QS8) {
		/* Same values shifted by 128: x - 128 with zero point -128. */
		int8_t *xs = malloc(xn), *ys = malloc(yn);

		x = xs;
		y = ys;
		for (i = 0; i < xn; i++)
			xs[i] = (int8_t)(p->x_u8[i] ^ 0x80);
		st = xnn_create_convolution2d_nhwc_qs8(p->pt, p->pr, p->pb, p->pl,
			p->kh, p->kw, p->sh, p->sw, 1, 1, p->groups, cig, cog,
			p->ci, p->co, -128, p->xs, p->ws, p->w_s8, p->b_s32,
			-128, p->ys, -128, 127, 0, &r.op);
		if (st == xnn_status_success)
			st = xnn_setup_convolution2d_nhwc_qs8(r.op, 1, p->h, p->w, xs, ys, NULL);
	} else {
		/* uint8 weights w + 128 with zero point 128. */
		uint8_t *wu = malloc(wn);

		w = wu;
		for (i = 0; i < wn; i++)
			wu[i] = (uint8_t)p->w_s8[i] ^ 0x80;
		st = xnn_create_convolution2d_nhwc_qu8(p->pt, p->pr, p->pb, p->pl,
			p->kh, p->kw, p->sh, p->sw, 1, 1, p->groups, cig, cog,
			p->ci, p->co, 0, p->xs, 128, p->ws, wu, p->b_s32,
			0, p->ys, 0, 255, 0, &r.op);
		if (st == xnn_status_success)
			st = xnn_setup_convolution2d_nhwc_qu8(r.op, 1, p->h, p->w,
							      p->x_u8, p->y_u8, NULL);
	}
	if (st != xnn_status_success) {
		fprintf(stderr, "XNNPACK conv create/setup failed (%d)\n", st);
		exit(1);
	}
	t = peer_time(xnn_run_fn, &r);
	if (kind == PEER_XNN_QS8)
		for (i = 0; i < yn; i++)
			p->y_u8[i] = (uint8_t)(((int8_t *)y)[i] ^ 0x80);
	xnn_delete_operator(r.op);
	free(x);
	free(w);
	free(y);
	return t;
}

/* ---- oneDNN ----------------------------------------------------------- */

#define DNNL_OK(call) do { \
	dnnl_status_t s_ = (call); \
	if (s_ != dnnl_success) { \
		fprintf(stderr, "oneDNN: %s failed (%d)\n", #call, s_); \
		exit(1); \
	} \
} while (0)

struct dnnl_run {
	dnnl_primitive_t prim;
	dnnl_stream_t stream;
	dnnl_exec_arg_t args[4];
};

static void dnnl_run_fn(void *arg)
{
	struct dnnl_run *r = arg;

	DNNL_OK(dnnl_primitive_execute(r->prim, r->stream, 4, r->args));
	DNNL_OK(dnnl_stream_wait(r->stream));
}

static dnnl_engine_t dnnl_eng;

double peer_dnnl_conv(const struct peer_conv *p)
{
	bool q = p->int8;
	dnnl_data_type_t xt = q ? dnnl_u8 : dnnl_f32, wt = q ? dnnl_s8 : dnnl_f32;
	dnnl_data_type_t bt = q ? dnnl_s32 : dnnl_f32;
	int64_t cig = p->ci / p->groups, cog = p->co / p->groups;
	dnnl_dims_t xd = { 1, p->ci, p->h, p->w }, yd = { 1, p->co, p->oh, p->ow };
	dnnl_dims_t wd5 = { p->groups, cog, cig, p->kh, p->kw };
	dnnl_dims_t wd4 = { p->co, p->ci, p->kh, p->kw }, bd = { p->co };
	dnnl_dims_t strides = { p->sh, p->sw }, dil = { 0, 0 };
	dnnl_dims_t pl = { p->pt, p->pl }, pr = { p->pb, p->pr };
	dnnl_memory_desc_t xmd, wmd_user, wmd_any, bmd, ymd;
	const dnnl_memory_desc_t *wmd;
	dnnl_convolution_desc_t cd;
	dnnl_primitive_attr_t attr;
	dnnl_post_ops_t po;
	dnnl_primitive_desc_t pd, rpd;
	dnnl_primitive_t reorder;
	dnnl_memory_t xm, wm_user, wm, bm, ym;
	struct dnnl_run r;
	double t;

	if (!dnnl_eng) {
		DNNL_OK(dnnl_engine_create(&dnnl_eng, dnnl_cpu, 0));
	}
	DNNL_OK(dnnl_stream_create(&r.stream, dnnl_eng, dnnl_stream_default_flags));
	DNNL_OK(dnnl_memory_desc_init_by_tag(&xmd, 4, xd, xt, dnnl_nhwc));
	DNNL_OK(dnnl_memory_desc_init_by_tag(&ymd, 4, yd, xt, dnnl_nhwc));
	DNNL_OK(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, bt, dnnl_a));
	if (p->groups > 1) {
		DNNL_OK(dnnl_memory_desc_init_by_tag(&wmd_user, 5, wd5, wt, dnnl_gohwi));
		DNNL_OK(dnnl_memory_desc_init_by_tag(&wmd_any, 5, wd5, wt, dnnl_format_tag_any));
	} else {
		DNNL_OK(dnnl_memory_desc_init_by_tag(&wmd_user, 4, wd4, wt, dnnl_ohwi));
		DNNL_OK(dnnl_memory_desc_init_by_tag(&wmd_any, 4, wd4, wt, dnnl_format_tag_any));
	}
	DNNL_OK(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
		dnnl_convolution_direct, &xmd, &wmd_any, &bmd, &ymd, strides, dil, pl, pr));
	DNNL_OK(dnnl_primitive_attr_create(&attr));
	DNNL_OK(dnnl_post_ops_create(&po));
	if (q) {
		/* dst = round(scale * (acc + bias)), saturated to u8: ONNX's QLinearConv. */
		float scale = p->xs * p->ws / p->ys;

		DNNL_OK(dnnl_primitive_attr_set_output_scales(attr, 1, 0, &scale));
	} else {
		DNNL_OK(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
	}
	DNNL_OK(dnnl_primitive_attr_set_post_ops(attr, po));
	DNNL_OK(dnnl_primitive_desc_create(&pd, &cd, attr, dnnl_eng, NULL));
	wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	/* Weights reorder once, outside the timing, as XNNPACK packs at create. */
	DNNL_OK(dnnl_memory_create(&wm_user, &wmd_user, dnnl_eng,
				   q ? (void *)p->w_s8 : (void *)p->w_f32));
	DNNL_OK(dnnl_memory_create(&wm, wmd, dnnl_eng, DNNL_MEMORY_ALLOCATE));
	DNNL_OK(dnnl_reorder_primitive_desc_create(&rpd, &wmd_user, dnnl_eng, wmd,
						   dnnl_eng, NULL));
	DNNL_OK(dnnl_primitive_create(&reorder, rpd));
	{
		dnnl_exec_arg_t ra[2] = { { DNNL_ARG_FROM, wm_user }, { DNNL_ARG_TO, wm } };

		DNNL_OK(dnnl_primitive_execute(reorder, r.stream, 2, ra));
		DNNL_OK(dnnl_stream_wait(r.stream));
	}
	DNNL_OK(dnnl_memory_create(&xm, &xmd, dnnl_eng,
				   q ? (void *)p->x_u8 : (void *)p->x_f32));
	DNNL_OK(dnnl_memory_create(&bm, &bmd, dnnl_eng,
				   q ? (void *)p->b_s32 : (void *)p->b_f32));
	DNNL_OK(dnnl_memory_create(&ym, &ymd, dnnl_eng,
				   q ? (void *)p->y_u8 : (void *)p->y_f32));
	DNNL_OK(dnnl_primitive_create(&r.prim, pd));
	r.args[0] = (dnnl_exec_arg_t){ DNNL_ARG_SRC, xm };
	r.args[1] = (dnnl_exec_arg_t){ DNNL_ARG_WEIGHTS, wm };
	r.args[2] = (dnnl_exec_arg_t){ DNNL_ARG_BIAS, bm };
	r.args[3] = (dnnl_exec_arg_t){ DNNL_ARG_DST, ym };
	t = peer_time(dnnl_run_fn, &r);
	dnnl_primitive_destroy(r.prim);
	dnnl_primitive_destroy(reorder);
	dnnl_primitive_desc_destroy(rpd);
	dnnl_primitive_desc_destroy(pd);
	dnnl_post_ops_destroy(po);
	dnnl_primitive_attr_destroy(attr);
	dnnl_memory_destroy(xm);
	dnnl_memory_destroy(wm_user);
	dnnl_memory_destroy(wm);
	dnnl_memory_destroy(bm);
	dnnl_memory_destroy(ym);
	dnnl_stream_destroy(r.stream);
	return t;
}
