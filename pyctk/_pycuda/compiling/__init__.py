"""What NVRTC is given: nvcc's options, the header wheels, the C library headers, the cache."""
