// SPDX-License-Identifier: MIT
/*
 * npu-run: run an ONNX model on the NPU (or libnpu's CPU fallback).
 *
 *   npu-run MODEL.onnx [--input [NAME=]FILE]... [--shape NAME=DIMS]...
 *           [--const NAME]... [--runtime NAME]...
 *           [--cpu] [--profile] [--iterations N] [--output-dir DIR]
 *           [--rounding onnx|tflite]
 *           [--expect [NAME=]FILE]... [--rtol R] [--atol A] [--device N]
 *           [--timeout SECONDS] [--devices LIST|all] [--batch N] [--pipeline]
 *
 * FILE is a .npy array or an ONNX TensorProto (.pb).  Without NAME= an
 * input goes to the graph input the .pb names, else to the next graph
 * input in order.  Dynamic dimensions take their size from --shape, else
 * from the input file.  Documentation/npu-run.rst is the manual.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npu/npu.h"
#include "npu/onnx.h"
#include "npy.h"

#define MAX_FILES	64
#define MAX_CUSTOM_OPS	256
/*
 * Exit status when the model cannot be imported or compiled, or a node is
 * beyond the CPU path's limits.
 */
#define EXIT_UNSUPPORTED	3
/* Exit status when a run did not finish within --timeout. */
#define EXIT_TIMEOUT		4
/* How long a run may take without --timeout. */
#define DEFAULT_RUN_NS		(600ll * 1000000000)
/* Runs a p99 needs to be more than the maximum. */
#define P99_MIN_RUNS		100
/* Devices --devices may name. */
#define MAX_DEVICES		64
/* Requests in flight per device with --batch: one running, one waiting. */
#define BATCH_PER_DEVICE	2

struct tensor_file {
	const char *name;	/* NULL: positional */
	const char *path;
	enum npu_dtype dtype;
	uint32_t rank;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	void *data;
	uint64_t bytes;
	bool used;
	char *pb_name;		/* the name a .pb carried, owned */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: npu-run MODEL.onnx [options]\n"
		"  --input [NAME=]FILE    input tensor (.npy or ONNX .pb); repeat per input\n"
		"  --shape NAME=DIMS      bind a dynamic input shape, e.g. x=1x3x224x224\n"
		"  --const NAME           input NAME is a constant of the model (its file's values)\n"
		"  --runtime NAME         input NAME stays a runtime input whatever its dtype\n"
		"  --cpu                  run on libnpu's CPU fallback only\n"
		"  --device N             device index (default 0)\n"
		"  --devices LIST|all     spread --batch requests over devices, e.g. 0,1\n"
		"  --batch N              run N requests (the same inputs); print throughput\n"
		"  --pipeline             split the model into a stage per --devices device\n"
		"  --profile              per-node table and the device/CPU split\n"
		"  --iterations N         run N times; print latency median/min/max (p99 from 100)\n"
		"  --output-dir DIR       write each output as DIR/NAME.npy (DIR created)\n"
		"  --expect [NAME=]FILE   compare an output with FILE; exit 1 on mismatch\n"
		"  --rtol R, --atol A     comparison tolerance (default 1e-3, 1e-5)\n"
		"  --timeout SECONDS      stop a run that takes longer; exit status 4\n"
		"  -q, --quiet            print only errors and the final verdict\n"
		"  --custom-ops FILE.so   load custom operators from a plugin (repeatable)\n"
		"  --list-ops             list the ONNX operators libnpu imports, and exit\n"
		"  --rounding onnx|tflite how quantized results round (default onnx)\n"
		"  --no-lut               keep 8-bit pointwise chains unfolded (NPU_COMPILE_NO_LUT)\n");
}

/*
 * --list-ops: the operator registry as an RST table (npu-run.rst's op
 * list is this output, so it cannot drift from the code).
 */
static int list_ops(void)
{
	static const char rule[] =
		"======================================= ========== ================\n";
	size_t i, n = npu_onnx_builtin_count();

	/* ops of other domains than ONNX's read "domain.op" */
	printf("%s%-39s %-10s %s\n%s", rule, "op", "device", "CPU kernel", rule);
	for (i = 0; i < n; i++) {
		struct npu_onnx_op_info o = NPU_ONNX_OP_INFO_INIT;
		char dev[16] = "", cpu[24] = "", op[96];

		if (npu_onnx_builtin(i, &o))
			return 1;
		if (o.device)
			snprintf(dev, sizeof(dev), "opset %lld+", (long long)o.device_since);
		if (o.cpu && o.cpu_until)
			snprintf(cpu, sizeof(cpu), "opsets %lld-%lld", (long long)o.cpu_since,
				 (long long)o.cpu_until);
		else if (o.cpu)
			snprintf(cpu, sizeof(cpu), "opset %lld+", (long long)(o.cpu_since ? o.cpu_since : 1));
		snprintf(op, sizeof(op), "%s%s%s", o.domain && *o.domain ? o.domain : "",
			 o.domain && *o.domain ? "." : "", o.op_type);
		printf("%-39s %-10s %s\n", op, dev[0] ? dev : "no", cpu[0] ? cpu : "no");
	}
	printf("%s", rule);
	return 0;
}

/* A plugin's ops (npu/onnx.h NPU_ONNX_PLUGIN_SYMBOL), appended to @ops. */
static int load_plugin(const char *path, const struct npu_onnx_op **ops, size_t *nops,
		       size_t max)
{
	const struct npu_onnx_op *const *got;
	npu_onnx_plugin_fn fn;
	size_t count = 0, i;
	void *so;

#ifdef NPU_RUN_STATIC
	/* a static program has no dynamic symbols for a plugin to bind to */
	(void)got; (void)fn; (void)count; (void)i; (void)so; (void)ops; (void)nops; (void)max;
	fprintf(stderr, "npu-run: --custom-ops %s: this npu-run is linked statically, plugins need the shared build\n",
		path);
	return -1;
#endif
	so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!so) {
		fprintf(stderr, "npu-run: --custom-ops %s: %s\n", path, dlerror());
		return -1;
	}
	/* a plugin stays loaded for the whole run: its kernels are used until exit */
	*(void **)&fn = dlsym(so, NPU_ONNX_PLUGIN_SYMBOL);
	if (!fn) {
		fprintf(stderr, "npu-run: --custom-ops %s: no %s()\n", path, NPU_ONNX_PLUGIN_SYMBOL);
		return -1;
	}
	got = fn(&count);
	if (!got || count > max - *nops) {
		fprintf(stderr, "npu-run: --custom-ops %s: %zu ops, at most %zu in all\n", path,
			count, max);
		return -1;
	}
	for (i = 0; i < count; i++)
		ops[(*nops)++] = got[i];
	return 0;
}

static int split_name(const char *arg, const char **name, const char **path, char **own)
{
	const char *eq = strchr(arg, '=');

	*own = NULL;
	if (!eq) {
		*name = NULL;
		*path = arg;
		return 0;
	}
	*own = strndup(arg, (size_t)(eq - arg));
	if (!*own)
		return -ENOMEM;
	*name = *own;
	*path = eq + 1;
	return 0;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

static const struct {
	enum npu_dtype dtype;
	enum npy_type npy;
	const char *name;
} dtypes[] = {
	{ NPU_DTYPE_FP32, NPY_F32, "float32" },
	{ NPU_DTYPE_FP16, NPY_F16, "float16" },
	/* numpy has no bfloat16: written widened to float32, which holds it */
	{ NPU_DTYPE_BF16, NPY_F32, "bfloat16" },
	{ NPU_DTYPE_INT8, NPY_I8, "int8" },
	{ NPU_DTYPE_UINT8, NPY_U8, "uint8" },
	{ NPU_DTYPE_INT32, NPY_I32, "int32" },
	{ NPU_DTYPE_INT64, NPY_I64, "int64" },
	{ NPU_DTYPE_BOOL, NPY_BOOL, "bool" },
	{ NPU_DTYPE_FP64, NPY_F64, "float64" },
	{ NPU_DTYPE_INT16, NPY_I16, "int16" },
	{ NPU_DTYPE_UINT16, NPY_U16, "uint16" },
	{ NPU_DTYPE_UINT32, NPY_U32, "uint32" },
	{ NPU_DTYPE_UINT64, NPY_U64, "uint64" },
};

#define NDTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

static const char *dtype_name(enum npu_dtype d)
{
	size_t i;

	for (i = 0; i < NDTYPES; i++)
		if (dtypes[i].dtype == d)
			return dtypes[i].name;
	return "an unknown dtype";
}

static enum npu_dtype npy_to_dtype(enum npy_type t)
{
	size_t i;

	for (i = 0; i < NDTYPES; i++)
		if (dtypes[i].npy == t)
			return dtypes[i].dtype;
	return 0;
}

static int dtype_to_npy(enum npu_dtype d)
{
	size_t i;

	for (i = 0; i < NDTYPES; i++)
		if (dtypes[i].dtype == d)
			return (int)dtypes[i].npy;
	return -1;
}

static bool dtype_is_float(enum npu_dtype d)
{
	return d == NPU_DTYPE_FP32 || d == NPU_DTYPE_FP16 || d == NPU_DTYPE_BF16 ||
	       d == NPU_DTYPE_FP64;
}

/*
 * The dtypes whose inputs are constants of the model by default: ONNX's
 * inputs that decide shapes are int64 (Reshape's shape, Slice's starts,
 * Tile's repeats, TopK's k, Pad's pads, Resize's sizes, axes) or bool
 * (If's and Loop's conditions), and import must know every shape.
 */
static bool dtype_constant_by_default(enum npu_dtype d)
{
	return d == NPU_DTYPE_INT64 || d == NPU_DTYPE_BOOL;
}

static int load_tensor_file(struct tensor_file *t)
{
	char err[256];
	int ret, k;

	if (ends_with(t->path, ".npy")) {
		struct npy_array a;

		ret = npy_load(t->path, &a);
		if (ret) {
			fprintf(stderr, "npu-run: %s: %s\n", t->path, strerror(-ret));
			return ret;
		}
		if (a.rank > NPU_TENSOR_MAX_RANK) {
			fprintf(stderr, "npu-run: %s: rank %d too large\n", t->path, a.rank);
			npy_free(&a);
			return -EINVAL;
		}
		t->dtype = npy_to_dtype(a.type);
		t->rank = (uint32_t)a.rank;
		for (k = 0; k < a.rank; k++) {
			if (a.dims[k] < 1 || a.dims[k] > UINT32_MAX) {
				fprintf(stderr, "npu-run: %s: empty or huge dimension\n", t->path);
				npy_free(&a);
				return -EINVAL;
			}
			t->dims[k] = (uint32_t)a.dims[k];
		}
		t->data = a.data;
		t->bytes = a.bytes;
		/* numpy's bools are 0 or 1; libnpu's must be */
		if (t->dtype == NPU_DTYPE_BOOL) {
			uint8_t *b = t->data;
			size_t e;

			for (e = 0; e < a.bytes; e++)
				b[e] = b[e] != 0;
		}
		return 0;
	}
	{
		struct npu_onnx_tensor ot;
		size_t len;
		void *buf;
		FILE *f = fopen(t->path, "rb");
		long n;

		if (!f) {
			fprintf(stderr, "npu-run: %s: %s\n", t->path, strerror(errno));
			return -errno;
		}
		buf = NULL;
		if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
		    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			len = (size_t)n;
		} else {
			fclose(f);
			free(buf);
			fprintf(stderr, "npu-run: %s: read error\n", t->path);
			return -EIO;
		}
		fclose(f);
		ret = npu_onnx_tensor_load(buf, len, &ot, err, sizeof(err));
		free(buf);
		if (ret) {
			fprintf(stderr, "npu-run: %s: %s\n", t->path, err);
			return ret;
		}
		if (!t->name && ot.name[0]) {
			t->pb_name = strdup(ot.name);
			t->name = t->pb_name;
			if (!t->name) {
				npu_onnx_tensor_free(&ot);
				return -ENOMEM;
			}
		}
		t->dtype = (enum npu_dtype)ot.dtype;
		t->rank = ot.rank;
		memcpy(t->dims, ot.dims, sizeof(t->dims));
		t->data = ot.data;
		t->bytes = ot.bytes;
		return 0;
	}
}

static int parse_dims(const char *s, struct npu_onnx_shape *sh)
{
	char *end;

	sh->rank = 0;
	while (*s) {
		long long v = strtoll(s, &end, 10);

		if (end == s || v < 1 || v > UINT32_MAX || sh->rank == NPU_TENSOR_MAX_RANK)
			return -EINVAL;
		sh->dims[sh->rank++] = v;
		s = end;
		if (*s == 'x' || *s == ',')
			s++;
		else if (*s)
			return -EINVAL;
	}
	return sh->rank ? 0 : -EINVAL;
}

static void fmt_shape(char *buf, size_t size, uint32_t rank, const uint32_t *dims)
{
	size_t n = 0;
	uint32_t i;

	n += (size_t)snprintf(buf + n, size - n, "[");
	for (i = 0; i < rank && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%u", i ? "," : "", dims[i]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static float half_value(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float v = e == 0 ? ldexpf((float)m, -24) :
		  e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 0x400), e - 25);

	return h & 0x8000 ? -v : v;
}

static float bf16_value(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* binary32 to binary16, to nearest even (tensor files widen halves) */
static uint16_t half_bits(float f)
{
	uint32_t u, sign, mant;
	int e;

	memcpy(&u, &f, 4);
	sign = (u >> 16) & 0x8000;
	e = (int)((u >> 23) & 0xff) - 127 + 15;
	mant = u & 0x7fffff;
	if (((u >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) {
		uint32_t shift = (uint32_t)(14 - e), full = mant | 0x800000, r;

		if (shift > 24)
			return (uint16_t)sign;
		r = full >> shift;
		if ((full & ((1u << shift) - 1)) > (1u << (shift - 1)) ||
		    ((full & ((1u << shift) - 1)) == (1u << (shift - 1)) && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	{
		uint32_t r = ((uint32_t)e << 10) | (mant >> 13), rest = mant & 0x1fff;

		if (rest > 0x1000 || (rest == 0x1000 && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
}

static uint16_t bf16_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

/*
 * A file of another dtype that stands for the model's: float32 for
 * float16 or bfloat16 (rounded to nearest even, in place), and uint16
 * for bfloat16 (its bit patterns: numpy has no bfloat16, and ONNX's test
 * data stores it so).
 */
static void adapt(struct tensor_file *t, enum npu_dtype want)
{
	uint64_t n = t->bytes / 4, k;
	uint16_t *h = t->data;

	if (t->dtype == NPU_DTYPE_UINT16 && want == NPU_DTYPE_BF16) {
		t->dtype = want;
		return;
	}
	if (t->dtype != NPU_DTYPE_FP32 || (want != NPU_DTYPE_FP16 && want != NPU_DTYPE_BF16))
		return;
	for (k = 0; k < n; k++) {
		float f = ((const float *)t->data)[k];

		h[k] = want == NPU_DTYPE_FP16 ? half_bits(f) : bf16_bits(f);
	}
	t->bytes = n * 2;
	t->dtype = want;
}

/* Element @i of a float dtype. */
static double float_elem(const void *p, enum npu_dtype d, uint64_t i)
{
	switch (d) {
	case NPU_DTYPE_FP32: return ((const float *)p)[i];
	case NPU_DTYPE_FP16: return half_value(((const uint16_t *)p)[i]);
	case NPU_DTYPE_BF16: return bf16_value(((const uint16_t *)p)[i]);
	default: return ((const double *)p)[i];
	}
}

/* Element @i of an integer or bool dtype, exact (uint64 as its bits). */
static int64_t int_elem(const void *p, enum npu_dtype d, uint64_t i)
{
	switch (d) {
	case NPU_DTYPE_INT8: return ((const int8_t *)p)[i];
	case NPU_DTYPE_UINT8: case NPU_DTYPE_BOOL: return ((const uint8_t *)p)[i];
	case NPU_DTYPE_INT16: return ((const int16_t *)p)[i];
	case NPU_DTYPE_UINT16: return ((const uint16_t *)p)[i];
	case NPU_DTYPE_INT32: return ((const int32_t *)p)[i];
	case NPU_DTYPE_UINT32: return ((const uint32_t *)p)[i];
	default: return ((const int64_t *)p)[i];
	}
}

/*
 * |got - want| of one element, and whether it is within the tolerance:
 * integers and bool must be equal; floats within atol + rtol * |want|,
 * a NaN matching a NaN and an infinity the same infinity.
 */
static bool elem_matches(const void *got, const void *want, enum npu_dtype d, uint64_t i,
			 double rtol, double atol, double *diff)
{
	if (dtype_is_float(d)) {
		double g = float_elem(got, d, i), w = float_elem(want, d, i);

		if ((isnan(g) && isnan(w)) || g == w) {
			*diff = 0;
			return true;
		}
		*diff = fabs(g - w);
		return *diff <= atol + rtol * fabs(w);
	} else {
		int64_t g = int_elem(got, d, i), w = int_elem(want, d, i);

		if (d == NPU_DTYPE_UINT64)
			*diff = fabs((double)(uint64_t)g - (double)(uint64_t)w);
		else
			*diff = fabs((double)g - (double)w);
		return g == w;
	}
}

/* Input @t, bound as a constant of the model (not at run time). */
/* @t as an npu_onnx_tensor the options point at (its data is shared). */
static void make_value(const struct tensor_file *t, struct npu_onnx_tensor *k)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", t->name);
	k->dtype = t->dtype;
	k->rank = t->rank;
	memcpy(k->dims, t->dims, sizeof(k->dims));
	k->data = t->data;
	k->bytes = t->bytes;
}

/* @t becomes a constant of the model: it is not bound at run time. */
static void make_constant(struct tensor_file *t, struct npu_onnx_tensor *k)
{
	make_value(t, k);
	t->used = true;
}

/* mkdir -p: @dir and its missing parents. */
static int make_dirs(const char *dir)
{
	char path[4096];
	size_t n = strlen(dir), i;

	if (n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0777) && errno != EEXIST)
			return -errno;
		path[i] = dir[i];
	}
	{
		struct stat st;

		if (stat(dir, &st))
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
	}
	return 0;
}

/* Keep only safe characters of a tensor name for a file name. */
/*
 * One run within @timeout_ns (0: DEFAULT_RUN_NS for the device's wait,
 * no bound on the CPU), reported on failure: 0, or the exit status.
 */
static int run_once(struct npu_runtime *rt, struct npu_queue *q, int64_t timeout_ns,
		    const char *what)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	int64_t deadline = npu_deadline_ns(timeout_ns ? timeout_ns : DEFAULT_RUN_NS);
	int r;

	/* The CPU segments stop at the same deadline the device's wait has. */
	if (timeout_ns)
		lim.deadline_ns = deadline;
	r = npu_runtime_set_cpu_limits(rt, &lim);
	if (!r)
		r = npu_runtime_run(rt, q, deadline);
	if (!r)
		return 0;
	if (r == -ETIME || r == -ETIMEDOUT) {
		fprintf(stderr, "npu-run: %s: timed out after %.3f s: %s\n", what,
			(timeout_ns ? timeout_ns : DEFAULT_RUN_NS) / 1e9, npu_runtime_error(rt));
		/* -ETIMEDOUT: still in flight; no further segment may start. */
		npu_runtime_cancel(rt);
		npu_runtime_wait(rt, NPU_TIMEOUT_INFINITE);
		return EXIT_TIMEOUT;
	}
	if (npu_runtime_error(rt)[0])
		fprintf(stderr, "npu-run: %s: %s\n", what, npu_runtime_error(rt));
	else
		fprintf(stderr, "npu-run: %s: %s\n", what, npu_strerror(r));
	return r == -E2BIG ? EXIT_UNSUPPORTED : 1;
}

static void file_name(char *buf, size_t size, const char *dir, const char *name)
{
	size_t n = (size_t)snprintf(buf, size, "%s/", dir), i;

	for (i = 0; name[i] && n + 5 < size; i++, n++) {
		char ch = name[i];

		buf[n] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			 (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' ? ch : '_';
	}
	snprintf(buf + n, size - n, ".npy");
}

/* --devices: "all" (*@count 0), or indices "0,1". */
static int parse_devices(const char *s, uint32_t *idx, size_t *count)
{
	char *end;

	*count = 0;
	if (!strcmp(s, "all"))
		return 0;
	while (*s) {
		long v = strtol(s, &end, 10);

		if (end == s || v < 0 || v > 255 || *count == MAX_DEVICES)
			return -EINVAL;
		idx[(*count)++] = (uint32_t)v;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -EINVAL;
	}
	return *count ? 0 : -EINVAL;
}

/*
 * --batch: @requests requests over the group's devices, each bound to
 * @ids/@data, whose last @nout entries (the outputs) get a buffer per
 * request in flight.  The first request answered leaves its outputs in
 * @first; every later one must give the same bytes.  Returns 0, or the
 * exit status after saying what failed.
 */
struct batch {
	struct npu_group *grp;
	long requests;
	size_t nbind, nout;
	const uint32_t *ids;
	void *const *data;
	const uint64_t *out_bytes;
	void **first;
	int64_t timeout_ns;
	/* results */
	uint64_t differing, failed;
	int64_t elapsed_ns;
	/* modelled device cycles each device's context spent on the batch, -1: none */
	int64_t cycles[MAX_DEVICES];
};

/*
 * The modelled device cycles of @ctx's jobs so far (its file's fdinfo,
 * drm-cycles-npu), or -1 when there is no device or no such line.
 */
static int64_t ctx_cycles(const struct npu_context *ctx)
{
	char path[64], line[128];
	long long v = -1;
	FILE *f;

	if (!ctx || npu_context_fd(ctx) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", npu_context_fd(ctx));
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "drm-cycles-npu: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static int batch_wait(struct batch *b, uint64_t ticket, void **out, bool *have_first)
{
	struct npu_group_result res = NPU_GROUP_RESULT_INIT;
	int64_t limit = b->timeout_ns ? b->timeout_ns : DEFAULT_RUN_NS;
	size_t k;
	int r = npu_group_wait(b->grp, ticket, npu_deadline_ns(limit), &res);

	if (r == -ETIMEDOUT) {
		fprintf(stderr, "npu-run: batch: a request timed out after %.3f s\n", limit / 1e9);
		return EXIT_TIMEOUT;
	}
	if (r) {
		if (!b->failed)
			fprintf(stderr, "npu-run: batch: a request failed on device %u: %s\n",
				res.device, npu_strerror(r));
		b->failed++;
		return 0;
	}
	if (!*have_first) {
		for (k = 0; k < b->nout; k++)
			memcpy(b->first[k], out[k], b->out_bytes[k]);
		*have_first = true;
		return 0;
	}
	for (k = 0; k < b->nout; k++)
		if (memcmp(b->first[k], out[k], b->out_bytes[k])) {
			b->differing++;
			break;
		}
	return 0;
}

static int run_batch(struct batch *b)
{
	size_t window = npu_group_num_devices(b->grp) * BATCH_PER_DEVICE, s, k;
	uint64_t *tickets;
	void **bind, **outs;
	long submitted = 0, done = 0;
	bool have_first = false;
	int64_t t0;
	int ret = 0;

	if (window > (size_t)b->requests)
		window = (size_t)b->requests;
	tickets = calloc(window, sizeof(*tickets));
	bind = calloc(window * b->nbind, sizeof(*bind));
	outs = calloc(window * (b->nout ? b->nout : 1), sizeof(*outs));
	if (!tickets || !bind || !outs) {
		ret = 1;
		goto out;
	}
	for (s = 0; s < window; s++) {
		memcpy(&bind[s * b->nbind], b->data, b->nbind * sizeof(*bind));
		for (k = 0; k < b->nout; k++) {
			outs[s * b->nout + k] = calloc(1, b->out_bytes[k] + 1);
			if (!outs[s * b->nout + k]) {
				ret = 1;
				goto out;
			}
			bind[s * b->nbind + b->nbind - b->nout + k] = outs[s * b->nout + k];
		}
	}
	t0 = npu_time_ns();
	/* Slot s carries requests s, s + window, ...: waited for in order. */
	while (done < b->requests && !ret) {
		s = (size_t)(done % (long)window);
		while (submitted < b->requests && submitted < done + (long)window) {
			size_t w = (size_t)(submitted % (long)window);
			int r = npu_group_submit(b->grp, b->nbind, b->ids, &bind[w * b->nbind],
						 &tickets[w]);

			if (r) {
				fprintf(stderr, "npu-run: batch: request %ld: %s\n", submitted,
					npu_strerror(r));
				/* no device left: the rest cannot be answered */
				b->failed += (uint64_t)(b->requests - submitted);
				b->requests = submitted;
				break;
			}
			submitted++;
		}
		if (done >= b->requests)
			break;
		ret = batch_wait(b, tickets[s], &outs[s * b->nout], &have_first);
		done++;
	}
	b->elapsed_ns = npu_time_ns() - t0;
out:
	for (s = 0; outs && s < window * b->nout; s++)
		free(outs[s]);
	free(outs);
	free(bind);
	free(tickets);
	return ret;
}

static void print_batch(const struct batch *b, long requests)
{
	struct npu_group_stats st = NPU_GROUP_STATS_INIT;
	size_t n = npu_group_num_devices(b->grp), i;

	npu_group_get_stats(b->grp, &st);
	printf("batch: %ld requests on %zu device%s in %.3f s: %.2f inputs/s\n", requests, n,
	       n == 1 ? "" : "s", b->elapsed_ns / 1e9,
	       b->elapsed_ns ? (double)st.completed * 1e9 / (double)b->elapsed_ns : 0.0);
	for (i = 0; i < n; i++) {
		struct npu_group_device_stats ds = NPU_GROUP_DEVICE_STATS_INIT;
		char name[32] = "the CPU";

		npu_group_get_device_stats(b->grp, i, &ds);
		if (ds.minor != UINT32_MAX)
			snprintf(name, sizeof(name), "accel%u", ds.minor);
		char cyc[48] = "";

		if (i < MAX_DEVICES && b->cycles[i] >= 0)
			snprintf(cyc, sizeof(cyc), ", %lld device cycles", (long long)b->cycles[i]);
		printf("device %zu (%s): %llu requests, busy %.3f s%s%s%s\n", i, name,
		       (unsigned long long)ds.completed, ds.busy_ns / 1e9, cyc,
		       ds.state == NPU_GROUP_DEVICE_LEFT ? ", left: " : "",
		       ds.state == NPU_GROUP_DEVICE_LEFT ? npu_strerror(ds.error) : "");
	}
	printf("failovers: %llu (requests run again after a device failed)\n",
	       (unsigned long long)st.failovers);
	printf("outputs: %llu of %ld requests answered, %llu differ from the first's bytes\n",
	       (unsigned long long)st.completed, requests, (unsigned long long)b->differing);
}

/* --pipeline: where the cuts went and how busy each stage kept its device. */
static void print_stages(const struct batch *b)
{
	size_t n = npu_group_num_stages(b->grp), i;

	for (i = 0; i < n; i++) {
		struct npu_group_stage st = NPU_GROUP_STAGE_INIT;

		npu_group_get_stage(b->grp, i, &st);
		printf("stage %zu: %u nodes from node %u, %.1f MMACs, %.1f M modelled cycles,"
		       " hands on %u values (%llu bytes), %llu runs, busy %.3f s (%.0f%% of the batch),"
		       " %s, CPU copied %llu bytes\n",
		       i, st.num_nodes, st.first_node, st.macs / 1e6, st.cost / 1e6,
		       st.outputs_handed_on,
		       (unsigned long long)st.handoff_bytes, (unsigned long long)st.runs,
		       st.busy_ns / 1e9,
		       b->elapsed_ns ? 100.0 * (double)st.busy_ns / (double)b->elapsed_ns : 0.0,
		       st.zero_copy ? "zero copy" : "handoffs copied", (unsigned long long)st.copied_bytes);
	}
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "shape", required_argument, NULL, 's' },
		{ "cpu", no_argument, NULL, 'c' },
		{ "device", required_argument, NULL, 'd' },
		{ "profile", no_argument, NULL, 'p' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "output-dir", required_argument, NULL, 'o' },
		{ "expect", required_argument, NULL, 'e' },
		{ "rtol", required_argument, NULL, 'R' },
		{ "atol", required_argument, NULL, 'A' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "timeout", required_argument, NULL, 't' },
		{ "const", required_argument, NULL, 'C' },
		{ "runtime", required_argument, NULL, 'U' },
		{ "custom-ops", required_argument, NULL, 'P' },
		{ "list-ops", no_argument, NULL, 'L' },
		{ "rounding", required_argument, NULL, 'r' },
		{ "devices", required_argument, NULL, 'D' },
		{ "batch", required_argument, NULL, 'B' },
		{ "pipeline", no_argument, NULL, 'S' },
		{ "no-lut", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct tensor_file in[MAX_FILES] = { 0 }, ex[MAX_FILES] = { 0 };
	struct npu_onnx_shape shapes[MAX_FILES];
	struct npu_onnx_tensor consts[MAX_FILES], values[MAX_FILES];
	const struct npu_onnx_op *custom[MAX_CUSTOM_OPS];
	size_t ncustom = 0;
	const char *as_const[MAX_FILES], *as_runtime[MAX_FILES];
	size_t nconst = 0, nvalues = 0, nas_const = 0, nas_runtime = 0;
	char *owned[2 * MAX_FILES + MAX_FILES] = { 0 };
	size_t nin = 0, nex = 0, nshapes = 0, nowned = 0, i, j;
	const char *outdir = NULL, *model_path;
	bool cpu = false, profile = false, quiet = false;
	uint32_t compile_flags = 0;
	long iterations = 1, dev_index = 0;
	double rtol = 1e-3, atol = 1e-5;
	int64_t timeout_ns = 0;
	struct npu_onnx_options opts = { .size = sizeof(opts) };
	struct npu_onnx_model *m = NULL;
	struct npu_device *dev = NULL;
	struct npu_context *ctx = NULL;
	struct npu_queue *q = NULL;
	struct npu_runtime *rt = NULL;
	/* --devices or --batch: the model on a group of devices */
	struct npu_context *gctx[MAX_DEVICES] = { NULL };
	uint32_t dev_list[MAX_DEVICES];
	size_t ndev_list = 0, ngctx = 0;
	bool use_group = false, devices_all = false, pipeline = false;
	long batch = 0;
	struct npu_group *grp = NULL;
	const struct npu_runtime *info_rt;
	uint32_t *bind_ids = NULL;
	void **bind_data = NULL;
	uint64_t *out_bytes = NULL;
	size_t nbind = 0;
	struct npu_graph *g;
	void **outbuf = NULL;
	int64_t *lat = NULL;
	char err[512], sh[128];
	int c, ret = 1, r;
	size_t nio_in, nio_out;
	bool mismatch = false;

	while ((c = getopt_long(argc, argv, "qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'i': case 'e': {
			struct tensor_file *t = c == 'i' ? &in[nin] : &ex[nex];
			char *own;

			if ((c == 'i' ? nin : nex) == MAX_FILES) {
				fprintf(stderr, "npu-run: too many files\n");
				return 2;
			}
			if (split_name(optarg, &t->name, &t->path, &own))
				return 2;
			owned[nowned++] = own;
			if (c == 'i')
				nin++;
			else
				nex++;
			break;
		}
		case 's': {
			const char *eq = strchr(optarg, '=');
			char *nm;

			if (!eq || nshapes == MAX_FILES ||
			    parse_dims(eq + 1, &shapes[nshapes])) {
				fprintf(stderr, "npu-run: bad --shape '%s' (want NAME=1x3x224x224)\n",
					optarg);
				return 2;
			}
			nm = strndup(optarg, (size_t)(eq - optarg));
			if (!nm)
				return 2;
			owned[nowned++] = nm;
			shapes[nshapes++].name = nm;
			break;
		}
		case 'C': case 'U':
			if ((c == 'C' ? nas_const : nas_runtime) == MAX_FILES) {
				fprintf(stderr, "npu-run: too many --%s\n", c == 'C' ? "const" : "runtime");
				return 2;
			}
			if (c == 'C')
				as_const[nas_const++] = optarg;
			else
				as_runtime[nas_runtime++] = optarg;
			break;
		case 'c': cpu = true; break;
		case 'N': compile_flags |= NPU_COMPILE_NO_LUT; break;
		case 'r':
			if (!strcmp(optarg, "onnx")) {
				opts.rounding = NPU_ROUND_ONNX;
			} else if (!strcmp(optarg, "tflite")) {
				opts.rounding = NPU_ROUND_TFLITE;
			} else {
				fprintf(stderr, "npu-run: --rounding '%s': onnx or tflite\n", optarg);
				return 2;
			}
			break;
		case 'd': dev_index = strtol(optarg, NULL, 10); break;
		case 'D':
			if (parse_devices(optarg, dev_list, &ndev_list)) {
				fprintf(stderr, "npu-run: bad --devices '%s' (want all, or indices like 0,1)\n",
					optarg);
				return 2;
			}
			use_group = true;
			devices_all = !ndev_list;
			break;
		case 'B':
			batch = strtol(optarg, NULL, 10);
			if (batch < 1 || batch > 1000000) {
				fprintf(stderr, "npu-run: --batch must be 1..1000000\n");
				return 2;
			}
			use_group = true;
			break;
		case 'S':
			pipeline = true;
			use_group = true;
			break;
		case 'p': profile = true; break;
		case 'n':
			iterations = strtol(optarg, NULL, 10);
			if (iterations < 1 || iterations > 1000000) {
				fprintf(stderr, "npu-run: --iterations must be 1..1000000\n");
				return 2;
			}
			break;
		case 'o': outdir = optarg; break;
		case 'R': rtol = strtod(optarg, NULL); break;
		case 'A': atol = strtod(optarg, NULL); break;
		case 'q': quiet = true; break;
		case 't': {
			char *end;
			double sec = strtod(optarg, &end);

			/* Up to about 290 years, so nanoseconds fit 63 bits. */
			if (end == optarg || *end || !(sec > 0) || sec > 9e9) {
				fprintf(stderr, "npu-run: --timeout wants seconds > 0, e.g. 2.5\n");
				return 2;
			}
			timeout_ns = (int64_t)(sec * 1e9);
			if (!timeout_ns)
				timeout_ns = 1;
			break;
		}
		case 'P':
			if (load_plugin(optarg, custom, &ncustom, MAX_CUSTOM_OPS))
				return 2;
			break;
		case 'L': return list_ops();
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	if (use_group && (profile || iterations > 1)) {
		fprintf(stderr, "npu-run: --devices and --batch time requests, not runs: no --profile or --iterations\n");
		return 2;
	}
	if (use_group && cpu && ndev_list) {
		fprintf(stderr, "npu-run: --cpu and --devices: one or the other\n");
		return 2;
	}
	if (pipeline && (cpu || (ndev_list < 2 && !devices_all))) {
		fprintf(stderr, "npu-run: --pipeline needs --devices with two devices or more\n");
		return 2;
	}
	if (use_group && !batch)
		batch = 1;
	model_path = argv[optind];
	/* a file this reader cannot represent is like an unsupported model */
	for (i = 0; i < nin; i++)
		if (load_tensor_file(&in[i])) {
			ret = EXIT_UNSUPPORTED;
			goto out;
		}
	for (i = 0; i < nex; i++)
		if (load_tensor_file(&ex[i])) {
			ret = EXIT_UNSUPPORTED;
			goto out;
		}

	/* Named inputs with no --shape bind dynamic dims from their file. */
	for (i = 0; i < nin; i++) {
		bool given = false;

		if (!in[i].name)
			continue;
		for (j = 0; j < nshapes; j++)
			given |= !strcmp(shapes[j].name, in[i].name);
		if (given || nshapes == MAX_FILES)
			continue;
		shapes[nshapes].name = in[i].name;
		shapes[nshapes].rank = in[i].rank;
		for (j = 0; j < in[i].rank; j++)
			shapes[nshapes].dims[j] = in[i].dims[j];
		nshapes++;
	}
	/*
	 * Which named inputs are constants of the model, like initializers:
	 * int64 and bool ones unless --runtime keeps them inputs, and those
	 * --const names.  A constant is not bound at run time.
	 */
	for (i = 0; i < nas_const + nas_runtime; i++) {
		const char *nm = i < nas_const ? as_const[i] : as_runtime[i - nas_const];
		bool found = false;

		for (j = 0; j < nin && !found; j++)
			found = in[j].name && !strcmp(in[j].name, nm);
		if (!found) {
			fprintf(stderr, "npu-run: --%s %s: no --input of that name\n",
				i < nas_const ? "const" : "runtime", nm);
			ret = 2;
			goto out;
		}
	}
	for (i = 0; i < nin; i++) {
		bool constant = dtype_constant_by_default(in[i].dtype);

		if (!in[i].name)
			continue;
		for (j = 0; j < nas_runtime; j++)
			constant &= strcmp(as_runtime[j], in[i].name) != 0;
		for (j = 0; j < nas_const; j++)
			constant |= !strcmp(as_const[j], in[i].name);
		if (constant)
			make_constant(&in[i], &consts[nconst++]);
	}
	/*
	 * The other named inputs' values are known too: the importer fixes
	 * an input to its value only where the graph does not import without
	 * it (a shape depends on it: Resize's scales, Range's limits,
	 * NonMaxSuppression's boxes), and the model then says which it fixed;
	 * --runtime inputs never are.
	 */
	for (i = 0; i < nin; i++) {
		bool runtime_only = false;

		if (!in[i].name || in[i].used)
			continue;
		for (j = 0; j < nas_runtime; j++)
			runtime_only |= !strcmp(as_runtime[j], in[i].name);
		if (!runtime_only)
			make_value(&in[i], &values[nvalues++]);
	}
	opts.constants = consts;
	opts.num_constants = nconst;
	opts.values = values;
	opts.num_values = nvalues;
	opts.custom_ops = custom;
	opts.num_custom_ops = ncustom;
	opts.shapes = shapes;
	opts.num_shapes = nshapes;
	r = npu_onnx_load_file(model_path, &opts, &m, err, sizeof(err));
	if (r) {
		fprintf(stderr, "npu-run: %s: %s\n", model_path, err);
		ret = EXIT_UNSUPPORTED;
		goto out;
	}
	for (i = 0; !quiet && i < npu_onnx_num_inputs(m); i++) {
		struct npu_onnx_io io;

		if (npu_onnx_input_fixed(m, i) == 1 && !npu_onnx_input(m, i, &io))
			printf("input '%s' is fixed to its value: the graph does not import"
			       " without it (--runtime %s says why)\n", io.name, io.name);
	}
	g = npu_onnx_graph(m);
	nio_in = npu_onnx_num_inputs(m);
	nio_out = npu_onnx_num_outputs(m);

	if (use_group) {
		struct npu_device_list *list = NULL;
		struct npu_group_options gopt = NPU_GROUP_OPTIONS_INIT;

		/* every device, the listed ones, or --device's (the CPU if none) */
		if (!cpu && !npu_device_list(&list) && npu_device_list_count(list)) {
			size_t all = npu_device_list_count(list);

			npu_device_list_free(list);
			if (!ndev_list && !devices_all) {
				dev_list[0] = (uint32_t)dev_index;
				ndev_list = 1;
			}
			for (i = 0; i < (ndev_list ? ndev_list : all) && i < MAX_DEVICES; i++) {
				struct npu_device *gd;
				uint32_t index = ndev_list ? dev_list[i] : (uint32_t)i;

				r = npu_device_open(index, &gd);
				if (!r)
					r = npu_context_create(gd, &gctx[ngctx]);
				npu_device_close(gd);
				if (r) {
					fprintf(stderr, "npu-run: device %u: %s\n", index, npu_strerror(r));
					goto out;
				}
				ngctx++;
			}
		} else {
			npu_device_list_free(list);
			if (ndev_list || devices_all) {
				fprintf(stderr, "npu-run: --devices: no NPU found\n");
				goto out;
			}
			if (!quiet && !cpu)
				printf("no NPU found: running on libnpu's CPU fallback\n");
			cpu = true;
			ngctx = 1;	/* one CPU copy */
		}
		if (pipeline && ngctx < 2) {
			fprintf(stderr, "npu-run: --pipeline: %zu device found, it needs two or more\n",
				ngctx);
			goto out;
		}
		/* in flight: BATCH_PER_DEVICE per device, all waited for in turn */
		gopt.max_requests = (uint32_t)(ngctx * BATCH_PER_DEVICE);
		if (pipeline)
			gopt.flags |= NPU_GROUP_PIPELINE;
		gopt.compile_flags |= compile_flags;
		r = npu_group_create(g, gctx, ngctx, &gopt, &grp);
		if (r) {
			fprintf(stderr, "npu-run: %s: %s (%s)\n", model_path, npu_graph_error(g),
				npu_strerror(r));
			ret = EXIT_UNSUPPORTED;
			goto out;
		}
	} else if (!cpu) {
		struct npu_device_list *list = NULL;

		if (!npu_device_list(&list) && npu_device_list_count(list)) {
			r = npu_device_open((uint32_t)dev_index, &dev);
			if (!r)
				r = npu_context_create(dev, &ctx);
			if (!r)
				r = npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q);
			if (r) {
				fprintf(stderr, "npu-run: device %ld: %s\n", dev_index, npu_strerror(r));
				npu_device_list_free(list);
				goto out;
			}
		} else {
			cpu = true;
			if (!quiet)
				printf("no NPU found: running on libnpu's CPU fallback\n");
		}
		npu_device_list_free(list);
	}
	if (!grp) {
		r = npu_graph_compile(g, ctx, compile_flags, &rt);
		if (r) {
			fprintf(stderr, "npu-run: %s: %s (%s)\n", model_path, npu_graph_error(g),
				npu_strerror(r));
			ret = EXIT_UNSUPPORTED;
			goto out;
		}
	}
	/* Every copy of a group has the graph's values: any one tells sizes. */
	info_rt = grp ? npu_group_runtime(grp, 0) : rt;
	bind_ids = calloc(nio_in + nio_out + 1, sizeof(*bind_ids));
	bind_data = calloc(nio_in + nio_out + 1, sizeof(*bind_data));
	out_bytes = calloc(nio_out + 1, sizeof(*out_bytes));
	if (!bind_ids || !bind_data || !out_bytes)
		goto out;

	/* Bind inputs: by name, else in order. */
	{
		size_t next = 0;

		for (i = 0; i < nio_in; i++) {
			struct npu_onnx_io io;
			struct tensor_file *t = NULL;
			void *p;

			npu_onnx_input(m, i, &io);
			for (j = 0; j < nin && !t; j++)
				if (in[j].name && !strcmp(in[j].name, io.name) && !in[j].used)
					t = &in[j];
			while (!t && next < nin) {
				if (!in[next].used && (!in[next].name || !strcmp(in[next].name, io.name)))
					t = &in[next];
				next++;
			}
			if (!t) {
				/* a named file for another input is taken in order too */
				for (j = 0; j < nin && !t; j++)
					if (!in[j].used)
						t = &in[j];
			}
			if (!t) {
				fprintf(stderr, "npu-run: no --input for model input '%s'\n", io.name);
				goto out;
			}
			t->used = true;
			adapt(t, io.dtype);
			fmt_shape(sh, sizeof(sh), io.rank, io.dims);
			if (t->dtype != io.dtype || t->bytes != npu_runtime_value_bytes(info_rt, io.value)) {
				char fs[128];

				fmt_shape(fs, sizeof(fs), t->rank, t->dims);
				fprintf(stderr, "npu-run: %s: %s %s does not fit input '%s', %s %s\n",
					t->path, dtype_name(t->dtype), fs, io.name,
					dtype_name(io.dtype), sh);
				goto out;
			}
			p = t->data;
			bind_ids[nbind] = io.value;
			bind_data[nbind++] = p;
		}
	}
	outbuf = calloc(nio_out ? nio_out : 1, sizeof(*outbuf));
	lat = calloc((size_t)iterations, sizeof(*lat));
	if (!outbuf || !lat)
		goto out;
	for (i = 0; i < nio_out; i++) {
		struct npu_onnx_io io;

		npu_onnx_output(m, i, &io);
		out_bytes[i] = npu_runtime_value_bytes(info_rt, io.value);
		outbuf[i] = calloc(1, out_bytes[i] + 1);
		if (!outbuf[i])
			goto out;
		bind_ids[nbind] = io.value;
		bind_data[nbind++] = outbuf[i];
	}
	if (grp) {
		struct batch b = {
			.grp = grp, .requests = batch, .nbind = nbind, .nout = nio_out,
			.ids = bind_ids, .data = bind_data, .out_bytes = out_bytes,
			.first = outbuf, .timeout_ns = timeout_ns,
		};

		for (i = 0; i < MAX_DEVICES; i++)
			b.cycles[i] = i < ngctx ? ctx_cycles(gctx[i]) : -1;
		r = run_batch(&b);
		for (i = 0; i < ngctx && i < MAX_DEVICES; i++) {
			int64_t now = ctx_cycles(gctx[i]);

			b.cycles[i] = now >= 0 && b.cycles[i] >= 0 ? now - b.cycles[i] : -1;
		}
		print_batch(&b, batch);
		print_stages(&b);
		if (r) {
			ret = r;
			goto out;
		}
		if (b.failed || b.differing) {
			fprintf(stderr, "npu-run: batch: %llu requests failed, %llu gave other bytes than the first\n",
				(unsigned long long)b.failed, (unsigned long long)b.differing);
			goto out;
		}
		iterations = 0;
	} else {
		r = npu_runtime_setup(rt, nbind, bind_ids, bind_data);
		if (r) {
			fprintf(stderr, "npu-run: setup: %s\n", npu_strerror(r));
			goto out;
		}
	}
	for (i = 0; i < (size_t)iterations; i++) {
		int64_t t0 = npu_time_ns();

		r = run_once(rt, q, timeout_ns, "run");
		lat[i] = npu_time_ns() - t0;
		if (r) {
			ret = r;
			goto out;
		}
	}
	/*
	 * The per-node profile comes from one more run, untimed: profiling
	 * submits every device op as a job of its own.
	 */
	if (profile && q) {
		npu_runtime_set_profiling(rt, true);
		r = run_once(rt, q, timeout_ns, "profiled run");
		if (r) {
			ret = r;
			goto out;
		}
	}

	if (!quiet) {
		size_t nseg, ndev;

		nseg = npu_runtime_num_segments(info_rt, &ndev);
		printf("model %s: opset %lld, %zu nodes, %zu segments (%zu on the device), arena %llu bytes, weights %llu bytes, on %s\n",
		       model_path, (long long)npu_onnx_opset(m), npu_runtime_num_nodes(info_rt), nseg,
		       ndev, (unsigned long long)npu_runtime_arena_bytes(info_rt),
		       (unsigned long long)npu_runtime_static_bytes(info_rt),
		       q || (grp && !cpu) ? "the NPU" : "the CPU");
	}
	if (iterations > 1 || (iterations && !quiet)) {
		qsort(lat, (size_t)iterations, sizeof(*lat), cmp_i64);
		/* below 100 runs the 99th percentile is just the maximum */
		if (iterations >= P99_MIN_RUNS)
			printf("latency: median %.3f ms, min %.3f ms, p99 %.3f ms over %ld runs\n",
			       lat[iterations / 2] / 1e6, lat[0] / 1e6,
			       lat[(size_t)((iterations - 1) * 99 / 100)] / 1e6, iterations);
		else
			printf("latency: median %.3f ms, min %.3f ms, max %.3f ms over %ld run%s (no p99 below %d runs)\n",
			       lat[iterations / 2] / 1e6, lat[0] / 1e6, lat[iterations - 1] / 1e6,
			       iterations, iterations == 1 ? "" : "s", P99_MIN_RUNS);
	}
	if (profile) {
		size_t n = npu_runtime_num_nodes(rt), ops = 0, dev_ops = 0;
		uint64_t macs = 0, dev_macs = 0, dev_ns = 0, cpu_ns = 0, cycles = 0;

		printf("%-4s %-28s %-11s %-7s %-4s %12s %10s %10s  %s\n", "#", "node", "op", "where",
		       "seg", "MACs", "cycles", "time us", "note");
		for (i = 0; i < n; i++) {
			struct npu_node_profile p = NPU_NODE_PROFILE_INIT;
			char note[96] = "";

			npu_runtime_node_profile(rt, (uint32_t)i, &p);
			if (p.where == NPU_WHERE_FUSED)
				snprintf(note, sizeof(note), "into #%u", p.fused_into);
			else if (p.where == NPU_WHERE_CPU && p.cpu_reason)
				snprintf(note, sizeof(note), "%s", p.cpu_reason);
			printf("%-4zu %-28.28s %-11s %-7s %-4s %12llu %10llu %10.1f  %s\n", i, p.name,
			       p.op, npu_node_where_name(p.where),
			       p.where == NPU_WHERE_DEVICE || p.where == NPU_WHERE_CPU ?
			       (snprintf(sh, sizeof(sh), "%u", p.segment), sh) : "-",
			       (unsigned long long)p.macs, (unsigned long long)p.device_cycles,
			       p.time_ns / 1e3, note);
			if (p.where == NPU_WHERE_DEVICE || p.where == NPU_WHERE_CPU) {
				ops++;
				macs += p.macs;
				if (p.where == NPU_WHERE_DEVICE) {
					dev_ops++;
					dev_macs += p.macs;
					dev_ns += p.time_ns;
					cycles += p.device_cycles;
				} else {
					cpu_ns += p.time_ns;
				}
			}
		}
		printf("split: %zu of %zu nodes on the device, %.2f%% of %llu MACs\n", dev_ops, ops,
		       macs ? 100.0 * (double)dev_macs / (double)macs : 100.0,
		       (unsigned long long)macs);
		printf("profiled run: device ops %.3f ms (%llu modelled cycles), CPU ops %.3f ms\n",
		       dev_ns / 1e6, (unsigned long long)cycles, cpu_ns / 1e6);
	}

	for (i = 0; i < nio_out; i++) {
		struct npu_onnx_io io;

		npu_onnx_output(m, i, &io);
		fmt_shape(sh, sizeof(sh), io.rank, io.dims);
		if (!quiet)
			printf("output %s: %s\n", io.name, sh);
		if (outdir) {
			struct npy_array a = { .rank = (int)io.rank, .data = outbuf[i],
					       .bytes = npu_runtime_value_bytes(info_rt, io.value) };
			char path[4096];
			int t = dtype_to_npy(io.dtype);

			float *wide = NULL;

			if (t < 0) {
				fprintf(stderr, "npu-run: output %s: %s has no .npy type\n", io.name,
					dtype_name(io.dtype));
				goto out;
			}
			a.type = (enum npy_type)t;
			for (j = 0; j < io.rank; j++)
				a.dims[j] = io.dims[j];
			if (io.dtype == NPU_DTYPE_BF16) {
				uint64_t n = a.bytes / 2, k;

				wide = malloc(n ? n * sizeof(float) : 1);
				if (!wide)
					goto out;
				for (k = 0; k < n; k++)
					wide[k] = bf16_value(((const uint16_t *)outbuf[i])[k]);
				a.data = wide;
				a.bytes = n * sizeof(float);
			}
			r = make_dirs(outdir);
			if (r) {
				fprintf(stderr, "npu-run: --output-dir %s: %s\n", outdir, strerror(-r));
				free(wide);
				goto out;
			}
			file_name(path, sizeof(path), outdir, io.name);
			r = npy_save(path, &a);
			free(wide);
			if (r) {
				fprintf(stderr, "npu-run: %s: %s\n", path, strerror(-r));
				goto out;
			}
			if (!quiet)
				printf("wrote %s\n", path);
		}
	}

	/* --expect: by name, else in output order. */
	for (i = 0; i < nex; i++) {
		struct npu_onnx_io io;
		uint64_t n, k, bad = 0;
		double maxd = 0;
		size_t o = i;

		for (j = 0; ex[i].name && j < nio_out; j++) {
			npu_onnx_output(m, j, &io);
			if (!strcmp(io.name, ex[i].name))
				o = j;
		}
		if (o >= nio_out) {
			fprintf(stderr, "npu-run: --expect %s: no such output\n", ex[i].path);
			goto out;
		}
		npu_onnx_output(m, o, &io);
		adapt(&ex[i], io.dtype);
		if (ex[i].dtype != io.dtype ||
		    ex[i].bytes != npu_runtime_value_bytes(info_rt, io.value)) {
			char fs[128];

			fmt_shape(sh, sizeof(sh), io.rank, io.dims);
			fmt_shape(fs, sizeof(fs), ex[i].rank, ex[i].dims);
			fprintf(stderr, "npu-run: --expect %s: shape or dtype differs from output '%s' (%s %s, not %s %s)\n",
				ex[i].path, io.name, dtype_name(io.dtype), sh,
				dtype_name(ex[i].dtype), fs);
			mismatch = true;
			continue;
		}
		n = ex[i].bytes / npu_dtype_size(io.dtype);
		for (k = 0; k < n; k++) {
			double d;

			if (!elem_matches(outbuf[o], ex[i].data, io.dtype, k, rtol, atol, &d))
				bad++;
			if (d > maxd || isnan(d))
				maxd = d;
		}
		printf("output %s: %s, max abs diff %g (%llu of %llu elements beyond tolerance)\n",
		       io.name, bad ? "MISMATCH" : "matches", maxd, (unsigned long long)bad,
		       (unsigned long long)n);
		mismatch |= bad != 0;
	}
	ret = mismatch ? 1 : 0;
out:
	if (outbuf)
		for (i = 0; i < nio_out; i++)
			free(outbuf[i]);
	free(outbuf);
	free(lat);
	npu_runtime_free(rt);
	npu_group_free(grp);
	for (i = 0; i < ngctx; i++)
		npu_context_destroy(gctx[i]);
	free(bind_ids);
	free(bind_data);
	free(out_bytes);
	npu_onnx_free(m);
	npu_queue_destroy(q);
	npu_context_destroy(ctx);
	npu_device_close(dev);
	for (i = 0; i < nin; i++) {
		free(in[i].data);
		free(in[i].pb_name);
	}
	for (i = 0; i < nex; i++) {
		free(ex[i].data);
		free(ex[i].pb_name);
	}
	for (i = 0; i < nowned; i++)
		free(owned[i]);
	return ret;
}
