/* pyctk: NVRTC declares what kernels use of <stdio.h> itself (see pyctk/_pycuda/headers.py). */
#pragma once
