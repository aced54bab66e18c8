// Element j of the GGUF block at byte b of the weights, for the type the
// shader is compiled for (-DT_<TYPE>): QK elements in BB bytes a block.
// The formulas are src/kernels/dequant*.c's; the weights are read as
// bytes, since most blocks are not a multiple of 4 bytes.  A product and
// a sum are `precise` (not fused), as the CPU's -ffp-contract=off has
// them, and so that every shader that dequantizes rounds the same.
layout(std430, binding = 0) readonly buffer Weights { uint w[]; };

uint rd8(uint a) { return (w[a >> 2] >> ((a & 3u) << 3)) & 0xffu; }
uint rd16(uint a) { return rd8(a) | (rd8(a + 1u) << 8); }
uint rd32(uint a) { return rd16(a) | (rd16(a + 2u) << 16); }
float rdh(uint a) { return unpackHalf2x16(rd16(a)).x; }
int sext8(uint v) { return int(v << 24) >> 24; }

// element j's nibble of 16 bytes at q: low nibbles first, then high
uint nib32(uint q, uint j) { uint v = rd8(q + (j & 15u)); return j < 16u ? v & 15u : v >> 4; }

const float kv_iq4nl[16] = float[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
const float kv_mxfp4[16] = float[16](0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);

#if defined(T_F32)
#define ONE_A_BLOCK
#define QK 1u
#define BB 4u
float dq(uint b, uint j) { return uintBitsToFloat(rd32(b)); }
#elif defined(T_F16)
#define ONE_A_BLOCK
#define QK 1u
#define BB 2u
float dq(uint b, uint j) { return rdh(b); }
#elif defined(T_BF16)
#define ONE_A_BLOCK
#define QK 1u
#define BB 2u
float dq(uint b, uint j) { return uintBitsToFloat(rd16(b) << 16); }
#elif defined(T_Q4_0)
#define QK 32u
#define BB 18u
float dq(uint b, uint j) { return float(int(nib32(b + 2u, j)) - 8) * rdh(b); }
#elif defined(T_Q4_1)
#define QK 32u
#define BB 20u
float dq(uint b, uint j)
{
    precise float v = float(nib32(b + 4u, j)) * rdh(b) + rdh(b + 2u);
    return v;
}
#elif defined(T_Q5_0)
#define QK 32u
#define BB 22u
float dq(uint b, uint j)
{
    uint hi = (rd32(b + 2u) >> j) & 1u;
    return float(int(nib32(b + 6u, j) | (hi << 4)) - 16) * rdh(b);
}
#elif defined(T_Q5_1)
#define QK 32u
#define BB 24u
float dq(uint b, uint j)
{
    uint hi = (rd32(b + 4u) >> j) & 1u;
    precise float v = float(nib32(b + 8u, j) | (hi << 4)) * rdh(b) + rdh(b + 2u);
    return v;
}
#elif defined(T_Q8_0)
#define QK 32u
#define BB 34u
float dq(uint b, uint j) { return float(sext8(rd8(b + 2u + j))) * rdh(b); }
#elif defined(T_IQ4_NL)
#define QK 32u
#define BB 18u
float dq(uint b, uint j) { return rdh(b) * kv_iq4nl[nib32(b + 2u, j)]; }
#elif defined(T_MXFP4)
#define QK 32u
#define BB 17u
float dq(uint b, uint j)
{
    uint e = rd8(b);
    float d = uintBitsToFloat(e < 2u ? 0x00200000u << e : (e - 1u) << 23);
    return d * kv_mxfp4[nib32(b + 1u, j)];
}
#elif defined(T_Q2_K)
#define QK 256u
#define BB 84u
float dq(uint b, uint e)
{
    uint h = e / 128u, s = (e / 32u) % 4u, l = e % 32u;
    uint q = (rd8(b + 16u + 32u * h + l) >> (2u * s)) & 3u;
    uint sc = rd8(b + e / 16u);
    precise float v = rdh(b + 80u) * float(sc & 15u) * float(q) - rdh(b + 82u) * float(sc >> 4);
    return v;
}
#elif defined(T_Q3_K)
#define QK 256u
#define BB 110u
float dq(uint b, uint e)
{
    uint h = e / 128u, s = (e / 32u) % 4u, l = e % 32u, g = e / 16u;
    int q = int((rd8(b + 32u + 32u * h + l) >> (2u * s)) & 3u);
    if ((rd8(b + l) & (1u << (e / 32u))) == 0u)
        q -= 4;
    uint lo = g < 8u ? rd8(b + 96u + g) & 15u : rd8(b + 96u + g - 8u) >> 4;
    uint hi = (rd8(b + 96u + 8u + g % 4u) >> (2u * (g / 4u))) & 3u;
    return rdh(b + 108u) * float(int(lo | (hi << 4)) - 32) * float(q);
}
#elif defined(T_Q4_K) || defined(T_Q5_K)
#define QK 256u
#if defined(T_Q4_K)
#define BB 144u
#define QS 16u
#else
#define BB 176u
#define QS 48u
#endif
float dq(uint b, uint e)
{
    uint g = e / 32u, l = e % 32u, s = b + 4u, sc, m;
    if (g < 4u) {
        sc = rd8(s + g) & 63u;
        m = rd8(s + g + 4u) & 63u;
    } else {
        sc = (rd8(s + g + 4u) & 15u) | ((rd8(s + g - 4u) >> 6) << 4);
        m = (rd8(s + g + 4u) >> 4) | ((rd8(s + g) >> 6) << 4);
    }
    uint q = rd8(b + QS + 32u * (g / 2u) + l);
    uint v = (g & 1u) != 0u ? q >> 4 : q & 15u;
#if defined(T_Q5_K)
    v += ((rd8(b + 16u + l) >> g) & 1u) << 4;
#endif
    precise float x = rdh(b) * float(sc) * float(v) - rdh(b + 2u) * float(m);
    return x;
}
#elif defined(T_Q6_K)
#define QK 256u
#define BB 210u
float dq(uint b, uint e)
{
    uint h = e / 128u, s = (e / 32u) % 4u, l = e % 32u;
    uint lo = rd8(b + 64u * h + 32u * (s & 1u) + l);
    uint q = ((s & 2u) != 0u ? lo >> 4 : lo & 15u) | (((rd8(b + 128u + 32u * h + l) >> (2u * s)) & 3u) << 4);
    return rdh(b + 208u) * float(sext8(rd8(b + 192u + e / 16u))) * float(int(q) - 32);
}
#elif defined(T_IQ4_XS)
#define QK 256u
#define BB 136u
float dq(uint b, uint e)
{
    uint g = e / 32u;
    uint lo = (rd8(b + 4u + g / 2u) >> (4u * (g % 2u))) & 15u;
    uint hi = (rd16(b + 2u) >> (2u * g)) & 3u;
    float d = rdh(b) * float(int(lo | (hi << 4)) - 32);
    return d * kv_iq4nl[nib32(b + 8u + 16u * g, e % 32u)];
}
#else
#error "no weight type: compile with -DT_<TYPE>"
#endif

// Element i of the row starting at byte row_b.
float weight_at(uint row_b, uint i)
{
    return dq(row_b + (i / QK) * BB, i % QK);
}

// A run of 32 values at i0 (a multiple of 32): its block's bytes and the
// index of its first value in the block.  Within a run the block stays
// the same, so a loop over the run reads the block's scales once.
uint run_block(uint row_b, uint i0)
{
    return row_b + (i0 / QK) * BB;
}

float run_at(uint b, uint i0, uint j)
{
#ifdef ONE_A_BLOCK
    return dq(b + j * BB, 0u);
#else
    return dq(b, i0 % QK + j);
#endif
}
