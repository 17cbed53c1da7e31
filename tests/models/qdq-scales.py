#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The quantization step of each output of a QDQ model.

    qdq-scales.py MODEL.onnx OUTDIR

writes OUTDIR/<output>.scale (named as ref.js names the output's .npy)
holding the scale of the DequantizeLinear that produces the output, for
`vnpu-models compare-q`, which counts differences in these steps.  An
output a float op produces (a node npu-quantize was told to leave float)
gets no .scale: it is compared as the fp32 models' outputs are.  Reads the
model with Debian's python3-onnx.
"""
import os
import re
import sys

import onnx
from onnx import numpy_helper


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: qdq-scales.py MODEL.onnx OUTDIR')
    graph = onnx.load(sys.argv[1]).graph
    producer = {out: node for node in graph.node for out in node.output}
    consts = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    for node in graph.node:
        if node.op_type == 'Constant':
            consts[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    for out in graph.output:
        node = producer.get(out.name)
        if node is None or node.op_type != 'DequantizeLinear':
            continue
        scale = consts.get(node.input[1])
        if scale is None or scale.size != 1:
            sys.exit(f'qdq-scales.py: {sys.argv[1]}: output {out.name} comes from a '
                     'DequantizeLinear without one constant scale')
        name = re.sub(r'[^A-Za-z0-9._-]', '_', out.name)
        with open(os.path.join(sys.argv[2], name + '.scale'), 'w', encoding='ascii') as f:
            f.write(f'{float(scale.reshape(())):.9g}\n')


if __name__ == '__main__':
    main()
