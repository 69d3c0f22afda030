"""Modules, kernels and their arguments, linking, graphs, textures, C types."""
