// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the ONNX importer (libnpu/onnx) and the graph
 * compiler behind it: a model file is user input, so no byte sequence
 * may crash, hang, leak or trip ASan/UBSan.
 *
 * For each input:
 *  - npu_onnx_load() either fails with a message or returns a model whose
 *    inputs and outputs are consistent with its graph;
 *  - a model that loads is compiled for the CPU; a failure must come with
 *    a message (npu_graph_error());
 *  - a compiled runtime small enough (arena + weights below 16 MiB and
 *    fewer than 2^24 multiply-accumulates) runs once over zeroed inputs,
 *    and must succeed: whatever the compiler accepted, the reference ops
 *    accept too, unless the CPU path's limits (npu_cpu_limits, here
 *    RUN_WORK_MAX work units per op) refuse an op with -E2BIG and a
 *    message.  An accepted op must end within -timeout: work units that
 *    understate an op's cost show up as timeouts.
 * Dynamic dimensions are bound to 1, so any graph input is usable.
 *
 * The allocator never fails here (ASan aborts instead, and libFuzzer's
 * -malloc_limit_mb and -rss_limit_mb end the run), so -ENOMEM from the
 * library is a limit reported as "out of memory": a bug too.
 * FUZZ_ONNX_VERBOSE=1 prints each refusal ("fuzz-onnx: refused: ..."),
 * which run-fuzz.sh checks against a reproducer's .expect file.
 * fuzz-onnx-mutator.c is the structure-aware mutator.
 *
 * FUZZ_ONNX_DEVICE=N compiles for NPU device N instead, and runs there:
 * the guest's t-onnx-hostile replays the reproducers this way through
 * onnx-replay (replay-main.c, no libFuzzer, no sanitizers), so the device
 * path meets the same rules.  Device memory is a real limit there, so a
 * refusal of -ENOMEM that says why is one more refusal.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu/npu.h"
#include "npu/onnx.h"

#define RUN_BYTES_MAX	(16u << 20)
#define RUN_MACS_MAX	(1u << 24)
/*
 * The CPU path's work limit per op for that run (npu_cpu_limits): well
 * below the default, so that an op it accepts must finish far inside
 * -timeout unless its work units understate its cost.
 */
#define RUN_WORK_MAX	(1ull << 26)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool verbose;
static struct npu_device *dev;
static struct npu_context *ctx;

static void bug(const char *what, const char *msg)
{
	fprintf(stderr, "fuzz-onnx: BUG: %s: %s\n", what, msg);
	abort();
}

/* A refusal must say why, and not blame memory that never ran out. */
static void refused(const char *what, int ret, const char *msg)
{
	if (!msg[0])
		bug(what, "failed without a message");
	if (ret == -ENOMEM && !ctx) {
		char why[640];

		snprintf(why, sizeof(why), "-ENOMEM, but no allocation failed (%s)", msg);
		bug(what, why);
	}
	if (verbose)
		fprintf(stderr, "fuzz-onnx: refused: %s\n", msg);
}

static void run_small(struct npu_onnx_model *m, struct npu_runtime *rt)
{
	size_t n_in = npu_onnx_num_inputs(m), n_out = npu_onnx_num_outputs(m), i;
	size_t total = n_in + n_out;
	uint64_t bytes = npu_runtime_arena_bytes(rt) + npu_runtime_static_bytes(rt), macs = 0;
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	uint32_t *ids;
	void **bufs;
	int ret;

	lim.max_work = RUN_WORK_MAX;
	for (i = 0; i < npu_runtime_num_nodes(rt); i++) {
		struct npu_node_profile p = NPU_NODE_PROFILE_INIT;

		if (npu_runtime_node_profile(rt, (uint32_t)i, &p))
			bug("profile", "a node index below num_nodes was refused");
		macs += p.macs;
	}
	ids = calloc(total + 1, sizeof(*ids));
	bufs = calloc(total + 1, sizeof(*bufs));
	if (!ids || !bufs)
		goto out;
	for (i = 0; i < total; i++) {
		struct npu_onnx_io io;

		if (i < n_in ? npu_onnx_input(m, i, &io) : npu_onnx_output(m, i - n_in, &io))
			bug("io", "an index below the count was refused");
		ids[i] = io.value;
		bytes += npu_runtime_value_bytes(rt, io.value);
	}
	if (bytes > RUN_BYTES_MAX || macs > RUN_MACS_MAX)
		goto out;
	for (i = 0; i < total; i++) {
		bufs[i] = calloc(1, npu_runtime_value_bytes(rt, ids[i]) + 1);
		if (!bufs[i])
			goto out;
	}
	ret = npu_runtime_setup(rt, total, ids, bufs);
	if (ret)
		bug("setup", npu_strerror(ret));
	ret = npu_runtime_set_cpu_limits(rt, &lim);
	if (ret)
		bug("set_cpu_limits", npu_strerror(ret));
	ret = npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE);
	/*
	 * An op past the CPU path's work or byte limits is refused before it
	 * runs; a CPU kernel refuses data it has no result for (an integer
	 * Mod by zero, an index out of range): both must say why.
	 */
	if (ret == -E2BIG || ret == -EDOM || ret == -ERANGE || ret == -EINVAL)
		refused("run", ret, npu_runtime_error(rt));
	else if (ret)
		bug("run of a compiled graph", npu_strerror(ret));
out:
	for (i = 0; bufs && i < total; i++)
		free(bufs[i]);
	free(bufs);
	free(ids);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *v = getenv("FUZZ_ONNX_VERBOSE"), *d = getenv("FUZZ_ONNX_DEVICE");
	int ret;

	(void)argc;
	(void)argv;
	verbose = v && *v && strcmp(v, "0");
	if (d && *d) {
		ret = npu_device_open((uint32_t)strtoul(d, NULL, 10), &dev);
		if (!ret)
			ret = npu_context_create(dev, &ctx);
		if (ret) {
			fprintf(stderr, "fuzz-onnx: device %s: %s\n", d, npu_strerror(ret));
			exit(1);
		}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npu_onnx_options opts = { .unbound_dims_are_one = 1 };
	struct npu_onnx_model *m = NULL;
	struct npu_runtime *rt = NULL;
	char err[512];
	int ret;

	err[0] = 0;
	ret = npu_onnx_load(data, size, &opts, &m, err, sizeof(err));
	if (ret) {
		if (m)
			bug("load", "failed but returned a model");
		refused("load", ret, err);
		return 0;
	}
	ret = npu_graph_compile(npu_onnx_graph(m), ctx, 0, &rt);
	if (ret) {
		refused("compile", ret, npu_graph_error(npu_onnx_graph(m)));
	} else {
		run_small(m, rt);
		npu_runtime_free(rt);
	}
	npu_onnx_free(m);
	return 0;
}
