#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks of npu-quantize's output against onnxruntime's quantize_static QDQ
# layout, by reading the .onnx with a small protobuf decoder (no onnx or
# numpy module needed).  The expected scales, zero points and quantized
# weights are computed here from onnxruntime's formulas (quant_utils.py:
# compute_scale_zp, quantize_nparray; base_quantizer.py: per-channel
# weights, int32 bias divided in float64), with float32 rounding done
# through struct.
#
#   quantize-check.py CHECK MODEL.onnx [ARGS...]
#
# CHECK main FP32.onnx SAMPLE_DIR ACT(int8|uint8) PER(channel|tensor) METHOD [P [reduce]]
#   the generated "main" model (gen-quantize-onnx.py) quantized; x's scale
#   and zero point recomputed from the samples for minmax and percentile
# CHECK float NODE INPUT...: node NODE is there and reads INPUT... (float)
# CHECK bn MODEL folded|unfolded: the "bn" model quantized, with or without
#   --fuse-conv (BatchNormalization, Mul and Add folded into the Conv): its
#   Constant weight quantized as a weight
# CHECK compare REF_DIR A_DIR B_DIR MIN_SQNR: MODEL's outputs as runtimes A
#   and B computed them have an SQNR of at least MIN_SQNR dB against REF's
#   (fp32); how many output steps A and B differ by is printed
# Exits 0 when every check holds, else prints what differs and exits 1.
import glob, math, os, re, struct, sys

sys.dont_write_bytecode = True


def fields(buf):
    """A protobuf message as [(field, wire, value)]."""
    out, i = [], 0
    while i < len(buf):
        key, i = varint(buf, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(buf, i)
        elif w == 1:
            v, i = buf[i:i + 8], i + 8
        elif w == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif w == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError('wire type %d' % w)
        out.append((f, w, v))
    return out


def varint(buf, i):
    r = s = 0
    while True:
        b = buf[i]
        i += 1
        r |= (b & 0x7f) << s
        s += 7
        if not b & 0x80:
            return r, i


def get(msg, f):
    return [v for (k, _, v) in msg if k == f]


def one(msg, f, default=None):
    v = get(msg, f)
    return v[-1] if v else default


def sint(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def packed_ints(msg, f):
    vals = []
    for (k, w, v) in msg:
        if k != f:
            continue
        if w == 0:
            vals.append(sint(v))
        else:
            i = 0
            while i < len(v):
                x, i = varint(v, i)
                vals.append(sint(x))
    return vals


class Tensor:
    FMT = {1: 'f', 2: 'B', 3: 'b', 6: 'i', 7: 'q'}

    def __init__(self, buf):
        m = fields(buf)
        self.name = one(m, 8, b'').decode()
        self.dims = packed_ints(m, 1)
        self.dtype = one(m, 2, 0)
        raw = one(m, 9, b'')
        n = 1
        for d in self.dims:
            n *= d
        fmt = self.FMT[self.dtype]
        self.vals = list(struct.unpack('<%d%s' % (n, fmt), raw)) if raw or not n else None


class Node:
    def __init__(self, buf):
        m = fields(buf)
        self.inputs = [v.decode() for v in get(m, 1)]
        self.outputs = [v.decode() for v in get(m, 2)]
        self.name = one(m, 3, b'').decode()
        self.op = one(m, 4, b'').decode()
        self.attrs = {}
        for a in get(m, 5):
            am = fields(a)
            self.attrs[one(am, 1).decode()] = one(am, 3)


class Model:
    def __init__(self, path):
        m = fields(open(path, 'rb').read())
        self.opset = {one(fields(o), 1, b'').decode(): one(fields(o), 2) for o in get(m, 8)}
        g = fields(one(m, 7))
        self.nodes = [Node(n) for n in get(g, 1)]
        self.inits = {t.name: t for t in (Tensor(b) for b in get(g, 5))}

        def vi(b):
            f = fields(b)
            tt = fields(one(fields(one(f, 2)), 1))
            return one(f, 1).decode(), one(tt, 1)
        self.inputs = [vi(b) for b in get(g, 11)]
        self.outputs = [vi(b) for b in get(g, 12)]

    def node(self, name):
        got = [n for n in self.nodes if n.name == name]
        return got[0] if got else None

    def producer(self, tensor):
        got = [n for n in self.nodes if tensor in n.outputs]
        return got[0] if got else None


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def np_round(x):
    """numpy.round: half to even."""
    return float(round(x))


def compute_scale_zp(rmin, rmax, qmin, qmax, symmetric):
    """quant_utils.compute_scale_zp with float32 bounds, returns (zp, scale)."""
    rmin, rmax = f32(min(rmin, 0.0)), f32(max(rmax, 0.0))
    if symmetric:
        m = max(abs(rmin), abs(rmax))
        rmin, rmax = -m, m
    dr = f32(rmax - rmin)
    scale = dr / (float(qmax) - float(qmin))
    if scale < 1.1754943508222875e-38:
        return 0, 1.0
    if symmetric:
        return int(np_round((qmin + qmax) / 2.0)), f32(scale)
    return int(np_round(qmin - rmin / scale)), f32(scale)


def quantize(vals, scale, zp, lo, hi):
    """quantize_nparray: float32 division, round half to even, clip."""
    return [int(min(max(np_round(f32(f32(v) / scale)) + zp, lo), hi)) for v in vals]


def load_npy(path):
    b = open(path, 'rb').read()
    hl = struct.unpack('<H', b[8:10])[0]
    n = (len(b) - 10 - hl) // 4
    return list(struct.unpack('<%df' % n, b[10 + hl:]))


errors = []
# channels of weights whose scale the bias raised (check_weight)
raised = []


def expect(cond, what):
    if not cond:
        errors.append(what)


def bias_floor(fp, bias, in_scale, channels):
    """onnxruntime's smallest bias scale (_adjust_weight_scale_for_int32_bias):
    1.0001 x the bias's range over int32's symmetric range, in float64, per
    channel or over the whole bias."""
    if bias is None:
        return None
    qrange = float(2**31 - 1) - float(-2**31 + 1)
    b = [abs(v) for v in fp.inits[bias].vals]
    if channels > 1:
        return [1.0001 * 2.0 * v / qrange for v in b]
    return [1.0001 * 2.0 * max(b + [0.0]) / qrange]


def check_weight(q, fp, name, axis, reduce=False, bias=None, in_scale=None):
    w = fp.inits[name]
    qt, sc, zp = (q.inits.get(name + s) for s in ('_quantized', '_scale', '_zero_point'))
    expect(name not in q.inits, '%s: the float weight is still there' % name)
    if not (qt and sc and zp):
        errors.append('%s: no %s_quantized/_scale/_zero_point' % (name, name))
        return None
    expect(qt.dtype == 3 and qt.dims == w.dims, '%s_quantized is not int8 %s' % (name, w.dims))
    dq = q.node(name + '_DequantizeLinear')
    expect(dq and dq.op == 'DequantizeLinear' and
           dq.inputs == [name + '_quantized', name + '_scale', name + '_zero_point'] and
           dq.outputs == [name + '_DequantizeLinear_Output'],
           '%s_DequantizeLinear: wrong node' % name)
    expect(not any(n.op == 'QuantizeLinear' and n.inputs[0] == name for n in q.nodes),
           '%s has a QuantizeLinear' % name)
    # channel c's values: take(c, axis)
    if axis is None:
        groups = [list(range(len(w.vals)))]
        expect(sc.dims == [] and zp.dims == [], '%s: per-tensor scale is not a scalar' % name)
        expect(not dq or 'axis' not in dq.attrs, '%s: per-tensor DequantizeLinear has an axis' % name)
    else:
        inner = 1
        for d in w.dims[axis + 1:]:
            inner *= w.dims[axis + 1:] and d or 1
        c_n = w.dims[axis]
        groups = [[i for i in range(len(w.vals)) if (i // inner) % c_n == c] for c in range(c_n)]
        expect(sc.dims == [c_n] and zp.dims == [c_n], '%s: scale/zero point are not [%d]' % (name, c_n))
        expect(dq and dq.attrs.get('axis') == axis, '%s_DequantizeLinear: axis is not %d' % (name, axis))
    scales = []
    for c, idx in enumerate(groups):
        vals = [w.vals[i] for i in idx]
        # reduce_range: ONNX_INT_TYPE_REDUCED_RANGE, for per-channel weights
        lo, hi = (-64, 64) if reduce and axis is not None else (-127, 127)
        z, s = compute_scale_zp(min(vals), max(vals), lo, hi, True)
        floor = bias_floor(fp, bias, in_scale, len(groups))
        if floor and 0.0 < in_scale * s < floor[c]:
            # the weight's scale raised so that the bias fits in int32
            s = f32(floor[c] / in_scale)
            raised.append(c)
        scales.append(s)
        expect(sc.vals[c] == s, '%s: scale %d is %r, onnxruntime %r' % (name, c, sc.vals[c], s))
        expect(zp.vals[c] == z == 0, '%s: zero point %d is %r' % (name, c, zp.vals[c]))
        got = [qt.vals[i] for i in idx]
        want = quantize(vals, s, z, -128, 127)
        expect(got == want, '%s: channel %d quantized differently (first at %s)' %
               (name, c, next((k for k in range(len(got)) if got[k] != want[k]), None)))
    return scales


def check_bias(q, fp, name, in_scale, w_scales, per_channel):
    b = fp.inits[name]
    qt, sc, zp = (q.inits.get(name + s) for s in ('_quantized', '_quantized_scale', '_quantized_zero_point'))
    if not (qt and sc and zp):
        errors.append('%s: no %s_quantized/_quantized_scale/_quantized_zero_point' % (name, name))
        return
    expect(name not in q.inits, '%s: the float bias is still there' % name)
    expect(qt.dtype == 6 and zp.dtype == 6, '%s: not int32' % name)
    dq = q.node(name + '_DequantizeLinear')
    expect(dq and dq.outputs == [name] and dq.inputs == [name + '_quantized', name + '_quantized_scale',
                                                          name + '_quantized_zero_point'],
           '%s_DequantizeLinear: wrong node' % name)
    for k, v in enumerate(b.vals):
        s = f32(in_scale * w_scales[k if per_channel else 0])
        expect(sc.vals[k if per_channel else 0] == s, '%s: scale %d is %r, not %r' % (name, k, sc.vals[k if per_channel else 0], s))
        # divided in float64 (quantize_bias_static_impl)
        expect(qt.vals[k] == int(np_round(v / s)), '%s[%d] quantized differently' % (name, k))
    expect(all(z == 0 for z in zp.vals), '%s: zero point not 0' % name)
    ns = len(w_scales) if per_channel else 1
    expect(sc.dims == [ns] and zp.dims == [ns], '%s: scale %r and zero point %r are not [%d]' %
           (name, sc.dims, zp.dims, ns))
    expect(not dq or dq.attrs.get('axis') == (0 if ns > 1 else None),
           '%s_DequantizeLinear: axis %r' % (name, dq and dq.attrs.get('axis')))


def check_act(q, t, consumers, act):
    qn, dqn = q.node(t + '_QuantizeLinear'), q.node(t + '_DequantizeLinear')
    if not (qn and dqn):
        errors.append('%s: no %s_QuantizeLinear/_DequantizeLinear pair' % (t, t))
        return
    expect(qn.outputs == [t + '_QuantizeLinear_Output'] and dqn.inputs[0] == qn.outputs[0] and
           qn.inputs[1:] == dqn.inputs[1:], '%s: Q/DQ pair is not wired as onnxruntime wires it' % t)
    zp = q.inits.get(qn.inputs[2])
    expect(zp and zp.dims == [] and zp.dtype == (3 if act == 'int8' else 2),
           '%s: zero point is not a scalar %s' % (t, act))
    for c in consumers:
        n = q.node(c)
        expect(n and dqn.outputs[0] in n.inputs, '%s does not read %s' % (c, dqn.outputs[0]))


def percentile_range(xs, percentile, nbins=2048):
    """PercentileCalibrater's symmetric range of @xs (calibrate.py), with
    np.histogram's float32 edges and bins."""
    a = [abs(v) for v in xs]
    lo, hi = min(a), max(a)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    step = (hi - lo) / nbins
    edges = [f32(i * step + lo) for i in range(nbins)] + [hi]
    hist = [0] * nbins
    span = f32(hi - lo)
    for v in a:
        i = int(f32(f32(f32(v - lo) / span) * nbins))
        i = min(i, nbins - 1)
        if v < edges[i]:
            i -= 1
        if i != nbins - 1 and v >= edges[i + 1]:
            i += 1
        hist[i] += 1
    cdf, idx = 0.0, nbins
    for i, h in enumerate(hist):
        cdf += h / len(a)
        if cdf >= percentile / 100.0:
            idx = i
            break
    e = edges[idx]
    return max(-e, min(xs)), min(e, max(xs))


def check_main(q, fp, sdir, act, per, method, percentile, reduce=False, quiet=False):
    pc = per == 'channel'
    expect(q.opset.get('', q.opset.get('ai.onnx')) == (13 if pc else 12),
           'opset %r' % q.opset)
    # graph inputs and outputs stay float
    expect([i for i in q.inputs] == [('x', 1)], 'inputs %r' % q.inputs)
    expect(sorted(q.outputs) == [('g', 1), ('out', 1)], 'outputs %r' % q.outputs)
    # topological order
    seen = set(q.inits) | {'x', ''}
    for n in q.nodes:
        expect(all(i in seen for i in n.inputs), 'node %s reads a tensor not yet computed' % n.name)
        seen |= set(n.outputs)
    # the Relu is folded into the Conv's output quantization
    expect(not q.node('relu') and q.producer('r') and q.producer('r').name == 'conv',
           'relu is not folded into conv')
    qmin, qmax = (-128, 127) if act == 'int8' else (0, 255)
    # x's parameters from the samples, as onnxruntime's MinMax computes them
    xs = [v for f in sorted(glob.glob(os.path.join(sdir, '*', 'x.npy'))) for v in load_npy(f)]
    xsc, xzp = q.inits.get('x_scale'), q.inits.get('x_zero_point')
    if method != 'entropy':
        lo, hi = (min(xs), max(xs)) if method == 'minmax' else percentile_range(xs, percentile)
        z, s = compute_scale_zp(lo, hi, qmin, qmax, False)
        expect(xsc and xsc.vals == [s] and xzp and xzp.vals == [z],
               'x scale/zero point %r %r, onnxruntime %r %r' % (xsc and xsc.vals, xzp and xzp.vals, s, z))
    check_act(q, 'x', ['conv'], act)
    check_act(q, 'r', ['add'], act)
    check_act(q, 'a', ['flat'], act)
    check_act(q, 'f', ['mm', 'gemm'], act)
    check_act(q, 'm', ['sig', 'cat'], act)
    check_act(q, 's', ['cat'], act)
    # the Reshape's output shares its input's parameters
    fq = q.node('f_QuantizeLinear')
    expect(fq and fq.inputs[1:] == ['a_scale', 'a_zero_point'], 'f does not share a\'s parameters')
    # graph outputs: the producer writes <name>_QuantizeLinear_Input
    for o, p in (('out', 'cat'), ('g', 'gemm')):
        expect(q.node(p) and q.node(p).outputs == [o + '_QuantizeLinear_Input'],
               '%s does not write %s_QuantizeLinear_Input' % (p, o))
        expect(q.node(o + '_DequantizeLinear') and q.node(o + '_DequantizeLinear').outputs == [o],
               '%s_DequantizeLinear does not write %s' % (o, o))
    fsc = q.inits['f_scale' if 'f_scale' in q.inits else 'a_scale']
    ws = check_weight(q, fp, 'W', 0 if pc else None, reduce, 'B', xsc and xsc.vals[0])
    wm = check_weight(q, fp, 'Wm', 1 if pc else None, reduce)
    wg = check_weight(q, fp, 'Wg', 0 if pc else None, reduce, 'Bg', fsc.vals[0])
    check_act(q, 'c', [], act) if q.node('c_QuantizeLinear') else None
    # Add's constant is quantized like a weight, with the activation type
    k = q.inits.get('K_quantized')
    expect(k and k.dtype == (3 if act == 'int8' else 2), 'K is not quantized as %s' % act)
    if ws:
        check_bias(q, fp, 'B', xsc.vals[0], ws, pc)
    if wg:
        check_bias(q, fp, 'Bg', fsc.vals[0], wg, pc)
    # a near-silent input (the 'quiet' samples) must raise weight scales;
    # ordinary samples must not
    expect(bool(raised) == quiet, 'weight scales raised for the bias: %r' % raised)
    expect('shape' in q.inits and q.inits['shape'].vals == [1, 256], 'the shape initializer changed')
    del wm


def check_compare(q, ref, a, b, min_sqnr):
    for f in sorted(glob.glob(os.path.join(ref, '*.npy'))):
        name = os.path.basename(f)[:-4]
        r = load_npy(f)
        for d in (a, b):
            g = load_npy(os.path.join(d, name + '.npy'))
            noise = sum((x - y) ** 2 for x, y in zip(r, g))
            sig = sum(x * x for x in r)
            sqnr = 10 * math.log10(sig / noise) if noise else float('inf')
            print('# %s %s: SQNR %.2f dB against fp32' % (d, name, sqnr))
            expect(sqnr >= min_sqnr, '%s/%s: SQNR %.2f dB < %g' % (d, name, sqnr, min_sqnr))
        # the output went through its DequantizeLinear: a multiple of its scale
        # the graph output's DequantizeLinear gives its scale
        dq = [n for n in q.nodes if n.op == 'DequantizeLinear' and
              re.sub('[^A-Za-z0-9._-]', '_', n.outputs[0]) == name]
        if not dq:
            errors.append('output %s has no DequantizeLinear' % name)
            continue
        step = q.inits[dq[0].inputs[1]].vals[0]
        ga, gb = (load_npy(os.path.join(d, name + '.npy')) for d in (a, b))
        diff = max(abs(x - y) for x, y in zip(ga, gb))
        # how far apart the runtimes are is libnpu's business (its own
        # tests hold it to onnxruntime); here it is only said
        print('# %s: onnxruntime and libnpu differ by at most %g (%.3g steps)' % (name, diff, diff / step))


what = sys.argv[1]
if what == 'main':
    check_main(Model(sys.argv[2]), Model(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6],
               sys.argv[7], float(sys.argv[8]) if len(sys.argv) > 8 else 99.999,
               'reduce' in sys.argv[9:], 'quiet' in sys.argv[9:])
elif what == 'float':
    m = Model(sys.argv[2])
    n = m.node(sys.argv[3])
    expect(n and n.inputs == sys.argv[4:], 'node %s reads %r, not %r' %
           (sys.argv[3], n and n.inputs, sys.argv[4:]))
elif what == 'bn':
    m = Model(sys.argv[2])
    folded = sys.argv[3] == 'folded'
    ops = [n.op for n in m.nodes]
    expect('Constant' not in ops and 'W_quantized' in m.inits and 'W' not in m.inits,
           'the Constant node\'s weight is not quantized as a weight: %r' % sorted(m.inits))
    expect(all((op in ops) != folded for op in ('BatchNormalization', 'Mul', 'Add')),
           'BatchNormalization, Mul and Add nodes: %r' % ops)
    expect(('c_bias_quantized' in m.inits) == folded, 'the folded bias: %r' % sorted(m.inits))
    expect(not any(k in m.inits for k in ('gamma', 'beta', 'mean', 'var', 'two', 'shift')) == folded,
           'the normalization\'s parameters: %r' % sorted(m.inits))
elif what == 'compare':
    check_compare(Model(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6]))
for e in errors:
    print('# ' + e)
sys.exit(1 if errors else 0)
