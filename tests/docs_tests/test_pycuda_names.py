"""The "Coming from PyCUDA" tables (docs/pycuda.md) agree with pyctk's code.

docs/_ext/pycuda_names.toml lists PyCUDA's public names and, for those pyctk lacks or runs
differently, a note; docs/_ext/pycuda_table.py derives each name's status from the code and
renders the tables. Here, with no Sphinx: every name the data file calls missing is missing
from pyctk, every name it says differs or refuses is there, every refused name raises the
error its note names, every name pyctk lacks has a note, and every PyCUDA module is either a
pyctk module or recorded as absent with a reason. So a note cannot go stale: a name pyctk
gains makes its 'missing' note fail here.
"""

from __future__ import annotations

import importlib
import inspect
import sys

import pytest

import pyctk.driver as cuda
from support.paths import ROOT

sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import pycuda_table as table  # noqa: E402

try:
    DATA = table.load()
except ImportError:  # Python < 3.11 without tomli
    pytest.skip("reading docs/_ext/pycuda_names.toml needs Python 3.11's tomllib, or tomli", allow_module_level=True)

MODULES = [entry for entry in table.modules(DATA) if entry.get("pyctk")]
ABSENT = [entry for entry in table.modules(DATA) if not entry.get("pyctk")]


def noted(kind: str) -> list:
    return [
        pytest.param(entry, name, id=f"{entry['pycuda']}:{name}") for entry in MODULES for name in entry.get(kind, {})
    ]


def test_the_data_file_agrees_with_the_code():
    """What the docs build checks (a contradiction there is a warning, so -W fails)."""
    assert table.problems(DATA) == []


@pytest.mark.parametrize("entry, name", noted("missing"))
def test_a_missing_name_is_missing(entry, name):
    module = table.pyctk_module(entry["pyctk"])
    head, _, value = name.partition(".")
    if head in entry.get("enums", {}) and value in entry["enums"][head]:
        assert not table.enum_has(getattr(module, head), value), (
            f"{entry['pyctk']}.{name} exists now: drop its 'missing' note"
        )
    else:
        assert not table.has(module, name), (
            f"{entry['pyctk']}.{name} exists now: drop its 'missing' note (or say how it differs)"
        )


@pytest.mark.parametrize("entry, name", noted("differs") + noted("refused"))
def test_a_name_that_differs_or_refuses_is_there(entry, name):
    assert table.has(table.pyctk_module(entry["pyctk"]), name), (
        f"{entry['pyctk']} lacks {name}: make its note 'missing'"
    )


def call_with_nones(function):
    """Call ``function`` with None for each parameter it requires."""
    parameters = inspect.signature(function).parameters.values()
    required = [
        p for p in parameters if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return function(*[None] * len(required))


@pytest.mark.parametrize("entry, name", noted("refused"))
def test_a_refused_name_raises_the_error_its_note_names(entry, name):
    """Refused names raise before they touch a GPU (they run here, with none)."""
    module = importlib.import_module(entry["pyctk"])
    head, _, member = name.partition(".")
    obj = getattr(module, head)
    function = getattr(obj, member) if member else obj  # a method: self is None too
    with pytest.raises(cuda.Error) as raised:
        call_with_nones(function)
    note = table.reason(DATA, entry["refused"][name])
    if "TextureReferenceError" in note:
        assert isinstance(raised.value, cuda.TextureReferenceError)
    if "`RuntimeError`" in note:
        assert isinstance(raised.value, cuda.RuntimeError)


def test_texture_references_are_refused_as_the_brief_of_the_page_says():
    """CUDA 12 removed texture references: pyctk keeps the names, which raise."""
    driver = next(entry for entry in MODULES if entry["pycuda"] == "pycuda.driver")
    for name in (
        "TextureReference",
        "SurfaceReference",
        "Module.get_texref",
        "matrix_to_texref",
        "bind_array_to_texref",
    ):
        assert name in driver["refused"]
    with pytest.raises(cuda.TextureReferenceError, match="TextureObject"):
        cuda.TextureReference()


@pytest.mark.parametrize("entry", ABSENT, ids=lambda entry: entry["pycuda"])
def test_an_absent_module_is_absent_and_says_why(entry):
    assert table.reason(DATA, entry["absent"]).strip()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(entry["pycuda"].replace("pycuda", "pyctk", 1))


def test_every_pycuda_module_pyctk_has_is_in_the_data_file():
    pycuda_faces = {
        "pyctk.driver",
        "pyctk.compiler",
        "pyctk.gpuarray",
        "pyctk.cumath",
        "pyctk.elementwise",
        "pyctk.reduction",
        "pyctk.scan",
        "pyctk.curandom",
        "pyctk.tools",
        "pyctk.autoinit",
        "pyctk.autoprimaryctx",
    }
    assert pycuda_faces <= {entry["pyctk"] for entry in MODULES}
    for entry in MODULES:
        assert table.pyctk_module(entry["pyctk"]) is not None, entry["pyctk"]


def test_modules_that_start_cuda_are_read_not_imported():
    """pyctk.autoinit would start CUDA on import; its names come from its source."""
    module = table.pyctk_module("pyctk.autoinit")
    assert isinstance(module, table._SourceModule)
    assert table.has(module, "context") and table.has(module, "device")


@pytest.mark.parametrize("entry", table.modules(DATA), ids=lambda entry: entry["pycuda"])
def test_names_and_notes_are_well_formed(entry):
    names = table.pycuda_names(entry)
    assert len(names) == len(set(names)), "a name listed twice"
    for kind in ("missing", "refused", "differs"):
        for name, note in entry.get(kind, {}).items():
            text = table.reason(DATA, note)  # a KeyError for an unknown @reason
            assert text.strip() and "\n" not in text, f"{name}: a note is one line"
            assert text.count("`") % 2 == 0, f"{name}: unbalanced backticks"
    overlap = set(entry.get("missing", {})) & (set(entry.get("differs", {})) | set(entry.get("refused", {})))
    assert not overlap, f"a name both missing and present: {overlap}"
    for values in entry.get("enums", {}).values():
        assert values, "an enumeration with no values"


def test_every_shared_reason_is_used():
    used = {
        note[1:]
        for entry in table.modules(DATA)
        for kind in ("missing", "refused", "differs", "absent")
        for note in (entry.get(kind, {}).values() if kind != "absent" else [entry.get(kind, "")])
        if note.startswith("@")
    }
    assert set(DATA["reasons"]) == used


def test_the_summary_counts_every_row():
    for entry in MODULES:
        rows = table.rows(DATA, entry)
        counts = table.counts(rows)
        assert sum(counts.values()) == len(rows) == len(table.pycuda_names(entry))
        assert f"{len(rows)} names" in table.summary(entry, rows)
