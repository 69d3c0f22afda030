/* pyctk: NVRTC declares what kernels use of <stdlib.h> itself (see pyctk/_pycuda/headers.py). */
#pragma once
