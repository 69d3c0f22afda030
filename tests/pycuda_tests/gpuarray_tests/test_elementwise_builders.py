"""PyCUDA's module builders of pycuda.elementwise (get_elwise_module and its kin): their
sources compile (NVRTC, no GPU needed) with the loop's parameters where PyCUDA puts them."""

from __future__ import annotations

import numpy as np
import pytest

from pyctk import elementwise
from support import elementwise_modules


@pytest.fixture
def built(monkeypatch):
    """The sources the builders hand SourceModule, compiled to PTX here instead of loaded."""
    return elementwise_modules.install(monkeypatch)


def test_get_elwise_module_takes_n_from_the_arguments(built):
    arguments = [elementwise.VectorArg(np.float32, "x"), elementwise.ScalarArg(np.uintp, "n")]
    elementwise.get_elwise_module(arguments, "x[i] *= two", "scale", loop_prep="const float two = 2")
    (source,) = built
    assert 'extern "C" __global__ void scale(float *x, unsigned long n)' in source
    assert "const float two = 2;" in source


def test_get_elwise_range_module_loops_from_start_to_stop_by_step(built):
    arguments = "float *x, long start, long stop, long step"
    elementwise.get_elwise_range_module(arguments, "x[i] = i", "fill")
    elementwise.get_elwise_module(arguments, "x[i] = i", "fill", use_range=True)
    range_source, module_source = built
    assert "void fill(float *x, long start, long stop, long step)" in range_source
    assert "step < 0 ? i > stop : i < stop" in range_source
    assert module_source == range_source  # one builder: get_elwise_range_module is use_range=True


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
