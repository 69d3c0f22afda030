"""The PyCUDA face's insides: what ``pyctk.driver``, ``pyctk.compiler`` and ``pyctk.autoinit``
offer under PyCUDA's names.

Devices and contexts (``devices``), streams and events (``streams``), device memory and
copies (``memory``), loaded kernels and their launches (``modules``, ``kernel_args``), and
for compiling: the CUDA header wheels (``headers``), the includes a source pulls in
(``include_scan``) and the on-disk kernel cache (``kernel_cache``). Builds on the layers
below: pyctk._matmul, pyctk._arrays, pyctk._cuda.
"""
