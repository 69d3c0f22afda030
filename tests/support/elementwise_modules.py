"""A stand-in for SourceModule in pyctk.elementwise's builders: each source is compiled to PTX
by NVRTC (no GPU needed) and kept, and ``get_function`` checks the kernel is in the PTX and
records what ``prepare`` is given, so CPU tests see the sources and the prepared types."""

from __future__ import annotations

from pyctk.compiler import compile


class CompiledModule:
    """What ``SourceModule(source, options, keep, no_extern_c)`` makes, here compiled only."""

    sources: list[str]  # every source compiled since ``install``, in order

    def __init__(self, source, options=None, keep=False, no_extern_c=False):
        assert no_extern_c  # the builders declare extern "C" themselves
        self.source = source
        self.ptx = compile(source, options=options, no_extern_c=True, arch="sm_80", target="ptx")
        type(self).sources.append(source)

    def get_function(self, name):
        assert f".entry {name}(".encode() in self.ptx, f"no kernel {name} in:\n{self.source}"
        return PreparedFunction(name, self)


class PreparedFunction:
    def __init__(self, name, module):
        self.name, self.module, self.codes = name, module, None

    def prepare(self, codes):
        self.codes = codes
        return self


def install(monkeypatch) -> list[str]:
    """Make the builders compile with ``CompiledModule``; the list its sources go into."""
    from pyctk._pycuda.gpuarrays import elementwise

    module_class = type("CompiledModule", (CompiledModule,), {"sources": []})
    monkeypatch.setattr(elementwise, "SourceModule", module_class)
    return module_class.sources
