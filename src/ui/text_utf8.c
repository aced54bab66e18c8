/* UTF-8 decoding, repair and display width; growable text buffers. */
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "text.h"

int buf_reserve(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    char *b = realloc(*buf, n);
    if (!b)
        return -1;
    *buf = b;
    *cap = n;
    return 0;
}

int utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0)
        return 0;
    if (u[0] < 0x80) {
        *cp = u[0];
        return 1;
    }
    int len;
    uint32_t c, min;
    if ((u[0] & 0xE0) == 0xC0)
        len = 2, c = u[0] & 0x1F, min = 0x80;
    else if ((u[0] & 0xF0) == 0xE0)
        len = 3, c = u[0] & 0x0F, min = 0x800;
    else if ((u[0] & 0xF8) == 0xF0)
        len = 4, c = u[0] & 0x07, min = 0x10000;
    else
        return 0;
    if ((size_t)len > n)
        return 0;
    for (int i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80)
            return 0;
        c = c << 6 | (u[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

/* The bytes of the invalid sequence at u that become one U+FFFD:
 * Unicode's maximal subpart, the longest start of a valid sequence there
 * (at least one byte).  So a character cut short counts once, whether a
 * terminal's line editor passed on all its bytes or only some. */
static size_t invalid_len(const unsigned char *u, size_t n)
{
    size_t need = u[0] >= 0xC2 && u[0] <= 0xDF   ? 2
                  : u[0] >= 0xE0 && u[0] <= 0xEF ? 3
                  : u[0] >= 0xF0 && u[0] <= 0xF4 ? 4
                                                 : 1;
    unsigned char lo = u[0] == 0xE0 ? 0xA0 : u[0] == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = u[0] == 0xED ? 0x9F : u[0] == 0xF4 ? 0x8F : 0xBF;
    size_t k = 1;
    for (; k < need && k < n && u[k] >= lo && u[k] <= hi; k++)
        lo = 0x80, hi = 0xBF;
    return k;
}

char *utf8_sanitize(const char *s, size_t n, int *n_bad)
{
    /* Worst case: every byte becomes three. */
    char *out = malloc(n * 3 + 1), *o = out;
    int bad = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int len = utf8_decode(s + i, n - i, &cp);
        if (len == 0 || cp == 0) {
            memcpy(o, UTF8_REPLACEMENT, 3);
            o += 3;
            i += len ? 1 : invalid_len((const unsigned char *)s + i, n - i);
            bad++;
        } else {
            memcpy(o, s + i, (size_t)len);
            o += len;
            i += (size_t)len;
        }
    }
    *o = 0;
    if (n_bad)
        *n_bad = bad;
    return out;
}

char *text_for_terminal(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(n * 3 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int len = utf8_decode(s + i, n - i, &cp);
        if (len == 0 || (cp < 0x20 && cp != '\n' && cp != '\t' && cp != '\r') ||
            (cp >= 0x7F && cp < 0xA0)) {
            memcpy(o, UTF8_REPLACEMENT, 3);
            o += 3;
            i += len ? (size_t)len : 1;
            continue;
        }
        if (cp != '\r') {
            memcpy(o, s + i, (size_t)len);
            o += len;
        }
        i += (size_t)len;
    }
    *o = 0;
    return out;
}

int cp_width(uint32_t cp)
{
    if (cp == '\t')
        return 1;
    int w = wcwidth((wchar_t)cp);
    if (w >= 0)
        return w;
    /* Not printable in this locale (e.g. a C locale): keep the column count
     * honest for what the terminal will likely show. */
    return cp < 0x20 || cp == 0x7F ? 0 : 1;
}

int utf8_width(const char *s, size_t n)
{
    int w = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int len = utf8_decode(s + i, n - i, &cp);
        if (len == 0)
            len = 1, cp = 0xFFFD;
        w += cp_width(cp);
        i += (size_t)len;
    }
    return w;
}
