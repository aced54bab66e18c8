/* Printing token pieces as they come: hold back a character until all its
 * bytes are there; what can never become a valid character (RFC 3629: no
 * overlong forms, surrogates or values past U+10FFFF) prints as U+FFFD,
 * one per maximal bad subsequence. */
#include <string.h>

#include "confab/tokenizer.h"

static const char fffd[3] = {(char)0xEF, (char)0xBF, (char)0xBD};

/* Bytes a lead byte needs (0: not a lead byte). */
static unsigned seq_len(unsigned char c)
{
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return 2;
    if (c >= 0xE0 && c <= 0xEF)
        return 3;
    if (c >= 0xF0 && c <= 0xF4)
        return 4;
    return 0;
}

/* Whether c may follow the lead byte at position 1 of its sequence. */
static bool second_ok(unsigned char lead, unsigned char c)
{
    if ((c & 0xC0) != 0x80)
        return false;
    switch (lead) {
    case 0xE0:
        return c >= 0xA0;
    case 0xED:
        return c < 0xA0;
    case 0xF0:
        return c >= 0x90;
    case 0xF4:
        return c < 0x90;
    default:
        return true;
    }
}

size_t cf_utf8_stream_feed(cf_utf8_stream *s, const char *in, size_t len, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (s->n_pend) {
            bool ok = s->n_pend == 1 ? second_ok(s->pend[0], c) : (c & 0xC0) == 0x80;
            if (ok) {
                s->pend[s->n_pend++] = c;
                if (s->n_pend == s->need) {
                    memcpy(out + n, s->pend, s->n_pend);
                    n += s->n_pend;
                    s->n_pend = 0;
                }
                continue;
            }
            memcpy(out + n, fffd, 3); /* the sequence broke off */
            n += 3;
            s->n_pend = 0;
        }
        unsigned need = seq_len(c);
        if (need == 1) {
            out[n++] = (char)c;
        } else if (need == 0) {
            memcpy(out + n, fffd, 3);
            n += 3;
        } else {
            s->pend[0] = c;
            s->n_pend = 1;
            s->need = need;
        }
    }
    return n;
}

size_t cf_utf8_stream_flush(cf_utf8_stream *s, char *out)
{
    if (!s->n_pend)
        return 0;
    s->n_pend = 0;
    memcpy(out, fffd, 3);
    return 3;
}
