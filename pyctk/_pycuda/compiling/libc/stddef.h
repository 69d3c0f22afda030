/* pyctk: NVRTC declares what kernels use of <stddef.h> itself (see pyctk/_pycuda/headers.py). */
#pragma once
