/* The Unicode facts the tokenizers need: codepoint classes (a generated
 * table), UTF-8 decoding exactly as lenient as llama.cpp's, and GPT-2's
 * byte <-> character map for byte-level BPE. */
#ifndef CONFAB_MODEL_UNICODE_H
#define CONFAB_MODEL_UNICODE_H

#include <stddef.h>
#include <stdint.h>

/* One byte per codepoint: the general-category class (first letter of the
 * category; none for unassigned codepoints) and White_Space. */
enum {
    CF_U_NUMBER = 0x01,    /* \p{N} */
    CF_U_LETTER = 0x02,    /* \p{L} */
    CF_U_MARK = 0x04,      /* \p{M} */
    CF_U_PUNCT = 0x08,     /* \p{P} */
    CF_U_SYMBOL = 0x10,    /* \p{S} */
    CF_U_SEPARATOR = 0x20, /* \p{Z} */
    CF_U_CONTROL = 0x40,   /* \p{C} (Cc Cf Cs Co) */
    CF_U_SPACE = 0x80,     /* White_Space */
};

#define CF_UCD_SHIFT 8
#define CF_UCD_MAX 0x110000u
#define CF_REPLACEMENT 0xFFFDu

extern const uint16_t cf_ucd_stage1[CF_UCD_MAX >> CF_UCD_SHIFT];
extern const uint8_t cf_ucd_stage2[];

static inline unsigned cf_ucd_flags(uint32_t cp)
{
    if (cp >= CF_UCD_MAX)
        return 0;
    return cf_ucd_stage2[((uint32_t)cf_ucd_stage1[cp >> CF_UCD_SHIFT] << CF_UCD_SHIFT) |
                         (cp & ((1u << CF_UCD_SHIFT) - 1))];
}

/* Bytes in the UTF-8 sequence a lead byte announces (1 for continuation
 * and invalid bytes), as llama.cpp's unicode_len_utf8. */
static inline size_t cf_utf8_len(unsigned char lead)
{
    static const unsigned char len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return len[lead >> 4];
}

/* Decode the codepoint at s[*i] (i < n) and advance *i.  Like llama.cpp:
 * overlong forms and surrogates are accepted, 4-byte forms may exceed
 * U+10FFFF, and a byte that starts no complete sequence yields U+FFFD and
 * advances by one. */
uint32_t cf_utf8_decode(const unsigned char *s, size_t n, size_t *i);


/* GPT-2's reversible byte <-> printable character map: the character a
 * byte becomes, and the byte a character stands for (-1: none). */
uint32_t cf_gpt2_byte_cp(uint8_t b);
int cf_gpt2_cp_byte(uint32_t cp);

#endif
