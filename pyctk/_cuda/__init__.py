"""The floor: everything about reaching CUDA.

Finding and loading the libraries (``loader``: cudart, cuBLAS, NVRTC from NVIDIA's pip
wheels; ``c_build``: libgpumatmul's own files for C programs), their ctypes bindings
(``library``: libgpumatmul, ``cudart``, ``driver_api``, ``nvrtc``), statuses and exceptions
(``errors``, ``status``, ``driver_errors``), and the process's CUDA state (``contexts``,
``streams``, ``fork``). Imports nothing else of pyctk but ``_build_config``.
"""
