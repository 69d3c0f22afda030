"""The table of environment variables (pyctk/_cuda/environment.py) against the code.

Every variable pyctk's Python code or the C library reads is a row of the table, and every
row pyctk reads itself is read somewhere: the documentation's table is made from it
(docs/_ext/environment_table.py), so it lists them all. Read from the source: each
``environ.get(NAME)``, ``environ[NAME]`` and ``getenv(NAME)``, NAME a string or a name bound
to strings in that module (``X = "..."``, ``for x in ("...", ...)``); ``expanduser`` reads
``HOME``; the C sources' ``getenv("...")``.
"""

from __future__ import annotations

import ast
import re

from pyctk._cuda import environment
from support.paths import ROOT


def _strings_bound_to(tree: ast.AST) -> dict[str, set[str]]:
    """Each name the module binds to string constants: ``X = "..."`` and ``for x in ("...", ...)``."""
    bound: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, set()).add(node.value.value)
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Tuple):
            values = {e.value for e in node.iter.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            bound.setdefault(node.target.id, set()).update(values)
    return bound


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "environ") or (
        isinstance(node, ast.Attribute) and node.attr == "environ"
    )


def _names_read(source: str) -> set[str]:
    tree = ast.parse(source)
    bound = _strings_bound_to(tree)

    def values(node: ast.AST) -> set[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return {node.value}
        return bound.get(node.id, set()) if isinstance(node, ast.Name) else set()

    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if (node.func.attr == "get" and _is_environ(node.func.value)) or node.func.attr == "getenv":
                read |= values(node.args[0])
            if node.func.attr == "expanduser":
                read.add("HOME")
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            read |= values(node.slice)
    return read


def variables_the_code_reads() -> dict[str, set[str]]:
    """Each variable read, with the files that read it."""
    files = [*sorted((ROOT / "pyctk").rglob("*.py")), *sorted((ROOT / "libgpu" / "src").rglob("*.[ch]"))]
    readers: dict[str, set[str]] = {}
    for path in files:
        text = path.read_text()
        names = _names_read(text) if path.suffix == ".py" else set(re.findall(r'\bgetenv\s*\(\s*"(\w+)"', text))
        for name in names:
            readers.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return readers


def test_the_scan_finds_each_way_of_reading(tmp_path):
    source = (
        'import os\nA = "ONE"\nos.environ.get("TWO")\nenviron.get(A)\nos.environ["THREE"]\nos.getenv("FOUR")\n'
        'for v in ("FIVE", "SIX"):\n    os.environ.get(v)\nos.path.expanduser("~")\nd.get("NOT_ENVIRON")\n'
    )
    assert _names_read(source) == {"ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "HOME"}


def test_every_variable_the_code_reads_is_in_the_table():
    readers = variables_the_code_reads()
    listed = {variable.name for variable in environment.VARIABLES if variable.reader == environment.PYCTK}
    missing = {name: sorted(files) for name, files in readers.items() if name not in listed}
    assert not missing, f"add a row to pyctk/_cuda/environment.py's VARIABLES for each of {missing}"
    assert not listed - set(readers), "rows of VARIABLES pyctk no longer reads: move or remove them"
    assert {"PYCTK_CACHE_DIR", "CUDA_PATH", "PYCTK_DEFAULT_NVCC_FLAGS", "HOME"} <= set(readers)  # the scan works


def test_every_row_says_what_setting_it_can_do():
    names = [variable.name for variable in environment.VARIABLES]
    assert len(names) == len(set(names))
    for variable in environment.VARIABLES:
        assert variable.changes and variable.read and variable.security, variable.name
        assert variable.security.startswith(("none", "**code**")), variable.name  # the column's two kinds


def test_set_variables_are_those_of_the_table_in_its_order():
    environ = {"CUDA_LAUNCH_BLOCKING": "1", "PATH": "/bin", "PYCTK_CACHE_DIR": "/c", "PYCTK_DISABLE_CACHE": ""}
    assert list(environment.set_variables(environ).items()) == [
        ("PYCTK_CACHE_DIR", "/c"),
        ("PYCTK_DISABLE_CACHE", ""),
        ("CUDA_LAUNCH_BLOCKING", "1"),
    ]
