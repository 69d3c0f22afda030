"""The test suite's own layout (docs/contributing.md, "Where a test goes"): every test in a
folder named ``<what it tests>_tests``, which no installed module's name can shadow; the
helpers in one package, ``support``; no test module imported by another; file names unique
across folders; a GPU test module named ``*_on_gpu.py`` exactly when it is marked ``gpu``."""

from __future__ import annotations

import ast
import sys
from importlib.machinery import PathFinder
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
SUPPORT = TESTS / "support"
SUFFIX = "_tests"


def is_tooling(path: Path) -> bool:
    """Python's caches and hidden folders (a tool's, not the suite's)."""
    return any(part == "__pycache__" or part.startswith(".") for part in path.relative_to(TESTS).parts)


def folders() -> list[Path]:
    """Every folder of tests/ but the support package's own and the tools'."""
    found = [path for path in TESTS.rglob("*") if path.is_dir() and not is_tooling(path)]
    return [path for path in found if path != SUPPORT and SUPPORT not in path.parents]


def modules_of_tests() -> list[Path]:
    return sorted(path for path in TESTS.rglob("test_*.py") if SUPPORT not in path.parents)


def python_files() -> list[Path]:
    return sorted(path for path in TESTS.rglob("*.py") if not is_tooling(path))


def imported_modules(path: Path) -> set[str]:
    """The top-level names of the modules ``path`` imports, at any depth of its code."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return names


def outside_tests(entry: str) -> bool:
    """Whether a sys.path entry is a folder other than tests/ and its folders."""
    folder = Path(entry or ".").resolve()
    return folder != TESTS and TESTS not in folder.parents


def marks_every_test_gpu(path: Path) -> bool:
    """Whether the module's ``pytestmark`` includes ``pytest.mark.gpu``."""
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", "") == "pytestmark" for target in node.targets):
            return any(ast.unparse(part) == "pytest.mark.gpu" for part in ast.walk(node.value))
    return False


def test_every_test_lives_in_a_folder_named_for_what_it_tests():
    assert folders(), "tests/ has no test folders"
    assert [path.name for path in folders() if not path.name.endswith(SUFFIX)] == []
    assert [path.name for path in modules_of_tests() if path.parent == TESTS] == []


def test_no_folder_is_named_like_an_importable_module():
    """pytest puts tests/ (conftest.py's folder) and each test module's folder on sys.path, so
    a folder there named like a module (dask, packaging) would import as an empty namespace
    package where that module is missing, and importorskip would not skip."""
    elsewhere = [entry for entry in sys.path if outside_tests(entry)]
    names = sorted({path.name for path in folders()} | {SUPPORT.name})
    importable = [name for name in names if name in sys.builtin_module_names or PathFinder.find_spec(name, elsewhere)]
    assert importable == []


def test_support_is_the_one_package():
    assert (SUPPORT / "__init__.py").is_file()
    assert [str(path.relative_to(TESTS)) for path in folders() if (path / "__init__.py").exists()] == []


def test_file_names_are_unique_across_folders():
    """pytest's default import mode imports each test module by its file name alone."""
    names = [path.name for path in modules_of_tests()]
    assert sorted({name for name in names if names.count(name) > 1}) == []
    assert [path.name for path in SUPPORT.rglob("test_*.py")] == []  # it would be collected


@pytest.mark.parametrize("path", python_files(), ids=lambda path: str(path.relative_to(TESTS)))
def test_no_test_module_imports_another(path):
    test_names = {module.stem for module in modules_of_tests()} | {"conftest"}
    assert sorted(imported_modules(path) & test_names) == []


@pytest.mark.parametrize("path", modules_of_tests(), ids=lambda path: path.name)
def test_a_module_is_named_on_gpu_exactly_when_every_test_of_it_is_marked_gpu(path):
    assert path.stem.endswith("_on_gpu") == marks_every_test_gpu(path)
