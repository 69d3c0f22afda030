/* pyctk: NVRTC declares what kernels use of <stdbool.h> itself (see pyctk/_pycuda/headers.py). */
#pragma once
#define __bool_true_false_are_defined 1
