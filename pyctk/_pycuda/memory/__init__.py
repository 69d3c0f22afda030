"""Device, host, managed and pooled memory, CUDA arrays, and the copies between them."""
