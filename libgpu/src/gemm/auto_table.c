/* Where backend AUTO takes pyctk's kernels over cuBLAS: written by
 * `python benchmarks/auto_table.py --write`, last on NVIDIA H200 (sm_90),
 * 2026-12-03. A row per kernel image architecture, dtype and precision
 * measured; `classes` has the shape classes where the kernels were faster
 * at both sizes measured (gemm/gemm.h: shape_class). Unmeasured: cuBLAS. */
#include "gemm/gemm.h"

const struct auto_choice auto_choices[] = {
    {90, GPUMATMUL_FLOAT32, GPUMATMUL_PRECISION_HIGHEST,
     1u << SHAPE_TINY | 1u << SHAPE_VERY_SMALL},
    {90, GPUMATMUL_FLOAT32, GPUMATMUL_PRECISION_TF32,
     1u << SHAPE_TINY | 1u << SHAPE_VERY_SMALL},
    {90, GPUMATMUL_FLOAT64, GPUMATMUL_PRECISION_HIGHEST,
     1u << SHAPE_TINY | 1u << SHAPE_VERY_SMALL},
    {90, GPUMATMUL_FLOAT16, GPUMATMUL_PRECISION_HIGHEST,
     1u << SHAPE_TINY | 1u << SHAPE_VERY_SMALL | 1u << SHAPE_SMALL},
    {90, GPUMATMUL_BFLOAT16, GPUMATMUL_PRECISION_HIGHEST,
     1u << SHAPE_TINY | 1u << SHAPE_VERY_SMALL | 1u << SHAPE_SMALL},
    {90, GPUMATMUL_COMPLEX64, GPUMATMUL_PRECISION_HIGHEST,
     1u << SHAPE_TINY | 1u << SHAPE_VERY_SMALL},
    {90, GPUMATMUL_COMPLEX64, GPUMATMUL_PRECISION_TF32,
     1u << SHAPE_TINY | 1u << SHAPE_MEDIUM | 1u << SHAPE_LARGE},
    {90, GPUMATMUL_COMPLEX128, GPUMATMUL_PRECISION_HIGHEST,
     1u << SHAPE_TINY},
    {90, GPUMATMUL_INT8, GPUMATMUL_PRECISION_HIGHEST,
     1u << SHAPE_TINY | 1u << SHAPE_VERY_SMALL | 1u << SHAPE_SMALL | 1u << SHAPE_MEDIUM | 1u << SHAPE_LARGE},
    {90, GPUMATMUL_FLOAT8_E4M3FN, GPUMATMUL_PRECISION_HIGHEST,
     1u << SHAPE_TINY | 1u << SHAPE_VERY_SMALL | 1u << SHAPE_SMALL | 1u << SHAPE_MEDIUM},
};
const int auto_choice_count = (int)(sizeof auto_choices / sizeof auto_choices[0]);
