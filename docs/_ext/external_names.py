"""Names of other projects that the docs mention and cannot link to offline.

CI reaches only the package index, so no intersphinx inventory (Python's, NumPy's)
can be fetched; each pattern here is a name outside pyctk. A pyctk name that does not
resolve is a broken reference and fails the build.
"""

NITPICK_IGNORE_REGEX = [
    (
        r"py:.*",
        r"(numpy|np|ctypes|typing|collections|dask|distributed|torch|cupy|jax|ml_dtypes|os|pathlib|enum|"
        r"concurrent|threading|types)(\..*)?",
    ),
    (
        r"py:.*",
        r"(int|float|complex|bool|str|bytes|bytearray|object|None|type|list|tuple|dict|set|"
        r"frozenset|callable|iterable|sequence|mapping|optional|array_like|array-like|"
        r"ArrayLike|DTypeLike|dtype_like|dtype|ndarray|memoryview|slice|Ellipsis|"
        r"Exception|RuntimeError|ValueError|TypeError|MemoryError|LookupError|KeyError|"
        r"IndexError|OSError|ImportError|Warning|UserWarning|RuntimeWarning|"
        r"NotImplementedError|IntEnum|IntFlag|Enum|Any|Literal|Iterator|Callable)",
    ),
    # C: the standard types in gpumatmul.h's declarations (stddef.h, stdint.h)
    (r"c:identifier", r"(size_t|ptrdiff_t|u?int(8|16|32|64)_t|u?intptr_t)"),
]
