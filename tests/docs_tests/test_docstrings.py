"""Every public name of every public module has a docstring of its own, which the API
reference (docs/reference/) renders: a class, function or module without one would be a
blank page."""

from __future__ import annotations

import importlib
import inspect

import pytest

PUBLIC = [
    "pyctk",
    "pyctk.driver",
    "pyctk.compiler",
    "pyctk.gpuarray",
    "pyctk.cumath",
    "pyctk.elementwise",
    "pyctk.reduction",
    "pyctk.scan",
    "pyctk.curandom",
    "pyctk.tools",
    "pyctk.dask",
]


def public_names(module) -> list[str]:
    return list(getattr(module, "__all__", [n for n in dir(module) if not n.startswith("_")]))


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_has_a_docstring(name):
    try:
        module = importlib.import_module(name)
    except ImportError as error:
        if (error.name or "").partition(".")[0] in ("dask", "distributed"):
            pytest.skip(f"{name} needs {error.name}, which is not installed")
        raise
    assert inspect.getdoc(module), f"{name} has no module docstring"
    missing = []
    for attribute in public_names(module):
        value = getattr(module, attribute)
        if not (inspect.isclass(value) or inspect.isfunction(value) or inspect.ismethod(value)):
            continue  # constants and instances: their page says what they are
        doc = value.__doc__
        inherited = inspect.isclass(value) and doc == getattr(value.__mro__[1], "__doc__", None)
        if not doc or not doc.strip() or inherited:
            missing.append(attribute)
    assert not missing, f"{name}: no docstring of their own: {missing}"
