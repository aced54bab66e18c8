/* Pre-tokenizers of byte-level BPE vocabularies: each tokenizer.ggml.pre
 * value llama.cpp b4748 knows splits text into words with a list of regexes
 * applied in turn, each one cutting every piece the previous ones left into
 * its matches and the gaps between them.  The regexes are written here as
 * matchers over codepoint classes.
 *
 * llama.cpp runs two of the patterns through hand-written code (GPT-2's and
 * Llama 3's) and the rest through std::regex: on a "collapsed" text when the
 * pattern uses \p{..} (each non-ASCII codepoint replaced by one byte naming
 * its class, so \p{L} is [<letter byte>A-Za-z]; its \p{S} forgets '~'), or
 * with std::wregex otherwise (non-ASCII White_Space replaced by '\v' first,
 * so \s only ever sees ASCII).  Both quirks are reproduced. */
#include <string.h>

#include "tokenizer_internal.h"
#include "unicode.h"

typedef struct pt_text {
    const uint32_t *cp;
    const uint8_t *fl;
} pt_text;

enum {
    ST_CRLF,          /* [\r\n] */
    ST_DS_LETTERS,    /* \s?[A-Za-zµÀ-Ö...]+ (deepseek-llm's letters, wregex) */
    ST_DS_PUNCT,      /* \s?[!-/:-~！-／：-～‘-‟　-。]+ */
    ST_SPACE_END,     /* \s+$ */
    ST_DS_CJK,        /* [一-龥ࠀ-一가-퟿]+ */
    ST_DS3_CJK,       /* [一-龥぀-ゟ゠-ヿ]+ */
    ST_NUM_RUN,       /* \p{N}+ */
    ST_NUM_1,         /* \p{N} */
    ST_NUM_1_3,       /* \p{N}{1,3} */
    ST_SPACE_LETTERS, /* \s?\p{L}+ */
    ST_SPACE_PUNCT,   /* \s?\p{P}+ */
    ST_DIGIT3,        /* [0-9][0-9][0-9] */
    ST_PUNCT_DEFAULT, /* [\p{P}\$\+<=>\^~\|]+ */
    ST_PUNCT_FALCON,  /* [\p{P}\$\+<=>\^~\|`]+ */
    ST_GPT2,          /* llama.cpp's hand-written GPT-2 splitter */
    ST_LLAMA3,        /* Llama 3's pattern (\p{N}{1,3}) */
    ST_QWEN2,         /* the same with \p{N} */
    ST_DS3_MAIN,      /* deepseek-v3's main pattern */
    ST_PORO,          /*  ?[^(\s|.,!?…。，、।۔،)]+ */
    ST_TEKKEN,        /* Mistral Nemo's cased-word pattern */
    ST_GPT4O,         /* the same with contractions and \p{N}{1,3} */
    ST_CHAM_SENTINEL, /* <sentinel:[0-9]+> */
    ST_CHAM_IMAGE,    /* (IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z */
    ST_CHAM_SPACE,    /* ([\t\n]|    |  ) */
    ST_CHAM_PUNCT,    /* [\p{P}!-/:-@\[-`{-~] */
    ST_END = -1,
};

#define MAX_STAGES 6 /* at most, before ST_END */

static const struct pretok_def {
    const char *names; /* space-separated tokenizer.ggml.pre values */
    signed char stages[MAX_STAGES + 1];
    bool ignore_merges, add_bos;
} defs[] = {
    {"default", {ST_PUNCT_DEFAULT, ST_GPT2, ST_NUM_RUN, ST_DIGIT3, ST_END}, false, false},
    {"llama3 llama-v3 llama-bpe falcon3", {ST_LLAMA3, ST_END}, true, true},
    {"dbrx smaug-bpe chatglm-bpe", {ST_LLAMA3, ST_END}, false, false},
    {"deepseek-llm",
     {ST_CRLF, ST_DS_LETTERS, ST_DS_PUNCT, ST_SPACE_END, ST_DS_CJK, ST_NUM_RUN, ST_END},
     false, false},
    {"deepseek-v3", {ST_NUM_1_3, ST_DS3_CJK, ST_DS3_MAIN, ST_END}, false, false},
    {"deepseek-coder",
     {ST_CRLF, ST_SPACE_LETTERS, ST_SPACE_PUNCT, ST_DS_CJK, ST_NUM_1, ST_END}, false, false},
    {"falcon", {ST_PUNCT_FALCON, ST_GPT2, ST_DIGIT3, ST_END}, false, false},
    {"starcoder refact command-r smollm codeshell exaone minerva-7b", {ST_NUM_1, ST_GPT2, ST_END},
     false, false},
    {"gpt-2 phi-2 jina-es jina-de gigachat jina-v1-en jina-v2-es jina-v2-de jina-v2-code "
     "roberta-bpe mpt olmo jais",
     {ST_GPT2, ST_END}, false, false},
    {"qwen2 deepseek-r1-qwen megrez stablelm2", {ST_QWEN2, ST_END}, false, false},
    {"poro-chat bloom gpt3-finnish", {ST_PORO, ST_END}, false, false},
    {"viking", {ST_PORO, ST_NUM_1, ST_END}, false, false},
    {"tekken", {ST_TEKKEN, ST_END}, true, true},
    {"gpt-4o", {ST_GPT4O, ST_END}, false, false},
    {"chameleon",
     {ST_CHAM_SENTINEL, ST_CHAM_IMAGE, ST_CHAM_SPACE, ST_NUM_1, ST_CHAM_PUNCT, ST_GPT2, ST_END},
     false, true},
};

static bool name_in(const char *names, const char *name, size_t len)
{
    for (const char *p = names; *p;) {
        size_t n = strcspn(p, " ");
        if (n == len && memcmp(p, name, len) == 0)
            return true;
        p += n;
        p += *p == ' ';
    }
    return false;
}

int cf_pretok_find(const char *name, size_t len, cf_pretok *out)
{
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (name_in(defs[i].names, name, len)) {
            out->def = (int)i;
            out->ignore_merges = defs[i].ignore_merges;
            out->add_bos = defs[i].add_bos;
            return 0;
        }
    return -1;
}

size_t cf_pretok_list(char *buf, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, "%s%s",
                              i ? " " : "", defs[i].names);
    return n;
}

/* ---- classes ------------------------------------------------------------- */

typedef struct range {
    uint32_t lo, hi;
} range;

static bool in_ranges(const range *r, size_t n, uint32_t c)
{
    for (size_t i = 0; i < n; i++)
        if (c >= r[i].lo && c <= r[i].hi)
            return true;
    return false;
}

/* deepseek-llm's letter class as written in llama.cpp (a list of cased
 * letters, Armenian and Georgian lower case left out). */
static const range ds_letters[] = {
    {0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x1BA},
    {0x1BC, 0x1BF}, {0x1C4, 0x293}, {0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x377},
    {0x37B, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C},
    {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481}, {0x48A, 0x52F}, {0x531, 0x556},
    {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF},
    {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D},
    {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE},
    {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC},
    {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113},
    {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126}, {0x2128, 0x2128},
    {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149},
    {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE},
    {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F}, {0xA771, 0xA787},
    {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A},
    {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};
static const range ds_punct[] = {{0x21, 0x2F},     {0x3A, 0x7E},     {0xFF01, 0xFF0F},
                                 {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002}};
static const range ds_cjk[] = {{0x4E00, 0x9FA5}, {0x800, 0x4E00}, {0xAC00, 0xD7FF}};
static const range ds3_cjk[] = {{0x4E00, 0x9FA5}, {0x3040, 0x309F}, {0x30A0, 0x30FF}};
/* what poro's [^(\s|.,!?…。，、।۔،)] leaves out, besides \s */
static const range poro_stop[] = {{'(', ')'}, {'|', '|'},       {'.', '.'},       {',', ','},
                                  {'!', '!'}, {'?', '?'},       {0x2026, 0x2026}, {0x3002, 0x3002},
                                  {0xFF0C, 0xFF0C}, {0x3001, 0x3001}, {0x964, 0x964},
                                  {0x6D4, 0x6D4},   {0x60C, 0x60C}};
#define NR(a) (sizeof(a) / sizeof((a)[0]))

static inline bool ascii_space(uint32_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* \s as std::regex sees it after llama.cpp's substitution */
static inline bool rx_space(const pt_text *t, size_t p)
{
    uint32_t c = t->cp[p];
    return c < 0x80 ? ascii_space(c) : (t->fl[p] & CF_U_SPACE) != 0;
}

/* a codepoint as std::wregex sees it: non-ASCII White_Space is '\v' */
static inline uint32_t wide_cp(const pt_text *t, size_t p)
{
    uint32_t c = t->cp[p];
    return c >= 0x80 && (t->fl[p] & CF_U_SPACE) ? '\v' : c;
}

static inline bool is_l(const pt_text *t, size_t p)
{
    return t->fl[p] & CF_U_LETTER;
}

static inline bool is_n(const pt_text *t, size_t p)
{
    return t->fl[p] & CF_U_NUMBER;
}

static inline bool is_p(const pt_text *t, size_t p)
{
    return t->fl[p] & CF_U_PUNCT;
}

/* collapsed \p{S}: the ASCII part is $+<=>^`| */
static inline bool is_s(const pt_text *t, size_t p)
{
    return (t->fl[p] & CF_U_SYMBOL) && t->cp[p] != '~';
}

static inline bool is_crlf(uint32_t c)
{
    return c == '\r' || c == '\n';
}

/* [^\s\p{L}\p{N}] */
static inline bool not_sln(const pt_text *t, size_t p)
{
    return !rx_space(t, p) && !is_l(t, p) && !is_n(t, p);
}

typedef bool (*cls_fn)(const pt_text *t, size_t p);

static size_t run(const pt_text *t, size_t p, size_t end, cls_fn f)
{
    while (p < end && f(t, p))
        p++;
    return p;
}

/* \s?X+ */
static size_t opt_space_run(const pt_text *t, size_t p, size_t end, cls_fn f)
{
    if (rx_space(t, p) && p + 1 < end && f(t, p + 1))
        return run(t, p + 1, end, f);
    return f(t, p) ? run(t, p, end, f) : p;
}

static bool w_ds_letter(const pt_text *t, size_t p)
{
    return in_ranges(ds_letters, NR(ds_letters), wide_cp(t, p));
}

static bool w_ds_punct(const pt_text *t, size_t p)
{
    return in_ranges(ds_punct, NR(ds_punct), wide_cp(t, p));
}

static bool w_ds_cjk(const pt_text *t, size_t p)
{
    return in_ranges(ds_cjk, NR(ds_cjk), wide_cp(t, p));
}

static bool w_ds3_cjk(const pt_text *t, size_t p)
{
    return in_ranges(ds3_cjk, NR(ds3_cjk), wide_cp(t, p));
}

static bool w_poro_word(const pt_text *t, size_t p)
{
    uint32_t c = wide_cp(t, p);
    return !ascii_space(c) && !in_ranges(poro_stop, NR(poro_stop), c);
}

static bool punct_default(const pt_text *t, size_t p)
{
    uint32_t c = t->cp[p];
    return is_p(t, p) || (c < 0x80 && c && strchr("$+<=>^~|", (int)c));
}

static bool punct_falcon(const pt_text *t, size_t p)
{
    return punct_default(t, p) || t->cp[p] == '`';
}

static bool ascii_digit(const pt_text *t, size_t p)
{
    return t->cp[p] >= '0' && t->cp[p] <= '9';
}

/* \p{N}{1,k} at p (p when p is no number) */
static size_t digits_upto(const pt_text *t, size_t p, size_t end, size_t k)
{
    size_t q = p;
    while (q < end && q - p < k && is_n(t, q))
        q++;
    return q;
}

/* ---- the composite patterns --------------------------------------------- */

/* (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]): its length or 0 */
static size_t contraction(const pt_text *t, size_t p, size_t end, bool fold)
{
    if (p + 1 >= end || t->cp[p] != '\'')
        return 0;
    uint32_t a = t->cp[p + 1], b = p + 2 < end ? t->cp[p + 2] : 0;
    if (fold) {
        a = a >= 'A' && a <= 'Z' ? a + 32 : a;
        b = b >= 'A' && b <= 'Z' ? b + 32 : b;
    }
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
        return 3;
    return 0;
}

/* The whitespace alternatives shared by the newer patterns:
 * \s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t space_tail(const pt_text *t, size_t p, size_t end)
{
    size_t q = p, last_nl = 0;
    while (q < end && rx_space(t, q)) {
        if (is_crlf(t->cp[q]))
            last_nl = q + 1;
        q++;
    }
    if (last_nl)
        return last_nl;
    if (q == end || q - p < 2)
        return q;
    return q - 1;
}

/* [^\r\n\p{L}\p{N}] */
static inline bool word_lead(const pt_text *t, size_t p)
{
    return !is_crlf(t->cp[p]) && !is_l(t, p) && !is_n(t, p);
}

/* Llama 3 and Qwen2:
 * (?:'[sS]|...)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,k}| ?[^\s\p{L}\p{N}]+[\r\n]*|
 * \s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t m_llama3(const pt_text *t, size_t p, size_t end, size_t max_digits)
{
    size_t c = contraction(t, p, end, true);
    if (c)
        return p + c;
    if (is_l(t, p))
        return run(t, p, end, is_l);
    if (word_lead(t, p) && p + 1 < end && is_l(t, p + 1))
        return run(t, p + 1, end, is_l);
    if (is_n(t, p))
        return digits_upto(t, p, end, max_digits);
    size_t s = t->cp[p] == ' ' && p + 1 < end && not_sln(t, p + 1) ? p + 1 : p;
    if (not_sln(t, s)) {
        size_t q = run(t, s, end, not_sln);
        while (q < end && is_crlf(t->cp[q]))
            q++;
        return q;
    }
    return space_tail(t, p, end);
}

/* llama.cpp's hand-written GPT-2 splitter:
 * 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * (its classes are the codepoint flags, so \s is White_Space) */
static inline bool u_space(const pt_text *t, size_t p)
{
    return t->fl[p] & CF_U_SPACE;
}

static inline bool u_other(const pt_text *t, size_t p)
{
    return !(t->fl[p] & (CF_U_SPACE | CF_U_LETTER | CF_U_NUMBER));
}

static size_t m_gpt2(const pt_text *t, size_t p, size_t end)
{
    size_t c = contraction(t, p, end, false);
    if (c)
        return p + c;
    size_t s = p + (t->cp[p] == ' ' && p + 1 < end);
    if (is_l(t, s))
        return run(t, s, end, is_l);
    if (is_n(t, s))
        return run(t, s, end, is_n);
    if (u_other(t, s))
        return run(t, s, end, u_other);
    size_t q = run(t, p, end, u_space);
    if (q - p > 1 && q < end)
        return q - 1;
    return q > p ? q : p + 1;
}

/* deepseek-v3:
 * [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
 *  ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static bool ascii_letter(const pt_text *t, size_t p)
{
    uint32_t c = t->cp[p];
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool ascii_punct(uint32_t c)
{
    return c >= 0x21 && c <= 0x7E && !(c >= '0' && c <= '9') && !(c >= 'A' && c <= 'Z') &&
           !(c >= 'a' && c <= 'z');
}

static bool is_lm(const pt_text *t, size_t p)
{
    return t->fl[p] & (CF_U_LETTER | CF_U_MARK);
}

static bool is_ps(const pt_text *t, size_t p)
{
    return is_p(t, p) || is_s(t, p);
}

static size_t m_ds3(const pt_text *t, size_t p, size_t end)
{
    if (ascii_punct(t->cp[p]) && p + 1 < end && ascii_letter(t, p + 1))
        return run(t, p + 1, end, ascii_letter);
    bool lead = !is_crlf(t->cp[p]) && !is_l(t, p) && !is_ps(t, p);
    if (lead && p + 1 < end && is_lm(t, p + 1))
        return run(t, p + 1, end, is_lm);
    if (is_lm(t, p))
        return run(t, p, end, is_lm);
    size_t s = t->cp[p] == ' ' && p + 1 < end && is_ps(t, p + 1) ? p + 1 : p;
    if (is_ps(t, s)) {
        size_t q = run(t, s, end, is_ps);
        while (q < end && is_crlf(t->cp[q]))
            q++;
        return q;
    }
    return space_tail(t, p, end);
}

/* Tekken and GPT-4o: words of upper-case letters then lower-case ones,
 * with X = (?=[\p{L}])([^a-z]) and Y = (?=[\p{L}])([^A-Z]):
 * [^\r\n\p{L}\p{N}]?X*Y+C?|[^\r\n\p{L}\p{N}]?X+Y*C?|\p{N}{1,k}|
 *  ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * where C is the contraction group (GPT-4o) or nothing (Tekken). */
static bool is_x(const pt_text *t, size_t p)
{
    return is_l(t, p) && !(t->cp[p] >= 'a' && t->cp[p] <= 'z');
}

static bool is_y(const pt_text *t, size_t p)
{
    return is_l(t, p) && !(t->cp[p] >= 'A' && t->cp[p] <= 'Z');
}

/* X*Y+ from s (backtracking X* until Y+ can start), or s */
static size_t x_star_y_plus(const pt_text *t, size_t s, size_t end)
{
    size_t x = run(t, s, end, is_x);
    for (size_t i = x + 1; i-- > s;)
        if (i < end && is_y(t, i))
            return run(t, i, end, is_y);
    return s;
}

static size_t x_plus_y_star(const pt_text *t, size_t s, size_t end)
{
    size_t x = run(t, s, end, is_x);
    return x > s ? run(t, x, end, is_y) : s;
}

static size_t m_cased(const pt_text *t, size_t p, size_t end, bool gpt4o)
{
    bool lead = word_lead(t, p) && p + 1 < end;
    size_t (*const alts[2])(const pt_text *, size_t, size_t) = {x_star_y_plus, x_plus_y_star};
    for (int a = 0; a < 2; a++) {
        size_t e = lead ? alts[a](t, p + 1, end) : p + 1;
        if (e == p + 1)
            e = alts[a](t, p, end);
        if (e > p)
            return gpt4o ? e + contraction(t, e, end, true) : e;
    }
    if (is_n(t, p))
        return digits_upto(t, p, end, gpt4o ? 3 : 1);
    size_t s = t->cp[p] == ' ' && p + 1 < end && not_sln(t, p + 1) ? p + 1 : p;
    if (not_sln(t, s)) {
        size_t q = run(t, s, end, not_sln);
        while (q < end && (is_crlf(t->cp[q]) || t->cp[q] == '/'))
            q++;
        return q;
    }
    return space_tail(t, p, end);
}

/* Chameleon's image and sentinel tokens, spelled out in text */
static size_t literal(const pt_text *t, size_t p, size_t end, const char *s)
{
    for (; *s; s++, p++)
        if (p >= end || t->cp[p] != (unsigned char)*s)
            return 0;
    return p;
}

static size_t m_sentinel(const pt_text *t, size_t p, size_t end)
{
    size_t q = literal(t, p, end, "<sentinel:");
    if (!q || q >= end || !ascii_digit(t, q))
        return p;
    q = run(t, q, end, ascii_digit);
    return q < end && t->cp[q] == '>' ? q + 1 : p;
}

static size_t m_image(const pt_text *t, size_t p, size_t end)
{
    size_t q = literal(t, p, end, "IMGIMG"), k = 0;
    if (!q)
        return p;
    while (q + k < end && k < 4 && t->cp[q + k] >= 'A' && t->cp[q + k] <= 'I')
        k++;
    return k && q + k < end && t->cp[q + k] == 'Z' ? q + k + 1 : p;
}

static size_t m_cham_space(const pt_text *t, size_t p, size_t end)
{
    if (t->cp[p] == '\t' || t->cp[p] == '\n')
        return p + 1;
    if (literal(t, p, end, "    "))
        return p + 4;
    return literal(t, p, end, "  ") ? p + 2 : p;
}

static bool cham_punct(const pt_text *t, size_t p)
{
    return is_p(t, p) || ascii_punct(t->cp[p]);
}

/* ---- driver --------------------------------------------------------------- */

/* One match at p (its end), or p when the pattern does not match there. */
static size_t match(int st, const pt_text *t, size_t p, size_t end)
{
    switch (st) {
    case ST_CRLF:
        return is_crlf(t->cp[p]) ? p + 1 : p;
    case ST_DS_LETTERS:
        return opt_space_run(t, p, end, w_ds_letter);
    case ST_DS_PUNCT:
        return opt_space_run(t, p, end, w_ds_punct);
    case ST_DS_CJK:
        return run(t, p, end, w_ds_cjk);
    case ST_DS3_CJK:
        return run(t, p, end, w_ds3_cjk);
    case ST_NUM_RUN:
        return run(t, p, end, is_n);
    case ST_NUM_1:
        return is_n(t, p) ? p + 1 : p;
    case ST_NUM_1_3:
        return digits_upto(t, p, end, 3);
    case ST_SPACE_LETTERS:
        return opt_space_run(t, p, end, is_l);
    case ST_SPACE_PUNCT:
        return opt_space_run(t, p, end, is_p);
    case ST_DIGIT3:
        return p + 2 < end && ascii_digit(t, p) && ascii_digit(t, p + 1) && ascii_digit(t, p + 2)
                   ? p + 3
                   : p;
    case ST_PUNCT_DEFAULT:
        return run(t, p, end, punct_default);
    case ST_PUNCT_FALCON:
        return run(t, p, end, punct_falcon);
    case ST_GPT2:
        return m_gpt2(t, p, end);
    case ST_LLAMA3:
        return m_llama3(t, p, end, 3);
    case ST_QWEN2:
        return m_llama3(t, p, end, 1);
    case ST_DS3_MAIN:
        return m_ds3(t, p, end);
    case ST_PORO:
        if (t->cp[p] == ' ' && p + 1 < end && w_poro_word(t, p + 1))
            return run(t, p + 1, end, w_poro_word);
        return run(t, p, end, w_poro_word);
    case ST_TEKKEN:
        return m_cased(t, p, end, false);
    case ST_GPT4O:
        return m_cased(t, p, end, true);
    case ST_CHAM_SENTINEL:
        return m_sentinel(t, p, end);
    case ST_CHAM_IMAGE:
        return m_image(t, p, end);
    case ST_CHAM_SPACE:
        return m_cham_space(t, p, end);
    case ST_CHAM_PUNCT:
        return cham_punct(t, p) ? p + 1 : p;
    }
    return p;
}

/* Split [a, b) the way std::regex_iterator walks it: each match, and the
 * text between matches, becomes a piece. */
static size_t split_chunk(int st, const pt_text *t, size_t a, size_t b, uint32_t *out)
{
    size_t n = 0, gap = a;
    if (st == ST_SPACE_END) {
        /* \s+$ only ever matches the whitespace that ends the piece */
        size_t s = b;
        while (s > a && ascii_space(wide_cp(t, s - 1)))
            s--;
        if (s > a)
            out[n++] = (uint32_t)(s - a);
        if (s < b)
            out[n++] = (uint32_t)(b - s);
        return n;
    }
    for (size_t p = a; p < b;) {
        size_t e = match(st, t, p, b);
        if (e == p) {
            p++;
            continue;
        }
        if (gap < p)
            out[n++] = (uint32_t)(p - gap);
        out[n++] = (uint32_t)(e - p);
        p = gap = e;
    }
    if (gap < b)
        out[n++] = (uint32_t)(b - gap);
    return n;
}

size_t cf_pretok_split(const cf_pretok *pt, const uint32_t *cp, const uint8_t *fl, size_t n,
                       uint32_t *words, uint32_t *tmp)
{
    if (n == 0)
        return 0;
    const pt_text t = {cp, fl};
    const signed char *st = defs[pt->def].stages;
    /* ping-pong between the two buffers so the last stage writes words */
    size_t n_stages = 0;
    while (st[n_stages] != ST_END)
        n_stages++;
    uint32_t *in = n_stages % 2 ? tmp : words, *out = n_stages % 2 ? words : tmp;
    in[0] = (uint32_t)n;
    size_t n_in = 1;
    for (size_t s = 0; s < n_stages; s++) {
        size_t n_out = 0, pos = 0;
        for (size_t i = 0; i < n_in; i++) {
            n_out += split_chunk(st[s], &t, pos, pos + in[i], out + n_out);
            pos += in[i];
        }
        uint32_t *sw = in;
        in = out;
        out = sw;
        n_in = n_out;
    }
    return n_in;
}
