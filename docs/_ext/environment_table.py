"""The environment variables pyctk reads, as docs/guide/environment.md shows them.

```` ```{environment-variables} ```` renders one row per entry of the installed pyctk's
``pyctk._cuda.environment.VARIABLES``: the variable, what it changes, when (and by whom, if
not pyctk) it is read, and what setting it can do. The table is written once, in the code,
which ``python -m pyctk`` and the tests read too; the cells are MyST Markdown, parsed as
the page's own text (their links are relative to docs/guide/).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

HEADER = ("variable", "what it changes", "read", "what setting it can do")


def markdown_table(variables: Any) -> str:
    """The Markdown table of ``variables`` (``Variable`` records)."""
    from pyctk._cuda.environment import PYCTK

    rows = [HEADER, ("---",) * len(HEADER)]
    for variable in variables:
        read = variable.read if variable.reader == PYCTK else f"by {variable.reader}, {variable.read}"
        rows.append((f"`{variable.name}`", variable.changes, read, variable.security))
    for row in rows:
        if any("|" in cell or "\n" in cell for cell in row):
            raise ValueError(f"environment-variables: a cell of {row[0]} holds '|' or a line break")
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


class EnvironmentVariables(SphinxDirective):
    """```{environment-variables}```: the table of pyctk._cuda.environment.VARIABLES."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from pyctk._cuda import environment

        self.env.note_dependency(environment.__file__)
        container = nodes.container()
        lines = StringList(markdown_table(environment.VARIABLES).splitlines(), source=self.get_source_info()[0])
        self.state.nested_parse(lines, self.content_offset, container)
        return list(container.children)


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("environment-variables", EnvironmentVariables)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
