/* The types nvcc's implicit host headers give every kernel: nvcc includes cuda_runtime.h,
 * which reaches glibc's <sys/types.h> through <stdlib.h>, and kernels written for nvcc
 * (PyCUDA's among them) use its `uint`, `ushort` and `ulong` without including anything.
 * NVRTC has no host headers: pyctk's SourceModule includes this before every source. */
#pragma once
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned long ulong;
