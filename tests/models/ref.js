// SPDX-License-Identifier: MIT
//
// Reference outputs from onnxruntime-node:
//   node ref.js MODEL.onnx IN_DIR OUT_DIR [LEVEL]
// feeds every model input from IN_DIR/<name>.npy and writes every output to
// OUT_DIR/<name>.npy (names with characters outside [A-Za-z0-9._-] replaced
// by '_', as vnpu-models and npu-run name them).  One thread and no graph
// rewrites at all, so the references do not depend on the machine that
// computed them and each node is computed as the model writes it.
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
	// Copy into an aligned buffer: the data offset need not be aligned.
	const arr = new Ctor(count);
	new Uint8Array(arr.buffer).set(data);
	return new ort.Tensor(type === 'bool' ? 'bool' : type, arr, dims);
}

function saveNpy(file, tensor) {
	const descr = Object.keys(DTYPES).find((d) => DTYPES[d][0] === tensor.type);
	if (!descr)
		throw new Error(`output type ${tensor.type} not supported`);
	const dims = tensor.dims;
	const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
	let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
	const total = Math.ceil((10 + header.length + 1) / 64) * 64;
	header = header.padEnd(total - 10 - 1, ' ') + '\n';
	const pre = Buffer.alloc(10);
	pre.write('\x93NUMPY', 0, 'latin1');
	pre[6] = 1;
	pre[7] = 0;
	pre.writeUInt16LE(header.length, 8);
	const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
	const tmp = `${file}.tmp`;
	fs.writeFileSync(tmp, Buffer.concat([pre, Buffer.from(header, 'latin1'), data]));
	fs.renameSync(tmp, file);
}

async function main() {
	const [model, inDir, outDir, level = 'disabled'] = process.argv.slice(2);
	if (!outDir || !['disabled', 'basic', 'extended', 'all'].includes(level)) {
		console.error('usage: node ref.js MODEL.onnx IN_DIR OUT_DIR [disabled|basic|extended|all]');
		process.exit(2);
	}
	const session = await ort.InferenceSession.create(model, {
		intraOpNumThreads: 1,
		interOpNumThreads: 1,
		executionMode: 'sequential',
		// 'disabled', not 'basic': basic's fusions (Conv with a following
		// BatchNormalization, Mul or Add) fold constants into the weights,
		// which rounds differently from the nodes as written; only disabled
		// leaves every node to its own kernel.  onnxruntime-node's default
		// is 'all', which adds layout changes and fusions chosen per CPU.
		// Quantized (QDQ) models take 'extended': that is where onnxruntime
		// fuses DequantizeLinear -> Conv -> QuantizeLinear into QLinearConv
		// (integer arithmetic, what its users run); 'disabled' would run
		// the float Conv between them and round differently.
		graphOptimizationLevel: level,
		logSeverityLevel: 3,
	});
	const feeds = {};
	for (const name of session.inputNames)
		feeds[name] = loadNpy(path.join(inDir, fileName(name)));
	const results = await session.run(feeds);
	fs.mkdirSync(outDir, { recursive: true });
	for (const name of session.outputNames)
		saveNpy(path.join(outDir, fileName(name)), results[name]);
}

main().catch((e) => {
	console.error(`ref.js: ${e.message}`);
	process.exit(1);
});
