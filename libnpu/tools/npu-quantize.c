// SPDX-License-Identifier: MIT
/*
 * npu-quantize: post-training static quantization of an fp32 ONNX model
 * into the QDQ form onnxruntime's quantize_static writes, calibrated by
 * running the model through libnpu on sample inputs.
 *
 *   npu-quantize [options] MODEL.onnx SAMPLE_DIR -o OUT.onnx
 *
 * See npu-quantize(1) and Documentation/npu-quantize.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu/onnx.h"
#include "npu-quantize-calib.h"
#include "npu-quantize-fold.h"
#include "npu-quantize-qdq.h"
#include "npu-quantize-report.h"
#include "npu-quantize-run.h"

#define MAX_EXCLUDE	4096
#define EXIT_USAGE	2
#define DEFAULT_MAX_MEMORY	(1024ull << 20)

struct calib {
	const char **names;
	size_t count;
	long *out;		/* output index in the calibration model, -1: not float */
	struct qc_stats *st;
	int *rank;		/* of each tensor in the calibration model */
	uint64_t *bytes;	/* its size, 0 when not a float activation */
	int64_t (*dims)[NPU_TENSOR_MAX_RANK];
	enum qc_method method;
	double percentile;
	uint32_t num_bins;		/* 0: the method's default */
	uint32_t num_quantized_bins;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: npu-quantize [options] MODEL.onnx SAMPLE_DIR -o OUT.onnx\n"
		"  SAMPLE_DIR: one subdirectory per sample holding INPUT_NAME.npy per model\n"
		"  input, or (single-input models) one .npy file per sample\n"
		"  -o, --output FILE        the QDQ model to write (required)\n"
		"  --method M               minmax (default), percentile or entropy\n"
		"  --percentile P           percentile method's percentile (default 99.999)\n"
		"  --bins N                 histogram bins (default 2048 percentile, 128 entropy)\n"
		"  --quantized-bins N       entropy's quantized bins (default 128)\n"
		"  --activation T           int8 (default) or uint8 activations\n"
		"  --per-tensor             one scale per weight tensor, not per channel\n"
		"  --reduce-range           per-channel weights over 7 bits ([-64, 64])\n"
		"  --samples N              calibrate on the first N samples only\n"
		"  --exclude NODE           leave node NODE float (repeatable)\n"
		"  --fuse-conv              fold BatchNormalization, and Mul and Add by constants\n"
		"                           per channel, into the Conv before them\n"
		"                           (onnxruntime's quant_pre_process does)\n"
		"  --eval DIR               report the error on DIR's samples (default: SAMPLE_DIR)\n"
		"  --report FILE            write the error report to FILE, not stdout\n"
		"  --no-report              skip the error report\n"
		"  --device                 run on the NPU (default: libnpu's CPU path)\n"
		"  --max-memory SIZE        activations held at once (K, M, G; default 1G):\n"
		"                           past it, several runs per sample\n"
		"  -q, --quiet              print errors only\n");
}

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;
	int ret = 0;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		ret = -errno;
		fclose(f);
		return ret ? ret : -EIO;
	}
	*buf = malloc((size_t)n + 1);
	if (!*buf) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(*buf, 1, (size_t)n, f) != (size_t)n)
		ret = -EIO;
	fclose(f);
	if (ret) {
		free(*buf);
		*buf = NULL;
	}
	*len = (size_t)n;
	return ret;
}

/* Written whole or not at all: a temporary file renamed over @path. */
static int write_file(const char *path, const uint8_t *buf, size_t len)
{
	char tmp[4096];
	FILE *f;
	int ret = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "wb");
	if (!f)
		return -errno;
	if (fwrite(buf, 1, len, f) != len)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		remove(tmp);
	return ret;
}

static int range_of(void *ctx, const char *name, float *rmin, float *rmax)
{
	const struct calib *c = ctx;
	size_t i;

	for (i = 0; i < c->count; i++)
		if (!strcmp(c->names[i], name)) {
			if (!c->bytes[i] || !c->st[i].seen)
				return 0;
			qc_range(&c->st[i], c->method, c->percentile, c->num_quantized_bins, rmin,
				 rmax);
			return 1;
		}
	return 0;
}

static int shape_of(void *ctx, const char *name, int64_t *dims, int max_rank)
{
	const struct calib *c = ctx;
	size_t i;
	int k;

	for (i = 0; i < c->count; i++)
		if (!strcmp(c->names[i], name)) {
			if (c->rank[i] < 0 || c->rank[i] > max_rank)
				return -1;
			for (k = 0; k < c->rank[i]; k++)
				dims[k] = c->dims[i][k];
			return c->rank[i];
		}
	return -1;
}

/*
 * Tensors the importer computes at load (initializers, Constant nodes and
 * what only depends on them): calibration can do without them when the
 * importer cannot make them outputs (an empty constant, say).  One pass
 * in node order, the graph being sorted; a name is looked up linearly.
 */
static bool *constant_nodes(const Onnx__ModelProto *mp)
{
	const Onnx__GraphProto *g = mp->graph;
	bool *c = calloc(g->n_node + 1, sizeof(*c));
	size_t i, j, k, l;

	for (i = 0; c && i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];
		bool all = n->n_input > 0 || !strcmp(n->op_type, "Constant");

		for (j = 0; all && j < n->n_input; j++) {
			bool found = !*n->input[j];

			for (k = 0; !found && k < g->n_initializer; k++)
				found = g->initializer[k]->name && !strcmp(g->initializer[k]->name, n->input[j]);
			for (k = 0; !found && k < i; k++)
				for (l = 0; c[k] && !found && l < g->node[k]->n_output; l++)
					found = !strcmp(g->node[k]->output[l], n->input[j]);
			all = found;
		}
		c[i] = all;
	}
	return c;
}

static bool is_constant(const Onnx__ModelProto *mp, const bool *cnodes, const char *name)
{
	const Onnx__GraphProto *g = mp->graph;
	size_t i, j;

	for (i = 0; i < g->n_node; i++)
		for (j = 0; cnodes[i] && j < g->node[i]->n_output; j++)
			if (!strcmp(g->node[i]->output[j], name))
				return true;
	return false;
}

/* Graph inputs are read from the samples; the rest become outputs. */
static bool is_output(const Onnx__ModelProto *mp, const char *name)
{
	size_t i;

	for (i = 0; i < mp->graph->n_output; i++)
		if (!strcmp(mp->graph->output[i]->name, name))
			return true;
	return false;
}

/*
 * Tensors in groups whose outputs fit in @budget bytes together (a tensor
 * over it alone): group[i] for each of the @n tensors of @bytes, -1 for
 * those of 0 bytes (not computed).  Returns the number of groups.
 */
static size_t plan_groups(const uint64_t *bytes, size_t n, uint64_t budget, int *group)
{
	uint64_t used = 0;
	size_t i, g = 0;

	for (i = 0; i < n; i++) {
		if (!bytes[i]) {
			group[i] = -1;
			continue;
		}
		if (used && used + bytes[i] > budget) {
			g++;
			used = 0;
		}
		used += bytes[i];
		group[i] = (int)g;
	}
	return used ? g + 1 : g;
}

/* The calibration model: every tensor of @names as an output, or without
 * the constant ones when the importer cannot make those outputs. */
static int open_calib(Onnx__ModelProto *mp, const char **names, size_t n,
		      const struct npu_onnx_shape *shapes, size_t nshapes, bool device, bool bind,
		      struct qr_model **m, char *err, size_t err_size)
{
	const char **extra = calloc(n + 1, sizeof(*extra));
	size_t i, k = 0;
	int ret;

	if (!extra)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (!is_output(mp, names[i]))
			extra[k++] = names[i];
	ret = qr_model_open(mp, extra, k, shapes, nshapes, device, bind, m, err, err_size);
	if (ret == -EINVAL) {
		bool *cnodes = constant_nodes(mp);
		size_t k2 = 0;

		if (!cnodes) {
			free(extra);
			return -ENOMEM;
		}
		for (i = 0; i < k; i++)
			if (!is_constant(mp, cnodes, extra[i]))
				extra[k2++] = extra[i];
		free(cnodes);
		if (k2 < k)
			ret = qr_model_open(mp, extra, k2, shapes, nshapes, device, bind, m, err,
					    err_size);
	}
	free(extra);
	return ret;
}

/*
 * Statistics of every tensor over the samples.  Making every activation
 * an output costs their memory for one sample at once; past @budget the
 * tensors are taken a group at a time, each group a run of the samples.
 */
static int calibrate(Onnx__ModelProto *mp, const struct qr_samples *smp,
		     const struct npu_onnx_shape *shapes, size_t nshapes, bool device,
		     struct calib *c, bool quiet, uint64_t budget)
{
	uint64_t *bytes = calloc(c->count + 1, sizeof(*bytes));
	int *group = calloc(c->count + 1, sizeof(*group));
	const char **names = calloc(c->count + 1, sizeof(*names));
	struct qr_model *m = NULL;
	size_t i, k, g, ngroups, nn, passes = c->method == QC_MINMAX ? 1 : 2;
	bool progress = !quiet && isatty(STDERR_FILENO);
	int pass, ret = -ENOMEM;
	char err[1024] = "";

	if (!bytes || !group || !names)
		goto out;
	/* the sizes, from a model that binds no memory */
	ret = open_calib(mp, c->names, c->count, shapes, nshapes, device, false, &m, err,
			 sizeof(err));
	if (ret) {
		fprintf(stderr, "npu-quantize: calibration model: %s\n", err);
		goto out;
	}
	for (i = 0; i < c->count; i++) {
		long o = qr_output_find(m, c->names[i]);
		bool f32 = o >= 0 && qr_output_dtype(m, (size_t)o) == NPU_DTYPE_FP32;

		c->rank[i] = o >= 0 ? qr_output_shape(m, (size_t)o, c->dims[i]) : -1;
		c->bytes[i] = f32 ? qr_output_bytes(m, (size_t)o) : 0;
		bytes[i] = c->bytes[i] && !is_output(mp, c->names[i]) ? c->bytes[i] : 0;
		c->out[i] = -1;
	}
	qr_model_close(m);
	m = NULL;
	ngroups = plan_groups(bytes, c->count, budget, group);
	if (!ngroups)
		ngroups = 1;
	if (!quiet && ngroups > 1)
		printf("calibration: activations over --max-memory, %zu runs of each sample\n",
		       ngroups);
	for (g = 0; g < ngroups; g++) {
		/* the model's own outputs come with every group */
		for (i = 0, nn = 0; i < c->count; i++)
			if (group[i] == (int)g)
				names[nn++] = c->names[i];
		ret = open_calib(mp, names, nn, shapes, nshapes, device, true, &m, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "npu-quantize: calibration model: %s\n", err);
			goto out;
		}
		for (i = 0; i < c->count; i++) {
			long o = qr_output_find(m, c->names[i]);
			bool mine = group[i] == (int)g || (g == 0 && is_output(mp, c->names[i]));

			c->out[i] = mine && c->bytes[i] && o >= 0 &&
				    qr_output_dtype(m, (size_t)o) == NPU_DTYPE_FP32 ? o : -1;
		}
		/* pass 1 finds each tensor's range, pass 2 fills its histogram over it */
		for (pass = 0; pass < (int)passes; pass++) {
			if (pass == 1)
				for (i = 0; i < c->count; i++)
					if (c->out[i] >= 0 &&
					    qc_hist_init(&c->st[i], c->method,
							 c->num_bins ? c->num_bins :
							 c->method == QC_ENTROPY ? QC_ENTROPY_BINS :
							 QC_PERCENTILE_BINS)) {
						ret = -ENOMEM;
						goto out;
					}
			for (k = 0; k < smp->count; k++) {
				ret = qr_model_run(m, smp, k, err, sizeof(err));
				if (ret) {
					fprintf(stderr, "npu-quantize: calibration: %s\n", err);
					goto out;
				}
				for (i = 0; i < c->count; i++) {
					const float *x;
					size_t n;

					if (c->out[i] < 0)
						continue;
					x = qr_output_data(m, (size_t)c->out[i]);
					n = qr_output_count(m, (size_t)c->out[i]);
					if (pass == 0)
						qc_stats_add(&c->st[i], x, n);
					else
						qc_hist_add(&c->st[i], c->method, x, n);
				}
				if (progress)
					fprintf(stderr, "\rcalibration: group %zu of %zu, pass %d of %zu, sample %zu of %zu",
						g + 1, ngroups, pass + 1, passes, k + 1, smp->count);
			}
		}
		qr_model_close(m);
		m = NULL;
	}
	if (progress)
		fprintf(stderr, "\n");
	ret = 0;
out:
	if (ret == -ENOMEM && !err[0])
		fprintf(stderr, "npu-quantize: calibration: out of memory\n");
	qr_model_close(m);
	free(bytes);
	free(group);
	free(names);
	return ret;
}

static const char *op_of(const struct qq_result *r, const Onnx__ModelProto *orig, const char *t)
{
	size_t i, j;

	for (i = 0; i < orig->graph->n_node; i++)
		for (j = 0; j < orig->graph->node[i]->n_output; j++)
			if (!strcmp(orig->graph->node[i]->output[j], t))
				return orig->graph->node[i]->op_type;
	(void)r;
	return "input";
}

static uint64_t bytes_of(const struct calib *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->count; i++)
		if (!strcmp(c->names[i], name))
			return c->bytes[i];
	return 0;
}

/*
 * Run both models on @smp and compare the quantized tensors and the
 * outputs; in groups of tensors as calibration does, the fp32 and the
 * quantized model holding half of @budget each.
 */
static int report(const uint8_t *fp32_bytes, size_t fp32_len, Onnx__ModelProto *qmp,
		  const struct qq_result *res, const struct calib *c,
		  const struct qr_samples *smp, const struct npu_onnx_shape *shapes,
		  size_t nshapes, bool device, uint64_t budget, FILE *f)
{
	Onnx__ModelProto *fmp = onnx__model_proto__unpack(NULL, fp32_len, fp32_bytes);
	size_t nt = res->num_tensors, i, k, g, ngroups, nf, nq, nout = 0;
	const char **fx = calloc(nt + 1, sizeof(*fx)), **qx = calloc(nt + 1, sizeof(*qx));
	struct qe_stat *ts = calloc(nt + 1, sizeof(*ts)), *os = NULL;
	uint64_t *bytes = calloc(nt + 1, sizeof(*bytes));
	int *group = calloc(nt + 1, sizeof(*group));
	struct qr_model *fm = NULL, *qm = NULL;
	char err[1024] = "";
	int ret = -ENOMEM;

	if (!fmp) {
		ret = -EBADMSG;
		goto out;
	}
	if (!fx || !qx || !ts || !bytes || !group)
		goto out;
	nout = fmp->graph->n_output;
	os = calloc(nout + 1, sizeof(*os));
	if (!os)
		goto out;
	for (i = 0; i < nout; i++) {
		os[i].name = fmp->graph->output[i]->name;
		os[i].what = "output";
	}
	for (i = 0; i < nt; i++) {
		ts[i].name = res->tensors[i].name;
		ts[i].what = op_of(res, fmp, res->tensors[i].name);
		/* the graph's outputs come with every group: no cost; unknown sizes cost 1 */
		bytes[i] = is_output(fmp, ts[i].name) ? 0 : bytes_of(c, ts[i].name);
		if (!bytes[i] && !is_output(fmp, ts[i].name))
			bytes[i] = 1;
	}
	ngroups = plan_groups(bytes, nt, budget / 2, group);
	if (!ngroups)
		ngroups = 1;
	for (g = 0; g < ngroups; g++) {
		for (i = 0, nf = 0, nq = 0; i < nt; i++) {
			if (group[i] != (int)g)
				continue;
			fx[nf++] = res->tensors[i].name;
			if (!is_output(qmp, res->tensors[i].dq_output))
				qx[nq++] = res->tensors[i].dq_output;
		}
		ret = qr_model_open(fmp, fx, nf, shapes, nshapes, device, true, &fm, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "npu-quantize: report: the fp32 model: %s\n", err);
			goto out;
		}
		ret = qr_model_open(qmp, qx, nq, shapes, nshapes, device, true, &qm, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "npu-quantize: report: the quantized model does not load in libnpu: %s\n",
				err);
			goto out;
		}
		for (k = 0; k < smp->count; k++) {
			ret = qr_model_run(fm, smp, k, err, sizeof(err));
			if (!ret)
				ret = qr_model_run(qm, smp, k, err, sizeof(err));
			if (ret) {
				fprintf(stderr, "npu-quantize: report: %s\n", err);
				goto out;
			}
			for (i = 0; i < nt + nout; i++) {
				struct qe_stat *st = i < nt ? &ts[i] : &os[i - nt];
				const char *qn = i < nt ? res->tensors[i].dq_output : st->name;
				long a, b;

				/* the graph's outputs (group -1) are compared with group 0 */
				if (i < nt ? group[i] != (int)g && (group[i] >= 0 || g) : g)
					continue;
				a = qr_output_find(fm, st->name);
				b = qr_output_find(qm, qn);
				if (a < 0 || b < 0 || qr_output_dtype(fm, (size_t)a) != NPU_DTYPE_FP32 ||
				    qr_output_dtype(qm, (size_t)b) != NPU_DTYPE_FP32 ||
				    qr_output_count(fm, (size_t)a) != qr_output_count(qm, (size_t)b)) {
					st->missing = true;
					continue;
				}
				qe_add(st, qr_output_data(fm, (size_t)a), qr_output_data(qm, (size_t)b),
				       qr_output_count(fm, (size_t)a));
			}
		}
		qr_model_close(fm);
		qr_model_close(qm);
		fm = qm = NULL;
	}
	qe_print(f, ts, nt, os, nout, smp->count);
	ret = 0;
out:
	if (ret == -ENOMEM)
		fprintf(stderr, "npu-quantize: report: out of memory\n");
	qr_model_close(fm);
	qr_model_close(qm);
	free(fx);
	free(qx);
	free(ts);
	free(os);
	free(bytes);
	free(group);
	if (fmp)
		onnx__model_proto__free_unpacked(fmp, NULL);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "method", required_argument, NULL, 'm' },
		{ "percentile", required_argument, NULL, 'p' },
		{ "activation", required_argument, NULL, 'a' },
		{ "per-tensor", no_argument, NULL, 't' },
		{ "reduce-range", no_argument, NULL, 'D' },
		{ "bins", required_argument, NULL, 'b' },
		{ "quantized-bins", required_argument, NULL, 'B' },
		{ "samples", required_argument, NULL, 'n' },
		{ "exclude", required_argument, NULL, 'x' },
		{ "fuse-conv", no_argument, NULL, 'F' },
		{ "eval", required_argument, NULL, 'e' },
		{ "report", required_argument, NULL, 'r' },
		{ "no-report", no_argument, NULL, 'R' },
		{ "device", no_argument, NULL, 'd' },
		{ "max-memory", required_argument, NULL, 'M' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out_path = NULL, *eval_dir = NULL, *report_path = NULL;
	const char *exclude[MAX_EXCLUDE];
	struct qq_options qo = { .activation = QZ_INT8 };
	struct calib c = { .method = QC_MINMAX, .percentile = QC_DEFAULT_PERCENTILE,
			   .num_quantized_bins = QC_ENTROPY_QUANT_BINS };
	struct qr_samples smp = { 0 }, ev = { 0 };
	struct qq_result res = { 0 };
	struct npu_onnx_model *probe = NULL;
	struct npu_onnx_shape *shapes = NULL;
	size_t nshapes = 0;
	Onnx__ModelProto *mp = NULL;
	uint8_t *bytes = NULL, *qbytes = NULL;
	size_t len = 0, qlen, nexclude = 0, nsamples = 0, i, nq = 0;
	bool device = false, quiet = false, no_report = false, fuse_conv = false;
	uint64_t max_memory = DEFAULT_MAX_MEMORY;
	char err[1024] = "";
	int opt, ret, status = 1;

	while ((opt = getopt_long(argc, argv, "o:qh", lopts, NULL)) != -1) {
		char *end;

		switch (opt) {
		case 'o': out_path = optarg; break;
		case 'm':
			if (!strcmp(optarg, "minmax"))
				c.method = QC_MINMAX;
			else if (!strcmp(optarg, "percentile"))
				c.method = QC_PERCENTILE;
			else if (!strcmp(optarg, "entropy"))
				c.method = QC_ENTROPY;
			else {
				fprintf(stderr, "npu-quantize: --method %s: not minmax, percentile or entropy\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'p':
			errno = 0;
			c.percentile = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(c.percentile > 0 && c.percentile <= 100)) {
				fprintf(stderr, "npu-quantize: --percentile %s: not a number in (0, 100]\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'a':
			if (!strcmp(optarg, "int8"))
				qo.activation = QZ_INT8;
			else if (!strcmp(optarg, "uint8"))
				qo.activation = QZ_UINT8;
			else {
				fprintf(stderr, "npu-quantize: --activation %s: not int8 or uint8\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 't': qo.per_tensor = true; break;
		case 'D': qo.reduce_range = true; break;
		case 'b':
		case 'B': {
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			/* a histogram is 8 bytes a bin per tensor: 1M bins is plenty */
			if (errno || *end || end == optarg || optarg[0] == '-' || v < 2 || v > (1ul << 20)) {
				fprintf(stderr, "npu-quantize: --%s %s: not a count from 2 to 1048576\n",
					opt == 'b' ? "bins" : "quantized-bins", optarg);
				return EXIT_USAGE;
			}
			if (opt == 'b')
				c.num_bins = (uint32_t)v;
			else
				c.num_quantized_bins = (uint32_t)v;
			break;
		}
		case 'n':
			errno = 0;
			nsamples = (size_t)strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg || optarg[0] == '-' || !nsamples) {
				fprintf(stderr, "npu-quantize: --samples %s: not a positive count\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'x':
			if (nexclude == MAX_EXCLUDE) {
				fprintf(stderr, "npu-quantize: more than %d --exclude\n", MAX_EXCLUDE);
				return EXIT_USAGE;
			}
			exclude[nexclude++] = optarg;
			break;
		case 'e': eval_dir = optarg; break;
		case 'F': fuse_conv = true; break;
		case 'r': report_path = optarg; break;
		case 'R': no_report = true; break;
		case 'd': device = true; break;
		case 'M': {
			unsigned long long v;

			unsigned shift = 20;

			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (*end == 'K' || *end == 'M' || *end == 'G') {
				shift = *end == 'K' ? 10 : *end == 'M' ? 20 : 30;
				end++;
			}
			if (errno || *end || end == optarg || optarg[0] == '-' || !v ||
			    v > (1ull << (44 - shift))) {
				fprintf(stderr, "npu-quantize: --max-memory %s: not a size from 1K to 16T (K, M or G; M by default)\n",
					optarg);
				return EXIT_USAGE;
			}
			max_memory = (uint64_t)v << shift;
			break;
		}
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (argc - optind != 2 || !out_path) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (c.method != QC_PERCENTILE && c.percentile != QC_DEFAULT_PERCENTILE) {
		fprintf(stderr, "npu-quantize: --percentile applies to --method percentile only\n");
		return EXIT_USAGE;
	}
	if ((c.method == QC_MINMAX && c.num_bins) ||
	    (c.method != QC_ENTROPY && c.num_quantized_bins != QC_ENTROPY_QUANT_BINS)) {
		fprintf(stderr, "npu-quantize: --bins and --quantized-bins apply to the histogram methods (--quantized-bins to entropy) only\n");
		return EXIT_USAGE;
	}
	if (c.method == QC_ENTROPY &&
	    c.num_quantized_bins / 2 > (c.num_bins ? c.num_bins : QC_ENTROPY_BINS) / 2) {
		fprintf(stderr, "npu-quantize: --quantized-bins %u exceeds --bins %u\n",
			c.num_quantized_bins, c.num_bins ? c.num_bins : QC_ENTROPY_BINS);
		return EXIT_USAGE;
	}
	qo.exclude = exclude;
	qo.num_exclude = nexclude;
	qo.range = range_of;
	qo.shape = shape_of;
	qo.ctx = &c;

	ret = read_file(argv[optind], &bytes, &len);
	if (ret) {
		fprintf(stderr, "npu-quantize: %s: %s\n", argv[optind], strerror(-ret));
		goto out;
	}
	/*
	 * libnpu's importer checks the file before protobuf-c unpacks it here:
	 * it has to be well formed, within the budgets, of an opset it knows
	 * and without cycles; any other refusal (-EINVAL) may be a dynamic
	 * dimension the samples will bind, and comes back at calibration.
	 */
	ret = npu_onnx_load(bytes, len, NULL, &probe, err, sizeof(err));
	if (ret && ret != -EINVAL) {
		fprintf(stderr, "npu-quantize: %s: %s\n", argv[optind], err);
		goto out;
	}
	npu_onnx_free(probe);
	mp = onnx__model_proto__unpack(NULL, len, bytes);
	if (!mp || !mp->graph) {
		fprintf(stderr, "npu-quantize: %s: not an ONNX model\n", argv[optind]);
		goto out;
	}
	for (i = 0; i < nexclude; i++) {
		size_t j;
		bool found = false;

		for (j = 0; j < mp->graph->n_node && !found; j++)
			found = mp->graph->node[j]->name && !strcmp(mp->graph->node[j]->name, exclude[i]);
		if (!found) {
			fprintf(stderr, "npu-quantize: --exclude %s: the model has no node of that name\n",
				exclude[i]);
			goto out;
		}
	}
	{
		size_t n;

		if (qf_constants_to_initializers(mp, &n)) {
			fprintf(stderr, "npu-quantize: out of memory\n");
			goto out;
		}
		if (!quiet && n)
			printf("%zu Constant node%s made initializer%s\n", n, n == 1 ? "" : "s",
			       n == 1 ? "" : "s");
	}
	if (fuse_conv) {
		size_t folded;

		if (qf_fuse_conv(mp, &folded, err, sizeof(err))) {
			fprintf(stderr, "npu-quantize: %s: %s\n", argv[optind], err);
			goto out;
		}
		if (!quiet)
			printf("fused %zu BatchNormalization, Mul or Add node%s into the Conv before %s\n",
			       folded, folded == 1 ? "" : "s", folded == 1 ? "it" : "them");
	}
	if (qq_check(mp, &qo, err, sizeof(err))) {
		fprintf(stderr, "npu-quantize: %s: %s\n", argv[optind], err);
		goto out;
	}
	ret = qr_samples_find(argv[optind + 1], nsamples, &smp, err, sizeof(err));
	if (!ret && eval_dir)
		ret = qr_samples_find(eval_dir, 0, &ev, err, sizeof(err));
	if (!ret)
		ret = qr_samples_shapes(mp, &smp, &shapes, &nshapes, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "npu-quantize: %s\n", err);
		goto out;
	}

	/* copies: the rewrite replaces the strings of the model they come from */
	c.names = qq_tensors_to_calibrate(mp, &c.count);
	c.out = calloc(c.count + 1, sizeof(*c.out));
	c.st = calloc(c.count + 1, sizeof(*c.st));
	c.rank = calloc(c.count + 1, sizeof(*c.rank));
	c.bytes = calloc(c.count + 1, sizeof(*c.bytes));
	c.dims = calloc(c.count + 1, sizeof(*c.dims));
	for (i = 0; c.names && i < c.count; i++)
		if (!(c.names[i] = strdup(c.names[i])))
			c.count = i;
	if (!c.names || !c.out || !c.st || !c.rank || !c.bytes || !c.dims ||
	    (c.names && c.names[c.count])) {
		fprintf(stderr, "npu-quantize: out of memory\n");
		goto out;
	}
	if (calibrate(mp, &smp, shapes, nshapes, device, &c, quiet, max_memory))
		goto out;

	ret = qq_quantize(mp, &qo, &res, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "npu-quantize: %s: %s\n", argv[optind], err);
		goto out;
	}
	qlen = onnx__model_proto__get_packed_size(mp);
	qbytes = malloc(qlen + 1);
	if (!qbytes) {
		fprintf(stderr, "npu-quantize: out of memory\n");
		goto out;
	}
	onnx__model_proto__pack(mp, qbytes);
	ret = write_file(out_path, qbytes, qlen);
	if (ret) {
		fprintf(stderr, "npu-quantize: %s: %s\n", out_path, strerror(-ret));
		goto out;
	}
	for (i = 0; i < res.num_nodes; i++)
		nq += res.nodes[i].quantized;
	if (!quiet) {
		for (i = 0; i < res.num_nodes; i++)
			if (!res.nodes[i].quantized)
				printf("node %s (%s): %s\n", res.nodes[i].name, res.nodes[i].op_type,
				       res.nodes[i].why);
		if (res.biases_clipped)
			printf("%zu bias value%s beyond int32 clipped to it: the product of input and weight scales is too small (onnxruntime clips them too)\n",
			       res.biases_clipped, res.biases_clipped == 1 ? "" : "s");
		if (res.weight_scales_raised)
			printf("%zu weight scale%s raised so that the bias fits in int32 (input scale x weight scale too small; onnxruntime raises them too)\n",
			       res.weight_scales_raised, res.weight_scales_raised == 1 ? "" : "s");
		if (res.opset_to != res.opset_from)
			printf("opset raised from %lld to %lld: per-channel DequantizeLinear needs 13\n",
			       res.opset_from, res.opset_to);
		printf("wrote %s: %zu of %zu nodes quantized, %zu activation tensors with Q/DQ, %zu weights, %zu biases; %s calibration on %zu sample%s\n",
		       out_path, nq, res.num_nodes, res.num_tensors, res.weights, res.biases,
		       c.method == QC_MINMAX ? "minmax" : c.method == QC_PERCENTILE ? "percentile" :
		       "entropy", smp.count, smp.count == 1 ? "" : "s");
	}
	if (!no_report) {
		FILE *f = stdout;

		if (report_path) {
			f = fopen(report_path, "w");
			if (!f) {
				fprintf(stderr, "npu-quantize: --report %s: %s\n", report_path,
					strerror(errno));
				goto out;
			}
		}
		ret = report(bytes, len, mp, &res, &c, eval_dir ? &ev : &smp, shapes, nshapes, device,
			     max_memory, f);
		if (f != stdout && fclose(f) && !ret) {
			fprintf(stderr, "npu-quantize: --report %s: %s\n", report_path, strerror(errno));
			ret = -EIO;
		}
		if (ret)
			goto out;
	}
	status = 0;
out:
	qq_result_free(&res);
	free(shapes);
	if (c.st)
		for (i = 0; i < c.count; i++)
			qc_stats_free(&c.st[i]);
	free(c.st);
	free(c.out);
	free(c.rank);
	free(c.bytes);
	free(c.dims);
	for (i = 0; c.names && i < c.count; i++)
		free((char *)c.names[i]);
	free(c.names);
	qr_samples_free(&smp);
	qr_samples_free(&ev);
	if (mp)
		onnx__model_proto__free_unpacked(mp, NULL);
	free(bytes);
	free(qbytes);
	return status;
}
