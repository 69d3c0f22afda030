"""PyCUDA's modules and names beside pyctk's, for docs/pycuda.md ("Coming from PyCUDA").

Two directives::

    ```{pycuda-modules}
    ```

    ```{pycuda-names} pycuda.driver
    ```

The first renders one row per PyCUDA module (its pyctk module, how many of its names pyctk
has); the second a summary line and a table of one module's names: PyCUDA's name, pyctk's
status (supported, differs, not supported) and a note.

What comes from where, so that the tables cannot drift from the code:

- PyCUDA's names are data, in ``pycuda_names.toml`` beside this file: facts read once from
  PyCUDA's documentation and source (its header says where); nothing else of PyCUDA's.
- Whether pyctk has a name is read from the installed package at build time: the module is
  imported and the name looked up (a member ``Class.name`` on the class, its ``__slots__``,
  the ``self.name`` its methods assign, or PyCUDA's attributes by name through
  ``__getattr__``, as ``Function.num_regs`` is ``function_attribute.NUM_REGS``). The modules
  that start CUDA on import (``pyctk.autoinit``, ``pyctk.autoprimaryctx``) are read with
  ``ast`` instead.
- The data file says only what the code cannot: for a name pyctk lacks, why (``missing``); for
  a name pyctk has that refuses to work, why (``refused``: texture references); for a name that
  works differently, how (``differs``). A note that contradicts the code (a ``missing`` name
  pyctk has, a ``differs`` name it lacks, a name pyctk lacks with no note) is a warning, so
  the ``-W`` build fails; tests/docs_tests/test_pycuda_names.py checks the same without Sphinx.

Nothing here imports Sphinx at module level: the test imports this module on its own. In
conf.py: ``extensions.append("pycuda_table")`` (docs/_ext is on ``sys.path``).
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import re
import textwrap
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("pycuda_names.toml")
# pyctk modules whose import starts CUDA: their names are read from their source.
STARTS_CUDA = {"pyctk.autoinit", "pyctk.autoprimaryctx"}
SUPPORTED, DIFFERS, NOT_SUPPORTED = "supported", "differs", "not supported"
UNDOCUMENTED_MARK = "\u2020"  # a dagger after a name PyCUDA's documentation does not have
# The tables have hundreds of rows: compact ones, whose notes wrap, even inside code.
CSS_FILE = "pycuda_table.css"
CSS = """table.pycuda-names th, table.pycuda-names td { padding: 0.1rem 0.5rem; }
table.pycuda-names p { margin: 0; }
table.pycuda-names td:last-child code { white-space: normal; overflow-wrap: anywhere; }
"""


# ---------------------------------------------------------------------------------------------
# The data file


def load(path: Path = DATA) -> dict[str, Any]:
    """The data file. Needs Python 3.11's tomllib, or tomli (ImportError without either)."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    with open(path, "rb") as file:
        return tomllib.load(file)


def reason(data: dict[str, Any], text: str) -> str:
    """A note, with ``@key`` standing for the shared ``[reasons]`` entry ``key``."""
    return data["reasons"][text[1:]] if text.startswith("@") else text


def modules(data: dict[str, Any]) -> list[dict[str, Any]]:
    return data["module"]


def module_entry(data: dict[str, Any], pycuda_name: str) -> dict[str, Any]:
    for entry in modules(data):
        if entry["pycuda"] == pycuda_name:
            return entry
    raise KeyError(f"{pycuda_name} is not in {DATA.name}")


def pycuda_names(entry: dict[str, Any]) -> list[str]:
    """Every name of a PyCUDA module the data file lists, in its order: documented names
    (``Class.member`` right after its class), undocumented ones, then enumerations."""
    return (
        list(entry.get("documented", []))
        + list(entry.get("undocumented", []))
        + [
            name
            for name in entry.get("enums", {})
            if name not in entry.get("documented", []) and name not in entry.get("undocumented", [])
        ]
    )


# ---------------------------------------------------------------------------------------------
# What pyctk has


class _SourceModule:
    """The top-level names of a module read from its source, not imported."""

    def __init__(self, name: str) -> None:
        import pyctk

        path = Path(pyctk.__file__).with_name(name.rpartition(".")[2] + ".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        self.__name__ = name
        self.names: set[str] = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                self.names.add(node.name)
            elif isinstance(node, ast.Assign):
                self.names.update(target.id for target in node.targets if isinstance(target, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.names.update((alias.asname or alias.name).partition(".")[0] for alias in node.names)


@cache
def pyctk_module(name: str) -> Any:
    """The pyctk module ``name`` (None if there is none)."""
    if name in STARTS_CUDA:
        try:
            return _SourceModule(name)
        except FileNotFoundError:
            return None
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name and (name == error.name or name.startswith(error.name + ".")):
            return None  # that module (or a package above it) does not exist
        raise


def _top(module: Any, name: str) -> tuple[bool, Any]:
    if isinstance(module, _SourceModule):
        return name in module.names, None
    return hasattr(module, name), getattr(module, name, None)


@cache
def _instance_attributes(cls: type) -> frozenset[str]:
    """The attributes the methods of ``cls`` and its pyctk bases assign to ``self``, and
    their ``__slots__``."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("pyctk"):
            continue
        slots = klass.__dict__.get("__slots__", ())
        names.update([slots] if isinstance(slots, str) else slots)
        names.update(klass.__dict__.get("__annotations__", {}))
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                names.add(node.attr)
    return frozenset(names)


def _by_getattr(module: Any, cls: type, member: str) -> bool:
    """PyCUDA's attributes by name: ``Device.multiprocessor_count`` is
    ``device_attribute.MULTIPROCESSOR_COUNT``, ``Function.num_regs`` ``function_attribute.NUM_REGS``,
    answered by the class's ``__getattr__``."""
    table = getattr(module, cls.__name__.lower() + "_attribute", None)
    return "__getattr__" in cls.__dict__ and isinstance(table, enum.EnumMeta) and member.upper() in table.__members__


def enum_has(cls: Any, value: str) -> bool:
    if isinstance(cls, enum.EnumMeta):
        return value in cls.__members__
    return hasattr(cls, value)


def has(module: Any, name: str) -> bool:
    """Whether pyctk's ``module`` has PyCUDA's ``name`` (``"mem_alloc"``, ``"Context.push"``)."""
    if module is None:
        return False
    head, _, member = name.partition(".")
    present, obj = _top(module, head)
    if not member or not present:
        return present
    if obj is None:  # a module read from source: no members to look at
        return False
    return hasattr(obj, member) or (
        isinstance(obj, type) and (member in _instance_attributes(obj) or _by_getattr(module, obj, member))
    )


def pyctk_extras(entry: dict[str, Any]) -> list[str]:
    """The names of the pyctk module's ``__all__`` that PyCUDA's module does not have."""
    module = pyctk_module(entry["pyctk"]) if entry.get("pyctk") else None
    if module is None or isinstance(module, _SourceModule):
        return []
    known = set(pycuda_names(entry))
    return [name for name in getattr(module, "__all__", []) if name not in known]


# ---------------------------------------------------------------------------------------------
# The rows


@dataclass
class Row:
    name: str  # PyCUDA's name in its module: "mem_alloc", "Context.push"
    status: str  # SUPPORTED, DIFFERS or NOT_SUPPORTED
    note: str = ""  # one line; `backticks` are code
    present: bool = False  # pyctk has the name
    documented: bool = True  # PyCUDA's documentation has it
    problems: list[str] = field(default_factory=list)  # where the data contradicts the code


def rows(data: dict[str, Any], entry: dict[str, Any]) -> list[Row]:
    """One row per name of the PyCUDA module ``entry``, its status derived from pyctk's code."""
    module = pyctk_module(entry["pyctk"]) if entry.get("pyctk") else None
    missing = entry.get("missing", {})
    refused = entry.get("refused", {})
    differs = entry.get("differs", {})
    enums = entry.get("enums", {})
    documented = set(entry.get("documented", []))
    result: list[Row] = []
    by_name: dict[str, Row] = {}
    for name in pycuda_names(entry):
        present = has(module, name)
        row = Row(name, SUPPORTED, present=present, documented=name in documented)
        owner = by_name.get(name.partition(".")[0]) if "." in name else None
        if owner is not None and owner.status == NOT_SUPPORTED and name not in differs:
            # A member of a class pyctk lacks or refuses: the class's reason covers it.
            row.status, row.note = NOT_SUPPORTED, f"as `{owner.name}`"
            if name in missing or name in refused:
                row.problems.append(f"{name}: its class {owner.name} is not supported; no note needed")
        elif name in refused:
            row.status, row.note = NOT_SUPPORTED, reason(data, refused[name])
            if not present:
                row.problems.append(f"{name} is 'refused' but pyctk lacks it: make it 'missing'")
        elif not present:
            row.status = NOT_SUPPORTED
            if name in missing:
                row.note = reason(data, missing[name])
            else:
                row.problems.append(f"pyctk lacks {name}: say why in [module.missing]")
        else:
            if name in missing:
                row.problems.append(f"{name} is 'missing' but pyctk has it: drop the note (or say how it differs)")
            if name in differs:
                row.status, row.note = DIFFERS, reason(data, differs[name])
        if name in differs and not present:
            row.problems.append(f"{name} 'differs' but pyctk lacks it")
        if name in enums and present and row.status != NOT_SUPPORTED:
            _enum_values(data, entry, module, name, row)
        result.append(row)
        by_name[name] = row
    known = set(pycuda_names(entry)) | {f"{e}.{v}" for e, values in enums.items() for v in values}
    for table in ("missing", "refused", "differs"):
        for name in entry.get(table, {}):
            if name not in known:
                result.append(
                    Row(
                        name,
                        NOT_SUPPORTED,
                        problems=[f"[{table}] names {name}, which is not one of {entry['pycuda']}'s names"],
                    )
                )
    return result


def _enum_values(data: dict[str, Any], entry: dict[str, Any], module: Any, name: str, row: Row) -> None:
    """An enumeration's row: which of PyCUDA's values pyctk's lacks, and why."""
    cls = getattr(module, name)
    missing = entry.get("missing", {})
    lacking: dict[str, list[str]] = {}
    for value in entry["enums"][name]:
        key = f"{name}.{value}"
        if enum_has(cls, value):
            if key in missing:
                row.problems.append(f"{key} is 'missing' but pyctk has it")
        elif key in missing:
            lacking.setdefault(reason(data, missing[key]), []).append(value)
        else:
            row.problems.append(f"pyctk lacks {key}: say why in [module.missing]")
    if lacking:
        parts = ["lacks " + ", ".join(f"`{value}`" for value in values) + f": {why}" for why, values in lacking.items()]
        row.status = DIFFERS
        row.note = "; ".join(([row.note] if row.note else []) + parts)


def problems(data: dict[str, Any]) -> list[str]:
    """Everything the data file says that the code contradicts (empty when all agree)."""
    found = []
    for entry in modules(data):
        target = entry.get("pyctk")
        if target and "absent" in entry:
            found.append(f"{entry['pycuda']}: both a pyctk module and 'absent'")
        if target:
            if pyctk_module(target) is None:
                found.append(f"{entry['pycuda']}: pyctk has no module {target}: record it 'absent'")
                continue
            found += [problem for row in rows(data, entry) for problem in row.problems]
        elif "absent" not in entry:
            found.append(f"{entry['pycuda']}: neither a pyctk module nor 'absent' with a reason")
        else:
            guess = entry["pycuda"].replace("pycuda", "pyctk", 1)
            if pyctk_module(guess) is not None:
                found.append(f"{entry['pycuda']} is 'absent' but pyctk has {guess}")
    return found


def counts(table: list[Row]) -> dict[str, int]:
    result = {SUPPORTED: 0, DIFFERS: 0, NOT_SUPPORTED: 0}
    for row in table:
        result[row.status] += 1
    return result


def summary(entry: dict[str, Any], table: list[Row]) -> str:
    """``245 names: 230 supported (12 of them differ), 15 not supported.``"""
    n = counts(table)
    usable = n[SUPPORTED] + n[DIFFERS]
    differ = f" ({n[DIFFERS]} of them differ{'s' if n[DIFFERS] == 1 else ''})" if n[DIFFERS] else ""
    return f"{len(table)} names: {usable} supported{differ}, {n[NOT_SUPPORTED]} not supported."


# ---------------------------------------------------------------------------------------------
# Sphinx


def _inline(text: str, targets_of) -> list[Any]:
    """Docutils nodes of a note: `code` as literals (linked later when pyctk documents them)."""
    from docutils import nodes

    result: list[Any] = []
    for i, part in enumerate(re.split(r"`([^`]+)`", text)):
        if i % 2:
            literal = nodes.literal(part, part)
            literal["pyctk_targets"] = targets_of(part)
            result.append(literal)
        elif part:
            result.append(nodes.Text(part))
    return result


def setup(app: Any) -> dict[str, Any]:
    from docutils import nodes
    from sphinx.util import logging
    from sphinx.util.docutils import SphinxDirective
    from sphinx.util.nodes import make_refnode

    logger = logging.getLogger(__name__)

    def targets(module_name: str | None):
        def of(text: str) -> list[str]:
            name = text.rstrip("()")
            if not re.fullmatch(r"[A-Za-z_][\w.]*", name):
                return []
            if name.startswith("pyctk"):
                return [name]
            # The name in the table's module first, then where pyctk's other names live.
            return [
                f"{prefix}.{name}"
                for prefix in dict.fromkeys([module_name or "pyctk", "pyctk.driver", "pyctk.compiler", "pyctk"])
            ]

        return of

    def table(header: list[str], body: list[list[list[Any]]]) -> Any:
        tgroup = nodes.tgroup(cols=len(header))
        for _ in header:
            tgroup += nodes.colspec(colwidth=1)
        thead = nodes.thead()
        thead += nodes.row("", *[nodes.entry("", nodes.paragraph("", title)) for title in header])
        tbody = nodes.tbody()
        for cells in body:
            tbody += nodes.row("", *[nodes.entry("", nodes.paragraph("", "", *cell)) for cell in cells])
        tgroup += thead
        tgroup += tbody
        return nodes.table("", tgroup, classes=["pycuda-names", "colwidths-auto"])

    class PycudaNames(SphinxDirective):
        """```{pycuda-names} pycuda.driver```: a summary line and the table of one module."""

        required_arguments = 1
        has_content = False

        def run(self) -> list[Any]:
            data = load()
            self.env.note_dependency(str(DATA))
            uses(self.env).add(self.env.docname)
            try:
                entry = module_entry(data, self.arguments[0])
            except KeyError as error:
                return [self.state.document.reporter.error(str(error), line=self.lineno)]
            if not entry.get("pyctk"):
                return [
                    self.state.document.reporter.error(
                        f"{self.arguments[0]} has no pyctk module: it belongs in pycuda-modules only", line=self.lineno
                    )
                ]
            target = entry["pyctk"]
            of = targets(target)
            body, found = [], []
            module_rows = rows(data, entry)
            for row in module_rows:
                found += row.problems
                name = nodes.literal(row.name, row.name)
                name["pyctk_targets"] = [f"{target}.{row.name}"] if row.present else []
                cell = [name] + ([nodes.Text(" " + UNDOCUMENTED_MARK)] if not row.documented else [])
                body.append([cell, [nodes.Text(row.status)], _inline(row.note, of)])
            for problem in found:
                logger.warning(f"{DATA.name}: {problem}", location=(self.env.docname, self.lineno))
            module_literal = nodes.literal(target, target)
            module_literal["pyctk_targets"] = [target]
            lead = nodes.paragraph(
                "",
                "",
                nodes.literal(entry["pycuda"], entry["pycuda"]),
                nodes.Text(" \u2192 "),
                module_literal,
                nodes.Text(": " + summary(entry, module_rows)),
            )
            result = [lead]
            extras = pyctk_extras(entry) if target != "pyctk" else []  # not pyctk's whole API
            if extras:
                also = nodes.paragraph("", f"Only in {target}: ")
                for i, extra in enumerate(extras):
                    literal = nodes.literal(extra, extra)
                    literal["pyctk_targets"] = [f"{target}.{extra}"]
                    also += [nodes.Text(", ")] if i else []
                    also += literal
                also += nodes.Text(".")
                result.append(also)
            result.append(table(["PyCUDA", "pyctk", "note"], body))
            return result

    class PycudaModules(SphinxDirective):
        """```{pycuda-modules}```: one row per PyCUDA module."""

        has_content = False

        def run(self) -> list[Any]:
            data = load()
            self.env.note_dependency(str(DATA))
            uses(self.env).add(self.env.docname)
            body = []
            for entry in modules(data):
                pycuda = [nodes.literal(entry["pycuda"], entry["pycuda"])]
                if entry.get("pyctk"):
                    literal = nodes.literal(entry["pyctk"], entry["pyctk"])
                    literal["pyctk_targets"] = [entry["pyctk"]]
                    module_rows = rows(data, entry)
                    n = counts(module_rows)
                    body.append(
                        [
                            pycuda,
                            [literal],
                            [nodes.Text(f"{n[SUPPORTED] + n[DIFFERS]} of {len(module_rows)}")],
                            _inline(entry.get("note", ""), targets(entry["pyctk"])),
                        ]
                    )
                else:
                    total = len(pycuda_names(entry))
                    body.append(
                        [
                            pycuda,
                            [nodes.Text("none")],
                            [nodes.Text(f"0 of {total}" if total else "\u2014")],
                            _inline(reason(data, entry["absent"]), targets(None)),
                        ]
                    )
            for problem in problems(data):
                if "absent" in problem or "module" in problem:
                    logger.warning(f"{DATA.name}: {problem}", location=(self.env.docname, self.lineno))
            return [table(["PyCUDA", "pyctk", "supported", "note"], body)]

    def link(app: Any, doctree: Any, docname: str) -> None:
        """Link each literal that names a pyctk object the reference documents."""
        domain = app.env.get_domain("py")
        for literal in list(doctree.findall(nodes.literal)):
            candidates = literal.attributes.pop("pyctk_targets", None)
            if not candidates:
                continue
            for target in candidates:
                found = domain.objects.get(target) or domain.modules.get(target)
                if found is not None:
                    literal.replace_self(
                        make_refnode(app.builder, docname, found.docname, found.node_id, literal.deepcopy())
                    )
                    break

    def write_css(app: Any, exception: Exception | None) -> None:
        if exception is None and app.builder.format == "html":
            static = Path(app.outdir) / "_static"
            static.mkdir(parents=True, exist_ok=True)
            (static / CSS_FILE).write_text(CSS, encoding="utf-8")

    # The tables come from pyctk's code, which Sphinx does not watch: read their pages again
    # in every build, incremental ones too.
    def uses(env: Any) -> set[str]:
        if not hasattr(env, "pycuda_table_docs"):
            env.pycuda_table_docs = set()
        return env.pycuda_table_docs

    def outdated(app: Any, env: Any, added: set, changed: set, removed: set) -> list[str]:
        return sorted(uses(env) - removed)

    def purge(app: Any, env: Any, docname: str) -> None:
        uses(env).discard(docname)

    def merge(app: Any, env: Any, docnames: set, other: Any) -> None:
        uses(env).update(uses(other))

    app.connect("env-get-outdated", outdated)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.add_css_file(CSS_FILE)
    app.connect("build-finished", write_css)
    app.add_directive("pycuda-names", PycudaNames)
    app.add_directive("pycuda-modules", PycudaModules)
    app.connect("doctree-resolved", link)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
