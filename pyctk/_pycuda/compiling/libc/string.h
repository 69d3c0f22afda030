/* pyctk: NVRTC declares what kernels use of <string.h> itself (see pyctk/_pycuda/headers.py). */
#pragma once
