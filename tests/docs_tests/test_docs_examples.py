"""Every example the documentation shows runs here, so a wrong one fails a test.

- The ``>>>`` examples of every docstring in the installed pyctk package, checked as doctests
  (their output must match). A docstring whose examples need a GPU flags its first such
  example ``# doctest: +GPU`` (Sphinx hides the flag): then the whole docstring is one ``gpu``
  test, run on the GPU machine and skipped without a GPU; ``+CPYTHON`` likewise marks one that
  runs on CPython only. ``+SKIP`` is refused: an example that never runs is an example nobody
  checks.
- The C blocks of the docs pages (```` ```c ````): each is a whole program, built with
  ``python -m pyctk --cflags --libs`` as the C API page says, and run: on a GPU it must exit 0
  (a ``gpu`` test), without one exit 1 saying the driver or device is missing.
- The Python blocks of the docs pages (docs/**/*.md) and README.md: a ```` ```python ````
  fence is run, a ```` ```pycon ```` fence is checked as a doctest. A page's blocks run in
  order in one namespace, as a reader would type them. A block that needs a GPU has the
  line ``{.gpu}`` just above its fence (shown as "needs a GPU" on the page; README.md, which
  Sphinx does not render, has ``<!-- needs a GPU -->`` instead); a page with one is also a
  ``gpu`` test that runs all its blocks, while its CPU test runs only the others.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import json
import pkgutil
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pyctk
from support.c_programs import environment
from support.gpu_presence import gpu_unavailable_reason
from support.paths import ROOT

GPU = doctest.register_optionflag("GPU")
# Examples of what exists on CPython alone (ctypes.pythonapi: DLPack capsules): skipped elsewhere.
CPYTHON = doctest.register_optionflag("CPYTHON")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
# Modules whose import needs an optional dependency: without it, their examples cannot run.
OPTIONAL = {"pyctk.dask": "dask", "pyctk._dask": "dask"}
# What the test extra leaves out on some interpreters (PyPy: no dask, distributed, ml_dtypes).
OPTIONAL_DEPENDENCIES = {"dask", "distributed", "ml_dtypes"}
# Modules whose import starts CUDA (PyCUDA's autoinit): their docstrings are read from the
# source, not imported, and are GPU tests.
STARTS_CUDA = {"pyctk.autoinit", "pyctk.autoprimaryctx"}


def modules() -> list[str]:
    names = ["pyctk"]
    names += [
        info.name for info in pkgutil.walk_packages(pyctk.__path__, "pyctk.") if info.name != "pyctk.libgpumatmul"
    ]  # the C library, not a Python module
    return sorted(names)


def import_module(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as error:
        needs = next((dep for prefix, dep in OPTIONAL.items() if name.startswith(prefix)), None)
        if needs and needs in str(error):
            pytest.skip(f"{name} needs {needs}, which is not installed: {error}")
        raise


UNPARSABLE: dict[str, str] = {}


class Finder(doctest.DocTestFinder):
    """doctest's finder, taking the methods of a class shown under the package's name too
    (``DeviceArray.__module__ == "pyctk"``), which doctest's own finds in neither module."""

    def _from_module(self, module, object):  # noqa: A002 (doctest's name)
        if inspect.isfunction(object):
            return getattr(object, "__module__", "").startswith("pyctk")
        return super()._from_module(module, object)


def docstring_tests() -> list[doctest.DocTest]:
    finder = Finder(exclude_empty=True)
    tests = []
    for name in STARTS_CUDA:
        path = Path(pyctk.__file__).with_name(name.rpartition(".")[2] + ".py")
        source = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        tests.append(doctest.DocTestParser().get_doctest(source, {}, name, str(path), 0))
    for name in modules():
        if name in STARTS_CUDA:
            continue
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue  # its test below imports it again and says why
        try:
            tests += [test for test in finder.find(module, name) if test.examples]
        except ValueError as error:  # a malformed example: its module's test says so
            UNPARSABLE[name] = str(error)
    # A class shown under the package's name (DeviceArray.__module__ == "pyctk") is found in
    # both modules: keep one test per docstring.
    unique = {(test.filename, test.lineno, test.docstring): test for test in tests}
    return sorted(unique.values(), key=lambda test: test.name)


def needs_gpu(test: doctest.DocTest) -> bool:
    return test.name in STARTS_CUDA or any(example.options.get(GPU) for example in test.examples)


def as_param(test: doctest.DocTest):
    marks = [pytest.mark.gpu] if needs_gpu(test) else []
    if any(example.options.get(CPYTHON) for example in test.examples):
        marks.append(
            pytest.mark.skipif(
                platform.python_implementation() != "CPython", reason="a CPython-only example (+CPYTHON)"
            )
        )
    return pytest.param(test, id=test.name, marks=marks)


DOCSTRING_TESTS = docstring_tests()


def run_doctest(test: doctest.DocTest, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    output: list[str] = []
    result = runner.run(test, out=output.append, clear_globs=False)
    assert result.failed == 0, "".join(output)


# The examples of a module whose import starts CUDA run in a process of their own: autoinit
# pushes a context for the rest of the process, which would be every later test's.
IN_A_PROCESS = """
import doctest, sys
for name in ("GPU", "CPYTHON"):
    doctest.register_optionflag(name)
test = doctest.DocTestParser().get_doctest(sys.argv[1], {}, sys.argv[2], sys.argv[2], 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
sys.exit(runner.run(test).failed)
"""


@pytest.mark.parametrize("test", [as_param(test) for test in DOCSTRING_TESTS])
def test_docstring_examples(test: doctest.DocTest, tmp_path, monkeypatch):
    if test.name in STARTS_CUDA:
        done = subprocess.run(
            [sys.executable, "-c", IN_A_PROCESS, test.docstring or "", test.name],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return
    run_doctest(test, tmp_path, monkeypatch)


def test_every_module_with_examples_imports():
    """No module's examples are lost because the module failed to import."""
    for name in modules():
        if name not in STARTS_CUDA and not any(name.startswith(p) for p in OPTIONAL):
            importlib.import_module(name)


def test_every_docstring_parses():
    assert not UNPARSABLE, f"examples doctest cannot read: {UNPARSABLE}"


def test_no_example_is_skipped():
    skipped = [
        f"{test.name} (line {(test.lineno or 0) + example.lineno + 1})"
        for test in DOCSTRING_TESTS
        for example in test.examples
        if example.options.get(doctest.SKIP)
    ]
    assert not skipped, f"examples marked +SKIP never run; flag them +GPU instead: {skipped}"


FENCE = re.compile(
    r"^(?P<gpu>(\{\.gpu\}|<!-- needs a GPU -->)\n)?"
    r"```(?P<lang>python|pycon)[^\n]*\n(?P<code>.*?)^```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


def page_blocks(page: Path) -> list[tuple[int, str, bool, str]]:
    """(line, language, needs a GPU, code) of each Python block of a page, in order."""
    text = page.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, match.start("code")) + 1, match["lang"], bool(match["gpu"]), match["code"])
        for match in FENCE.finditer(text)
    ]


def run_blocks(page: Path, blocks, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__main__"}
    name = str(page.relative_to(ROOT))
    try:
        for line, language, _, code in blocks:
            if language == "python":
                exec(compile("\n" * (line - 1) + code, name, "exec"), namespace)  # noqa: S102
            else:
                test = doctest.DocTestParser().get_doctest(code, namespace, f"{name}:{line}", name, line - 1)
                run_doctest(test, tmp_path, monkeypatch)
                namespace.update(test.globs)  # a DocTest runs in a copy of what it is given
    except ImportError as error:
        if (error.name or "").partition(".")[0] in OPTIONAL_DEPENDENCIES:
            pytest.skip(f"{name} needs {error.name}, which is not installed")
        raise


def page_params():
    params = []
    for page in PAGES:
        blocks = page_blocks(page)
        name = str(page.relative_to(ROOT))
        if not blocks:
            continue
        if not all(gpu for _, _, gpu, _ in blocks):
            params.append(pytest.param(page, False, id=f"{name}-cpu"))
        if any(gpu for _, _, gpu, _ in blocks):
            params.append(pytest.param(page, True, id=f"{name}-gpu", marks=[pytest.mark.gpu]))
    return params


# A page whose examples import a module of STARTS_CUDA runs them in a process of its own, as
# those modules' docstrings do: the context they push stays pushed until the process exits.
PAGE_IN_A_PROCESS = """
import doctest, json, sys
for name in ("GPU", "CPYTHON"):
    doctest.register_optionflag(name)
blocks, name = json.loads(sys.argv[1]), sys.argv[2]
namespace, failed = {"__name__": "__main__"}, 0
for line, language, code in blocks:
    if language == "python":
        exec(compile("\\n" * (line - 1) + code, name, "exec"), namespace)
    else:
        test = doctest.DocTestParser().get_doctest(code, namespace, f"{name}:{line}", name, line - 1)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        failed += runner.run(test, clear_globs=False).failed
        namespace.update(test.globs)
sys.exit(failed)
"""
_IMPORTS_STARTING_CUDA = re.compile(r"^\s*(?:>>> )?import (?:" + "|".join(map(re.escape, STARTS_CUDA)) + r")\b", re.M)


@pytest.mark.parametrize("page, with_gpu", page_params())
def test_page_examples(page: Path, with_gpu: bool, tmp_path, monkeypatch):
    blocks = [block for block in page_blocks(page) if with_gpu or not block[2]]
    if any(_IMPORTS_STARTING_CUDA.search(code) for _, _, _, code in blocks):
        given = json.dumps([(line, language, code) for line, language, _, code in blocks])
        done = subprocess.run(
            [sys.executable, "-c", PAGE_IN_A_PROCESS, given, str(page.relative_to(ROOT))],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return
    run_blocks(page, blocks, tmp_path, monkeypatch)


def test_pages_that_start_cuda_are_told_apart():
    """The pages whose examples import autoinit or autoprimaryctx are found (their examples
    run in a process of their own), and a page that only names them is not."""
    found = {
        str(page.relative_to(ROOT))
        for page in PAGES
        if any(_IMPORTS_STARTING_CUDA.search(code) for _, _, _, code in page_blocks(page))
    }
    assert {"docs/pycuda.md", "docs/reference/autoprimaryctx.md"} <= found
    assert "docs/quickstart.md" not in found


def test_pages_have_examples_found():
    """The fence pattern finds the blocks it is meant to (a changed fence style is not lost)."""
    quickstart = ROOT / "docs" / "quickstart.md"
    text = quickstart.read_text(encoding="utf-8")
    assert len(page_blocks(quickstart)) == text.count("```python") + text.count("```pycon")


def test_readme_fits_on_a_page():
    """README.md says what pyctk is and links into the docs, which hold the rest."""
    assert (ROOT / "README.md").stat().st_size <= 10_000


C_FENCE = re.compile(r"^```c\n(?P<code>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def c_programs() -> list:
    params = []
    for page in PAGES:
        for number, match in enumerate(C_FENCE.finditer(page.read_text(encoding="utf-8"))):
            name = f"{page.relative_to(ROOT)}-c{number}"
            params.append(pytest.param(match["code"], False, id=f"{name}-cpu"))
            params.append(pytest.param(match["code"], True, id=f"{name}-gpu", marks=[pytest.mark.gpu]))
    return params


@pytest.mark.parametrize("code, with_gpu", c_programs())
def test_page_c_programs(code: str, with_gpu: bool, tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not found on PATH")
    source, program = tmp_path / "example.c", tmp_path / "example"
    source.write_text(code, encoding="utf-8")
    flags = subprocess.run(
        [sys.executable, "-m", "pyctk", "--cflags", "--libs"], check=True, capture_output=True, text=True
    ).stdout.split()
    subprocess.run(
        ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", str(source), *flags, "-o", str(program)], check=True
    )
    done = subprocess.run([str(program)], env=environment(), capture_output=True, text=True, timeout=300)
    if with_gpu:
        assert done.returncode == 0, done.stdout + done.stderr
    else:
        if gpu_unavailable_reason() is None:
            pytest.skip("a GPU is present: the no-GPU run is for machines without one")
        assert done.returncode == 1, done.stdout + done.stderr
        assert re.search(r"GPUMATMUL_ERROR_NO_(DRIVER|DEVICE)", done.stderr), done.stderr
