"""pyctk.characterize on a GPU: the features every GPU CUDA 12 runs has, device-side sizeof."""

import pytest

from pyctk import characterize, driver

pytestmark = pytest.mark.gpu


@pytest.fixture
def context():
    """The primary context of device 0, current for the test (pushed, popped after)."""
    context = driver.Device(0).retain_primary_context()
    context.push()
    yield context
    driver.Context.pop()
    context.detach()


def test_every_gpu_has_doubles_and_a_stack(context):
    assert characterize.has_double_support() is True
    assert characterize.has_stack() is True


@pytest.mark.parametrize(
    ("type_name", "preamble", "size"),
    [
        ("char", "", 1),
        ("double2", "", 16),
        ("long", "", 8),
        ("void *", "", 8),
        ("struct pair", "struct pair { int a; char b; };", 8),
        ("struct wide", "struct __align__(32) wide { float x; };", 32),
    ],
)
def test_sizeof_is_the_device_compilers(context, type_name, preamble, size):
    assert characterize.sizeof(type_name, preamble) == size
    assert characterize.sizeof(type_name, preamble) == size  # kept: the same answer


def test_sizeof_of_an_unknown_type_is_a_compile_error(context):
    from pyctk.compiler import CompileError

    with pytest.raises(CompileError, match="no_such_type"):
        characterize.sizeof("no_such_type")
