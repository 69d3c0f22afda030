"""The product: ``pyctk.matmul``, numpy.matmul computed by libgpumatmul."""
