// SPDX-License-Identifier: MIT
/*
 * npu-demo: classify Fashion-MNIST test images with an int8 MLP on the
 * vnpu device, through libnpu's op API.
 *
 * The model (784-H-10, trained and quantized on the host at build time by
 * train.c and quantize.c) is two quantized GEMMs per batch, encoded into
 * one job:
 *
 *   GEMM 1  X[B,784] uint8 x W1[784,H] int8 (per-channel) + b1 int32,
 *           fused ReLU, requantized to int8 H[B,H]
 *   barrier
 *   GEMM 2  H[B,H] int8 x W2[H,10] int8 (per-channel) + b2 int32,
 *           int32 logits Y[B,10]
 *
 * Every batch is submitted before any is waited for, so the device works
 * through the queue while the guest CPU builds the next job.  The same
 * two ops then run over all images at once through the reference
 * implementation (vnpu_ref_run(), ops/vnpu_ref.c, compiled into this
 * program) on the guest CPU; the int8 path must agree bit for bit.  Not
 * through libnpu's CPU path: that runs the device's own compute engine.
 *
 * Everything printed is measured in this run or read from the model file
 * (the host-side figures recorded at build time).  Exit status 1 when the
 * device and the reference disagree, the accuracy is below 70%, or any
 * step fails.
 *
 *   npu-demo [--tap] [--batch B] [--images N] [--model FILE] [--data FILE]
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu/npu.h"
#include "fmnist.h"
#include "npu-ref-run.h"

#define MIN_ACCURACY	0.70
#define JOB_TIMEOUT_NS	(120ll * 1000000000ll)

static bool tap_mode;
static int ntests, nfailed;

__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...)
{
	va_list ap;

	if (tap_mode)
		fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* A pass/fail check: a TAP line, or a PASS/FAIL line for people. */
__attribute__((format(printf, 2, 3)))
static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;

	ntests++;
	nfailed += !ok;
	if (tap_mode)
		printf("%s %d - ", ok ? "ok" : "not ok", ntests);
	else
		printf("check: %s: ", ok ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return ok;
}

/* ---- Model and data files ------------------------------------------------ */

struct model {
	struct demo_model_hdr h;
	float *s1, *s2;
	int8_t *w1, *w2;
	int32_t *b1, *b2;
	void *file;
};

struct dataset {
	struct demo_data_hdr h;
	uint8_t *images;
	uint8_t *labels;
	void *file;
};

static int read_file(const char *path, void **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long len;
	int err;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		err = -errno;
		fclose(f);
		return err;
	}
	*data = malloc(len ? (size_t)len : 1);
	if (!*data) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(*data, 1, (size_t)len, f) != (size_t)len) {
		free(*data);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*size = (size_t)len;
	return 0;
}

/*
 * Carve @n bytes at *@off out of a file of @size bytes; NULL if short or
 * if *@off is not a multiple of @align (the arrays are used in place).
 */
static void *take(void *base, size_t size, size_t *off, uint64_t n,
		  size_t align)
{
	void *p = (uint8_t *)base + *off;

	if (n > size - *off || *off % align)
		return NULL;
	*off += n;
	return p;
}

static int load_model(const char *path, struct model *m)
{
	size_t size, off = sizeof(m->h);
	uint32_t i, k, hd;
	int ret;

	ret = read_file(path, &m->file, &size);
	if (ret)
		return ret;
	if (size < sizeof(m->h))
		return -EINVAL;
	memcpy(&m->h, m->file, sizeof(m->h));
	hd = m->h.hidden;
	/* Only what the demo was built for; anything else is a wrong file. */
	if (memcmp(m->h.magic, DEMO_MODEL_MAGIC, 8) || m->h.in_dim != 784 ||
	    m->h.classes != DEMO_CLASSES || hd < 1 || hd > 4096 ||
	    !(m->h.in_scale > 0.0f) || !(m->h.h_scale > 0.0f) ||
	    !isfinite(m->h.in_scale) || !isfinite(m->h.h_scale) ||
	    m->h.in_zp < 0 || m->h.in_zp > 255 || m->h.h_zp < -128 || m->h.h_zp > 127)
		return -EINVAL;
	m->s1 = take(m->file, size, &off, 4ull * hd, 4);
	m->w1 = take(m->file, size, &off, (uint64_t)m->h.in_dim * hd, 1);
	m->b1 = take(m->file, size, &off, 4ull * hd, 4);
	m->s2 = take(m->file, size, &off, 4ull * DEMO_CLASSES, 4);
	m->w2 = take(m->file, size, &off, (uint64_t)hd * DEMO_CLASSES, 1);
	m->b2 = take(m->file, size, &off, 4ull * DEMO_CLASSES, 4);
	if (!m->s1 || !m->w1 || !m->b1 || !m->s2 || !m->w2 || !m->b2 || off != size)
		return -EINVAL;
	for (i = 0; i < hd; i++)
		if (!(m->s1[i] > 0.0f) || !isfinite(m->s1[i]))
			return -EINVAL;
	for (k = 0; k < DEMO_CLASSES; k++)
		if (!(m->s2[k] > 0.0f) || !isfinite(m->s2[k]))
			return -EINVAL;
	return 0;
}

static int load_data(const char *path, struct dataset *d)
{
	size_t size, off = sizeof(d->h);
	uint32_t i;
	int ret;

	ret = read_file(path, &d->file, &size);
	if (ret)
		return ret;
	if (size < sizeof(d->h))
		return -EINVAL;
	memcpy(&d->h, d->file, sizeof(d->h));
	if (memcmp(d->h.magic, DEMO_DATA_MAGIC, 8) || d->h.rows != 28 ||
	    d->h.cols != 28 || !d->h.count || d->h.count > 100000)
		return -EINVAL;
	d->images = take(d->file, size, &off, 784ull * d->h.count, 1);
	d->labels = take(d->file, size, &off, d->h.count, 1);
	if (!d->images || !d->labels || off != size)
		return -EINVAL;
	for (i = 0; i < d->h.count; i++)
		if (d->labels[i] >= DEMO_CLASSES)
			return -EINVAL;
	return 0;
}

/* ---- Building the ops ---------------------------------------------------- */

/* Where each operand lives: a device buffer and an offset in it. */
struct place {
	struct npu_buffer *buf;
	uint64_t off;
};

static int mk_tensor(enum npu_dtype dt, uint32_t d0, uint32_t d1, uint32_t rank,
		     const struct place *pl, struct npu_tensor **out)
{
	uint32_t dims[2] = { d0, d1 };
	int ret;

	ret = npu_tensor_create(dt, rank, rank == 1 ? &d1 : dims, out);
	if (ret)
		return ret;
	ret = npu_tensor_bind_buffer(*out, pl->buf, pl->off);
	if (ret) {
		npu_tensor_free(*out);
		*out = NULL;
	}
	return ret;
}

/*
 * The two GEMMs of the model over @rows images.  @pl: X, W1, b1, H, W2,
 * b2, Y in that order.
 */
static int make_ops(const struct model *m, uint32_t rows,
		    const struct place pl[7], struct npu_op **op1,
		    struct npu_op **op2)
{
	struct npu_tensor *x = NULL, *w1 = NULL, *b1 = NULL, *h = NULL;
	struct npu_tensor *w2 = NULL, *b2 = NULL, *y = NULL;
	struct npu_op_params p;
	uint32_t hd = m->h.hidden;
	int ret;

	ret = mk_tensor(NPU_DTYPE_UINT8, rows, 784, 2, &pl[0], &x);
	if (!ret)
		ret = npu_tensor_set_quant(x, m->h.in_scale, m->h.in_zp);
	if (!ret)
		ret = mk_tensor(NPU_DTYPE_INT8, 784, hd, 2, &pl[1], &w1);
	if (!ret)
		ret = npu_tensor_set_quant_channel(w1, 1, m->s1, NULL);
	if (!ret)
		ret = mk_tensor(NPU_DTYPE_INT32, 0, hd, 1, &pl[2], &b1);
	if (!ret)
		ret = mk_tensor(NPU_DTYPE_INT8, rows, hd, 2, &pl[3], &h);
	if (!ret)
		ret = npu_tensor_set_quant(h, m->h.h_scale, m->h.h_zp);
	if (!ret)
		ret = mk_tensor(NPU_DTYPE_INT8, hd, DEMO_CLASSES, 2, &pl[4], &w2);
	if (!ret)
		ret = npu_tensor_set_quant_channel(w2, 1, m->s2, NULL);
	if (!ret)
		ret = mk_tensor(NPU_DTYPE_INT32, 0, DEMO_CLASSES, 1, &pl[5], &b2);
	if (!ret)
		ret = mk_tensor(NPU_DTYPE_INT32, rows, DEMO_CLASSES, 2, &pl[6], &y);
	if (!ret) {
		const struct npu_tensor *in1[3] = { x, w1, b1 };
		const struct npu_tensor *in2[3] = { h, w2, b2 };

		p = (struct npu_op_params)NPU_OP_PARAMS_INIT;
		p.kind = NPU_OP_GEMM;
		p.act = NPU_ACT_RELU;
		p.round = NPU_ROUND_ONNX;
		ret = npu_op_create(&p, in1, 3, h, op1);
		if (!ret) {
			p.act = NPU_ACT_NONE;
			ret = npu_op_create(&p, in2, 3, y, op2);
			if (ret) {
				npu_op_free(*op1);
				*op1 = NULL;
			}
		}
	}
	/* Ops keep their own snapshot of the tensors. */
	npu_tensor_free(x);
	npu_tensor_free(w1);
	npu_tensor_free(b1);
	npu_tensor_free(h);
	npu_tensor_free(w2);
	npu_tensor_free(b2);
	npu_tensor_free(y);
	return ret;
}

/* ---- The device path ------------------------------------------------------ */

struct batch {
	uint32_t first, rows;
	struct npu_op *op1, *op2;
	struct npu_cmdbuf *cb;
	struct npu_buffer **bufs;
	size_t nbufs;
	struct npu_fence *fence;
	struct npu_job_status st;
};

/* Add the op's buffers to @b->bufs, once each. */
static int collect_bufs(struct batch *b, const struct npu_op *op)
{
	size_t n = npu_op_buffers(op, NULL, 0), base = b->nbufs, i, j;
	struct npu_buffer **grown;

	if (!n)
		return 0;
	grown = realloc(b->bufs, (b->nbufs + n) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;	/* b->bufs is still valid and freed later */
	b->bufs = grown;
	/*
	 * Append, then compact out the ones already listed; nbufs never
	 * passes i, so no candidate is overwritten before it is looked at.
	 */
	npu_op_buffers(op, b->bufs + base, n);
	for (i = base; i < base + n; i++) {
		struct npu_buffer *cand = b->bufs[i];

		for (j = 0; j < b->nbufs && b->bufs[j] != cand; j++)
			;
		if (j == b->nbufs)
			b->bufs[b->nbufs++] = cand;
	}
	return 0;
}

static int build_batch(struct npu_context *ctx, struct batch *b)
{
	size_t cmds = npu_op_num_commands(b->op1) + npu_op_num_commands(b->op2);
	const char *why = NULL;
	int ret;

	if (npu_op_supported(b->op1, &why) != 1 ||
	    npu_op_supported(b->op2, &why) != 1) {
		fprintf(stderr, "npu-demo: the device cannot run the model: %s\n",
			why ? why : "?");
		return -ENOTSUP;
	}
	/* Compute commands are fixed size; a barrier is one header. */
	ret = npu_cmdbuf_create(ctx, (cmds + 1) * 1024, &b->cb);
	if (!ret)
		ret = npu_op_encode(b->op1, b->cb);
	/* GEMM 2 reads what GEMM 1 wrote within the same job. */
	if (!ret)
		ret = npu_cmdbuf_barrier(b->cb);
	if (!ret)
		ret = npu_op_encode(b->op2, b->cb);
	if (!ret)
		ret = collect_bufs(b, b->op1);
	if (!ret)
		ret = collect_bufs(b, b->op2);
	return ret;
}

/* Submit every batch, then wait for all of them; wall time in *@ns. */
static int run_device(struct npu_queue *q, struct batch *bt, uint32_t nb,
		      int64_t *ns)
{
	int64_t t0;
	uint32_t i;
	int ret = 0;

	/* The previous pass has been waited for: the buffers are idle. */
	for (i = 0; i < nb; i++) {
		npu_fence_free(bt[i].fence);
		bt[i].fence = NULL;
	}
	t0 = npu_time_ns();
	for (i = 0; i < nb && !ret; i++)
		ret = npu_submit(q, bt[i].cb, bt[i].bufs, bt[i].nbufs, NULL, 0,
				 &bt[i].fence);
	for (i = 0; i < nb && bt[i].fence; i++) {
		int r = npu_fence_wait(bt[i].fence, npu_deadline_ns(JOB_TIMEOUT_NS));

		if (!r)
			r = npu_fence_error(bt[i].fence);
		bt[i].st.size = sizeof(bt[i].st);
		if (!r)
			r = npu_fence_status(bt[i].fence, &bt[i].st);
		if (r && !ret)
			ret = r;
	}
	*ns = npu_time_ns() - t0;
	return ret;
}

/* ---- Results ------------------------------------------------------------- */

/* Real logits: each class has its own weight scale. */
static void dequant_logits(const struct model *m, const int32_t *acc, float *z)
{
	uint32_t k;

	for (k = 0; k < DEMO_CLASSES; k++)
		z[k] = (float)acc[k] * (m->h.h_scale * m->s2[k]);
}

static uint32_t argmax(const float *z)
{
	uint32_t k, best = 0;

	for (k = 1; k < DEMO_CLASSES; k++)
		if (z[k] > z[best])
			best = k;
	return best;
}

static void usage(const char *argv0)
{
	printf("usage: %s [--tap] [--batch B] [--images N] [--model FILE] [--data FILE]\n"
	       "Classify Fashion-MNIST test images with an int8 MLP on the vnpu NPU.\n",
	       argv0);
}

static char *beside_exe(const char *argv0, const char *name)
{
	const char *slash = strrchr(argv0, '/');
	size_t dl = slash ? (size_t)(slash - argv0) + 1 : 0;
	char *p = malloc(dl + strlen(name) + 1);

	if (p) {
		memcpy(p, argv0, dl);
		strcpy(p + dl, name);
	}
	return p;
}

int main(int argc, char **argv)
{
	const char *model_arg = NULL, *data_arg = NULL, *what;
	char *model_path = NULL, *data_path = NULL;
	uint32_t batch = 250, nimg = 0, nb = 0, i, k, hd;
	struct npu_device_info info;
	struct npu_device_list *list = NULL;
	size_t ndev = 0;
	struct npu_device *dev = NULL;
	struct npu_context *ctx = NULL;
	struct npu_queue *q = NULL;
	struct npu_buffer *bx = NULL, *bw1 = NULL, *bb1 = NULL, *bh = NULL;
	struct npu_buffer *bw2 = NULL, *bb2 = NULL, *by = NULL;
	struct npu_buffer *rbh = NULL, *rby = NULL;
	struct npu_op *rop1 = NULL, *rop2 = NULL;
	struct batch *bt = NULL;
	struct model m;
	struct dataset d;
	void *mx, *mw1, *mb1, *mh, *mw2, *mb2, *my;
	void *ref_h = NULL, *ref_y = NULL;
	int64_t cold_ns = 0, warm_ns = 0, ref_ns;
	uint64_t cyc_sum = 0, cyc_max = 0, dur_sum = 0, macs;
	uint32_t bad_y = 0, bad_h = 0, correct = 0;
	uint32_t confusion[DEMO_CLASSES][DEMO_CLASSES];
	int ret, a;

	memset(&m, 0, sizeof(m));
	memset(&d, 0, sizeof(d));
	memset(confusion, 0, sizeof(confusion));
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--tap")) {
			tap_mode = true;
		} else if (!strcmp(argv[a], "--batch") && a + 1 < argc) {
			batch = (uint32_t)strtoul(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--images") && a + 1 < argc) {
			nimg = (uint32_t)strtoul(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--model") && a + 1 < argc) {
			model_arg = argv[++a];
		} else if (!strcmp(argv[a], "--data") && a + 1 < argc) {
			data_arg = argv[++a];
		} else if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) {
			usage(argv[0]);
			return 0;
		} else {
			usage(argv[0]);
			return 2;
		}
	}
	if (!batch || batch > 65536) {
		fprintf(stderr, "npu-demo: --batch must be 1..65536\n");
		return 2;
	}
	if (tap_mode)
		printf("1..6\n");
	/* By default the files sit next to the program, as in /tests. */
	model_path = model_arg ? strdup(model_arg) : beside_exe(argv[0], "demo-mlp.bin");
	data_path = data_arg ? strdup(data_arg) : beside_exe(argv[0], "demo-t10k.bin");
	if (!model_path || !data_path) {
		check(false, "load model and test set # out of memory");
		goto out;
	}
	ret = load_model(model_path, &m);
	what = model_path;
	if (!ret) {
		ret = load_data(data_path, &d);
		what = data_path;
	}
	if (!check(!ret, "load model %s and test set %s", model_path, data_path)) {
		say("  %s: %s\n", what, ret == -EINVAL ?
		    "not a valid file of the demo's format" : strerror(-ret));
		goto out;
	}
	hd = m.h.hidden;
	if (!nimg || nimg > d.h.count)
		nimg = d.h.count;
	if (batch > nimg)
		batch = nimg;
	nb = (nimg + batch - 1) / batch;

	say("== Model ==\n");
	say("MLP %u-%u-%u, %u parameters (%u KiB of int8 weights)\n",
	    m.h.in_dim, hd, m.h.classes,
	    m.h.in_dim * hd + hd + hd * m.h.classes + m.h.classes,
	    (m.h.in_dim * hd + hd * m.h.classes + 1023) / 1024);
	say("  trained on the host at build time: %u images, %u epochs of SGD (batch %u, seed %u), %.1f s\n",
	    m.h.train_images, m.h.epochs, m.h.batch, m.h.seed, m.h.train_seconds);
	say("  fp32 accuracy on the host: %.2f%% on all %u test images, %.2f%% on the first %u\n",
	    100.0 * m.h.fp32_correct_t10k / m.h.t10k_images, m.h.t10k_images,
	    100.0 * m.h.fp32_correct_eval / m.h.eval_images, m.h.eval_images);
	say("  int8: uint8 input (scale 1/255), int8 weights per output channel, int8 hidden (scale %.5f, zero point %d, calibrated on %u images), int32 logits\n",
	    m.h.h_scale, m.h.h_zp, m.h.calib_images);
	say("  layer 1: GEMM [%u,784] u8 x [784,%u] i8 + bias -> ReLU -> requantize -> i8\n",
	    batch, hd);
	say("  layer 2: GEMM [%u,%u] i8 x [%u,10] i8 + bias -> i32 logits\n", batch, hd, hd);

	ret = npu_device_list(&list);
	if (!ret)
		ndev = npu_device_list_count(list);
	if (!ret && !ndev)
		ret = -ENODEV;
	if (!ret)
		ret = npu_device_open(0, &dev);
	if (!ret)
		ret = npu_device_get_info(dev, &info, sizeof(info));
	if (!ret)
		ret = npu_context_create(dev, &ctx);
	if (!ret)
		ret = npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q);
	if (!check(!ret, "open the NPU")) {
		say("  %s\n", npu_strerror(ret));
		goto out;
	}
	say("== Device ==\n");
	say("%s at PCI %s (%04x:%04x rev %u), driver %s %s, hw %u.%u, %s\n",
	    info.node, info.pci_address, info.pci_vendor, info.pci_device,
	    info.pci_revision, info.driver, info.driver_version,
	    info.hw_version >> 16, info.hw_version & 0xffff,
	    info.platform == 1 ? "emulated" : info.platform == 0 ? "silicon" : "unknown platform");
	say("  modelled clock %u MHz, %u int8 MACs/cycle, %u queues\n",
	    info.clock_mhz, info.macs_per_cycle, info.num_queues);

	/* Device memory: the whole test set, weights, activations, logits. */
	ret = npu_buffer_alloc(ctx, 784ull * nimg, NPU_BUFFER_DEVICE_READONLY, &bx);
	if (!ret)
		ret = npu_buffer_alloc(ctx, 784ull * hd, NPU_BUFFER_DEVICE_READONLY, &bw1);
	if (!ret)
		ret = npu_buffer_alloc(ctx, 4ull * hd, NPU_BUFFER_DEVICE_READONLY, &bb1);
	if (!ret)
		ret = npu_buffer_alloc(ctx, (uint64_t)hd * nimg, 0, &bh);
	if (!ret)
		ret = npu_buffer_alloc(ctx, (uint64_t)hd * DEMO_CLASSES,
				       NPU_BUFFER_DEVICE_READONLY, &bw2);
	if (!ret)
		ret = npu_buffer_alloc(ctx, 4ull * DEMO_CLASSES, NPU_BUFFER_DEVICE_READONLY, &bb2);
	if (!ret)
		ret = npu_buffer_alloc(ctx, 4ull * DEMO_CLASSES * nimg, 0, &by);
	if (!ret)
		ret = npu_buffer_map(bx, &mx);
	if (!ret)
		ret = npu_buffer_map(bw1, &mw1);
	if (!ret)
		ret = npu_buffer_map(bb1, &mb1);
	if (!ret)
		ret = npu_buffer_map(bh, &mh);
	if (!ret)
		ret = npu_buffer_map(bw2, &mw2);
	if (!ret)
		ret = npu_buffer_map(bb2, &mb2);
	if (!ret)
		ret = npu_buffer_map(by, &my);
	if (ret) {
		check(false, "device memory # %s", npu_strerror(ret));
		goto out;
	}
	memcpy(mx, d.images, 784ull * nimg);
	memcpy(mw1, m.w1, 784ull * hd);
	memcpy(mb1, m.b1, 4ull * hd);
	memcpy(mw2, m.w2, (size_t)hd * DEMO_CLASSES);
	memcpy(mb2, m.b2, 4ull * DEMO_CLASSES);
	/* Poison: every activation and logit must be written by the device. */
	memset(mh, 0x5a, (size_t)hd * nimg);
	memset(my, 0x5a, 4ull * DEMO_CLASSES * nimg);

	bt = calloc(nb, sizeof(*bt));
	if (!bt) {
		ret = -ENOMEM;
		check(false, "device jobs # %s", npu_strerror(ret));
		goto out;
	}
	for (i = 0; i < nb && !ret; i++) {
		struct place pl[7] = {
			{ bx, 784ull * i * batch },
			{ bw1, 0 }, { bb1, 0 },
			{ bh, (uint64_t)hd * i * batch },
			{ bw2, 0 }, { bb2, 0 },
			{ by, 4ull * DEMO_CLASSES * i * batch },
		};

		bt[i].first = i * batch;
		bt[i].rows = nimg - bt[i].first < batch ? nimg - bt[i].first : batch;
		ret = make_ops(&m, bt[i].rows, pl, &bt[i].op1, &bt[i].op2);
		if (!ret)
			ret = build_batch(ctx, &bt[i]);
	}
	/* A cold pass (first use of everything), then the timed one. */
	if (!ret)
		ret = run_device(q, bt, nb, &cold_ns);
	if (!ret)
		ret = run_device(q, bt, nb, &warm_ns);
	if (!check(!ret, "%u images in %u jobs of %u ran on the device", nimg, nb, batch)) {
		say("  %s\n", npu_strerror(ret));
		goto out;
	}
	for (i = 0; i < nb; i++) {
		cyc_sum += bt[i].st.cycles;
		dur_sum += bt[i].st.duration_ns;
		if (bt[i].st.cycles > cyc_max)
			cyc_max = bt[i].st.cycles;
	}
	macs = (uint64_t)nimg * (784ull * hd + (uint64_t)hd * DEMO_CLASSES);

	/*
	 * The reference: the same two ops, all images at once, over the
	 * device's inputs and outputs of their own (the reference reads its
	 * operands where the commands place them).
	 */
	ret = npu_buffer_alloc(ctx, (uint64_t)hd * nimg, 0, &rbh);
	if (!ret)
		ret = npu_buffer_alloc(ctx, 4ull * DEMO_CLASSES * nimg, 0, &rby);
	if (!ret)
		ret = npu_buffer_map(rbh, &ref_h);
	if (!ret)
		ret = npu_buffer_map(rby, &ref_y);
	if (!ret) {
		struct place pl[7] = {
			{ bx, 0 }, { bw1, 0 }, { bb1, 0 },
			{ rbh, 0 }, { bw2, 0 }, { bb2, 0 },
			{ rby, 0 },
		};

		memset(ref_h, 0x5a, (size_t)hd * nimg);
		memset(ref_y, 0x5a, 4ull * DEMO_CLASSES * nimg);
		ret = make_ops(&m, nimg, pl, &rop1, &rop2);
	}
	ref_ns = npu_time_ns();
	if (!ret)
		ret = npu_ref_run(rop1);
	if (!ret)
		ret = npu_ref_run(rop2);
	ref_ns = npu_time_ns() - ref_ns;
	if (!ret) {
		const int32_t *dy = my, *ry = ref_y;
		const int8_t *dh = mh, *rh = ref_h;

		for (i = 0; i < DEMO_CLASSES * nimg; i++)
			bad_y += dy[i] != ry[i];
		for (i = 0; i < hd * nimg; i++)
			bad_h += dh[i] != rh[i];
	}
	if (!check(!ret && !bad_y && !bad_h,
		   "device matches the reference implementation (vnpu_ref_run() on the guest CPU) bit for bit: %u of %u logits and %u of %u hidden activations differ",
		   bad_y, DEMO_CLASSES * nimg, bad_h, hd * nimg) && ret)
		say("  reference: %s\n", npu_strerror(ret));

	for (i = 0; i < nimg; i++) {
		float z[DEMO_CLASSES];
		uint32_t p;

		dequant_logits(&m, (const int32_t *)my + (size_t)i * DEMO_CLASSES, z);
		p = argmax(z);
		confusion[d.labels[i]][p]++;
		correct += p == d.labels[i];
	}

	say("== Results ==\n");
	if (nimg == m.h.eval_images)
		say("accuracy on the NPU: %u/%u = %.2f%% (same images on the host at build time: fp32 %.2f%%, int8 simulation %.2f%%)\n",
		    correct, nimg, 100.0 * correct / nimg,
		    100.0 * m.h.fp32_correct_eval / nimg,
		    100.0 * m.h.int8_correct_eval / nimg);
	else
		say("accuracy on the NPU: %u/%u = %.2f%% (host figures are for the first %u)\n",
		    correct, nimg, 100.0 * correct / nimg, m.h.eval_images);
	say("guest wall clock: %.1f ms for %u images = %.0f images/s (first pass %.1f ms, %.0f images/s)\n",
	    warm_ns / 1e6, nimg, nimg / (warm_ns / 1e9), cold_ns / 1e6, nimg / (cold_ns / 1e9));
	say("reference implementation in the guest (TCG): %.1f ms = %.0f images/s, %.0fx slower than the NPU\n",
	    ref_ns / 1e6, nimg / (ref_ns / 1e9), (double)ref_ns / (double)warm_ns);
	say("device: %" PRIu64 " modelled cycles per job of %u images (max %" PRIu64 "), %.1f MMAC per job\n",
	    cyc_sum / nb, batch, cyc_max, (double)macs / nb / 1e6);
	if (info.clock_mhz)
		say("  at %u MHz: %.1f us per job, %.2f us per image, %.0f images/s on silicon (estimate); %.0f%% of peak MAC rate\n",
		    info.clock_mhz, (double)cyc_sum / nb / info.clock_mhz,
		    (double)cyc_sum / nimg / info.clock_mhz,
		    nimg / ((double)cyc_sum / (info.clock_mhz * 1e6)),
		    info.macs_per_cycle ? 100.0 * macs / ((double)cyc_sum * info.macs_per_cycle) : 0.0);
	say("  device-reported job time %.1f us per job (emulator wall time)\n",
	    (double)dur_sum / nb / 1e3);

	say("per class (recall):\n");
	for (k = 0; k < DEMO_CLASSES; k++) {
		uint32_t tot = 0, c, worst = k;

		for (c = 0; c < DEMO_CLASSES; c++) {
			tot += confusion[k][c];
			if (c != k && (worst == k || confusion[k][c] > confusion[k][worst]))
				worst = c;
		}
		say("  %-12s %3u/%-3u %5.1f%%  most often mistaken for %s (%u)\n",
		    demo_class_names[k], confusion[k][k], tot,
		    tot ? 100.0 * confusion[k][k] / tot : 0.0,
		    demo_class_names[worst], confusion[k][worst]);
	}
	say("first predictions:\n");
	for (i = 0; i < nimg && i < 8; i++) {
		float z[DEMO_CLASSES], mxz, sum = 0.0f;
		uint32_t p;

		dequant_logits(&m, (const int32_t *)my + (size_t)i * DEMO_CLASSES, z);
		p = argmax(z);
		mxz = z[p];
		for (k = 0; k < DEMO_CLASSES; k++)
			sum += expf(z[k] - mxz);
		say("  #%-4u %-12s -> %-12s (p=%.2f) %s\n", i,
		    demo_class_names[d.labels[i]], demo_class_names[p], 1.0f / sum,
		    p == d.labels[i] ? "ok" : "WRONG");
	}

	check(correct >= MIN_ACCURACY * nimg, "accuracy %.2f%% >= %.0f%%",
	      100.0 * correct / nimg, 100 * MIN_ACCURACY);
	if (nimg == m.h.eval_images)
		check(correct == m.h.int8_correct_eval,
		      "device accuracy equals the build-time int8 simulation (%u correct)",
		      m.h.int8_correct_eval);
	else
		check(true, "device accuracy vs build-time simulation # SKIP subset of %u images",
		      nimg);
out:
	if (bt) {
		for (i = 0; i < nb; i++) {
			npu_fence_free(bt[i].fence);
			npu_cmdbuf_destroy(bt[i].cb);
			npu_op_free(bt[i].op1);
			npu_op_free(bt[i].op2);
			free(bt[i].bufs);
		}
		free(bt);
	}
	npu_op_free(rop1);
	npu_op_free(rop2);
	npu_buffer_free(rbh);
	npu_buffer_free(rby);
	npu_buffer_free(bx);
	npu_buffer_free(bw1);
	npu_buffer_free(bb1);
	npu_buffer_free(bh);
	npu_buffer_free(bw2);
	npu_buffer_free(bb2);
	npu_buffer_free(by);
	npu_queue_destroy(q);
	npu_context_destroy(ctx);
	npu_device_close(dev);
	npu_device_list_free(list);
	free(m.file);
	free(d.file);
	free(model_path);
	free(data_path);
	if (tap_mode) {
		/* A setup failure skips the later checks: report them failed. */
		while (ntests < 6)
			printf("not ok %d - not reached\n", ++ntests), nfailed++;
	}
	if (!tap_mode)
		printf("npu-demo: %s\n", nfailed ? "FAILED" : "all checks passed");
	return nfailed || ntests < 6 ? 1 : 0;
}
