// SPDX-License-Identifier: MIT
/*
 * ONNX backend node-test conformance of libnpu's ops.
 *
 * Loads every node test (model.onnx with one node, test_data_set_N
 * with input_K.pb, output_*.pb) whose op is one the NPU implements, maps the
 * node onto libnpu ops, runs them on the device when there is one and
 * libnpu says it can take them (else on libnpu's CPU fallback, the
 * reference implementation), and compares with the expected outputs:
 * exact for integer outputs, |got - want| <= atol + rtol * |want| with
 * rtol 1e-3, atol 1e-7 for float (the ONNX backend test defaults).
 *
 * Output is TAP, one line per test data set; node attributes the op set
 * cannot express are reported as "# SKIP" with the reason, and a test
 * libnpu ran on its CPU fallback carries "# cpu-fallback: <reason>".  A summary
 * per op follows as "# op <Op> pass P fail F skip S device D cpu C".
 *
 *   onnx-runner [--cpu] [--list] [DIR]
 *
 * DIR defaults to ./onnx-data next to the binary if that exists, else
 * Debian's /usr/share/libonnx-testdata/data/node.  --list prints the
 * directories of the tests this runner handles (for the guest data copy).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu/npu.h"
#include "onnx.pb-c.h"

#define MAX_RANK	8
#define MAX_OUTS	8	/* outputs of a node compared (Split) */
/* Tensors of one node test: a 3-D ConvTranspose maps to dozens of ops. */
#define MAX_TENSORS	256

/*
 * ONNX TensorProto data types we read.  STRING tensors are read as the
 * doubles their strings spell (Cast's test data holds numbers), so they
 * compare by value, not by formatting.
 */
enum { OT_FLOAT = 1, OT_UINT8 = 2, OT_INT8 = 3, OT_UINT16 = 4, OT_INT16 = 5,
       OT_INT32 = 6, OT_INT64 = 7, OT_STRING = 8, OT_FLOAT16 = 10, OT_DOUBLE = 11,
       OT_UINT32 = 12, OT_UINT64 = 13, OT_BFLOAT16 = 16 };

struct tens {
	int dt;			/* OT_* */
	int rank;
	uint32_t dims[MAX_RANK];
	size_t n;
	void *data;		/* n elements of the type's size */
};

static const char *const supported_ops[] = {
	"Conv", "ConvInteger", "MatMul", "MatMulInteger", "Gemm", "QLinearConv",
	"QLinearMatMul", "MaxPool", "AveragePool", "GlobalAveragePool", "Add",
	"Sub", "Mul", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Softmax",
	"LayerNormalization", "QuantizeLinear", "DequantizeLinear", "Clip",
	"Transpose", "Concat", "Slice", "Split", "Pad", "Expand", "Tile",
	"DepthToSpace", "SpaceToDepth", "Cast", "Reshape", "Squeeze", "Unsqueeze",
	"Flatten", "Resize",
	"Div", "Max", "Min", "Pow", "Sqrt", "Reciprocal", "Exp", "Log", "Abs",
	"Neg", "HardSigmoid", "HardSwish", "BatchNormalization", "ReduceMean",
	"ReduceSum", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceSumSquare",
	"ConvTranspose",
};
#define NUM_OPS (sizeof(supported_ops) / sizeof(supported_ops[0]))

struct opstat {
	int pass, fail, skip, device, cpu;
};

static struct opstat stats[NUM_OPS];
static int ntest;

/* ---- Execution environment ------------------------------------------------ */

static struct npu_context *ctx;
static struct npu_queue *queue;

/* Everything made for one node, freed together. */
struct run {
	struct npu_tensor *t[MAX_TENSORS];
	struct npu_buffer *b[MAX_TENSORS];
	void *host[MAX_TENSORS];	/* where results are copied back to */
	int parent[MAX_TENSORS];	/* views: 1 + index of the tensor they view */
	size_t bytes[MAX_TENSORS];
	int n;
	void *scratch[MAX_TENSORS];	/* intermediate arrays, freed with the run */
	int nscratch;
	bool on_device, on_cpu;
	char note[160];
};

static size_t ot_size(int dt)
{
	switch (dt) {
	case OT_FLOAT: case OT_INT32: case OT_UINT32: return 4;
	case OT_FLOAT16: case OT_BFLOAT16: case OT_UINT16: case OT_INT16: return 2;
	case OT_UINT8: case OT_INT8: return 1;
	case OT_INT64: case OT_UINT64: case OT_DOUBLE: case OT_STRING: return 8;
	}
	return 0;
}

static enum npu_dtype npu_dt(int dt)
{
	switch (dt) {
	case OT_FLOAT: return NPU_DTYPE_FP32;
	case OT_FLOAT16: return NPU_DTYPE_FP16;
	case OT_BFLOAT16: return NPU_DTYPE_BF16;
	case OT_UINT8: return NPU_DTYPE_UINT8;
	case OT_INT8: return NPU_DTYPE_INT8;
	case OT_INT32: return NPU_DTYPE_INT32;
	}
	return 0;
}

/*
 * A libnpu tensor over @data (@rank dims, optional element @strides,
 * @bytes addressed): in a device buffer (copied in) when there is a
 * device, else bound to host memory directly.
 */
static struct npu_tensor *mk(struct run *r, int dt, int rank,
			     const uint32_t *dims, const uint64_t *strides,
			     void *data, size_t bytes)
{
	struct npu_tensor *t = NULL;
	struct npu_buffer *b = NULL;
	void *map;
	int i = r->n;

	if (i == MAX_TENSORS || !npu_dt(dt) ||
	    npu_tensor_create(npu_dt(dt), (uint32_t)rank, dims, &t))
		return NULL;
	if (strides && npu_tensor_set_strides(t, strides))
		goto fail;
	r->t[i] = t;
	r->host[i] = data;
	r->bytes[i] = bytes;
	r->n++;
	if (!ctx)
		return npu_tensor_bind_host(t, data, bytes) ? NULL : t;
	if (npu_buffer_alloc(ctx, bytes ? bytes : 1, 0, &b) ||
	    npu_buffer_map(b, &map))
		goto fail_buf;
	memcpy(map, data, bytes);
	r->b[i] = b;
	return npu_tensor_bind_buffer(t, b, 0) ? NULL : t;
fail_buf:
	npu_buffer_free(b);
	return NULL;
fail:
	npu_tensor_free(t);
	return NULL;
}

static struct npu_tensor *mkt(struct run *r, struct tens *x)
{
	return mk(r, x->dt, x->rank ? x->rank : 1,
		  x->rank ? x->dims : (uint32_t[]){ 1 }, NULL, x->data,
		  x->n * ot_size(x->dt));
}

/* Copy the device result of @out back into its host array. */
static void sync_back(struct run *r, const struct npu_tensor *out)
{
	void *map;
	int i;

	for (i = 0; i < r->n; i++) {
		int j = r->parent[i] ? r->parent[i] - 1 : i;

		if (r->t[i] == out && r->b[j] && !npu_buffer_map(r->b[j], &map))
			memcpy(r->host[j], map, r->bytes[j]);
	}
}

static void run_free(struct run *r)
{
	int i;

	for (i = 0; i < r->n; i++) {
		npu_tensor_free(r->t[i]);
		npu_buffer_free(r->b[i]);
	}
	r->n = 0;
	for (i = 0; i < r->nscratch; i++)
		free(r->scratch[i]);
	r->nscratch = 0;
}

/* Run one op; the output's tensor is refreshed on the host afterwards. */
static int run_op(struct run *r, const struct npu_op_params *p,
		  struct npu_tensor *in0, struct npu_tensor *in1,
		  struct npu_tensor *in2, struct npu_tensor *out)
{
	const struct npu_tensor *in[3] = { in0, in1, in2 };
	size_t nin = in2 ? 3 : in1 ? 2 : 1;
	enum npu_op_where where = 0;
	struct npu_op *op = NULL;
	const char *why = NULL;
	int ret;

	if (!in0 || !out)
		return -ENOMEM;
	ret = npu_op_create(p, in, nin, out, &op);
	if (ret)
		return ret;
	if (ctx && npu_op_supported(op, &why) == 0)
		snprintf(r->note, sizeof(r->note), "cpu-fallback: %s", why);
	ret = npu_op_run(op, queue, npu_deadline_ns(60000000000ll), &where);
	npu_op_free(op);
	if (ret)
		return ret;
	if (where == NPU_OP_RAN_DEVICE)
		r->on_device = true;
	else
		r->on_cpu = true;
	sync_back(r, out);
	return 0;
}

/* ---- Reading ONNX tensors and attributes --------------------------------- */

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

static int load_tensor(const char *path, struct tens *t)
{
	Onnx__TensorProto *tp;
	size_t len, i, es;
	uint8_t *buf;
	int ret = -EINVAL;

	memset(t, 0, sizeof(*t));
	buf = read_file(path, &len);
	if (!buf)
		return -errno;
	tp = onnx__tensor_proto__unpack(NULL, len, buf);
	free(buf);
	if (!tp)
		return -EBADMSG;
	t->dt = tp->data_type;
	es = ot_size(t->dt);
	if (!es || tp->n_dims > MAX_RANK)
		goto out;
	t->rank = (int)tp->n_dims;
	t->n = 1;
	for (i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0 || tp->dims[i] > UINT32_MAX)
			goto out;
		t->dims[i] = (uint32_t)tp->dims[i];
		t->n *= t->dims[i];
	}
	t->data = calloc(t->n ? t->n : 1, es);
	if (!t->data) {
		ret = -ENOMEM;
		goto out;
	}
	if (tp->has_raw_data) {
		if (tp->raw_data.len != t->n * es)
			goto out;
		memcpy(t->data, tp->raw_data.data, tp->raw_data.len);
	} else if (t->dt == OT_FLOAT && tp->n_float_data == t->n) {
		memcpy(t->data, tp->float_data, t->n * 4);
	} else if (t->dt == OT_DOUBLE && tp->n_double_data == t->n) {
		memcpy(t->data, tp->double_data, t->n * 8);
	} else if (t->dt == OT_STRING && tp->n_string_data == t->n) {
		for (i = 0; i < t->n; i++) {
			char num[64];
			size_t l = tp->string_data[i].len;

			if (l >= sizeof(num))
				goto out;
			memcpy(num, tp->string_data[i].data, l);
			num[l] = 0;
			((double *)t->data)[i] = strtod(num, NULL);
		}
	} else if (t->dt == OT_INT64 && tp->n_int64_data == t->n) {
		memcpy(t->data, tp->int64_data, t->n * 8);
	} else if (t->dt == OT_DOUBLE && tp->n_double_data == t->n) {
		memcpy(t->data, tp->double_data, t->n * 8);
	} else if ((t->dt == OT_UINT64 || t->dt == OT_UINT32) &&
		   tp->n_uint64_data == t->n) {
		for (i = 0; i < t->n; i++) {
			if (es == 8) {
				memcpy((uint8_t *)t->data + 8 * i, &tp->uint64_data[i], 8);
			} else {
				uint32_t v = (uint32_t)tp->uint64_data[i];

				memcpy((uint8_t *)t->data + 4 * i, &v, 4);
			}
		}
	} else if (tp->n_int32_data == t->n) {
		/* int32_data carries every narrower integer type, and fp16 bits */
		for (i = 0; i < t->n; i++) {
			int32_t v = tp->int32_data[i];

			if (es == 4)
				memcpy((uint8_t *)t->data + 4 * i, &v, 4);
			else if (es == 2)
				((uint16_t *)t->data)[i] = (uint16_t)v;
			else
				((uint8_t *)t->data)[i] = (uint8_t)v;
		}
	} else {
		goto out;
	}
	ret = 0;
out:
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return ret;
}

/* IEEE binary16 bits to a double (exact). */
static double half_val(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) :
		   ldexp(m | 0x400, e - 25);

	return h & 0x8000 ? -v : v;
}

static double bf16_val(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static double tval(const struct tens *t, size_t i)
{
	switch (t->dt) {
	case OT_FLOAT16: return half_val(((const uint16_t *)t->data)[i]);
	case OT_BFLOAT16: return bf16_val(((const uint16_t *)t->data)[i]);
	case OT_FLOAT: return ((const float *)t->data)[i];
	case OT_UINT8: return ((const uint8_t *)t->data)[i];
	case OT_INT8: return ((const int8_t *)t->data)[i];
	case OT_INT32: return ((const int32_t *)t->data)[i];
	case OT_UINT16: return ((const uint16_t *)t->data)[i];
	case OT_INT64: return (double)((const int64_t *)t->data)[i];
	case OT_INT16: return ((const int16_t *)t->data)[i];
	case OT_UINT32: return ((const uint32_t *)t->data)[i];
	case OT_UINT64: return (double)((const uint64_t *)t->data)[i];
	case OT_DOUBLE: case OT_STRING: return ((const double *)t->data)[i];
	}
	return NAN;
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n,
					const char *name)
{
	size_t i;

	for (i = 0; i < n->n_attribute; i++)
		if (!strcmp(n->attribute[i]->name, name))
			return n->attribute[i];
	return NULL;
}

static int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t def)
{
	const Onnx__AttributeProto *a = attr(n, name);

	return a ? a->i : def;
}

static float attr_f(const Onnx__NodeProto *n, const char *name, float def)
{
	const Onnx__AttributeProto *a = attr(n, name);

	return a ? a->f : def;
}

static size_t attr_ints(const Onnx__NodeProto *n, const char *name,
			int64_t *v, size_t max)
{
	const Onnx__AttributeProto *a = attr(n, name);
	size_t i;

	if (!a)
		return 0;
	for (i = 0; i < a->n_ints && i < max; i++)
		v[i] = a->ints[i];
	return a->n_ints;
}

static bool attr_s(const Onnx__NodeProto *n, const char *name, const char *want)
{
	const Onnx__AttributeProto *a = attr(n, name);

	return a && a->has_s && a->s.len == strlen(want) &&
	       !memcmp(a->s.data, want, a->s.len);
}

/* ---- Mapping nodes onto libnpu ops ------------------------------------------ */

#define SKIP	1	/* not expressible: r->note says why */

struct ctxn {
	const Onnx__NodeProto *node;
	int opset;
	struct tens *in[16];	/* NULL for absent optional inputs */
	int nin;
	struct tens *out;	/* buffer for output 0, shaped like expected */
	struct tens *out1;	/* MaxPool's Indices, when expected; else NULL */
	struct tens *outs[MAX_OUTS];	/* Split: every output, outs[0] == out */
	int nout;
	struct run *r;
};

static int skip(struct run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
	return SKIP;
}

static bool is_float(const struct tens *t)
{
	return t && t->dt == OT_FLOAT;
}

static int map_eltwise(struct ctxn *c, enum npu_eltwise_kind k)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .eltwise.kind = k };
	struct tens *a = c->in[0], *b = c->in[1];

	/*
	 * Integer tensors carry no quantization here: libnpu takes them as
	 * wrapping integer arithmetic, which it runs on the CPU.
	 */
	if (a->dt != b->dt || a->dt != c->out->dt ||
	    (!is_float(a) && a->dt != OT_UINT8 && a->dt != OT_INT8 &&
	     a->dt != OT_INT32))
		return skip(c->r, "operand types");
	return run_op(c->r, &p, mkt(c->r, a), mkt(c->r, b), NULL, mkt(c->r, c->out));
}

static int map_act(struct ctxn *c, enum npu_activation act, float alpha)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = act,
				   .act_alpha = act == NPU_ACT_LEAKY_RELU ? alpha : 0 };

	if (!is_float(c->in[0]))
		return skip(c->r, "activation on a non-quantized integer tensor");
	return run_op(c->r, &p, mkt(c->r, c->in[0]), NULL, NULL, mkt(c->r, c->out));
}

static int map_clip(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_CLIP };
	struct tens *x = c->in[0];
	double lo = -INFINITY, hi = INFINITY;
	struct npu_tensor *tx, *ty;

	if (!is_float(x) && x->dt != OT_INT8 && x->dt != OT_UINT8)
		return skip(c->r, "Clip of a %d-typed tensor", x->dt);
	if (c->opset < 11) {
		lo = attr_f(c->node, "min", -INFINITY);
		hi = attr_f(c->node, "max", INFINITY);
	} else {
		if (c->nin > 1 && c->in[1])
			lo = tval(c->in[1], 0);
		if (c->nin > 2 && c->in[2])
			hi = tval(c->in[2], 0);
	}
	/* min > max: ONNX (numpy's clip) gives max everywhere. */
	if (lo > hi)
		lo = hi;
	p.clip.min = (float)lo;
	p.clip.max = (float)hi;
	tx = mkt(c->r, x);
	ty = mkt(c->r, c->out);
	/* 8-bit integers: the identity quantization keeps them exact. */
	if (!is_float(x) && tx && ty &&
	    (npu_tensor_set_quant(tx, 1.0f, 0) || npu_tensor_set_quant(ty, 1.0f, 0)))
		return -EINVAL;
	return run_op(c->r, &p, tx, NULL, NULL, ty);
}

static int map_softmax(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_SOFTMAX };
	struct tens *x = c->in[0];
	int64_t axis = attr_i(c->node, "axis", c->opset >= 13 ? -1 : 1);
	uint32_t d2[2] = { 1, 1 };
	int i;

	if (!is_float(x))
		return skip(c->r, "Softmax of a non-float tensor");
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return -EINVAL;
	if (c->opset >= 13) {
		p.softmax.axis = (uint32_t)axis;
		return run_op(c->r, &p, mkt(c->r, x), NULL, NULL, mkt(c->r, c->out));
	}
	/* Before opset 13 the input is coerced to 2-D at @axis. */
	for (i = 0; i < x->rank; i++)
		d2[i >= axis] *= x->dims[i];
	p.softmax.axis = 1;
	return run_op(c->r, &p, mk(c->r, OT_FLOAT, 2, d2, NULL, x->data, x->n * 4),
		      NULL, NULL, mk(c->r, OT_FLOAT, 2, d2, NULL, c->out->data, x->n * 4));
}

static int map_layernorm(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_LAYERNORM };
	struct tens *x = c->in[0], *g = c->in[1], *b = c->nin > 2 ? c->in[2] : NULL;
	int64_t axis = attr_i(c->node, "axis", -1);
	struct npu_tensor *tg, *tb = NULL;
	size_t cnt = 1;
	int i;

	if (!is_float(x) || !is_float(g) || (b && !is_float(b)))
		return skip(c->r, "LayerNormalization of a non-float tensor");
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return -EINVAL;
	for (i = (int)axis; i < x->rank; i++)
		cnt *= x->dims[i];
	if (g->n != cnt || (b && b->n != cnt))
		return skip(c->r, "Scale/B broadcast over the normalized dims");
	p.layernorm.axis = (uint32_t)axis;
	p.layernorm.epsilon = attr_f(c->node, "epsilon", 1e-5f);
	tg = mk(c->r, OT_FLOAT, x->rank - (int)axis, x->dims + axis, NULL, g->data, cnt * 4);
	if (b)
		tb = mk(c->r, OT_FLOAT, x->rank - (int)axis, x->dims + axis, NULL, b->data, cnt * 4);
	if (c->node->n_output > 1)
		snprintf(c->r->note, sizeof(c->r->note), "Y compared; Mean/InvStdDev outputs are not produced");
	return run_op(c->r, &p, mkt(c->r, x), tg, tb, mkt(c->r, c->out));
}

/* Float MatMul / Gemm core: Y = A x B (+ bias[N]) with transposes. */
static int map_matmul(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM };

	if (!is_float(c->in[0]) || !is_float(c->in[1]))
		return skip(c->r, "MatMul of non-float tensors");
	if (c->in[0]->rank < 2 || c->in[1]->rank < 2)
		return skip(c->r, "1-D MatMul operands");
	return run_op(c->r, &p, mkt(c->r, c->in[0]), mkt(c->r, c->in[1]), NULL,
		      mkt(c->r, c->out));
}

static int map_gemm(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM };
	struct tens *a = c->in[0], *b = c->in[1], *cc = c->nin > 2 ? c->in[2] : NULL;
	float alpha = attr_f(c->node, "alpha", 1.0f), beta = attr_f(c->node, "beta", 1.0f);
	struct run *r = c->r;
	uint32_t n = c->out->dims[1], one = 1;
	struct npu_tensor *ty;
	float *tmp, *tmpc = NULL;
	int ret;

	if (!is_float(a) || !is_float(b) || (cc && !is_float(cc)))
		return skip(r, "Gemm of non-float tensors");
	if (attr_i(c->node, "transA", 0))
		p.gemm.flags |= NPU_GEMM_TRANS_A;
	if (attr_i(c->node, "transB", 0))
		p.gemm.flags |= NPU_GEMM_TRANS_B;
	/* The fused form: bias is a vector over N. */
	if (alpha == 1.0f && (!cc || (beta == 1.0f && cc->n == n &&
				      cc->dims[cc->rank - 1] == n)))
		return run_op(r, &p, mkt(r, a), mkt(r, b),
			      cc ? mk(r, OT_FLOAT, 1, &n, NULL, cc->data, n * 4) : NULL,
			      mkt(r, c->out));
	/* Else GEMM, then alpha * Y and + beta * C as elementwise ops. */
	tmp = calloc(c->out->n, 4);
	if (cc)
		tmpc = calloc(cc->n, 4);
	if (!tmp || (cc && !tmpc)) {
		ret = -ENOMEM;
		goto out;
	}
	ty = mk(r, OT_FLOAT, 2, c->out->dims, NULL, tmp, c->out->n * 4);
	ret = run_op(r, &p, mkt(r, a), mkt(r, b), NULL, ty);
	if (!ret && alpha != 1.0f) {
		struct npu_op_params m = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_MUL };

		struct npu_tensor *ty2 = mk(r, OT_FLOAT, 2, c->out->dims, NULL, tmp,
					    c->out->n * 4);

		ret = run_op(r, &m, ty, mk(r, OT_FLOAT, 1, &one, NULL, &alpha, 4), NULL, ty2);
	}
	if (!ret && cc) {
		struct npu_op_params m = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_MUL };
		struct npu_op_params ad = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_ADD };
		struct npu_tensor *tc = mkt(r, cc);

		memcpy(tmpc, cc->data, cc->n * 4);
		if (beta != 1.0f) {
			ret = run_op(r, &m, tc, mk(r, OT_FLOAT, 1, &one, NULL, &beta, 4), NULL,
				     mk(r, cc->dt, cc->rank ? cc->rank : 1,
					cc->rank ? cc->dims : &one, NULL, tmpc, cc->n * 4));
			tc = mk(r, cc->dt, cc->rank ? cc->rank : 1,
				cc->rank ? cc->dims : &one, NULL, tmpc, cc->n * 4);
		}
		if (!ret)
			ret = run_op(r, &ad, mk(r, OT_FLOAT, 2, c->out->dims, NULL, tmp,
						c->out->n * 4), tc, NULL, mkt(r, c->out));
	} else if (!ret) {
		memcpy(c->out->data, tmp, c->out->n * 4);
	}
out:
	free(tmp);
	free(tmpc);
	return ret;
}

/* Quantization of an integer operand from ONNX scale / zero point inputs. */
static int set_q(struct npu_tensor *t, const struct tens *scale,
		 const struct tens *zp, uint32_t axis, uint32_t chans)
{
	float sc[4096];
	int32_t z[4096];
	size_t n = scale ? scale->n : 1, i;

	if (!t)
		return -ENOMEM;
	if (n == 1)
		return npu_tensor_set_quant(t, scale ? (float)tval(scale, 0) : 1.0f,
					    zp ? (int32_t)tval(zp, 0) : 0);
	if (n != chans || n > 4096 || (zp && zp->n != n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		sc[i] = (float)tval(scale, i);
		z[i] = zp ? (int32_t)tval(zp, i) : 0;
	}
	return npu_tensor_set_quant_channel(t, axis, sc, z);
}

/* A zero-point-only operand (ConvInteger/MatMulInteger): scale 1. */
static int set_zp(struct npu_tensor *t, const struct tens *zp, uint32_t axis,
		  uint32_t chans)
{
	float ones[4096];
	int32_t z[4096];
	size_t i;

	if (!t)
		return -ENOMEM;
	if (!zp || zp->n == 1)
		return npu_tensor_set_quant(t, 1.0f, zp ? (int32_t)tval(zp, 0) : 0);
	if (zp->n != chans || chans > 4096)
		return -EINVAL;
	for (i = 0; i < chans; i++) {
		ones[i] = 1.0f;
		z[i] = (int32_t)tval(zp, i);
	}
	return npu_tensor_set_quant_channel(t, axis, ones, z);
}

static struct tens *opt(struct ctxn *c, int i)
{
	return i < c->nin ? c->in[i] : NULL;
}

static bool is_q8(const struct tens *t)
{
	return t && (t->dt == OT_UINT8 || t->dt == OT_INT8);
}

static int map_matmul_q(struct ctxn *c, bool qlinear)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM };
	struct tens *a = c->in[0], *b = qlinear ? c->in[3] : c->in[1];
	struct npu_tensor *ta, *tb, *ty;
	uint32_t n;
	int ret;

	if (!is_q8(a) || !is_q8(b) || a->rank < 2 || b->rank < 2)
		return skip(c->r, "operands are not 8-bit matrices");
	n = b->dims[b->rank - 1];
	ta = mkt(c->r, a);
	tb = mkt(c->r, b);
	ty = mkt(c->r, c->out);
	if (qlinear) {
		if (c->in[1]->n != 1)
			return skip(c->r, "per-row scale of A");
		ret = set_q(ta, c->in[1], c->in[2], 0, 1);
		if (!ret)
			ret = set_q(tb, c->in[4], c->in[5], (uint32_t)b->rank - 1, n);
		if (!ret)
			ret = set_q(ty, c->in[6], c->in[7], 0, 1);
	} else {
		if (opt(c, 2) && opt(c, 2)->n != 1)
			return skip(c->r, "per-row zero point of A");
		ret = set_zp(ta, opt(c, 2), 0, 1);
		if (!ret)
			ret = set_zp(tb, opt(c, 3), (uint32_t)b->rank - 1, n);
	}
	if (ret)
		return ret == -EINVAL ? skip(c->r, "quantization parameter shape") : ret;
	return run_op(c->r, &p, ta, tb, NULL, ty);
}

/*
 * ONNX NCHW (or NCW, seen as NC1W) data seen as NHWC through strides:
 * dims [N,H,W,C].
 */
static void nhwc_view(const struct tens *t, uint32_t *d, uint64_t *s)
{
	bool one_d = t->rank == 3;
	uint32_t n = t->dims[0], ch = t->dims[1];
	uint32_t h = one_d ? 1 : t->dims[2], w = t->dims[one_d ? 2 : 3];

	d[0] = n;
	d[1] = h;
	d[2] = w;
	d[3] = ch;
	s[0] = (uint64_t)ch * h * w;
	s[1] = w;
	s[2] = 1;
	s[3] = (uint64_t)h * w;
}

static struct npu_tensor *mk_nhwc(struct run *r, struct tens *t)
{
	uint32_t d[4];
	uint64_t s[4];

	nhwc_view(t, d, s);
	return mk(r, t->dt, 4, d, s, t->data, t->n * ot_size(t->dt));
}

/* NCDHW data (or NCHW, seen as NC1HW) as NDHWC: dims [N,D,H,W,C]. */
static void ndhwc_view(const struct tens *t, uint32_t *d, uint64_t *s)
{
	int o = t->rank == 4 ? 1 : 0;
	uint32_t n = t->dims[0], ch = t->dims[1];
	uint32_t dd = o ? 1 : t->dims[2], h = t->dims[3 - o], w = t->dims[4 - o];

	d[0] = n;
	d[1] = dd;
	d[2] = h;
	d[3] = w;
	d[4] = ch;
	s[0] = (uint64_t)ch * dd * h * w;
	s[1] = (uint64_t)h * w;
	s[2] = w;
	s[3] = 1;
	s[4] = (uint64_t)dd * h * w;
}

/*
 * Kernel window attributes shared by Conv and the pools, for the @nsp
 * spatial dims of the node; pad holds the begins, then the ends.
 */
struct win {
	int nsp;
	uint32_t k[3], s[3], d[3], pad[6];
};

static int window(struct ctxn *c, const struct tens *x, const uint32_t *kdef,
		  struct win *w)
{
	int64_t v[8];
	int i, n = x->rank - 2;

	if (n < 1 || n > 3)
		return -EINVAL;
	w->nsp = n;
	for (i = 0; i < 3; i++) {
		w->k[i] = kdef && i < n ? kdef[i] : 1;
		w->s[i] = w->d[i] = 1;
	}
	if (attr_ints(c->node, "kernel_shape", v, 8) == (size_t)n)
		for (i = 0; i < n; i++)
			w->k[i] = (uint32_t)v[i];
	if (attr_ints(c->node, "strides", v, 8) == (size_t)n)
		for (i = 0; i < n; i++)
			w->s[i] = (uint32_t)v[i];
	if (attr_ints(c->node, "dilations", v, 8) == (size_t)n)
		for (i = 0; i < n; i++)
			w->d[i] = (uint32_t)v[i];
	memset(w->pad, 0, sizeof(w->pad));
	if (attr_ints(c->node, "pads", v, 8) == (size_t)(2 * n))
		for (i = 0; i < 2 * n; i++)
			w->pad[i] = (uint32_t)v[i];
	if (attr_s(c->node, "auto_pad", "SAME_UPPER") ||
	    attr_s(c->node, "auto_pad", "SAME_LOWER")) {
		bool lower = attr_s(c->node, "auto_pad", "SAME_LOWER");

		for (i = 0; i < n; i++) {
			int64_t in = x->dims[2 + i], out = (in + w->s[i] - 1) / w->s[i];
			int64_t tot = (out - 1) * w->s[i] + (int64_t)(w->k[i] - 1) * w->d[i] + 1 - in;

			if (tot < 0)
				tot = 0;
			w->pad[i] = (uint32_t)(lower ? tot - tot / 2 : tot / 2);
			w->pad[n + i] = (uint32_t)(tot - w->pad[i]);
		}
	}
	return 0;
}

/* A 1-D window as the 2-D one over H = 1 (W is the ONNX dim). */
static void win_2d(const struct win *w, uint32_t *k, uint32_t *s, uint32_t *d,
		   uint32_t *pad)
{
	int o = w->nsp == 1 ? 1 : 0, i;

	for (i = 0; i < 2; i++) {
		bool unit = o && i == 0;

		k[i] = unit ? 1 : w->k[i - o];
		s[i] = unit ? 1 : w->s[i - o];
		if (d)
			d[i] = unit ? 1 : w->d[i - o];
		pad[i] = unit ? 0 : w->pad[i - o];
		pad[2 + i] = unit ? 0 : w->pad[w->nsp + i - o];
	}
}

static int map_conv(struct ctxn *c, int kind)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_CONV2D };
	bool qlinear = kind == 2, integer = kind == 1;
	struct tens *x = c->in[0], *w = qlinear ? c->in[3] : c->in[1];
	struct tens *bias = qlinear ? opt(c, 8) : integer ? NULL : opt(c, 2);
	struct npu_tensor *tx, *tw, *ty, *tb = NULL;
	uint32_t co, wd[4], kh, kw;
	uint64_t ws[4];
	struct win win;
	int ret = 0;

	if (x->rank != 4 && x->rank != 3)
		return skip(c->r, "%d-D convolution (1-D and 2-D exist)", x->rank - 2);
	if (!qlinear && !integer && (!is_float(x) || !is_float(w)))
		return skip(c->r, "Conv of non-float tensors");
	kh = x->rank == 4 ? w->dims[2] : 1;
	kw = w->dims[x->rank - 1];
	window(c, x, x->rank == 4 ? (uint32_t[]){ kh, kw } : (uint32_t[]){ kw }, &win);
	co = w->dims[0];
	p.conv.groups = (uint32_t)attr_i(c->node, "group", 1);
	win_2d(&win, (uint32_t[2]){ 0 }, p.conv.stride, p.conv.dilation, p.conv.pad);
	/* W [M, C/g, kH, kW] (or [M, C/g, kW]) seen as [M, kH, kW, C/g]. */
	wd[0] = co;
	wd[1] = kh;
	wd[2] = kw;
	wd[3] = w->dims[1];
	ws[0] = (uint64_t)w->dims[1] * kh * kw;
	ws[1] = kw;
	ws[2] = 1;
	ws[3] = (uint64_t)kh * kw;
	tx = mk_nhwc(c->r, x);
	tw = mk(c->r, w->dt, 4, wd, ws, w->data, w->n * ot_size(w->dt));
	ty = mk_nhwc(c->r, c->out);
	if (bias)
		tb = mk(c->r, bias->dt, 1, &co, NULL, bias->data, bias->n * ot_size(bias->dt));
	if (qlinear) {
		ret = set_q(tx, c->in[1], c->in[2], 0, 1);
		if (!ret)
			ret = set_q(tw, c->in[4], c->in[5], 0, co);
		if (!ret)
			ret = set_q(ty, c->in[6], c->in[7], 0, 1);
	} else if (integer) {
		ret = set_zp(tx, opt(c, 2), 0, 1);
		if (!ret)
			ret = set_zp(tw, opt(c, 3), 0, co);
	}
	if (ret)
		return ret == -EINVAL ? skip(c->r, "quantization parameter shape") : ret;
	return run_op(c->r, &p, tx, tw, tb, ty);
}

/*
 * ceil_mode as extra end padding: ONNX's output extent rounds up, except
 * that a window starting in the end padding is dropped; the windows the
 * extra padding adds then all overlap the input.  *@extra receives the
 * extra padding per dim.  Returns false if the extents do not match.
 */
static bool pool_extents(struct ctxn *c, const struct tens *x, struct win *w,
			 bool ceil_mode, uint32_t *extra)
{
	int i, n = w->nsp;

	for (i = 0; i < n; i++) {
		int64_t in = x->dims[2 + i], pb = w->pad[i], pe = w->pad[n + i];
		int64_t ek = (int64_t)(w->k[i] - 1) * w->d[i] + 1;
		int64_t span = in + pb + pe - ek, out;

		extra[i] = 0;
		if (span < 0)
			return false;
		out = span / w->s[i] + 1;
		if (ceil_mode) {
			out = (span + w->s[i] - 1) / w->s[i] + 1;
			if ((out - 1) * w->s[i] >= in + pb)
				out--;
			extra[i] = (uint32_t)((out - 1) * w->s[i] + ek - (in + pb + pe));
			if ((int32_t)extra[i] < 0)
				extra[i] = 0;
			w->pad[n + i] += extra[i];
		}
		if (out != c->out->dims[2 + i])
			return false;
	}
	return true;
}

/*
 * MaxPool's Indices output: the reference's offsets into X (NCHW row-major
 * through the strides) as int64, or column-major (storage_order 1) over
 * each H x W plane.
 */
static void indices_out(const int32_t *ind, const struct tens *x, bool colmajor,
			struct tens *out)
{
	int64_t *o = out->data;
	size_t i;

	for (i = 0; i < out->n; i++) {
		int64_t v = ind[i];

		if (colmajor && x->rank == 4) {
			int64_t hw = (int64_t)x->dims[2] * x->dims[3];
			int64_t plane = v / hw, h = (v % hw) / x->dims[3];
			int64_t w = v % x->dims[3];

			v = plane * hw + w * x->dims[2] + h;
		}
		o[i] = v;
	}
}

static int map_pool3d(struct ctxn *c, enum npu_pool_kind kind, struct win *w)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_POOL3D, .pool3d.kind = kind };
	struct tens *x = c->in[0];
	struct npu_tensor *tx, *ty, *ti = NULL;
	uint32_t dx[5], dy[5];
	uint64_t sx[5], sy[5];
	int32_t *ind = NULL;
	int i, o = 3 - w->nsp, ret;

	for (i = 0; i < 3; i++) {
		bool unit = i < o;

		p.pool3d.kernel[i] = unit ? 1 : w->k[i - o];
		p.pool3d.stride[i] = unit ? 1 : w->s[i - o];
		p.pool3d.dilation[i] = unit ? 1 : w->d[i - o];
		p.pool3d.pad[i] = unit ? 0 : w->pad[i - o];
		p.pool3d.pad[3 + i] = unit ? 0 : w->pad[w->nsp + i - o];
	}
	p.pool3d.count_include_pad = attr_i(c->node, "count_include_pad", 0) != 0;
	ndhwc_view(x, dx, sx);
	ndhwc_view(c->out, dy, sy);
	tx = mk(c->r, x->dt, 5, dx, sx, x->data, x->n * ot_size(x->dt));
	ty = mk(c->r, c->out->dt, 5, dy, sy, c->out->data, c->out->n * ot_size(c->out->dt));
	if (c->out1) {
		ind = calloc(c->out1->n, sizeof(*ind));
		if (!ind)
			return -ENOMEM;
		ti = mk(c->r, OT_INT32, 5, dy, sy, ind, c->out1->n * sizeof(*ind));
	}
	if (x->dt == OT_UINT8 && tx && ty && (npu_tensor_set_quant(tx, 1.0f, 0) ||
					      npu_tensor_set_quant(ty, 1.0f, 0))) {
		free(ind);
		return -ENOMEM;
	}
	if (c->out1 && !ti) {
		free(ind);
		return -ENOMEM;
	}
	ret = run_op(c->r, &p, tx, NULL, ti, ty);
	if (!ret && ind) {
		sync_back(c->r, ti);
		indices_out(ind, x, attr_i(c->node, "storage_order", 0) == 1, c->out1);
	}
	free(ind);
	return ret;
}

static int map_pool(struct ctxn *c, enum npu_pool_kind kind)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_POOL2D, .pool.kind = kind };
	struct tens *x = c->in[0];
	struct npu_tensor *tx, *ty;
	uint32_t extra[3];
	bool ceil_mode;
	struct win w;
	int i;

	if (x->rank < 3 || x->rank > 5)
		return skip(c->r, "%d-D pooling", x->rank - 2);
	if (c->node->n_output > 1 && !c->out1)
		return skip(c->r, "MaxPool Indices output");
	if (!is_float(x) && !(kind == NPU_POOL_MAX && x->dt == OT_UINT8))
		return skip(c->r, "pooling of a non-float tensor");
	if (kind == NPU_POOL_GLOBAL_AVG) {
		if (x->rank != 4)
			return skip(c->r, "%d-D global pooling", x->rank - 2);
		goto run;
	}
	window(c, x, NULL, &w);
	ceil_mode = attr_i(c->node, "ceil_mode", 0) != 0;
	if (!pool_extents(c, x, &w, ceil_mode, extra))
		return skip(c->r, "output extent does not follow the attributes");
	for (i = 0; i < w.nsp; i++) {
		uint32_t ek = (w.k[i] - 1) * w.d[i] + 1;

		/*
		 * The extra padding of ceil_mode is not part of the window
		 * average even with count_include_pad; the ops count it.
		 */
		if (extra[i] && attr_i(c->node, "count_include_pad", 0))
			return skip(c->r, "ceil_mode with count_include_pad");
		if (w.pad[i] >= ek || w.pad[w.nsp + i] >= ek)
			return skip(c->r, "padding as large as the window");
	}
	/* 3-D, or the Indices output: the CPU-only NDHWC pooling. */
	if (x->rank == 5 || c->out1)
		return map_pool3d(c, kind, &w);
	win_2d(&w, p.pool.kernel, p.pool.stride, p.pool.dilation, p.pool.pad);
	p.pool.count_include_pad = attr_i(c->node, "count_include_pad", 0) != 0;
run:
	tx = mk_nhwc(c->r, x);
	ty = mk_nhwc(c->r, c->out);
	/* uint8 max pooling: identity quantization keeps the values exact. */
	if (x->dt == OT_UINT8 && tx && ty && (npu_tensor_set_quant(tx, 1.0f, 0) ||
					      npu_tensor_set_quant(ty, 1.0f, 0)))
		return -ENOMEM;
	return run_op(c->r, &p, tx, NULL, NULL, ty);
}

static int map_quant(struct ctxn *c, bool quantize)
{
	struct npu_op_params p = { .size = sizeof(p),
				   .kind = quantize ? NPU_OP_QUANTIZE : NPU_OP_DEQUANTIZE };
	struct tens *x = c->in[0], *q = quantize ? c->out : x;
	struct tens *scale = c->in[1], *zp = opt(c, 2);
	int64_t axis = attr_i(c->node, "axis", 1);
	struct npu_tensor *tx, *ty;
	int ret;

	if (!is_q8(q) || (quantize && !is_float(x)) || (!quantize && !is_float(c->out)))
		return skip(c->r, "%s type combination", quantize ? "input/output" : "input/output");
	if (attr(c->node, "block_size") && attr_i(c->node, "block_size", 0))
		return skip(c->r, "blocked quantization");
	if (axis < 0)
		axis += q->rank;
	tx = mkt(c->r, x);
	ty = mkt(c->r, c->out);
	if (scale->n > 1 && (axis < 0 || axis >= q->rank))
		return -EINVAL;
	ret = set_q(quantize ? ty : tx, scale, zp, scale->n > 1 ? (uint32_t)axis : 0,
		    scale->n > 1 ? q->dims[axis] : 1);
	if (ret)
		return ret == -EINVAL ? skip(c->r, "quantization parameter shape") : ret;
	return run_op(c->r, &p, tx, NULL, NULL, ty);
}

/* ---- Data movement: COPY views ---------------------------------------------- */

/* Row-major element strides of @t's dims. */
static void dense_strides(const struct tens *t, uint64_t *s)
{
	uint64_t st = 1;
	int i;

	for (i = t->rank - 1; i >= 0; i--) {
		s[i] = st;
		st *= t->dims[i];
	}
}

/* A tensor over @base's memory (a tensor mk() made) from element @eoff. */
static struct npu_tensor *mk_view(struct run *r, const struct npu_tensor *base,
				  int dt, int rank, const uint32_t *dims,
				  const uint64_t *strides, uint64_t eoff)
{
	struct npu_tensor *t = NULL;
	int i = r->n, j;

	for (j = 0; j < r->n && r->t[j] != base; j++)
		;
	if (!base || j == r->n || i == 32 ||
	    npu_tensor_create(npu_dt(dt), (uint32_t)rank, dims, &t))
		return NULL;
	r->t[i] = t;
	r->parent[i] = j + 1;
	r->n++;
	if (strides && npu_tensor_set_strides(t, strides))
		return NULL;
	if (r->b[j])
		return npu_tensor_bind_buffer(t, r->b[j], eoff * ot_size(dt)) ? NULL : t;
	if (eoff * ot_size(dt) > r->bytes[j])
		return NULL;
	return npu_tensor_bind_host(t, (uint8_t *)r->host[j] + eoff * ot_size(dt),
				    r->bytes[j] - eoff * ot_size(dt)) ? NULL : t;
}

/* @x as one flat run of elements: the base its views are made on. */
static struct npu_tensor *mk_flat(struct run *r, struct tens *x)
{
	uint32_t n = x->n ? (uint32_t)x->n : 1;

	return mk(r, x->dt, 1, &n, NULL, x->data, x->n * ot_size(x->dt));
}

static bool movable(const struct tens *t)
{
	return t->dt == OT_FLOAT || t->dt == OT_FLOAT16 || t->dt == OT_BFLOAT16 ||
	       t->dt == OT_INT32 || t->dt == OT_INT8 || t->dt == OT_UINT8;
}

/*
 * 8-bit integers move as quantized values with the identity
 * quantization, which COPY carries over bit for bit.
 */
static int ident_quant(struct npu_tensor *t, int dt)
{
	if (t && (dt == OT_INT8 || dt == OT_UINT8))
		return npu_tensor_set_quant(t, 1.0f, 0);
	return 0;
}

/*
 * One COPY: @x seen through @xd/@xs (from element @xoff) into @y, the
 * output base or a view of it, with @p's border, offsets and reversal.
 */
static int copy_into(struct ctxn *c, struct tens *x, int rank,
		     const uint32_t *xd, const uint64_t *xs, uint64_t xoff,
		     struct npu_tensor *y, const struct npu_op_params *p)
{
	struct npu_tensor *tx;

	if (rank > 6)
		return skip(c->r, "rank %d exceeds the NPU's 6", rank);
	tx = mk_view(c->r, mk_flat(c->r, x), x->dt, rank, xd, xs, xoff);
	if (!tx || !y || ident_quant(tx, x->dt))
		return -ENOMEM;
	return run_op(c->r, p, tx, NULL, NULL, y);
}

/* The output's base tensor, shaped like the expected output. */
static struct npu_tensor *out_base(struct ctxn *c)
{
	struct npu_tensor *t = mkt(c->r, c->out);

	return ident_quant(t, c->out->dt) ? NULL : t;
}

/* A node whose output has no elements: nothing runs anywhere. */
static int empty(struct ctxn *c)
{
	snprintf(c->r->note, sizeof(c->r->note), "empty output: nothing to move");
	return 0;
}

/* @x's elements, in order, into the output: the metadata-only ops. */
static int map_flat_copy(struct ctxn *c, const uint32_t *dims, int rank)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY };
	struct tens *x = c->in[0];
	uint32_t n = x->n ? (uint32_t)x->n : 1;
	int i;

	/* The shape the node's attributes and inputs give must be the real one. */
	if (rank != c->out->rank)
		return -EDOM;
	for (i = 0; i < rank; i++)
		if (dims[i] != c->out->dims[i])
			return -EDOM;
	if (x->dt != c->out->dt || !movable(x))
		return skip(c->r, "element type %d", x->dt);
	return copy_into(c, x, 1, &n, NULL, 0, mk_flat(c->r, c->out), &p);
}

static int64_t norm_axis(int64_t a, int rank)
{
	return a < 0 ? a + rank : a;
}

static int map_reshape(struct ctxn *c)
{
	struct tens *x = c->in[0], *sh = c->in[1];
	bool allowzero = attr_i(c->node, "allowzero", 0);
	uint32_t d[MAX_RANK];
	uint64_t known = 1;
	int i, infer = -1, n;

	if (!sh || sh->n > MAX_RANK)
		return -EINVAL;
	n = (int)sh->n;
	for (i = 0; i < n; i++) {
		int64_t v = (int64_t)tval(sh, (size_t)i);

		if (v == -1 && infer < 0) {
			infer = i;
			d[i] = 1;
			continue;
		}
		if (v == 0 && !allowzero)
			v = i < x->rank ? (int64_t)x->dims[i] : -1;
		if (v < 0)
			return -EINVAL;
		d[i] = (uint32_t)v;
		known *= d[i];
	}
	if (infer >= 0)
		d[infer] = known ? (uint32_t)(x->n / known) : 0;
	return map_flat_copy(c, d, n);
}

static int map_flatten(struct ctxn *c)
{
	struct tens *x = c->in[0];
	int64_t ax = norm_axis(attr_i(c->node, "axis", 1), x->rank);
	uint32_t d[2] = { 1, 1 };
	int i;

	if (ax < 0 || ax > x->rank)
		return -EINVAL;
	for (i = 0; i < x->rank; i++)
		d[i < ax ? 0 : 1] *= x->dims[i];
	return map_flat_copy(c, d, 2);
}

/* Squeeze (@unsq false) or Unsqueeze of the axes in attribute or input 1. */
static int map_squeeze(struct ctxn *c, bool unsq)
{
	struct tens *x = c->in[0], *ax = opt(c, 1);
	int64_t a[MAX_RANK];
	bool sel[MAX_RANK] = { false };
	uint32_t d[MAX_RANK];
	int na, i, j, rank = unsq ? 0 : x->rank, n = 0;

	if (ax) {
		na = (int)ax->n;
		for (i = 0; i < na && i < MAX_RANK; i++)
			a[i] = (int64_t)tval(ax, (size_t)i);
	} else {
		na = (int)attr_ints(c->node, "axes", a, MAX_RANK);
	}
	if (na > MAX_RANK)
		return -EINVAL;
	if (unsq)
		rank = x->rank + na;
	for (i = 0; i < na; i++) {
		int64_t v = norm_axis(a[i], rank);

		if (v < 0 || v >= rank || rank > MAX_RANK)
			return -EINVAL;
		sel[v] = true;
	}
	for (i = 0, j = 0; i < rank; i++) {
		if (unsq) {
			d[n++] = sel[i] ? 1 : x->dims[j++];
		} else if (!(na ? sel[i] : x->dims[i] == 1)) {
			d[n++] = x->dims[i];
		}
	}
	return map_flat_copy(c, d, n);
}

static int map_transpose(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY };
	struct tens *x = c->in[0];
	int64_t perm[MAX_RANK];
	uint64_t s[MAX_RANK], xs[MAX_RANK];
	uint32_t xd[MAX_RANK];
	int i, r = x->rank;

	if (attr_ints(c->node, "perm", perm, MAX_RANK) != (size_t)r)
		for (i = 0; i < r; i++)
			perm[i] = r - 1 - i;
	dense_strides(x, s);
	for (i = 0; i < r; i++) {
		if (perm[i] < 0 || perm[i] >= r)
			return -EINVAL;
		xd[i] = x->dims[perm[i]];
		xs[i] = s[perm[i]];
	}
	return copy_into(c, x, r, xd, xs, 0, out_base(c), &p);
}

static int map_concat(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY };
	struct npu_tensor *y = out_base(c);
	int64_t ax = norm_axis(attr_i(c->node, "axis", 0), c->out->rank);
	uint64_t s[MAX_RANK];
	int64_t at = 0;
	int k, ret;

	if (ax < 0 || ax >= c->out->rank)
		return -EINVAL;
	/* Each input is one COPY into its place along the axis. */
	for (k = 0; k < c->nin; k++) {
		struct tens *x = c->in[k];

		if (!x->n)
			continue;
		dense_strides(x, s);
		p.copy.offset[ax] = (int32_t)at;
		ret = copy_into(c, x, x->rank, x->dims, s, 0, y, &p);
		if (ret)
			return ret;
		at += x->dims[ax];
	}
	return 0;
}

/* ONNX Slice's clamped start and element count for one axis. */
static void slice_axis(int64_t start, int64_t end, int64_t step, uint32_t dim,
		       int64_t *first, uint32_t *count)
{
	int64_t d = dim, n;

	if (start < 0)
		start += d;
	if (end < 0)
		end += d;
	if (step > 0) {
		start = start < 0 ? 0 : start > d ? d : start;
		end = end < 0 ? 0 : end > d ? d : end;
		n = end > start ? (end - start + step - 1) / step : 0;
	} else {
		start = start < 0 ? 0 : start > d - 1 ? d - 1 : start;
		end = end < -1 ? -1 : end > d - 1 ? d - 1 : end;
		n = start > end ? (start - end - step - 1) / -step : 0;
	}
	*first = start;
	*count = (uint32_t)n;
}

static int map_slice(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY };
	struct tens *x = c->in[0];
	int64_t st[MAX_RANK], en[MAX_RANK], ax[MAX_RANK], sp[MAX_RANK];
	int64_t first[MAX_RANK];
	uint64_t s[MAX_RANK], xs[MAX_RANK], off = 0;
	uint32_t xd[MAX_RANK];
	int i, n, r = x->rank;

	if (c->opset < 10) {
		n = (int)attr_ints(c->node, "starts", st, MAX_RANK);
		attr_ints(c->node, "ends", en, MAX_RANK);
		if (!attr_ints(c->node, "axes", ax, MAX_RANK))
			for (i = 0; i < n; i++)
				ax[i] = i;
		for (i = 0; i < n; i++)
			sp[i] = 1;
	} else {
		n = (int)c->in[1]->n;
		if (n > MAX_RANK || c->in[2]->n != (size_t)n)
			return -EINVAL;
		for (i = 0; i < n; i++) {
			st[i] = (int64_t)tval(c->in[1], (size_t)i);
			en[i] = (int64_t)tval(c->in[2], (size_t)i);
			ax[i] = opt(c, 3) ? (int64_t)tval(c->in[3], (size_t)i) : i;
			sp[i] = opt(c, 4) ? (int64_t)tval(c->in[4], (size_t)i) : 1;
		}
	}
	dense_strides(x, s);
	for (i = 0; i < r; i++) {
		first[i] = 0;
		xd[i] = x->dims[i];
		xs[i] = s[i];
	}
	for (i = 0; i < n; i++) {
		int64_t a = norm_axis(ax[i], r);

		if (a < 0 || a >= r || !sp[i])
			return -EINVAL;
		/* INT64_MAX-style bounds: clamp before they meet arithmetic. */
		st[i] = st[i] > INT32_MAX ? INT32_MAX : st[i] < -INT32_MAX ? -INT32_MAX : st[i];
		en[i] = en[i] > INT32_MAX ? INT32_MAX : en[i] < -INT32_MAX ? -INT32_MAX : en[i];
		slice_axis(st[i], en[i], sp[i], x->dims[a], &first[a], &xd[a]);
		xs[a] = s[a] * (uint64_t)(sp[i] < 0 ? -sp[i] : sp[i]);
		if (sp[i] < 0 && xd[a]) {
			/* The view starts at the lowest address; COPY reads it backwards. */
			first[a] += (int64_t)(xd[a] - 1) * sp[i];
			p.copy.reverse |= 1u << a;
		}
	}
	for (i = 0; i < r; i++) {
		if (!xd[i])
			return empty(c);
		off += (uint64_t)first[i] * s[i];
	}
	return copy_into(c, x, r, xd, xs, off, out_base(c), &p);
}

static int map_split(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY };
	struct tens *x = c->in[0];
	int64_t ax = norm_axis(attr_i(c->node, "axis", 0), x->rank);
	uint64_t s[MAX_RANK], at = 0;
	uint32_t xd[MAX_RANK];
	int64_t split[MAX_OUTS];
	size_t nsplit;
	int k, ret;

	if (ax < 0 || ax >= x->rank)
		return -EINVAL;
	dense_strides(x, s);
	memcpy(xd, x->dims, sizeof(xd));
	nsplit = attr_ints(c->node, "split", split, MAX_OUTS);
	if (opt(c, 1)) {
		nsplit = c->in[1]->n;
		for (k = 0; k < (int)nsplit && k < MAX_OUTS; k++)
			split[k] = (int64_t)tval(c->in[1], (size_t)k);
	}
	/*
	 * The sizes are the expected outputs': those the split input or
	 * attribute gives must match, else equal parts.
	 */
	for (k = 0; k < c->nout; k++) {
		struct tens *o = c->outs[k];
		struct npu_tensor *y;

		if (nsplit ? nsplit != (size_t)c->nout || split[k] != o->dims[ax] :
		    (uint64_t)o->dims[ax] * c->nout != x->dims[ax])
			return -EDOM;
		xd[ax] = o->dims[ax];
		if (o->n) {
			y = mkt(c->r, o);
			if (ident_quant(y, o->dt))
				return -ENOMEM;
			ret = copy_into(c, x, x->rank, xd, s, at * s[ax], y, &p);
			if (ret)
				return ret;
		}
		at += xd[ax];
	}
	return at == x->dims[ax] ? 0 : -EDOM;
}

static int map_pad(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY };
	struct tens *x = c->in[0];
	int64_t pads[2 * MAX_RANK];
	uint64_t s[MAX_RANK];
	float value = 0.0f;
	size_t np;
	int i, r = x->rank;

	if (c->opset < 11) {
		np = attr_ints(c->node, "pads", pads, 2 * MAX_RANK);
		value = attr_f(c->node, "value", 0.0f);
	} else {
		np = c->in[1]->n;
		for (i = 0; i < (int)np && i < 2 * MAX_RANK; i++)
			pads[i] = (int64_t)tval(c->in[1], (size_t)i);
		if (opt(c, 2))
			value = (float)tval(c->in[2], 0);
	}
	if (np != 2u * (size_t)r)
		return -EINVAL;
	p.copy.border = attr_s(c->node, "mode", "reflect") ? NPU_COPY_BORDER_REFLECT :
			attr_s(c->node, "mode", "edge") ? NPU_COPY_BORDER_EDGE :
			attr_s(c->node, "mode", "wrap") ? NPU_COPY_BORDER_WRAP :
			NPU_COPY_BORDER_CONSTANT;
	if (p.copy.border == NPU_COPY_BORDER_CONSTANT)
		p.copy.fill = value;
	for (i = 0; i < r; i++) {
		if (pads[i] < INT32_MIN || pads[i] > INT32_MAX ||
		    (int64_t)x->dims[i] + pads[i] + pads[r + i] != c->out->dims[i])
			return -EDOM;
		p.copy.offset[i] = (int32_t)pads[i];
	}
	dense_strides(x, s);
	return copy_into(c, x, r, x->dims, s, 0, out_base(c), &p);
}

static int map_expand(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY };
	struct tens *x = c->in[0], *sh = c->in[1];
	uint64_t s[MAX_RANK], xs[MAX_RANK];
	uint32_t yd[MAX_RANK];
	int i, r = c->out->rank, lead;

	/* The broadcast of x's shape and the shape input is the output's. */
	if (sh->n > MAX_RANK || x->rank > r)
		return -EINVAL;
	lead = r - x->rank;
	for (i = 0; i < r; i++) {
		int j = i - (r - (int)sh->n);
		uint32_t a = i >= lead ? x->dims[i - lead] : 1;
		uint32_t b = j >= 0 ? (uint32_t)tval(sh, (size_t)j) : 1;

		if (a != b && a != 1 && b != 1)
			return -EINVAL;
		yd[i] = a > b ? a : b;
		if (yd[i] != c->out->dims[i])
			return -EDOM;
	}
	dense_strides(x, s);
	for (i = 0; i < r; i++) {
		bool have = i >= lead && x->dims[i - lead] != 1;

		xs[i] = have ? s[i - lead] : 0;	/* zero stride broadcasts */
	}
	return copy_into(c, x, r, yd, xs, 0, out_base(c), &p);
}

static int map_tile(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY,
				   .copy.border = NPU_COPY_BORDER_WRAP };
	struct tens *x = c->in[0], *rep = c->in[1];
	uint64_t s[MAX_RANK];
	int i;

	if (rep->n != (size_t)x->rank)
		return -EINVAL;
	for (i = 0; i < x->rank; i++)
		if ((uint64_t)x->dims[i] * (uint64_t)tval(rep, (size_t)i) != c->out->dims[i])
			return -EDOM;
	dense_strides(x, s);
	return copy_into(c, x, x->rank, x->dims, s, 0, out_base(c), &p);
}

/*
 * DepthToSpace (@to_space) and SpaceToDepth as one COPY: both tensors seen
 * as 6-D, the output dense in the order its blocks interleave.
 */
static int map_space_depth(struct ctxn *c, bool to_space)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY };
	struct tens *x = c->in[0];
	uint32_t b = (uint32_t)attr_i(c->node, "blocksize", 0), d[6];
	uint32_t n, ch, h, w;
	uint64_t xs[6], hw;
	struct npu_tensor *y;

	if (x->rank != 4 || !b)
		return -EINVAL;
	n = x->dims[0];
	ch = x->dims[1];
	h = x->dims[2];
	w = x->dims[3];
	hw = (uint64_t)h * w;
	if (to_space) {
		uint32_t co = ch / (b * b);
		bool crd = attr_s(c->node, "mode", "CRD");

		if (ch % (b * b))
			return -EINVAL;
		/* Output [N, C', H, b, W, b]. */
		memcpy(d, (uint32_t[]){ n, co, h, b, w, b }, sizeof(d));
		xs[0] = ch * hw;
		xs[2] = w;
		xs[4] = 1;
		if (crd) {
			xs[1] = (uint64_t)b * b * hw;
			xs[3] = (uint64_t)b * hw;
			xs[5] = hw;
		} else {
			xs[1] = hw;
			xs[3] = (uint64_t)b * co * hw;
			xs[5] = (uint64_t)co * hw;
		}
	} else {
		if (h % b || w % b)
			return -EINVAL;
		/* Output [N, b, b, C, H/b, W/b]. */
		memcpy(d, (uint32_t[]){ n, b, b, ch, h / b, w / b }, sizeof(d));
		xs[0] = ch * hw;
		xs[1] = w;
		xs[2] = 1;
		xs[3] = hw;
		xs[4] = (uint64_t)b * w;
		xs[5] = b;
	}
	y = mk_view(c->r, out_base(c), c->out->dt, 6, d, NULL, 0);
	return copy_into(c, x, 6, d, xs, 0, y, &p);
}

/*
 * ONNX's older test data stores bfloat16 tensors as their uint16 bits
 * (the graph still says BFLOAT16): Cast is the one op that meets them.
 */
static int bf16_of_u16(int dt)
{
	return dt == OT_UINT16 ? OT_BFLOAT16 : dt;
}

static bool host_only(int dt)
{
	return dt == OT_DOUBLE || dt == OT_STRING;
}

/*
 * Cast from or to a type no NPU has (double, string): the runner
 * converts between it and float on the host, the COPY does the rest.
 */
static int map_cast_host(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY };
	struct tens *x = c->in[0], *src = x, f;
	bool from_host = host_only(x->dt), to_host = host_only(c->out->dt);
	struct npu_tensor *dst;
	uint64_t s[MAX_RANK];
	size_t i;
	int ret;

	if (from_host && to_host)
		return skip(c->r, "no NPU type at either end");
	f = from_host ? *x : *c->out;
	f.dt = OT_FLOAT;
	f.data = calloc(f.n ? f.n : 1, 4);
	if (!f.data)
		return -ENOMEM;
	if (from_host) {
		for (i = 0; i < x->n; i++)
			((float *)f.data)[i] = (float)tval(x, i);
		src = &f;
		dst = out_base(c);
	} else {
		dst = mkt(c->r, &f);
	}
	dense_strides(src, s);
	ret = copy_into(c, src, src->rank ? src->rank : 1,
			src->rank ? src->dims : (uint32_t[]){ 1 },
			src->rank ? s : NULL, 0, dst, &p);
	if (!ret && to_host)
		for (i = 0; i < c->out->n; i++)
			((double *)c->out->data)[i] = ((const float *)f.data)[i];
	free(f.data);
	if (!ret && c->r->on_device) {
		/* The run itself was the device's: the note says what was not. */
		snprintf(c->r->note, sizeof(c->r->note),
			 "cpu-fallback: double and string are no NPU types: the runner converts them to and from float");
		c->r->on_cpu = true;
	}
	return ret;
}

static int map_cast(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY };
	struct tens x = *c->in[0];
	int out_dt = c->out->dt, ret;
	uint64_t s[MAX_RANK];

	if (host_only(x.dt) || host_only(out_dt))
		return map_cast_host(c);
	x.dt = bf16_of_u16(x.dt);
	c->out->dt = bf16_of_u16(out_dt);
	if (!movable(&x) || !movable(c->out))
		ret = skip(c->r, "element type %d -> %d", x.dt, c->out->dt);
	else if ((x.dt == OT_INT32) != (c->out->dt == OT_INT32))
		ret = skip(c->r, "int32 conversions");
	else {
		dense_strides(&x, s);
		ret = copy_into(c, &x, x.rank ? x.rank : 1,
				x.rank ? x.dims : (uint32_t[]){ 1 },
				x.rank ? s : NULL, 0, out_base(c), &p);
	}
	c->out->dt = out_dt;
	return ret;
}

/* An optional input that is present and has elements. */
static struct tens *opt_n(struct ctxn *c, int i)
{
	struct tens *t = opt(c, i);

	return t && t->n ? t : NULL;
}

static int map_resize(struct ctxn *c)
{
	static const char *const coords[] = {
		"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
		"tf_half_pixel_for_nn", "tf_crop_and_resize",
	};
	static const char *const nearest[] = {
		"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
	};
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_RESIZE };
	struct tens *x = c->in[0], *roi, *sc;
	struct npu_tensor *tx, *ty;
	size_t i;

	roi = c->opset < 11 ? NULL : opt_n(c, 1);
	sc = opt_n(c, c->opset < 11 ? 1 : 2);
	if (x->rank != 4 || c->out->rank != 4)
		return skip(c->r, "resizing a %d-D tensor", x->rank);
	if (x->dims[0] != c->out->dims[0] || x->dims[1] != c->out->dims[1] ||
	    (sc && (sc->n != 4 || tval(sc, 0) != 1 || tval(sc, 1) != 1)))
		return skip(c->r, "resizing N or C");
	p.resize.mode = attr_s(c->node, "mode", "linear") ? NPU_RESIZE_LINEAR :
			attr_s(c->node, "mode", "cubic") ? NPU_RESIZE_CUBIC :
			NPU_RESIZE_NEAREST;
	/* Opset 10 knew only the asymmetric transformation. */
	p.resize.coord = c->opset < 11 ? NPU_RESIZE_ASYMMETRIC : NPU_RESIZE_HALF_PIXEL;
	for (i = 0; i < sizeof(coords) / sizeof(coords[0]); i++)
		if (attr_s(c->node, "coordinate_transformation_mode", coords[i]))
			p.resize.coord = (enum npu_resize_coord)i;
	if (p.resize.mode == NPU_RESIZE_NEAREST)
		for (i = 0; i < sizeof(nearest) / sizeof(nearest[0]); i++)
			if (attr_s(c->node, "nearest_mode", nearest[i]))
				p.resize.nearest = (enum npu_resize_nearest)i;
	if (p.resize.mode == NPU_RESIZE_CUBIC) {
		p.resize.cubic_a = attr_f(c->node, "cubic_coeff_a", -0.75f);
		p.resize.exclude_outside = attr_i(c->node, "exclude_outside", 0);
	}
	if (sc) {
		p.resize.scale[0] = (float)tval(sc, 2);
		p.resize.scale[1] = (float)tval(sc, 3);
	}
	if (p.resize.coord == NPU_RESIZE_TF_CROP_AND_RESIZE) {
		if (!roi || roi->n != 8)
			return -EINVAL;
		p.resize.extrapolation = attr_f(c->node, "extrapolation_value", 0.0f);
		p.resize.roi[0] = (float)tval(roi, 2);
		p.resize.roi[1] = (float)tval(roi, 3);
		p.resize.roi[2] = (float)tval(roi, 6);
		p.resize.roi[3] = (float)tval(roi, 7);
	}
	tx = mk_nhwc(c->r, x);
	ty = mk_nhwc(c->r, c->out);
	if (ident_quant(tx, x->dt) || ident_quant(ty, c->out->dt))
		return -ENOMEM;
	return run_op(c->r, &p, tx, NULL, NULL, ty);
}

/* ---- Elementwise, unary, reductions, normalization, ConvTranspose ------- */

/* A host array freed with the run. */
static void *scratch(struct run *r, size_t n, size_t es)
{
	void *p;

	if (r->nscratch == (int)(sizeof(r->scratch) / sizeof(r->scratch[0])))
		return NULL;
	p = calloc(n ? n : 1, es);
	if (p)
		r->scratch[r->nscratch++] = p;
	return p;
}

static bool ot_is_int(int dt)
{
	return dt == OT_UINT8 || dt == OT_INT8 || dt == OT_UINT16 ||
	       dt == OT_INT16 || dt == OT_INT32 || dt == OT_INT64 ||
	       dt == OT_UINT32 || dt == OT_UINT64;
}

/*
 * @t as a type of the op set: integers beyond it as INT32 and float64 as
 * fp32, when every value converts exactly (else NULL: the caller skips).
 * @to forces the target type (OT_FLOAT or OT_INT32), 0 picks it.
 */
static struct tens *legal(struct run *r, const struct tens *t, int to)
{
	struct tens *n;
	size_t i;

	if (!to) {
		if (t->dt == OT_FLOAT || t->dt == OT_FLOAT16 || t->dt == OT_UINT8 ||
		    t->dt == OT_INT8 || t->dt == OT_INT32)
			return (struct tens *)t;
		to = t->dt == OT_DOUBLE ? OT_FLOAT : OT_INT32;
	}
	if (t->dt == to)
		return (struct tens *)t;
	n = scratch(r, 1, sizeof(*n));
	if (!n)
		return NULL;
	*n = *t;
	n->dt = to;
	n->data = scratch(r, t->n, 4);
	if (!n->data)
		return NULL;
	for (i = 0; i < t->n; i++) {
		double v = tval(t, i);

		if (to == OT_FLOAT) {
			float f = (float)v;

			if ((double)f != v && !isnan(v))
				return NULL;
			((float *)n->data)[i] = f;
		} else {
			if (v != floor(v) || v < INT32_MIN || v > INT32_MAX)
				return NULL;
			((int32_t *)n->data)[i] = (int32_t)v;
		}
	}
	return n;
}

/* Copy a legalized result back into @out's own type. */
static void widen(const struct tens *from, struct tens *out)
{
	size_t i;

	if (from->data == out->data)
		return;
	for (i = 0; i < out->n; i++) {
		double v = tval(from, i);

		switch (out->dt) {
		case OT_INT16: ((int16_t *)out->data)[i] = (int16_t)v; break;
		case OT_UINT16: ((uint16_t *)out->data)[i] = (uint16_t)v; break;
		case OT_UINT32: ((uint32_t *)out->data)[i] = (uint32_t)v; break;
		case OT_INT64: ((int64_t *)out->data)[i] = (int64_t)v; break;
		case OT_UINT64: ((uint64_t *)out->data)[i] = (uint64_t)v; break;
		case OT_DOUBLE: ((double *)out->data)[i] = v; break;
		}
	}
}

/* numpy broadcast shape of @a and @b into @d; rank returned, -1 if none. */
static int bcast_shape(const struct tens *a, const struct tens *b, uint32_t *d)
{
	int ra = a->rank, rb = b->rank, r = ra > rb ? ra : rb, i;

	for (i = 0; i < r; i++) {
		uint32_t da = i - (r - ra) >= 0 ? a->dims[i - (r - ra)] : 1;
		uint32_t db = i - (r - rb) >= 0 ? b->dims[i - (r - rb)] : 1;

		if (da != db && da != 1 && db != 1)
			return -1;
		d[i] = da > db ? da : db;
	}
	return r;
}

/*
 * Div, Max, Min, Pow (and variadic Max/Min as a chain of ELTWISE ops).
 * Types outside the op set are legalized exactly or skipped; integer
 * tensors run ONNX's integer arithmetic (the CPU-only integer ELTWISE).
 */
static int map_binary(struct ctxn *c, enum npu_eltwise_kind k)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .eltwise.kind = k };
	struct run *r = c->r;
	struct tens *acc, *out, *in[16];
	int i, j, n = 0, ret = 0, outdt;

	for (i = 0; i < c->nin; i++)
		if (c->in[i])
			in[n++] = c->in[i];
	if (!n)
		return -EINVAL;
	out = legal(r, c->out, 0);
	if (!out)
		return skip(r, "values of a type outside the op set that do not convert exactly");
	outdt = out->dt;
	for (i = 0; i < n; i++) {
		/* Pow's exponent takes the base's type when exact. */
		in[i] = legal(r, in[i], in[i]->dt == outdt ? 0 : outdt);
		if (!in[i])
			return skip(r, "operand values that do not convert exactly to the result type");
	}
	if (n == 1)
		in[n++] = in[0];	/* Max(x) = Min(x) = max(x, x) = x */
	if (ot_is_int(outdt))
		snprintf(r->note, sizeof(r->note), "integer %s", c->node->op_type);
	acc = in[0];
	for (i = 1; i < n && !ret; i++) {
		struct tens *dst;

		if (i == n - 1) {
			dst = out;
		} else {
			dst = scratch(r, 1, sizeof(*dst));
			if (!dst)
				return -ENOMEM;
			dst->dt = outdt;
			dst->rank = bcast_shape(acc, in[i], dst->dims);
			if (dst->rank < 0)
				return -EINVAL;
			for (dst->n = 1, j = 0; j < dst->rank; j++)
				dst->n *= dst->dims[j];
			dst->data = scratch(r, dst->n, ot_size(outdt));
			if (!dst->data)
				return -ENOMEM;
		}
		ret = run_op(r, &p, mkt(r, acc), mkt(r, in[i]), NULL, mkt(r, dst));
		acc = dst;
	}
	if (!ret)
		widen(out, c->out);
	return ret;
}

static int map_hardsigmoid(struct ctxn *c)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_ACTIVATION,
				   .act = NPU_ACT_HARD_SIGMOID };

	if (!is_float(c->in[0]))
		return skip(c->r, "HardSigmoid of a non-float tensor");
	p.act_alpha = attr_f(c->node, "alpha", 0.2f);
	p.act_beta = attr_f(c->node, "beta", 0.5f);
	return run_op(c->r, &p, mkt(c->r, c->in[0]), NULL, NULL, mkt(c->r, c->out));
}

static int map_reduce(struct ctxn *c, enum npu_reduce_kind kind)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_REDUCE, .reduce.kind = kind };
	struct tens *x = c->in[0], *ax = opt(c, 1);
	const Onnx__AttributeProto *a = attr(c->node, "axes");
	uint32_t yd[MAX_RANK];
	int64_t v;
	size_t i, nax = a ? a->n_ints : ax ? ax->n : 0;
	int d;

	if (!is_float(x))
		return skip(c->r, "%s of a non-float tensor", c->node->op_type);
	if (x->rank < 1 || x->rank > 6)
		return skip(c->r, "rank %d", x->rank);
	if (!nax && attr_i(c->node, "noop_with_empty_axes", 0)) {
		struct npu_op_params id = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ACTIVATION };

		return run_op(c->r, &id, mkt(c->r, x), NULL, NULL, mkt(c->r, c->out));
	}
	for (i = 0; i < nax; i++) {
		v = a ? a->ints[i] : (int64_t)tval(ax, i);
		if (v < 0)
			v += x->rank;
		if (v < 0 || v >= x->rank)
			return -EINVAL;
		p.reduce.axes |= 1u << v;
	}
	if (!nax)
		p.reduce.axes = (1u << x->rank) - 1;
	/* keepdims 0 only drops the unit dims: the same dense data. */
	for (d = 0; d < x->rank; d++)
		yd[d] = (p.reduce.axes >> d) & 1 ? 1 : x->dims[d];
	return run_op(c->r, &p, mkt(c->r, x), NULL, NULL,
		      mk(c->r, c->out->dt, x->rank, yd, NULL, c->out->data,
			 c->out->n * ot_size(c->out->dt)));
}

/* A float32 result array of @n elements viewed with @rank dims @d. */
static struct tens *tmp_f32(struct run *r, int rank, const uint32_t *d)
{
	struct tens *t = scratch(r, 1, sizeof(*t));
	int i;

	if (!t)
		return NULL;
	t->dt = OT_FLOAT;
	t->rank = rank;
	t->n = 1;
	for (i = 0; i < rank; i++) {
		t->dims[i] = d[i];
		t->n *= d[i];
	}
	t->data = scratch(r, t->n, 4);
	return t->data ? t : NULL;
}

static int eltwise(struct run *r, enum npu_eltwise_kind k, struct tens *a,
		   struct tens *b, struct tens *y)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .eltwise.kind = k };

	return run_op(r, &p, mkt(r, a), mkt(r, b), NULL, mkt(r, y));
}

/*
 * BatchNormalization in inference mode: mean, var, scale and B are
 * constants, folded once on the host, as a graph folds constants, into
 * P = [k, B - mean * k] with k = scale / sqrt(var + epsilon) per channel,
 * shaped [2, C, 1, ...] to broadcast along dim 1; Y = X * P[0] + P[1] is
 * then one ACTIVATION command.
 */
static int batchnorm_affine(struct ctxn *c, struct tens *x,
			    const struct tens *par, float eps)
{
	struct npu_op_params a = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION };
	const float *sc = par[0].data, *b = par[1].data;
	const float *mu = par[2].data, *v = par[3].data;
	uint32_t dp[MAX_RANK], ch = x->dims[1], i;
	struct tens *p;
	float *pv;
	int d;

	dp[0] = 2;
	dp[1] = ch;
	for (d = 2; d < x->rank; d++)
		dp[d] = 1;
	p = tmp_f32(c->r, x->rank, dp);
	if (!p)
		return -ENOMEM;
	pv = p->data;
	for (i = 0; i < ch; i++) {
		float k = sc[i] / sqrtf(v[i] + eps);

		pv[i] = k;
		pv[ch + i] = b[i] - mu[i] * k;
	}
	return run_op(c->r, &a, mkt(c->r, x), mkt(c->r, p), NULL,
		      mkt(c->r, c->out));
}

/*
 * BatchNormalization: inference as one command (batchnorm_affine());
 * training mode as device ops y = (x - mean) * (scale /
 * sqrt(var + epsilon)) + B, per channel (dim 1) through broadcasting,
 * mean and var the batch statistics (REDUCE MEAN over every dim but the
 * channel, population variance); only Y is compared, the running
 * statistics are not produced.
 */
static int map_batchnorm(struct ctxn *c)
{
	struct run *r = c->r;
	struct tens *x = c->in[0], par[4], *mean, *var, *d, *den, *kk, *t;
	float eps = attr_f(c->node, "epsilon", 1e-5f);
	bool train = attr_i(c->node, "training_mode", 0) != 0;
	uint32_t pd[MAX_RANK];
	struct tens epst = { .dt = OT_FLOAT, .rank = 1, .dims = { 1 }, .n = 1,
			     .data = &eps };
	int i, ret;

	if (x->rank < 2 || c->nin < 5)
		return -EINVAL;
	for (i = 0; i < 5; i++)
		if (!is_float(c->in[i]))
			return skip(r, "BatchNormalization of non-float tensors");
	/* [C] parameters as [C, 1, ...]: they broadcast along dim 1 of x. */
	pd[0] = x->dims[1];
	for (i = 1; i < x->rank - 1; i++)
		pd[i] = 1;
	for (i = 0; i < 4; i++) {
		par[i] = *c->in[1 + i];
		if (par[i].n != x->dims[1])
			return -EINVAL;
		par[i].rank = x->rank - 1;
		memcpy(par[i].dims, pd, sizeof(pd));
	}
	if (!train) {
		ret = batchnorm_affine(c, x, par, eps);
		if (!ret && c->node->n_output > 1)
			snprintf(c->r->note, sizeof(c->r->note),
				 "Y compared; the running mean/var outputs are not produced");
		return ret;
	}
	d = tmp_f32(r, x->rank, x->dims);
	if (!d)
		return -ENOMEM;
	{
		struct npu_op_params m = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_REDUCE,
					   .reduce.kind = NPU_REDUCE_MEAN };
		uint32_t sd[MAX_RANK];

		for (i = 0; i < x->rank; i++)
			sd[i] = i == 1 ? x->dims[1] : 1;
		m.reduce.axes = ((1u << x->rank) - 1) & ~2u;
		mean = tmp_f32(r, x->rank, sd);
		var = tmp_f32(r, x->rank, sd);
		t = tmp_f32(r, x->rank, x->dims);
		if (!mean || !var || !t)
			return -ENOMEM;
		ret = run_op(r, &m, mkt(r, x), NULL, NULL, mkt(r, mean));
		if (!ret)
			ret = eltwise(r, NPU_ELTWISE_SUB, x, mean, d);
		if (!ret)
			ret = eltwise(r, NPU_ELTWISE_MUL, d, d, t);
		if (!ret)
			ret = run_op(r, &m, mkt(r, t), NULL, NULL, mkt(r, var));
	}
	den = tmp_f32(r, var->rank, var->dims);
	kk = tmp_f32(r, var->rank, var->dims);
	if (!den || !kk)
		return -ENOMEM;
	if (!ret)
		ret = eltwise(r, NPU_ELTWISE_ADD, var, &epst, den);
	if (!ret) {
		struct npu_op_params sq = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ACTIVATION,
					    .act = NPU_ACT_SQRT };
		struct tens *s2 = tmp_f32(r, var->rank, var->dims);

		if (!s2)
			return -ENOMEM;
		ret = run_op(r, &sq, mkt(r, den), NULL, NULL, mkt(r, s2));
		den = s2;
	}
	if (!ret)
		ret = eltwise(r, NPU_ELTWISE_DIV, &par[0], den, kk);
	t = tmp_f32(r, x->rank, x->dims);
	if (!t)
		return -ENOMEM;
	if (!ret)
		ret = eltwise(r, NPU_ELTWISE_MUL, d, kk, t);
	if (!ret)
		ret = eltwise(r, NPU_ELTWISE_ADD, t, &par[1], c->out);
	if (!ret && c->node->n_output > 1)
		snprintf(r->note, sizeof(r->note), "Y compared; the running mean/var outputs are not produced");
	return ret;
}

/* ConvTranspose attributes over three spatial dims d, h, w (unit ones first). */
struct convt_win {
	int64_t k[3], st[3], dl[3], pb[3], pe[3], op[3];
};

/*
 * output_shape and auto_pad become pads as ONNX's reference computes
 * them (floor division); a negative end pad is extra output_padding.
 */
static int convt_window(struct ctxn *c, const struct tens *x,
			const struct tens *w, struct convt_win *cw)
{
	int n = x->rank - 2, o = 3 - n, i;
	int64_t v[8], os[3];
	bool given = attr_ints(c->node, "output_shape", v, 8) == (size_t)n;
	bool same = attr_s(c->node, "auto_pad", "SAME_UPPER") ||
		    attr_s(c->node, "auto_pad", "SAME_LOWER");
	bool upper = !given && attr_s(c->node, "auto_pad", "SAME_UPPER");

	for (i = 0; i < 3; i++) {
		cw->k[i] = i < o ? 1 : w->dims[2 + i - o];
		cw->st[i] = cw->dl[i] = 1;
		cw->pb[i] = cw->pe[i] = cw->op[i] = 0;
		os[i] = i < o ? 1 : given ? v[i - o] : 0;
	}
	if (attr_ints(c->node, "strides", v, 8) == (size_t)n)
		for (i = 0; i < n; i++)
			cw->st[o + i] = v[i];
	if (attr_ints(c->node, "dilations", v, 8) == (size_t)n)
		for (i = 0; i < n; i++)
			cw->dl[o + i] = v[i];
	if (attr_ints(c->node, "output_padding", v, 8) == (size_t)n)
		for (i = 0; i < n; i++)
			cw->op[o + i] = v[i];
	if (attr_ints(c->node, "pads", v, 8) == (size_t)(2 * n))
		for (i = 0; i < n; i++) {
			cw->pb[o + i] = v[i];
			cw->pe[o + i] = v[n + i];
		}
	for (i = o; i < 3 && (given || same); i++) {
		int64_t in = x->dims[2 + i - o], tot, lo;

		if (!given)
			os[i] = in * cw->st[i];
		tot = cw->st[i] * (in - 1) + cw->op[i] + (cw->k[i] - 1) * cw->dl[i] +
		      1 - os[i];
		lo = tot >= 0 ? tot / 2 : -((-tot + 1) / 2);
		cw->pb[i] = upper ? lo : tot - lo;
		cw->pe[i] = upper ? tot - lo : lo;
	}
	for (i = 0; i < 3; i++) {
		if (cw->pe[i] < 0) {
			cw->op[i] -= cw->pe[i];
			cw->pe[i] = 0;
		}
		if (cw->pb[i] < 0)
			return skip(c->r, "negative begin padding");
	}
	return 0;
}

/*
 * One 2-D CONV_TRANSPOSE over depth slices: X slice @id (NHWC view of
 * the N,C,(D,)H,W data), W slice @kd, into @out (an NHWC view).
 */
static int convt_2d(struct ctxn *c, const struct convt_win *cw, uint32_t id,
		    uint32_t kd, struct tens *bias, struct npu_tensor *out)
{
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV_TRANSPOSE };
	struct tens *x = c->in[0], *w = c->in[1];
	bool three = x->rank == 5;
	uint32_t d = three ? x->dims[2] : 1, h = x->rank >= 4 ? x->dims[x->rank - 2] : 1;
	uint32_t wi = x->dims[x->rank - 1], ch = x->dims[1], co = c->out->dims[1];
	uint32_t kh = (uint32_t)cw->k[1], kw = (uint32_t)cw->k[2], kdd = (uint32_t)cw->k[0];
	uint32_t xd[4] = { x->dims[0], h, wi, ch }, wd[4];
	uint64_t xs[4] = { (uint64_t)ch * d * h * wi, wi, 1, (uint64_t)d * h * wi }, ws[4];
	struct npu_tensor *tb = NULL;
	int i;

	p.conv_transpose.groups = (uint32_t)attr_i(c->node, "group", 1);
	for (i = 0; i < 2; i++) {
		p.conv_transpose.stride[i] = (uint32_t)cw->st[1 + i];
		p.conv_transpose.dilation[i] = (uint32_t)cw->dl[1 + i];
		p.conv_transpose.output_pad[i] = (uint32_t)cw->op[1 + i];
		p.conv_transpose.pad[i] = (uint32_t)cw->pb[1 + i];
		p.conv_transpose.pad[2 + i] = (uint32_t)cw->pe[1 + i];
	}
	/* W [C, M/g, (kD,) (kH,) kW] as [C, KH, KW, M/g] at depth tap @kd. */
	wd[0] = w->dims[0];
	wd[1] = kh;
	wd[2] = kw;
	wd[3] = w->dims[1];
	ws[0] = (uint64_t)w->dims[1] * kdd * kh * kw;
	ws[1] = kw;
	ws[2] = 1;
	ws[3] = (uint64_t)kdd * kh * kw;
	if (bias)
		tb = mk(c->r, bias->dt, 1, &co, NULL, bias->data, bias->n * 4);
	return run_op(c->r, &p,
		      mk(c->r, x->dt, 4, xd, xs, (float *)x->data + (size_t)id * h * wi,
			 (x->n - (size_t)id * h * wi) * 4),
		      mk(c->r, w->dt, 4, wd, ws, (float *)w->data + (size_t)kd * kh * kw,
			 (w->n - (size_t)kd * kh * kw) * 4),
		      tb, out);
}

/*
 * ConvTranspose: 1-D and 2-D as one CONV_TRANSPOSE (1-D over H = 1); 3-D
 * as, per output depth, the sum of the 2-D ones of the depth taps that
 * land there (ELTWISE ADD), the bias added once.  W [C, M/g, k...] is
 * seen as the op's [C, KH, KW, M/g] through strides.
 */
static int map_convt(struct ctxn *c)
{
	struct tens *x = c->in[0], *w = c->in[1], *bias = opt(c, 2), *acc = NULL;
	struct run *r = c->r;
	struct convt_win cw;
	uint32_t od, ohw, yd[4], m, dd;
	uint64_t ys[4];
	int ret;

	if (x->rank < 3 || x->rank > 5)
		return skip(r, "%d-D ConvTranspose", x->rank - 2);
	if (!is_float(x) || !is_float(w) || (bias && !is_float(bias)))
		return skip(r, "ConvTranspose of non-float tensors");
	ret = convt_window(c, x, w, &cw);
	if (ret)
		return ret;
	if (x->rank < 5)
		return convt_2d(c, &cw, 0, 0, bias, mk_nhwc(r, c->out));
	/* Output depth slices: NHWC views of Y [N, M, OD, OH, OW]. */
	m = c->out->dims[1];
	dd = c->out->dims[2];
	ohw = c->out->dims[3] * c->out->dims[4];
	yd[0] = c->out->dims[0];
	yd[1] = c->out->dims[3];
	yd[2] = c->out->dims[4];
	yd[3] = m;
	ys[0] = (uint64_t)m * dd * ohw;
	ys[1] = c->out->dims[4];
	ys[2] = 1;
	ys[3] = (uint64_t)dd * ohw;
	for (od = 0; od < dd && !ret; od++) {
		float *yslice = (float *)c->out->data + (size_t)od * ohw;
		size_t ybytes = (c->out->n - (size_t)od * ohw) * 4;
		uint32_t kd, n = 0;

		for (kd = 0; kd < cw.k[0] && !ret; kd++) {
			int64_t v = (int64_t)od + cw.pb[0] - (int64_t)kd * cw.dl[0];
			struct tens *t;

			if (v < 0 || v % cw.st[0] || v / cw.st[0] >= x->dims[2])
				continue;
			t = tmp_f32(r, 4, yd);
			if (!t)
				return -ENOMEM;
			ret = convt_2d(c, &cw, (uint32_t)(v / cw.st[0]), kd,
				       n ? NULL : bias, mkt(r, t));
			if (!ret && n) {
				struct tens *s2 = tmp_f32(r, 4, yd);

				if (!s2)
					return -ENOMEM;
				ret = eltwise(r, NPU_ELTWISE_ADD, acc, t, s2);
				t = s2;
			}
			acc = t;
			n++;
		}
		if (ret)
			break;
		if (!n) {
			/* No tap lands here: the bias alone (or zeros). */
			struct tens *z = tmp_f32(r, 4, yd), zb = { .dt = OT_FLOAT, .rank = 1,
				.dims = { 1 }, .n = 1, .data = &(float){ 0.0f } };

			if (!z)
				return -ENOMEM;
			acc = tmp_f32(r, 4, yd);
			if (!acc)
				return -ENOMEM;
			ret = eltwise(r, NPU_ELTWISE_ADD, z, bias ? bias : &zb, acc);
		}
		/* The slice of Y takes the sum: one more device op (x + 0). */
		if (!ret) {
			struct npu_op_params id = { .size = sizeof(struct npu_op_params),
				.kind = NPU_OP_ACTIVATION };

			ret = run_op(r, &id, mkt(r, acc), NULL, NULL,
				     mk(r, OT_FLOAT, 4, yd, ys, yslice, ybytes));
		}
	}
	return ret;
}

static int map_node(struct ctxn *c)
{
	const char *op = c->node->op_type;

	if (!strcmp(op, "Add")) return map_eltwise(c, NPU_ELTWISE_ADD);
	if (!strcmp(op, "Sub")) return map_eltwise(c, NPU_ELTWISE_SUB);
	if (!strcmp(op, "Mul")) return map_eltwise(c, NPU_ELTWISE_MUL);
	if (!strcmp(op, "Relu")) return map_act(c, NPU_ACT_RELU, 0);
	if (!strcmp(op, "LeakyRelu"))
		return map_act(c, NPU_ACT_LEAKY_RELU, attr_f(c->node, "alpha", 0.01f));
	if (!strcmp(op, "Sigmoid")) return map_act(c, NPU_ACT_SIGMOID, 0);
	if (!strcmp(op, "Tanh")) return map_act(c, NPU_ACT_TANH, 0);
	if (!strcmp(op, "Clip")) return map_clip(c);
	if (!strcmp(op, "Softmax")) return map_softmax(c);
	if (!strcmp(op, "LayerNormalization")) return map_layernorm(c);
	if (!strcmp(op, "MatMul")) return map_matmul(c);
	if (!strcmp(op, "Gemm")) return map_gemm(c);
	if (!strcmp(op, "MatMulInteger")) return map_matmul_q(c, false);
	if (!strcmp(op, "QLinearMatMul")) return map_matmul_q(c, true);
	if (!strcmp(op, "Conv")) return map_conv(c, 0);
	if (!strcmp(op, "ConvInteger")) return map_conv(c, 1);
	if (!strcmp(op, "QLinearConv")) return map_conv(c, 2);
	if (!strcmp(op, "MaxPool")) return map_pool(c, NPU_POOL_MAX);
	if (!strcmp(op, "AveragePool")) return map_pool(c, NPU_POOL_AVG);
	if (!strcmp(op, "GlobalAveragePool")) return map_pool(c, NPU_POOL_GLOBAL_AVG);
	if (!strcmp(op, "QuantizeLinear")) return map_quant(c, true);
	if (!strcmp(op, "DequantizeLinear")) return map_quant(c, false);
	if (!strcmp(op, "Div")) return map_binary(c, NPU_ELTWISE_DIV);
	if (!strcmp(op, "Max")) return map_binary(c, NPU_ELTWISE_MAX);
	if (!strcmp(op, "Min")) return map_binary(c, NPU_ELTWISE_MIN);
	if (!strcmp(op, "Pow")) return map_binary(c, NPU_ELTWISE_POW);
	if (!strcmp(op, "Sqrt")) return map_act(c, NPU_ACT_SQRT, 0);
	if (!strcmp(op, "Reciprocal")) return map_act(c, NPU_ACT_RECIPROCAL, 0);
	if (!strcmp(op, "Exp")) return map_act(c, NPU_ACT_EXP, 0);
	if (!strcmp(op, "Log")) return map_act(c, NPU_ACT_LOG, 0);
	if (!strcmp(op, "Abs")) return map_act(c, NPU_ACT_ABS, 0);
	if (!strcmp(op, "Neg")) return map_act(c, NPU_ACT_NEG, 0);
	if (!strcmp(op, "HardSigmoid")) return map_hardsigmoid(c);
	if (!strcmp(op, "HardSwish")) return map_act(c, NPU_ACT_HARD_SWISH, 0);
	if (!strcmp(op, "BatchNormalization")) return map_batchnorm(c);
	if (!strcmp(op, "ReduceMean")) return map_reduce(c, NPU_REDUCE_MEAN);
	if (!strcmp(op, "ReduceSum")) return map_reduce(c, NPU_REDUCE_SUM);
	if (!strcmp(op, "ReduceMax")) return map_reduce(c, NPU_REDUCE_MAX);
	if (!strcmp(op, "ReduceMin")) return map_reduce(c, NPU_REDUCE_MIN);
	if (!strcmp(op, "ReduceL2")) return map_reduce(c, NPU_REDUCE_L2);
	if (!strcmp(op, "ReduceSumSquare")) return map_reduce(c, NPU_REDUCE_SUM_SQUARE);
	if (!strcmp(op, "ConvTranspose")) return map_convt(c);
	if (!strcmp(op, "Transpose")) return map_transpose(c);
	if (!strcmp(op, "Concat")) return map_concat(c);
	if (!strcmp(op, "Slice")) return map_slice(c);
	if (!strcmp(op, "Split")) return map_split(c);
	if (!strcmp(op, "Pad")) return map_pad(c);
	if (!strcmp(op, "Expand")) return map_expand(c);
	if (!strcmp(op, "Tile")) return map_tile(c);
	if (!strcmp(op, "DepthToSpace")) return map_space_depth(c, true);
	if (!strcmp(op, "SpaceToDepth")) return map_space_depth(c, false);
	if (!strcmp(op, "Cast")) return map_cast(c);
	if (!strcmp(op, "Reshape")) return map_reshape(c);
	if (!strcmp(op, "Squeeze")) return map_squeeze(c, false);
	if (!strcmp(op, "Unsqueeze")) return map_squeeze(c, true);
	if (!strcmp(op, "Flatten")) return map_flatten(c);
	if (!strcmp(op, "Resize")) return map_resize(c);
	return skip(c->r, "op not mapped");
}

/* ---- Comparing -------------------------------------------------------------- */

static size_t compare(const struct tens *got, const struct tens *want,
		      double *maxerr)
{
	size_t i, bad = 0;

	*maxerr = 0;
	for (i = 0; i < want->n; i++) {
		double g = tval(got, i), w = tval(want, i), e = fabs(g - w);

		if (want->dt != OT_FLOAT && want->dt != OT_FLOAT16 &&
		    want->dt != OT_BFLOAT16 && want->dt != OT_DOUBLE &&
		    want->dt != OT_STRING) {
			bad += g != w;
		} else if (isnan(w) || isnan(g)) {
			bad += isnan(w) != isnan(g);
		} else if (isinf(w)) {
			bad += g != w;
		} else {
			bad += e > 1e-7 + (want->dt == OT_BFLOAT16 ? 0x1p-7 : 1e-3) * fabs(w);
		}
		if (e > *maxerr)
			*maxerr = e;
	}
	return bad;
}

/* ---- Driving the tests --------------------------------------------------------- */

static int op_index(const char *op)
{
	size_t i;

	for (i = 0; i < NUM_OPS; i++)
		if (!strcmp(op, supported_ops[i]))
			return (int)i;
	return -1;
}

static Onnx__ModelProto *load_model(const char *dir)
{
	char path[PATH_MAX];
	Onnx__ModelProto *m;
	size_t len;
	void *buf;

	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	buf = read_file(path, &len);
	if (!buf)
		return NULL;
	m = onnx__model_proto__unpack(NULL, len, buf);
	free(buf);
	return m;
}

/* The op index of a single-node test of a supported op, else -1. */
static int test_op(const Onnx__ModelProto *m)
{
	const Onnx__NodeProto *n;

	if (!m || !m->graph || m->graph->n_node != 1)
		return -1;
	n = m->graph->node[0];
	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
		return -1;
	return op_index(n->op_type);
}

static int model_opset(const Onnx__ModelProto *m)
{
	size_t i;

	for (i = 0; i < m->n_opset_import; i++)
		if (!m->opset_import[i]->domain || !*m->opset_import[i]->domain ||
		    !strcmp(m->opset_import[i]->domain, "ai.onnx"))
			return (int)m->opset_import[i]->version;
	return 1;
}

static void run_data_set(const char *name, const char *dsdir,
			 const Onnx__ModelProto *m, int opi)
{
	const Onnx__GraphProto *g = m->graph;
	const Onnx__NodeProto *node = g->node[0];
	struct tens ins[16], want, got, want1, got1;
	struct tens wants[MAX_OUTS], gots[MAX_OUTS];
	struct ctxn c;
	struct run r;
	char path[PATH_MAX];
	size_t i, j, bad;
	double maxerr;
	int ret, nloaded = 0;

	memset(&c, 0, sizeof(c));
	memset(&r, 0, sizeof(r));
	memset(&got, 0, sizeof(got));
	memset(&want, 0, sizeof(want));
	memset(&got1, 0, sizeof(got1));
	memset(&want1, 0, sizeof(want1));
	memset(wants, 0, sizeof(wants));
	memset(gots, 0, sizeof(gots));
	c.node = node;
	c.opset = model_opset(m);
	c.r = &r;
	ret = 0;
	/* Graph input k is input_k.pb; node inputs refer to them by name. */
	for (i = 0; i < g->n_input && i < 16 && !ret; i++) {
		snprintf(path, sizeof(path), "%s/input_%zu.pb", dsdir, i);
		ret = load_tensor(path, &ins[i]);
		nloaded++;
	}
	for (i = 0; i < node->n_input && i < 16 && !ret; i++) {
		c.in[i] = NULL;
		for (j = 0; j < g->n_input; j++)
			if (*node->input[i] && !strcmp(node->input[i], g->input[j]->name))
				c.in[i] = &ins[j];
		if (*node->input[i] && !c.in[i])
			ret = -ENOENT;	/* an initializer: not in node tests */
	}
	c.nin = (int)node->n_input;
	snprintf(path, sizeof(path), "%s/output_0.pb", dsdir);
	if (!ret)
		ret = load_tensor(path, &want);
	/* The only second output the runner produces and compares. */
	if (!ret && !strcmp(node->op_type, "MaxPool") && node->n_output > 1 &&
	    *node->output[1]) {
		snprintf(path, sizeof(path), "%s/output_1.pb", dsdir);
		ret = load_tensor(path, &want1);
		if (!ret && want1.dt != OT_INT64)
			ret = -EBADMSG;
		if (!ret) {
			got1 = want1;
			got1.data = calloc(want1.n ? want1.n : 1, 8);
			c.out1 = &got1;
			ret = got1.data ? 0 : -ENOMEM;
		}
	}
	/* Split: outputs 1.. too, each run and compared like output 0. */
	if (!ret && !strcmp(node->op_type, "Split")) {
		c.nout = (int)node->n_output;
		if (c.nout > MAX_OUTS)
			ret = -E2BIG;
		for (i = 1; i < (size_t)c.nout && !ret; i++) {
			snprintf(path, sizeof(path), "%s/output_%zu.pb", dsdir, i);
			ret = load_tensor(path, &wants[i]);
			gots[i] = wants[i];
			gots[i].data = ret ? NULL :
				calloc(wants[i].n ? wants[i].n : 1, ot_size(wants[i].dt));
			if (!ret && !gots[i].data)
				ret = -ENOMEM;
			c.outs[i] = &gots[i];
		}
	}
	if (!ret) {
		got = want;
		got.data = calloc(want.n ? want.n : 1, ot_size(want.dt));
		c.out = &got;
		c.outs[0] = &got;
		ret = got.data ? map_node(&c) : -ENOMEM;
	}
	ntest++;
	if (ret == SKIP) {
		printf("ok %d - %s [%s] # SKIP %s\n", ntest, name, node->op_type, r.note);
		stats[opi].skip++;
	} else if (ret) {
		printf("not ok %d - %s [%s] # %s%s%s\n", ntest, name, node->op_type,
		       npu_strerror(ret), *r.note ? "; " : "", r.note);
		stats[opi].fail++;
	} else {
		/*
		 * bfloat16 (stored as uint16 bits): ONNX's older test data
		 * truncates float to bfloat16 where the NPU rounds to nearest
		 * even (as Cast-19 specifies), so compare the values within
		 * one bfloat16 step.
		 */
		if (!strcmp(node->op_type, "Cast") && want.dt == OT_UINT16 &&
		    attr_i(node, "to", 0) == OT_BFLOAT16) {
			want.dt = got.dt = OT_BFLOAT16;
			if (!*r.note)
				snprintf(r.note, sizeof(r.note),
					 "bfloat16 compared within one step: the data truncates, the NPU rounds to even");
		}
		bad = compare(&got, &want, &maxerr);
		if (c.out1) {
			double e1;

			bad += compare(&got1, &want1, &e1);
		}
		for (i = 1; i < (size_t)c.nout; i++) {
			double e1;

			bad += compare(&gots[i], &wants[i], &e1);
			want.n += wants[i].n;	/* the count reported below */
			maxerr = e1 > maxerr ? e1 : maxerr;
		}
		printf("%s %d - %s [%s] %s, %zu/%zu mismatches, max |err| %.3g%s%s\n",
		       bad ? "not ok" : "ok", ntest, name, node->op_type,
		       r.on_cpu ? (r.on_device ? "device+cpu" : "cpu") :
		       r.on_device ? "device" : "none",
		       bad, want.n + (c.out1 ? want1.n : 0), maxerr, *r.note ? " # " : "", r.note);
		if (bad)
			stats[opi].fail++;
		else
			stats[opi].pass++;
		if (r.on_cpu)
			stats[opi].cpu++;
		else if (r.on_device)
			stats[opi].device++;
	}
	fflush(stdout);
	run_free(&r);
	for (i = 0; i < (size_t)nloaded; i++)
		free(ins[i].data);
	free(want.data);
	free(got.data);
	free(want1.data);
	free(got1.data);
	for (i = 1; i < MAX_OUTS; i++) {
		free(wants[i].data);
		free(gots[i].data);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the subdirectories of @dir that start with @prefix. */
static char **list_dir(const char *dir, const char *prefix, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0;

	*count = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		char **nv;

		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (v)
		qsort(v, n, sizeof(*v), cmp_str);
	*count = n;
	return v;
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	char def[PATH_MAX], path[PATH_MAX], dspath[PATH_MAX];
	struct npu_device *dev = NULL;
	bool cpu = false, list = false;
	char **tests, **ds;
	size_t nt, nds, i, j;
	int k, failed = 0;

	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--cpu"))
			cpu = true;
		else if (!strcmp(argv[k], "--list"))
			list = true;
		else
			dir = argv[k];
	}
	if (!dir) {
		char *slash;

		snprintf(def, sizeof(def), "%s", argv[0]);
		slash = strrchr(def, '/');
		snprintf(slash ? slash + 1 : def, sizeof(def) - (size_t)(slash ? slash + 1 - def : 0),
			 "onnx-data");
		dir = access(def, F_OK) == 0 ? def : "/usr/share/libonnx-testdata/data/node";
	}
	tests = list_dir(dir, "test_", &nt);
	if (list) {
		for (i = 0; i < nt; i++) {
			Onnx__ModelProto *m;

			snprintf(path, sizeof(path), "%s/%s", dir, tests[i]);
			m = load_model(path);
			if (test_op(m) >= 0)
				printf("%s\n", tests[i]);
			if (m)
				onnx__model_proto__free_unpacked(m, NULL);
		}
		return 0;
	}
	if (!cpu && npu_device_open(0, &dev) == 0 &&
	    npu_context_create(dev, &ctx) == 0 &&
	    npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &queue) == 0) {
		printf("# running on the device (libnpu CPU fallback where it says no)\n");
	} else {
		npu_context_destroy(ctx);
		ctx = NULL;
		printf("# no device%s: every op runs on libnpu's CPU fallback (reference)\n",
		       cpu ? " (--cpu)" : "");
	}
	printf("# test data: %s\n", dir);
	for (i = 0; i < nt; i++) {
		Onnx__ModelProto *m;
		int opi;

		snprintf(path, sizeof(path), "%s/%s", dir, tests[i]);
		m = load_model(path);
		opi = test_op(m);
		if (opi >= 0) {
			ds = list_dir(path, "test_data_set_", &nds);
			for (j = 0; j < nds; j++) {
				snprintf(dspath, sizeof(dspath), "%s/%s", path, ds[j]);
				run_data_set(tests[i], dspath, m, opi);
				free(ds[j]);
			}
			free(ds);
		}
		if (m)
			onnx__model_proto__free_unpacked(m, NULL);
		free(tests[i]);
	}
	free(tests);
	printf("1..%d\n", ntest);
	for (i = 0; i < NUM_OPS; i++) {
		struct opstat *s = &stats[i];

		printf("# op %s pass %d fail %d skip %d device %d cpu %d\n",
		       supported_ops[i], s->pass, s->fail, s->skip, s->device, s->cpu);
		failed += s->fail;
	}
	npu_queue_destroy(queue);
	npu_context_destroy(ctx);
	npu_device_close(dev);
	return failed ? 1 : 0;
}
