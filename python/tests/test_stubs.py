# SPDX-License-Identifier: MIT
"""npu/__init__.pyi describes the module as it is: the same public names,
the same members of each class."""
import ast
import inspect
import pathlib

import npu

STUB = pathlib.Path(npu.__file__).with_suffix(".pyi")


def stub_tree():
    return ast.parse(STUB.read_text())


def test_stub_names_are_the_modules():
    tree = stub_tree()
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    names |= {t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    assert set(npu.__all__) <= names
    for name in names & set(npu.__all__):
        assert hasattr(npu, name), name


def test_stub_members_exist():
    for cls in (n for n in stub_tree().body if isinstance(n, ast.ClassDef)):
        real = getattr(npu, cls.name)
        for member in cls.body:
            if isinstance(member, ast.FunctionDef) and not member.name.startswith("__"):
                assert hasattr(real, member.name), "%s.%s" % (cls.name, member.name)
            if isinstance(member, ast.AnnAssign):
                assert hasattr(real, member.target.id), "%s.%s" % (cls.name, member.target.id)


def test_every_public_callable_has_a_docstring():
    for name in npu.__all__:
        obj = getattr(npu, name)
        if inspect.isclass(obj) or callable(obj):
            assert (obj.__doc__ or "").strip(), name
            for attr, member in vars(obj).items() if inspect.isclass(obj) else ():
                if not attr.startswith("_") and callable(member):
                    assert (member.__doc__ or "").strip(), "%s.%s" % (name, attr)
