"""Where the tests find the checkout and the files they read."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # tests/support/paths.py -> the checkout
DATA = Path(__file__).resolve().parent / "data"
EXPORTS = DATA / "exports"  # the oldest CUDA libraries' exports (packaging/make-export-lists)
