/* pyctk: NVRTC declares what kernels use of <assert.h> itself (see pyctk/_pycuda/headers.py). */
#pragma once
