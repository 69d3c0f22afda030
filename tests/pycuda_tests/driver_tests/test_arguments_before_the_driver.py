"""The arguments of pyctk.driver's devices, init, memory and compiler functions are checked
before any CUDA call: Python's exceptions naming the argument, on a machine without a GPU too."""

import pytest

from pyctk import compiler, driver

ALLOCATIONS = {
    "mem_alloc": lambda size: driver.mem_alloc(size),
    "mem_alloc_ipc": lambda size: driver.mem_alloc_ipc(size),
    "mem_alloc_pitch width": lambda size: driver.mem_alloc_pitch(size, 1, 4),
    "mem_alloc_pitch height": lambda size: driver.mem_alloc_pitch(4, size, 4),
}


@pytest.mark.parametrize("allocation", ALLOCATIONS)
@pytest.mark.parametrize(
    ("size", "error", "words"),
    [
        (1.5, TypeError, "must be an int number of bytes, not float (1.5): convert it first"),
        ("16", TypeError, "must be an int number of bytes, not str ('16'): convert it first"),
        (True, TypeError, "must be an int number of bytes, not bool (True)"),
        (None, TypeError, "must be an int number of bytes, not NoneType"),
        (-1, ValueError, "is -1 bytes: it must be"),
        (2**70, MemoryError, f"is {2**70} bytes: more than a 64-bit address space holds"),
    ],
)
def test_sizes_are_checked_before_any_cuda_call(allocation, size, error, words):
    with pytest.raises(error) as raised:
        ALLOCATIONS[allocation](size)
    assert words in str(raised.value)
    assert str(raised.value).startswith(allocation.split()[0].replace(" ", ": "))


@pytest.mark.parametrize("include_dirs", [5, 2.5, "headers", [3]])
def test_source_module_names_bad_include_dirs(include_dirs):
    with pytest.raises(TypeError, match="include_dirs must be a list of strings"):
        compiler.SourceModule("__global__ void f() {}", include_dirs=include_dirs)


@pytest.mark.parametrize(
    ("number", "error", "words"),
    [
        (-1, ValueError, "device must be a GPU index (0, 1, ...), not -1"),
        (2.7, TypeError, "not float (2.7)"),
        (True, TypeError, "not bool (True)"),
        (None, TypeError, "not NoneType"),
        ("x", ValueError, "Device('x'): a device is its number (0, 1, ...) or its PCI bus id"),
        ("0000:01:00.0.1", ValueError, "or its PCI bus id"),
    ],
)
def test_a_device_is_a_number_or_a_pci_bus_id(number, error, words):
    with pytest.raises(error) as raised:
        driver.Device(number)
    assert words in str(raised.value)


@pytest.mark.parametrize(
    ("flags", "error", "words"),
    [("x", TypeError, "not str ('x')"), (1.0, TypeError, "not float"), (4, ValueError, "must be 0, not 4")],
)
def test_init_takes_only_cudas_flags(flags, error, words):
    with pytest.raises(error, match=r"^init: flags must be") as raised:
        driver.init(flags)
    assert words in str(raised.value)
