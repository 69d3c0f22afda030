"""The options of host products that need no GPU to check: PYCTK_DEVICE_MEMORY_LIMIT's
parsing, and ``devices=`` refused before any GPU work."""

from __future__ import annotations

import numpy as np
import pytest

import pyctk
from pyctk._matmul import options as _host_options


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", 0),
        ("  ", 0),
        ("4096", 4096),
        ("512M", 512 << 20),
        ("512m", 512 << 20),
        ("8G", 8 << 30),
        ("8GiB", 8 << 30),
        ("1 T", 1 << 40),
        ("64KB", 64 << 10),
    ],
)
def test_memory_limit_reads_bytes_and_binary_units(monkeypatch, text, expected):
    monkeypatch.setenv(_host_options.LIMIT_VARIABLE, text)
    assert _host_options.memory_limit() == expected


def test_memory_limit_unset_is_no_limit(monkeypatch):
    monkeypatch.delenv(_host_options.LIMIT_VARIABLE, raising=False)
    assert _host_options.memory_limit() == 0


@pytest.mark.parametrize("text", ["lots", "-5", "0", "1.5G", "12X", "G"])
def test_a_malformed_limit_is_a_value_error_naming_variable_and_fix(monkeypatch, text):
    monkeypatch.setenv(_host_options.LIMIT_VARIABLE, text)
    with pytest.raises(ValueError, match=f"PYCTK_DEVICE_MEMORY_LIMIT={text!r} is not a memory size.*512M"):
        _host_options.memory_limit()


@pytest.mark.parametrize(
    "devices, device, expected",
    [(None, None, (0,)), (None, 3, (3,)), ([1, 0], None, (1, 0)), ((2,), None, (2,)), (np.array([0, 1]), None, (0, 1))],
)
def test_device_list(devices, device, expected):
    assert _host_options.device_list(devices, device) == expected


@pytest.mark.parametrize(
    "devices, message",
    [
        ("some", "'all' or a sequence"),
        (3, "not int"),
        ([], "non-empty"),
        ([0, -1], "non-empty"),
        ([0, True], "non-empty"),
        ([0.5], "non-empty"),
        ([1, 1], "more than once"),
    ],
)
def test_malformed_devices_are_value_errors_before_any_gpu_work(devices, message):
    a = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match=message):
        pyctk.matmul(a, a, devices=devices)


def test_device_and_devices_together_are_refused():
    a = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match="device= or devices=, not both"):
        pyctk.matmul(a, a, device=1, devices=[0])
