// SPDX-License-Identifier: MIT
/*
 * Loop and Scan whose number of iterations import knows, unrolled.
 *
 * Shapes are known at import, so a Scan's iteration count (its scan
 * axis) always is, and a Loop's when its trip count and condition are
 * constants or inputs whose values are given at load (npu-run gives the
 * input files): exporters emit both for fixed-length recurrences and for
 * the "expanded" forms of ops such as Range.  Each iteration imports the
 * body's nodes once more, its names made unique ("<node>#<i>/<name>"),
 * its inputs bound to the previous iteration's outputs, and its scan
 * outputs stacked with Reshape and Concat, so the unrolled body joins
 * the one partitioned graph: its convolutions run on the device, the
 * rest on the CPU.  A Loop whose condition only a run can tell, or that
 * would unroll past MAX_TRIPS iterations or MAX_UNROLLED_NODES nodes, is
 * refused with the reason; so are bodies holding subgraphs.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"
#include "onnx_internal.h"

/* Iterations one Loop or Scan may unroll to, whatever max_nodes allows. */
#define MAX_TRIPS	4096u
/*
 * Body nodes one Loop or Scan may import in all, so that a small file
 * cannot make a graph of a million nodes (measured: 4,096 iterations of
 * 250 nodes took 17 s and 2 GB to import and run); below max_nodes too.
 */
#define MAX_UNROLLED_NODES	65536u

struct body {
	struct nctx *c;
	const Onnx__GraphProto *g;
	struct oi_names local;		/* the body's own names */
	const char *tag;		/* the node's name or first output */
};

/* @name in iteration @trip: renamed if the body defines it, else as is. */
static char *iter_name(const struct body *b, size_t trip, const char *name)
{
	if (!name || !*name || !oi_names_get(&b->local, name))
		return strdup(name ? name : "");
	return oi_name_fmt(b->tag, trip, name);
}

/* MAX_UNROLLED_NODES, or npu_onnx_options.max_nodes when that is lower */
static size_t unroll_limit(const struct imp *im)
{
	return im->lim.max_nodes < MAX_UNROLLED_NODES ? im->lim.max_nodes : MAX_UNROLLED_NODES;
}

static bool has_subgraph(const Onnx__GraphProto *g)
{
	size_t i, a;

	for (i = 0; i < g->n_node; i++)
		for (a = 0; a < g->node[i]->n_attribute; a++)
			if (g->node[i]->attribute[a]->g || g->node[i]->attribute[a]->n_graphs)
				return true;
	return false;
}

static int body_init(struct body *b, struct nctx *c, size_t trips)
{
	const Onnx__AttributeProto *a = oi_attr(c, "body");
	struct imp *im = c->im;
	size_t i, j, names;

	memset(b, 0, sizeof(*b));
	b->c = c;
	b->tag = c->name;
	b->g = a ? a->g : NULL;
	if (!b->g)
		return oi_fail(im, "the body attribute (a graph) is missing");
	if (has_subgraph(b->g))
		return oi_fail(im, "a body holding subgraphs (If, Loop or Scan inside it) is not supported");
	if (b->g->n_sparse_initializer)
		return oi_fail(im, "the body's sparse initializers are not supported");
	if (trips > MAX_TRIPS)
		return oi_fail(im, "%zu iterations, above the %u that import unrolls", trips, MAX_TRIPS);
	if (b->g->n_node && trips > unroll_limit(im) / b->g->n_node)
		return oi_fail(im, "%zu iterations of %zu nodes exceed the %zu nodes import unrolls",
			       trips, b->g->n_node, unroll_limit(im));
	names = b->g->n_input + b->g->n_initializer;
	for (i = 0; i < b->g->n_node; i++)
		names += b->g->node[i]->n_output;
	if (oi_names_init(&b->local, names))
		return oi_nomem(im);
	for (i = 0; i < b->g->n_input; i++)
		if (b->g->input[i]->name && *b->g->input[i]->name)
			oi_names_put(&b->local, b->g->input[i]->name, 1);
	for (i = 0; i < b->g->n_initializer; i++)
		if (b->g->initializer[i]->name && *b->g->initializer[i]->name)
			oi_names_put(&b->local, b->g->initializer[i]->name, 1);
	for (i = 0; i < b->g->n_node; i++)
		for (j = 0; j < b->g->node[i]->n_output; j++)
			if (b->g->node[i]->output[j] && *b->g->node[i]->output[j])
				oi_names_put(&b->local, b->g->node[i]->output[j], 1);
	return 0;
}

/* A new symbol @to standing for @from (a constant is copied). */
static int alias(struct nctx *c, const char *to, const char *from)
{
	struct imp *im = c->im;
	struct sym *src = oi_lookup(im, from), *dst;
	struct sym copy;
	int ret;

	if (!src)
		return oi_fail(im, "'%s' is not computed by any node", from);
	if (src->poisoned)
		return oi_fail(im, "'%s' comes from a refused node", from);
	copy = *src;
	ret = oi_add_sym(im, to, &dst);
	if (ret)
		return ret;
	if (copy.seq)
		return oi_seq_copy(im, dst, copy.seq);
	if (copy.is_const) {
		ret = ctensor_copy(&copy.c, &dst->c, &im->consts);
		if (ret)
			return oi_fold_fail(im, ret);
		dst->is_const = true;
		return 0;
	}
	dst->value = copy.value;
	dst->dtype = copy.dtype;
	dst->rank = copy.rank;
	memcpy(dst->dims, copy.dims, sizeof(dst->dims));
	dst->fp16_typed = copy.fp16_typed;
	dst->fp16_exact = copy.fp16_exact;
	dst->fp16_by_node = copy.fp16_by_node;
	dst->fp16_needs_cast = copy.fp16_needs_cast;
	return 0;
}

/* Import the body's nodes for iteration @trip (its inputs already bound). */
static int run_body(struct body *b, size_t trip)
{
	struct imp *im = b->c->im;
	const Onnx__GraphProto *outer = im->gp, *g = b->g;
	Onnx__NodeProto *copies = calloc(g->n_node ? g->n_node : 1, sizeof(*copies));
	Onnx__NodeProto **ptrs = calloc(g->n_node ? g->n_node : 1, sizeof(*ptrs));
	Onnx__GraphProto it = *g;
	size_t *order = NULL, i, j;
	int ret = 0;

	if (!copies || !ptrs) {
		ret = oi_nomem(im);
		goto out;
	}
	for (i = 0; i < g->n_initializer && !ret; i++) {
		char *name = iter_name(b, trip, g->initializer[i]->name);
		struct sym *s;

		ret = name ? oi_add_sym(im, name, &s) : oi_nomem(im);
		if (!ret) {
			ret = ctensor_from_proto(g->initializer[i], &s->c, im->err, im->err_size);
			if (ret)
				ret = ret == -ENOMEM ? oi_nomem(im) :
				      oi_fail(im, "the body's initializer '%s' is malformed", name);
			else
				s->is_const = true;
		}
		free(name);
	}
	for (i = 0; i < g->n_node && !ret; i++) {
		const Onnx__NodeProto *n = g->node[i];

		copies[i] = *n;
		ptrs[i] = &copies[i];
		copies[i].input = calloc(n->n_input ? n->n_input : 1, sizeof(char *));
		copies[i].output = calloc(n->n_output ? n->n_output : 1, sizeof(char *));
		copies[i].name = oi_name_fmt(b->tag, trip, n->name && *n->name ? n->name : n->op_type ?
					  n->op_type : "");
		if (!copies[i].input || !copies[i].output || !copies[i].name) {
			ret = oi_nomem(im);
			break;
		}
		for (j = 0; j < n->n_input && !ret; j++)
			if (!(copies[i].input[j] = iter_name(b, trip, n->input[j])))
				ret = oi_nomem(im);
		for (j = 0; j < n->n_output && !ret; j++)
			if (!(copies[i].output[j] = iter_name(b, trip, n->output[j])))
				ret = oi_nomem(im);
	}
	if (!ret) {
		it.node = ptrs;
		it.n_initializer = 0;
		im->gp = &it;
		ret = oi_order_nodes(im, &order);
		if (!ret)
			ret = oi_import_nodes(im, order, b->c->opset);
		im->gp = outer;
		im->node = b->c->n;
	}
out:
	for (i = 0; copies && i < g->n_node; i++) {
		for (j = 0; copies[i].input && j < g->node[i]->n_input; j++)
			free(copies[i].input[j]);
		for (j = 0; copies[i].output && j < g->node[i]->n_output; j++)
			free(copies[i].output[j]);
		free(copies[i].input);
		free(copies[i].output);
		free(copies[i].name);
	}
	free(order);
	free(copies);
	free(ptrs);
	return ret;
}

/* Body input @k of iteration @trip stands for @from. */
static int bind(struct body *b, size_t trip, size_t k, const char *from)
{
	char *name = iter_name(b, trip, b->g->input[k]->name);
	int ret = name ? alias(b->c, name, from) : oi_nomem(b->c->im);

	free(name);
	return ret;
}

static int bind_scalar(struct body *b, size_t trip, size_t k, int64_t v, int dt)
{
	char *name = iter_name(b, trip, b->g->input[k]->name);
	int ret = name ? oi_const_sym(b->c->im, name, &v, 1, true, dt) : oi_nomem(b->c->im);

	free(name);
	return ret;
}

/* A constant input's value as an integer; -EINVAL if a run must tell it. */
static int const_int(struct nctx *c, size_t i, int64_t *v)
{
	const struct sym *s = i < c->nin ? c->in[i] : NULL;

	if (s && !s->is_const && oi_fix_inputs(c, i, i + 1) < 0)
		return -ENOMEM;
	s = c->in[i];
	if (!s || !s->is_const || s->c.n != 1)
		return -EINVAL;
	if (!ct_is_float(&s->c)) {
		*v = s->c.i[0];
		return 0;
	}
	/*
	 * A float M or cond (a malformed model): saturate rather than convert
	 * out of range, and a NaN is true, as a cast to bool would have it.
	 */
	if (isnan(s->c.f[0]))
		*v = 1;
	else if (s->c.f[0] >= 0x1p63f)
		*v = INT64_MAX;
	else if (s->c.f[0] < -0x1p63f)
		*v = INT64_MIN;
	else
		*v = (int64_t)s->c.f[0];
	return 0;
}

static void free_names(char **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

int oi_op_loop(struct nctx *c)
{
	struct imp *im = c->im;
	const Onnx__NodeProto *n = c->n;
	size_t nc = c->nin > 2 ? c->nin - 2 : 0, k = 0, trips = MAX_TRIPS, t, i;
	char **cur = NULL, **scans = NULL;
	bool has_m = c->nin > 0 && c->in[0], go = true;
	int64_t m = 0, cond = 1;
	struct body b;
	int ret;

	if (has_m && const_int(c, 0, &m))
		return oi_fail(im, "a Loop whose trip count is only known at run time is not supported (no subgraph execution yet)");
	if (c->nin > 1 && c->in[1] && const_int(c, 1, &cond))
		return oi_fail(im, "a Loop whose condition is only known at run time is not supported (no subgraph execution yet)");
	if (has_m && (m < 0 || (uint64_t)m > MAX_TRIPS))
		return oi_fail(im, "trip count %" PRId64 ": import unrolls 0 to %u iterations", m,
			       MAX_TRIPS);
	if (has_m)
		trips = (size_t)m;
	ret = body_init(&b, c, has_m ? trips : 1);
	if (ret)
		goto out;
	if (b.g->n_input != nc + 2 || b.g->n_output < nc + 1 || n->n_output != b.g->n_output - 1) {
		ret = oi_fail(im, "the body has %zu inputs and %zu outputs for %zu loop-carried values and %zu outputs",
			      b.g->n_input, b.g->n_output, nc, n->n_output);
		goto out;
	}
	k = b.g->n_output - 1 - nc;
	cur = calloc(nc ? nc : 1, sizeof(*cur));
	scans = calloc(k * trips + 1, sizeof(*scans));
	if (!cur || !scans) {
		ret = oi_nomem(im);
		goto out;
	}
	for (i = 0; i < nc && !ret; i++)
		if (!(cur[i] = strdup(n->input[2 + i] ? n->input[2 + i] : "")))
			ret = oi_nomem(im);
	go = cond != 0;
	for (t = 0; t < trips && go && !ret; t++) {
		const struct sym *co;
		char *name;

		if (b.g->n_node && (t + 1) * b.g->n_node > unroll_limit(im)) {
			ret = oi_fail(im, "%zu iterations of %zu nodes exceed the %zu nodes import unrolls",
				      t + 1, b.g->n_node, unroll_limit(im));
			break;
		}
		ret = bind_scalar(&b, t, 0, (int64_t)t, OT_INT64);
		if (!ret)
			ret = bind_scalar(&b, t, 1, 1, OT_BOOL);
		for (i = 0; i < nc && !ret; i++)
			ret = bind(&b, t, 2 + i, cur[i]);
		if (!ret)
			ret = run_body(&b, t);
		if (ret)
			break;
		name = iter_name(&b, t, b.g->output[0]->name);
		co = name ? oi_lookup(im, name) : NULL;
		free(name);
		if (!co || !co->is_const || co->c.n != 1) {
			ret = oi_fail(im, "a Loop whose condition is only known at run time is not supported (no subgraph execution yet)");
			break;
		}
		go = ctensor_get(&co->c, 0) != 0;
		for (i = 0; i < nc && !ret; i++) {
			free(cur[i]);
			if (!(cur[i] = iter_name(&b, t, b.g->output[1 + i]->name)))
				ret = oi_nomem(im);
		}
		for (i = 0; i < k && !ret; i++)
			if (!(scans[i * trips + t] = iter_name(&b, t, b.g->output[1 + nc + i]->name)))
				ret = oi_nomem(im);
	}
	if (!ret && go && !has_m)
		ret = oi_fail(im, "a Loop still running after %u iterations is not unrolled", MAX_TRIPS);
	for (i = 0; i < nc && !ret; i++)
		if (n->output[i] && *n->output[i])
			ret = alias(c, n->output[i], cur[i]);
	for (i = 0; i < k && !ret; i++) {
		if (!n->output[nc + i] || !*n->output[nc + i])
			continue;
		if (!t) {
			ret = oi_fail(im, "no iteration ran: scan output '%s' would be empty, which is not supported",
				      n->output[nc + i]);
			break;
		}
		ret = oi_stack(c, &scans[i * trips], t, 0, true, n->output[nc + i]);
	}
out:
	free_names(cur, nc);
	free_names(scans, k * trips);
	if (b.g)
		oi_names_free(&b.local);
	return ret;
}

/*
 * Scan: @ns state values, then @nx scan inputs sliced along their axes,
 * @len iterations numbered from @trip0; the body's @nk scan outputs
 * stacked along theirs into @out_names.  @state ends as the final states.
 */
static int scan_run(struct nctx *c, struct body *b, size_t trip0, char **state, size_t ns,
		    char **xs, size_t nx, size_t len, const int64_t *in_axes, const int64_t *in_dirs,
		    size_t nk, const int64_t *out_axes, const int64_t *out_dirs,
		    const char *const *out_names)
{
	struct imp *im = c->im;
	char **scans = calloc(nk * len + 1, sizeof(*scans));
	size_t t, i;
	int ret = 0;

	if (!scans)
		return oi_nomem(im);
	for (t = 0; t < len && !ret; t++) {
		size_t trip = trip0 + t;

		for (i = 0; i < ns && !ret; i++)
			ret = bind(b, trip, i, state[i]);
		for (i = 0; i < nx && !ret; i++) {
			int64_t at = in_dirs[i] ? (int64_t)(len - 1 - t) : (int64_t)t;
			char *idx = oi_name_fmt_i(b->tag, trip, "scan_index", i);
			char *in = iter_name(b, trip, b->g->input[ns + i]->name);
			const char *ins[2] = { xs[i], idx };

			ret = idx && in ? oi_const_sym(im, idx, &at, 1, true, OT_INT64) : oi_nomem(im);
			if (!ret)
				ret = oi_synth(c, "Gather", ins, 2, in, "axis", in_axes[i]);
			free(idx);
			free(in);
		}
		if (!ret)
			ret = run_body(b, trip);
		for (i = 0; i < ns && !ret; i++) {
			free(state[i]);
			if (!(state[i] = iter_name(b, trip, b->g->output[i]->name)))
				ret = oi_nomem(im);
		}
		for (i = 0; i < nk && !ret; i++) {
			size_t at = out_dirs[i] ? len - 1 - t : t;

			if (!(scans[i * len + at] = iter_name(b, trip, b->g->output[ns + i]->name)))
				ret = oi_nomem(im);
		}
	}
	for (i = 0; i < nk && !ret; i++)
		if (out_names[i] && *out_names[i])
			ret = oi_stack(c, &scans[i * len], len, out_axes[i], true, out_names[i]);
	free_names(scans, nk * len);
	return ret;
}

static int axes_attr(struct nctx *c, const char *name, int64_t *v, size_t n, bool dirs)
{
	int got = oi_attr(c, name) ? oi_attr_ints(c, name, v, n) : 0;
	size_t i;

	if (got < 0 || (got && (size_t)got != n))
		return oi_fail(c->im, "%s has %d values for %zu inputs or outputs", name, got, n);
	for (i = got; i < n; i++)
		v[i] = 0;
	for (i = 0; dirs && i < n; i++)
		if (v[i] != 0 && v[i] != 1)
			return oi_fail(c->im, "%s[%zu] is %" PRId64 ", not 0 or 1", name, i, v[i]);
	return 0;
}

int oi_op_scan(struct nctx *c)
{
	struct imp *im = c->im;
	const Onnx__NodeProto *n = c->n;
	int64_t nx = oi_attr_i(c, "num_scan_inputs", -1);
	bool v8 = c->opset < 9;
	size_t first = v8 ? 1 : 0, ns, nk, len = 0, batch = 1, bi, i;
	int64_t in_axes[NPU_KERNEL_MAX_INPUTS], in_dirs[NPU_KERNEL_MAX_INPUTS];
	int64_t out_axes[NPU_KERNEL_MAX_OUTPUTS], out_dirs[NPU_KERNEL_MAX_OUTPUTS];
	const char *row_out[NPU_KERNEL_MAX_OUTPUTS];
	char **state = NULL, **xs = NULL, **rows = NULL;
	int64_t dims[CT_MAX_RANK];
	struct body b = { 0 };
	uint32_t rank;
	int ret;

	if (nx < 1 || (size_t)nx > c->nin - first)
		return oi_fail(im, "num_scan_inputs %" PRId64 " for %zu inputs", nx, c->nin);
	if (v8 && c->nin && c->in[0])
		return oi_fail(im, "Scan's sequence_lens input is not supported (every sequence is full length)");
	ns = c->nin - first - (size_t)nx;
	if (n->n_output < ns)
		return oi_fail(im, "%zu outputs for %zu state values", n->n_output, ns);
	nk = n->n_output - ns;
	ret = axes_attr(c, v8 ? "directions" : "scan_input_directions", in_dirs, (size_t)nx, true);
	if (!ret && !v8)
		ret = axes_attr(c, "scan_input_axes", in_axes, (size_t)nx, false);
	if (!ret && !v8)
		ret = axes_attr(c, "scan_output_axes", out_axes, nk, false);
	if (!ret && !v8)
		ret = axes_attr(c, "scan_output_directions", out_dirs, nk, true);
	if (ret)
		return ret;
	for (i = 0; v8 && i < nk; i++)
		out_axes[i] = out_dirs[i] = 0;
	for (i = 0; i < (size_t)nx; i++) {
		int64_t ax;

		if (v8)
			in_axes[i] = 0;
		ret = oi_shape_of(im, n->input[first + ns + i], &rank, dims);
		if (ret)
			return ret;
		/* opset 8: dimension 0 is the batch, the scan runs along 1 */
		ax = in_axes[i] < 0 ? in_axes[i] + rank : in_axes[i];
		if (ax < 0 || ax >= rank || (v8 && rank < 2))
			return oi_fail(im, "scan axis %" PRId64 " of a rank-%u input", in_axes[i], rank);
		in_axes[i] = ax;
		if (i && ((size_t)dims[v8 ? 1 : ax] != len || (v8 && (size_t)dims[0] != batch)))
			return oi_fail(im, "scan inputs of different lengths");
		len = (size_t)dims[v8 ? 1 : ax];
		batch = v8 ? (size_t)dims[0] : 1;
	}
	ret = body_init(&b, c, len * batch);
	if (ret)
		goto out;
	if (b.g->n_input != ns + (size_t)nx || b.g->n_output != ns + nk) {
		ret = oi_fail(im, "the body has %zu inputs and %zu outputs for %zu state values, %" PRId64 " scan inputs and %zu scan outputs",
			      b.g->n_input, b.g->n_output, ns, nx, nk);
		goto out;
	}
	state = calloc(ns + 1, sizeof(*state));
	xs = calloc((size_t)nx, sizeof(*xs));
	rows = calloc((ns + nk) * batch + 1, sizeof(*rows));
	if (!state || !xs || !rows) {
		ret = oi_nomem(im);
		goto out;
	}
	/* opset 8: each batch row a scan of its own, the rows stacked again */
	for (bi = 0; bi < batch && !ret; bi++) {
		int64_t row = (int64_t)bi;
		char *idx = v8 ? oi_name_fmt(b.tag, bi, "batch_index") : NULL;

		if (v8)
			ret = idx ? oi_const_sym(im, idx, &row, 1, true, OT_INT64) : oi_nomem(im);
		for (i = 0; i < ns + (size_t)nx && !ret; i++) {
			const char *src = n->input[first + i];
			char **slot = i < ns ? &state[i] : &xs[i - ns];
			const char *ins[2] = { src, idx };

			*slot = v8 ? oi_name_fmt_i(b.tag, bi, "batch_row", i) : strdup(src);
			if (!*slot)
				ret = oi_nomem(im);
			else if (v8)
				ret = oi_synth(c, "Gather", ins, 2, *slot, "axis", 0);
		}
		for (i = 0; i < nk && !ret; i++) {
			char **slot = &rows[ns * batch + i * batch + bi];

			*slot = v8 ? oi_name_fmt_i(b.tag, bi, "batch_out", i) : NULL;
			if (v8 && !*slot)
				ret = oi_nomem(im);
			row_out[i] = v8 ? *slot : n->output[ns + i];
		}
		if (!ret)
			ret = scan_run(c, &b, bi * len, state, ns, xs, (size_t)nx, len, in_axes, in_dirs,
				       nk, out_axes, out_dirs, row_out);
		for (i = 0; i < ns; i++) {
			rows[i * batch + bi] = state[i];
			state[i] = NULL;
		}
		for (i = 0; i < (size_t)nx; i++) {
			free(xs[i]);
			xs[i] = NULL;
		}
		free(idx);
	}
	for (i = 0; i < ns && !ret; i++)
		if (n->output[i] && *n->output[i])
			ret = v8 ? oi_stack(c, &rows[i * batch], batch, 0, true, n->output[i]) :
			      alias(c, n->output[i], rows[i]);
	for (i = 0; v8 && i < nk && !ret; i++)
		if (n->output[ns + i] && *n->output[ns + i])
			ret = oi_stack(c, &rows[ns * batch + i * batch], batch, 0, true, n->output[ns + i]);
out:
	free_names(state, ns + 1);
	free_names(xs, xs ? (size_t)nx : 0);
	free_names(rows, rows ? (ns + nk) * batch + 1 : 0);
	if (b.g)
		oi_names_free(&b.local);
	return ret;
}
