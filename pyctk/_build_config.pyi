# _build_config.py is written by the build (meson.build, from _build_config.py.in), so the
# source tree has none for a type checker to read.
CUDA_MAJOR: int
VERSION: str
