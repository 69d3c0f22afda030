"""pyctk.matmul on GPU arrays against numpy.matmul on the same host arrays, over generated calls
(tests/support/strategies.py): DeviceArrays, PyTorch tensors and CuPy arrays of the same shapes, dtypes,
strides (tests/support/gpu_arrays.py) and contents give NumPy's values, dtypes and shapes, or NumPy's
exception types. The same comparison without a GPU is test_matmul_properties.py's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from support.gpu_arrays import LIBRARIES
from support.matmul_against_numpy import QUIET, SETTINGS, check_on_gpu
from support.strategies import MatmulCase, matmul_cases

pytestmark = pytest.mark.gpu


@pytest.fixture(params=list(LIBRARIES))
def library(request):
    if request.param != "pyctk":
        module = pytest.importorskip(request.param)
        if request.param == "torch" and not module.cuda.is_available():
            pytest.fail("PyTorch sees no GPU, but pyctk does")
    return request.param


@QUIET
@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's about a non-writable NumPy array
def test_gpu_arrays_give_numpys_result_or_exception(library):
    @settings(**SETTINGS)
    @given(case=matmul_cases(others=False))
    def check(case: MatmulCase):
        check_on_gpu(case, library)

    check()
