"""Operands: the arrays pyctk reads and makes, in host or GPU memory.

The dtype table (``dtypes``), strides and layouts (``layout``), other libraries' GPU
arrays read through DLPack and the CUDA Array Interface (``dlpack``, ``interop``), device
memory from pyctk's pool (``memory``), and ``DeviceArray`` (``device_array``). Builds on
pyctk._cuda only.
"""
