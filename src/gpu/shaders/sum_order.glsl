// The order every matmul shader sums a dot product in, so that a token's
// result is the same bits whether it went through the decode shader
// (matvec) alone or with a few others, or through the tiled one (matmat)
// in a batch: the row is cut into runs of 32 values; partial sum q adds
// the products of runs q, q + PARTS, q + 2 PARTS, ... in order of k, each
// product added by one fused multiply-add; the result is partial 0 plus
// partial 1, plus partial 2, ... in order.  `precise` keeps the compiler
// from fusing or reordering anything else on the way (the dequantizers'
// arithmetic included), so the shaders cannot round differently.
#define PARTS 16u
