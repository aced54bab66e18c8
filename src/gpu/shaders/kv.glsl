// A cache's values: F32, F16 or BF16 (cf_kv_type's numbers), kept in
// 32-bit words: one a value (F32) or two (F16, BF16: the lower half first).
#define KV_F32 0u
#define KV_F16 1u
#define KV_BF16 2u

// As cf_f32_to_bf16: to nearest even, a NaN kept quiet.
uint bf16_of(float f)
{
    const uint x = floatBitsToUint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (x >> 16) | 0x40u;
    return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

// The word of two 16-bit values a, b.
uint pack2(uint type, float a, float b)
{
    return type == KV_F16 ? packHalf2x16(vec2(a, b)) : bf16_of(a) | (bf16_of(b) << 16);
}

// The two 16-bit values of a word.
vec2 unpack2(uint type, uint w)
{
    return type == KV_F16 ? unpackHalf2x16(w) : vec2(uintBitsToFloat(w << 16), uintBitsToFloat(w & 0xffff0000u));
}
