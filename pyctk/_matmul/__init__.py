"""The product: ``pyctk.matmul``, numpy.matmul computed by libgpumatmul.

One pipeline for host and GPU operands alike, a stage per module, in order:
``describe`` (the operands, host or GPU) -> ``resolve`` (NumPy's dtype and shapes:
``dtypes``, ``shapes``) -> ``plan`` (the C entry point, copies and casts) -> ``execute``
-> ``wrap`` (the result as the caller gets it). ``api`` is ``matmul`` itself, ``options``
its keywords, ``repeat`` the plans kept for repeated layouts, ``host_results`` the host
memory results are made in. Builds on pyctk._arrays and pyctk._cuda.
"""
