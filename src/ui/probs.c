/* Token probabilities on the terminal: the tone a streamed token is
 * coloured with (/set probs on), and /show probs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probs.h"
#include "text.h"

int prob_tone(float p)
{
    if (p < 0 || p >= 0.8f)
        return 0;
    return p >= 0.5f ? 1 : p >= 0.3f ? 2 : p >= 0.1f ? 3 : 4;
}

/* Mid-luminance colours of the 256-colour cube (green, olive, orange,
 * red) read on dark and light backgrounds alike; the likely tokens keep
 * the terminal's own colour.  Without colour only the unlikely ones
 * stand out, underlined. */
const char *prob_sgr(int tone, bool color)
{
    static const char *const sgr[PROB_TONES] = {"", "\033[38;5;28m", "\033[38;5;136m",
                                                "\033[38;5;166m", "\033[38;5;160m"};
    if (color)
        return sgr[tone];
    return tone == PROB_TONES - 1 ? "\033[4m" : "";
}

const short prob_color256[PROB_TONES] = {-1, 28, 136, 166, 160};

/* A token's text quoted, newlines and other controls escaped, and bytes
 * that are not whole UTF-8 (a byte-level token's piece of a character)
 * as \xNN. */
static void quote(const char *s, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    out[k++] = '"';
    for (size_t i = 0; i < n && k + 6 < cap;) {
        unsigned char ch = (unsigned char)s[i];
        uint32_t cp;
        int len = utf8_decode(s + i, n - i, &cp);
        if (len > 1 && k + (size_t)len + 2 < cap) {
            memcpy(out + k, s + i, (size_t)len);
            k += (size_t)len;
            i += (size_t)len;
            continue;
        }
        if (ch == '\n')
            k += (size_t)snprintf(out + k, cap - k, "\\n");
        else if (ch == '\t')
            k += (size_t)snprintf(out + k, cap - k, "\\t");
        else if (ch == '"' || ch == '\\')
            k += (size_t)snprintf(out + k, cap - k, "\\%c", ch);
        else if (ch < 0x20 || ch >= 0x7f)
            k += (size_t)snprintf(out + k, cap - k, "\\x%02x", ch);
        else
            out[k++] = (char)ch;
        i++;
    }
    out[k++] = '"';
    out[k] = 0;
}

/* The alternatives a line shows: the sampler keeps more (for serve's
 * top_logprobs) than fit beside a token. */
enum { SHOWN_TOP = 5 };

static void token_quoted(chat *c, int32_t id, char *out, size_t cap)
{
    cf_str t = cf_session_token_text(c->s, id);
    quote(t.ptr ? t.ptr : "", t.len, out, cap);
}

void show_probs(chat *c, const char *arg)
{
    int want, at = chat_pick_reply(c, arg, "/show probs", &want);
    if (at < 0)
        return;
    int n;
    const cf_token_prob *tp = cf_session_probs(c->s, at, &n);
    if (!tp) {
        chat_say(c, OUT_INFO, "reply %d has no probabilities: they are recorded while "
                              "/set probs is on", want);
        return;
    }
    size_t cap = (size_t)n * 256 + 256, used = 0;
    char *out = malloc(cap);
    if (!out) {
        chat_say(c, OUT_ERROR, "out of memory");
        return;
    }
    double sum = 0;
    int described = 0, outside = 0;
    used += (size_t)snprintf(out + used, cap - used, "     p  token                top %d\n",
                             SHOWN_TOP);
    for (int i = 0; i < n; i++) {
        char tok[64], alt[64];
        token_quoted(c, tp[i].id, tok, sizeof tok);
        if (tp[i].p < 0) {
            used += (size_t)snprintf(out + used, cap - used, "     -  %s\n", tok);
            continue;
        }
        described++;
        if (tp[i].p > 0)
            sum += log(tp[i].p);
        else
            outside++;
        used += (size_t)snprintf(out + used, cap - used, "%6.3f  %-20s", (double)tp[i].p, tok);
        for (int k = 0; k < tp[i].n_top && k < SHOWN_TOP; k++) {
            token_quoted(c, tp[i].top_id[k], alt, sizeof alt);
            used += (size_t)snprintf(out + used, cap - used, "%s%s %.3f", k ? " · " : " ", alt,
                                     (double)tp[i].top_p[k]);
        }
        used += (size_t)snprintf(out + used, cap - used, "\n");
    }
    int counted = described - outside;
    double mean = counted ? sum / counted : 0;
    snprintf(out + used, cap - used,
             "reply %d: %d tokens, mean log-prob %.3f, perplexity %.2f%s", want, n, mean,
             exp(-mean),
             outside ? " (tokens the sampler's filters had removed are left out)" : "");
    chat_say(c, OUT_INFO, "%s", out);
    free(out);
}
