"""The stages of pyctk.matmul a call goes through, for the tests of which stages a product
skips."""

from __future__ import annotations

import sys
from typing import Any, Callable

# pyctk.matmul's stages, in the order a product goes through them (pyctk/_matmul/__init__.py).
STAGES = ["describe", "resolve", "plan", "execute", "wrap"]


def stage_route(call: Callable[[], Any]) -> list[str]:
    """The stages of pyctk.matmul that ``call()`` enters, in order: a stage is named each time
    a function of its module is called after a function of another stage ran, so a product
    that goes through each stage once, in order, gives STAGES."""
    route: list[str] = []

    def profile(frame, event, arg):
        module = frame.f_globals.get("__name__", "")
        stage = module.rpartition(".")[2]
        if event == "call" and module.startswith("pyctk._matmul.") and stage in STAGES and route[-1:] != [stage]:
            route.append(stage)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return route
