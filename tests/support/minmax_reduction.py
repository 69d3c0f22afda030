"""PyCUDA's min-max example of a ReductionKernel over a struct, for the reduction tests."""

MINMAX_PREAMBLE = """
struct minmax_collector
{
    float cur_min;
    float cur_max;
    __device__ minmax_collector() { }
    __device__ minmax_collector(float cmin, float cmax) : cur_min(cmin), cur_max(cmax) { }
    __device__ minmax_collector(minmax_collector const &src) : cur_min(src.cur_min), cur_max(src.cur_max) { }
    __device__ minmax_collector(minmax_collector const volatile &src)
    : cur_min(src.cur_min), cur_max(src.cur_max) { }
    __device__ minmax_collector volatile &operator=(minmax_collector const &src) volatile
    { cur_min = src.cur_min; cur_max = src.cur_max; return *this; }
};
__device__ minmax_collector agg_mmc(minmax_collector a, minmax_collector b)
{ return minmax_collector(fminf(a.cur_min, b.cur_min), fmaxf(a.cur_max, b.cur_max)); }
"""
