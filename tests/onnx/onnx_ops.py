# SPDX-License-Identifier: MIT
"""The op types of an ONNX model, read from the protobuf wire format.

Only the handful of onnx.proto fields the conformance tools need
(ModelProto.graph, GraphProto.node/input, NodeProto.op_type/domain/name/
output/attribute, AttributeProto.g/graphs for If/Loop/Scan bodies, the
inputs' element types); python3-onnx is not a dependency.

As a script: "onnx_ops.py MODEL..." prints one line per model,
"PATH<TAB>op op ..."; "onnx_ops.py --one-per-kind DATA_ROOT < TESTS"
prints, of the tests named on stdin (paths under DATA_ROOT), the first
of each kind: the same set of ops with the same input element types.
"""
import sys

# Field numbers from onnx.proto.
MODEL_GRAPH = 7
GRAPH_NODE = 1
GRAPH_INPUT = 11
VALUE_INFO_TYPE = 2
TYPE_TENSOR = 1
TENSOR_TYPE_ELEM_TYPE = 1
NODE_OUTPUT = 2
NODE_NAME = 3
NODE_OP_TYPE = 4
NODE_ATTRIBUTE = 5
NODE_DOMAIN = 7
ATTR_GRAPH = 6
ATTR_GRAPHS = 11

WIRE_VARINT, WIRE_I64, WIRE_LEN, WIRE_I32 = 0, 1, 2, 5


def _varint(buf, i):
    value = shift = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated varint")
        c = buf[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return value, i


def fields(buf):
    """(field number, value) for every field of one message: an int for a
    varint, bytes for a length-delimited field, None for fixed-size ones."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == WIRE_VARINT:
            value, i = _varint(buf, i)
            yield field, value
        elif wire == WIRE_LEN:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise ValueError("truncated field %d" % field)
            yield field, buf[i:i + n]
            i += n
        elif wire == WIRE_I64:
            i += 8
            yield field, None
        elif wire == WIRE_I32:
            i += 4
            yield field, None
        else:
            raise ValueError("wire type %d" % wire)


def _text(v):
    return v.decode("utf-8", "replace")


def _graph_nodes(graph, out):
    for f, node in fields(graph):
        if f != GRAPH_NODE:
            continue
        op = domain = name = output = ""
        for nf, v in fields(node):
            if nf == NODE_OP_TYPE:
                op = _text(v)
            elif nf == NODE_DOMAIN:
                domain = _text(v)
            elif nf == NODE_NAME:
                name = _text(v)
            elif nf == NODE_OUTPUT and not output:
                output = _text(v)
            elif nf == NODE_ATTRIBUTE:
                for af, av in fields(v):
                    if af in (ATTR_GRAPH, ATTR_GRAPHS):
                        _graph_nodes(av, out)
        out.append((op if domain in ("", "ai.onnx") else "%s:%s" % (domain, op),
                    name or output))


def model_nodes(path):
    """(op type, label) of every node, subgraphs included, in file order.
    The label is what libnpu's importer names the graph nodes it makes
    of that node: the node's name, else its first output's."""
    with open(path, "rb") as f:
        buf = f.read()
    out = []
    for f, v in fields(buf):
        if f == MODEL_GRAPH:
            _graph_nodes(v, out)
    return out


def model_input_types(path):
    """The element type (TensorProto.DataType number, 0 when not a
    tensor) of every graph input, in order."""
    with open(path, "rb") as f:
        buf = f.read()
    out = []
    for f, graph in fields(buf):
        if f != MODEL_GRAPH:
            continue
        for gf, vi in fields(graph):
            if gf != GRAPH_INPUT:
                continue
            elem = 0
            for vf, tp in fields(vi):
                if vf != VALUE_INFO_TYPE:
                    continue
                for tf, tt in fields(tp):
                    if tf == TYPE_TENSOR:
                        for ef, ev in fields(tt):
                            if ef == TENSOR_TYPE_ELEM_TYPE:
                                elem = ev
            out.append(elem)
    return out


def model_ops(path):
    """Every node's op type, subgraphs included, in file order."""
    return [op for op, _ in model_nodes(path)]


def one_per_kind(root, tests):
    seen = set()
    for t in tests:
        path = "%s/%s/model.onnx" % (root, t)
        kind = (tuple(sorted(set(model_ops(path)))), tuple(model_input_types(path)))
        if kind not in seen:
            seen.add(kind)
            yield t


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one-per-kind"] and len(sys.argv) == 3:
        for t in one_per_kind(sys.argv[2], sys.stdin.read().split()):
            print(t)
    else:
        for p in sys.argv[1:]:
            print("%s\t%s" % (p, " ".join(model_ops(p))))
