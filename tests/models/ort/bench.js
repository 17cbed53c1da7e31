// SPDX-License-Identifier: MIT
//
// onnxruntime-node's latency on a model, the host side of `make bench`:
//   node bench.js NAME MODEL.onnx IN_DIR ITERATIONS [THREADS]
// feeds every input from IN_DIR/<name>.npy (the preprocessed inputs the
// references and the guest's npu-run use), runs once to warm up, then
// ITERATIONS timed runs, and prints
//   onnxruntime NAME: median X ms, min X ms over N runs (T threads)
// THREADS (1 by default) intra-op threads, one inter-op thread, sequential
// execution, and onnxruntime's default graph optimisations, as a user runs
// it: scripts/bench-host-models.sh runs it with one thread per device
// engine for the ratios that are goals and with one for the informational
// ones (Documentation/bench.rst).
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const DTYPES = {
	'<f4': ['float32', Float32Array],
	'<i8': ['int64', BigInt64Array],
	'<i4': ['int32', Int32Array],
	'|u1': ['uint8', Uint8Array],
	'|i1': ['int8', Int8Array],
	'|b1': ['bool', Uint8Array],
};

function fileName(tensorName) {
	return tensorName.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy';
}

function loadNpy(file) {
	const buf = fs.readFileSync(file);
	if (buf.toString('latin1', 0, 6) !== '\x93NUMPY')
		throw new Error(`${file}: not a .npy file`);
	const major = buf[6];
	const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
	const start = major === 1 ? 10 : 12;
	const header = buf.toString('latin1', start, start + hlen);
	const descr = /'descr':\s*'([^']+)'/.exec(header);
	const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
	if (!descr || !shape || /'fortran_order':\s*True/.test(header) || !DTYPES[descr[1]])
		throw new Error(`${file}: unsupported .npy header ${header}`);
	const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
	const [type, Ctor] = DTYPES[descr[1]];
	const count = dims.reduce((a, b) => a * b, 1);
	const data = buf.subarray(start + hlen);
	if (data.length !== count * Ctor.BYTES_PER_ELEMENT)
		throw new Error(`${file}: data size does not match the shape`);
	const arr = new Ctor(count);
	new Uint8Array(arr.buffer).set(data);
	return new ort.Tensor(type, arr, dims);
}

async function main() {
	const [name, model, inDir, iters, nthreads = '1'] = process.argv.slice(2);
	const n = Number(iters);
	const threads = Number(nthreads);
	if (!inDir || !Number.isInteger(n) || n < 1 || !Number.isInteger(threads) || threads < 1) {
		console.error('usage: node bench.js NAME MODEL.onnx IN_DIR ITERATIONS [THREADS]');
		process.exit(2);
	}
	const session = await ort.InferenceSession.create(model, {
		intraOpNumThreads: threads,
		interOpNumThreads: 1,
		executionMode: 'sequential',
		logSeverityLevel: 3,
	});
	const feeds = {};
	for (const input of session.inputNames)
		feeds[input] = loadNpy(path.join(inDir, fileName(input)));
	await session.run(feeds);
	const ms = [];
	for (let i = 0; i < n; i++) {
		const t0 = process.hrtime.bigint();
		await session.run(feeds);
		ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
	}
	ms.sort((a, b) => a - b);
	// The same median npu-run reports: the upper one of an even count.
	console.log(`onnxruntime ${name}: median ${ms[Math.floor(n / 2)].toFixed(3)} ms, ` +
		`min ${ms[0].toFixed(3)} ms over ${n} runs (${threads} thread${threads === 1 ? '' : 's'})`);
}

main().catch((e) => {
	console.error(`bench.js: ${e.message}`);
	process.exit(1);
});
