# SPDX-License-Identifier: MIT
"""The BlazeFace example of Documentation/python.rst, run as the script it
is (its first python code block), on the astronaut image's prepared input
against onnxruntime's outputs; and the same comparison in-process."""
import os
import pathlib
import re
import subprocess
import sys

import numpy as np

import npu
from conftest import BLAZEFACE_REF

DOC = pathlib.Path(os.environ.get("NPU_PY_DOC", pathlib.Path(__file__).parents[2] /
                                  "Documentation/python.rst"))


def example_script():
    """The first '.. code-block:: python' block, de-indented."""
    lines, on = [], False
    for line in DOC.read_text().splitlines():
        if line.startswith(".. code-block:: python"):
            on = True
            continue
        if on and line and not line[0].isspace():
            break
        if on:
            lines.append(line[4:])
    return "\n".join(lines).strip() + "\n"


def test_documentation_example(blazeface, tmp_path):
    script = tmp_path / "blazeface.py"
    script.write_text(example_script())
    p = subprocess.run([sys.executable, str(script), str(blazeface),
                        str(BLAZEFACE_REF / "in/input_0.npy"), str(BLAZEFACE_REF / "out")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    print(p.stdout)
    assert p.returncode == 0
    assert re.search(r"^blazeface-front PASS \(4 outputs, max abs diff [0-9.e-]+, on (the CPU|accel\d+)\)$",
                     p.stdout, re.M)


def test_blazeface_matches_onnxruntime(blazeface):
    m = npu.Model(blazeface, cpu=True)
    x = np.load(BLAZEFACE_REF / "in/input_0.npy")
    out = m.run({m.inputs[0].name: x})
    assert len(out) == 4
    for o in m.outputs:
        ref = np.load(BLAZEFACE_REF / "out" / (o.name.replace(":", "_") + ".npy"))
        atol = 1e-3 * max(1.0, float(np.abs(ref).max()))
        np.testing.assert_allclose(out[o.name], ref, rtol=1e-3, atol=atol, err_msg=o.name)
