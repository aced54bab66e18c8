/* UTF-8 and GPT-2's byte map, following llama.cpp's unicode.cpp rules. */
#include "confab/tokenizer.h"
#include "unicode.h"

static inline int is_cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

uint32_t cf_utf8_decode(const unsigned char *s, size_t n, size_t *i)
{
    size_t k = *i;
    unsigned char c = s[k];
    if (c < 0x80) {
        *i = k + 1;
        return c;
    }
    size_t len = (c & 0x40) == 0 ? 0 : (c & 0x20) == 0 ? 2 : (c & 0x10) == 0 ? 3 : (c & 0x08) == 0 ? 4 : 0;
    /* a sequence cut off by the end of the text is invalid too */
    if (len == 0 || k + len - 1 >= n) {
        *i = k + 1;
        return CF_REPLACEMENT;
    }
    for (size_t j = 1; j < len; j++)
        if (!is_cont(s[k + j])) {
            *i = k + 1;
            return CF_REPLACEMENT;
        }
    uint32_t cp;
    if (len == 2)
        cp = (uint32_t)(c & 0x1F) << 6 | (s[k + 1] & 0x3F);
    else if (len == 3)
        cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[k + 1] & 0x3F) << 6 | (s[k + 2] & 0x3F);
    else
        cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[k + 1] & 0x3F) << 12 |
             (uint32_t)(s[k + 2] & 0x3F) << 6 | (s[k + 3] & 0x3F);
    *i = k + len;
    return cp;
}

size_t cf_utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp >= CF_UCD_MAX)
        cp = CF_REPLACEMENT;
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Printable Latin-1 bytes stand for themselves; the other 68 bytes, in
 * order (0x00-0x20, 0x7F-0xA0, 0xAD), become U+0100 .. U+0143. */
uint32_t cf_gpt2_byte_cp(uint8_t b)
{
    if (b <= 0x20)
        return 0x100u + b;
    if (b >= 0x7F && b <= 0xA0)
        return 0x100u + 33 + (b - 0x7Fu);
    if (b == 0xAD)
        return 0x100u + 67;
    return b;
}

int cf_gpt2_cp_byte(uint32_t cp)
{
    if (cp < 0x100)
        return cf_gpt2_byte_cp((uint8_t)cp) == cp ? (int)cp : -1;
    uint32_t n = cp - 0x100;
    if (n < 33)
        return (int)n;
    if (n < 67)
        return (int)(0x7F + n - 33);
    return n == 67 ? 0xAD : -1;
}
