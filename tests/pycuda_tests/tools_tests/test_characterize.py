"""pyctk.characterize without a GPU: PyCUDA's names, the platform's bits, bad arguments."""

import struct

import pytest

from pyctk import characterize


def test_pycudas_names_are_there():
    assert characterize.__all__ == ["has_double_support", "has_stack", "platform_bits", "sizeof"]
    from pyctk.characterize import has_double_support, has_stack, platform_bits, sizeof  # noqa: F401


def test_platform_bits_are_a_pointers():
    assert characterize.platform_bits() == 8 * struct.calcsize("P") == 64


@pytest.mark.parametrize("arguments", [(5,), ("int", 3), (b"int",)])
def test_sizeof_takes_strings_and_says_so_before_any_gpu_work(arguments):
    with pytest.raises(TypeError, match="sizeof takes a C type's name and a preamble as str"):
        characterize.sizeof(*arguments)
