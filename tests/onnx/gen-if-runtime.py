#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Models with an If on a condition only a run can tell, for if-runtime.sh:
#   gen-if-runtime.py KIND OUT.onnx [DIR]
# KIND select: x [4] float; cond = ReduceSum(x) > 0 (shape [1]); then
# x * 2 plus a Gather of a Shape (constant indices, folded), else x + 1.
# DIR gets pos/ and neg/, each x.npy and the y.npy numpy computes.
# shape: the branches' outputs differ in shape.  gather: the then branch
# gathers x at indices read from input i.  Those two are refused.
import os
import sys

import numpy as np
from onnx import TensorProto, helper, save

kind, out = sys.argv[1], sys.argv[2]
F = TensorProto.FLOAT
x_in = helper.make_tensor_value_info('x', F, [4])
inputs = [x_in]
two = helper.make_tensor('two', F, [], [2.0])
one = helper.make_tensor('one', F, [], [1.0])
zero = helper.make_tensor('zero', F, [], [0.0])

then_nodes = [helper.make_node('Mul', ['x', 'two'], ['t_y'])]
then_inits = [two]
else_nodes = [helper.make_node('Add', ['x', 'one'], ['e_y'])]
out_shape = [4]
if kind == 'select':
    # a Gather of a Shape: indices known at import, allowed in a branch
    then_nodes += [helper.make_node('Shape', ['x'], ['t_shape']),
                   helper.make_node('Gather', ['t_shape', 'g0'], ['t_n']),
                   helper.make_node('Reshape', ['t_y', 't_n'], ['t_out'])]
    then_inits.append(helper.make_tensor('g0', TensorProto.INT64, [1], [0]))
    then_out = 't_out'
elif kind == 'shape':
    then_nodes.append(helper.make_node('Concat', ['t_y', 't_y'], ['t_out'], axis=0))
    then_out = 't_out'
elif kind == 'gather':
    inputs.append(helper.make_tensor_value_info('i', TensorProto.INT64, [4]))
    then_nodes.append(helper.make_node('Gather', ['t_y', 'i'], ['t_out'], axis=0))
    then_out = 't_out'
else:
    sys.exit('gen-if-runtime.py: KIND is select, shape or gather')

then_g = helper.make_graph(then_nodes, 'then', [], [helper.make_tensor_value_info(then_out, F, None)],
                           then_inits)
else_g = helper.make_graph(else_nodes, 'else', [], [helper.make_tensor_value_info('e_y', F, None)],
                           [one])
nodes = [helper.make_node('ReduceSum', ['x'], ['s'], keepdims=1),
         helper.make_node('Greater', ['s', 'zero'], ['cond']),
         helper.make_node('If', ['cond'], ['y'], then_branch=then_g, else_branch=else_g)]
g = helper.make_graph(nodes, kind, inputs, [helper.make_tensor_value_info('y', F, None)], [zero])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
m.ir_version = 8
save(m, out)

if len(sys.argv) > 3:
    for name, x in (('pos', [1.0, 2.0, -3.0, 0.75]), ('neg', [1.0, -2.0, -3.0, 0.75])):
        d = os.path.join(sys.argv[3], name)
        os.makedirs(d, exist_ok=True)
        x = np.array(x, np.float32)
        np.save(os.path.join(d, 'x.npy'), x)
        np.save(os.path.join(d, 'y.npy'), x * 2 if x.sum() > 0 else x + 1)
