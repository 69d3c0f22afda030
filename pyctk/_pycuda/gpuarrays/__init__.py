"""PyCUDA's ``pycuda.gpuarray`` and its kin (elementwise, reduction, scan, cumath, curandom):
arrays on the GPU and the kernels Python writes for them."""
