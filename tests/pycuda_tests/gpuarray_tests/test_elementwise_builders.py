"""PyCUDA's module builders of pycuda.elementwise (get_elwise_module and its kin): their
sources compile (NVRTC, no GPU needed) with the loop's parameters where PyCUDA puts them."""

from __future__ import annotations

import numpy as np
import pytest

from pyctk import elementwise
from pyctk._pycuda.gpuarrays import elementwise as _elementwise
from pyctk.compiler import compile


@pytest.fixture
def built(monkeypatch):
    """The sources the builders hand SourceModule, compiled to PTX here instead of loaded."""
    sources = []

    class Compiled:
        def __init__(self, source, options=None, keep=False, no_extern_c=False):
            assert no_extern_c
            self.ptx = compile(source, options=options, no_extern_c=True, arch="sm_80", target="ptx")
            sources.append(source)

        def get_function(self, name):
            assert f".entry {name}".encode() in self.ptx
            return Prepared(name)

    class Prepared:
        def __init__(self, name):
            self.name = name

        def prepare(self, codes):
            self.codes = codes

    monkeypatch.setattr(_elementwise, "SourceModule", Compiled)
    return sources


def test_get_elwise_module_takes_n_from_the_arguments(built):
    arguments = [elementwise.VectorArg(np.float32, "x"), elementwise.ScalarArg(np.uintp, "n")]
    elementwise.get_elwise_module(arguments, "x[i] *= two", "scale", loop_prep="const float two = 2")
    (source,) = built
    assert 'extern "C" __global__ void scale(float *x, unsigned long n)' in source
    assert "const float two = 2;" in source


def test_get_elwise_range_module_loops_from_start_to_stop_by_step(built):
    arguments = "float *x, long start, long stop, long step"
    elementwise.get_elwise_range_module(arguments, "x[i] = i", "fill")
    (source,) = built
    assert "void fill(float *x, long start, long stop, long step)" in source
    assert "step < 0 ? i > stop : i < stop" in source


@pytest.mark.parametrize(
    ("use_range", "codes", "parameters"),
    [(False, "fPL", "(float a, float *x, unsigned long n)"), (True, "fPlll", "(float a, float *x, long start")],
)
def test_get_elwise_kernel_and_types_adds_the_loops_arguments_and_prepares(built, use_range, codes, parameters):
    module, function, arguments = elementwise.get_elwise_kernel_and_types(
        "float a, float *x", "x[i] *= a", "scale", use_range=use_range
    )
    assert [argument.name for argument in arguments][-1] == ("step" if use_range else "n")
    assert function.name == "scale" and function.codes == codes
    assert parameters in built[0]
    assert elementwise.get_elwise_kernel("float a, float *x", "x[i] *= a", "scale").codes == "fPL"
