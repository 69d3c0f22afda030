"""pyctk.dask's insides: matrix products of dask arrays, each block product by pyctk.matmul.

api (matmul: the checks, then the graph) -> chunking (the block sizes: suggest_chunks and
the rule that combines chunks too small for a GPU) and graph (the blockwise products and
the sum over k) -> blocks (what runs on a worker: one block product, one sum of partials).
Only graph imports dask; chunking and blocks are NumPy and plain Python.
"""
