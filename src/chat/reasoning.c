/* Reasoning markers per model family and the streaming split of a reply
 * (see reasoning.h). */
#include <string.h>

#include "reasoning.h"

/* Tag families: the opening and closing tag; what a template's source
 * must contain to be of the family. */
typedef struct tag_family {
    const char *name, *open, *close, *sign;
} tag_family;

static const tag_family tags[] = {
    [RF_NONE] = {"none", NULL, NULL, NULL},
    [RF_THINK] = {"think", "<think>", "</think>", "<think>"},
    [RF_GEMMA4] = {"gemma4", "<|channel>thought", "<channel|>", "<|channel>"},
    [RF_MISTRAL] = {"mistral", "[THINK]", "[/THINK]", "[THINK]"},
    [RF_COMMAND_R] = {"command-r", "<|START_THINKING|>", "<|END_THINKING|>", "<|START_THINKING|>"},
    [RF_HARMONY] = {"gpt-oss", NULL, NULL, "<|channel|>"},
};

/* gpt-oss's markup */
enum { HM_START, HM_CHANNEL, HM_MESSAGE, HM_END, HM_RETURN, HM_CALL, HM_COUNT };
static const char *const harmony[HM_COUNT] = {
    "<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>",
};

enum state {
    ST_START,   /* tags: nothing but blanks yet; the opening tag may come */
    ST_REASON,  /* tags: inside the thinking */
    ST_CONTENT, /* tags: the answer; no tag is looked for any more */
    H_OUT,      /* gpt-oss: between messages (stray text is content) */
    H_HEADER,   /* gpt-oss: <|start|> or <|channel|> ... <|message|> */
    /* (a header is short and one line: its text is held until it is
     * known to be one, else it was content) */
    H_REASON,   /* gpt-oss: the analysis channel's text */
    H_CONTENT,  /* gpt-oss: any other channel's text */
};

enum { M_NONE = -1, M_PARTIAL = -2, HEADER_MAX = 128 };

const char *reasoning_family_name(reasoning_family f)
{
    return tags[f].name;
}

reasoning_family reasoning_family_named(const char *name)
{
    for (size_t f = RF_THINK; name && f <= RF_HARMONY; f++)
        if (!strcmp(tags[f].name, name))
            return (reasoning_family)f;
    return RF_NONE;
}

reasoning_family reasoning_detect(const char *src, size_t len)
{
    /* gpt-oss first: its markers are the most specific */
    static const reasoning_family order[] = {RF_HARMONY, RF_GEMMA4, RF_MISTRAL, RF_COMMAND_R,
                                             RF_THINK};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const char *sign = tags[order[i]].sign;
        if (memmem(src, len, sign, strlen(sign)))
            return order[i];
    }
    return RF_NONE;
}

/* The family's markers, NULL-terminated, into list (room for HM_COUNT + 1). */
static void markers(reasoning_family f, const char **list)
{
    size_t n = 0;
    if (f == RF_HARMONY)
        for (int i = 0; i < HM_COUNT; i++)
            list[n++] = harmony[i];
    else if (f != RF_NONE) {
        list[n++] = tags[f].open;
        list[n++] = tags[f].close;
    }
    list[n] = NULL;
}

bool reasoning_is_markup(reasoning_family f, const char *text, size_t len)
{
    const char *list[HM_COUNT + 1];
    markers(f, list);
    for (size_t i = 0; len > 0 && list[i]; i++)
        if (memmem(list[i], strlen(list[i]), text, len))
            return true;
    return false;
}

bool reasoning_continues(reasoning_family f, const char *text, size_t len)
{
    return f == RF_HARMONY && len == strlen(harmony[HM_END]) && !memcmp(text, harmony[HM_END], len);
}

/* ---- the splitter ------------------------------------------------------------ */

void split_init(splitter *sp, reasoning_family f)
{
    memset(sp, 0, sizeof *sp);
    sp->fam = f;
    sp->state = f == RF_HARMONY ? H_OUT : f == RF_NONE ? ST_CONTENT : ST_START;
}

bool split_in_reasoning(const splitter *sp)
{
    return sp->state == ST_REASON || sp->state == H_REASON;
}

bool split_in_header(const splitter *sp)
{
    return sp->state == H_HEADER;
}

/* The markers looked for in the current state, as a bit mask over the
 * family's list. */
static unsigned wanted(const splitter *sp)
{
    switch (sp->state) {
    case ST_START:
        return 1u << 0;
    case ST_REASON:
        return 1u << 1;
    case H_OUT:
    case H_HEADER: /* an end marker there ends what was no header */
        return (1u << HM_COUNT) - 1;
    case H_REASON:
    case H_CONTENT:
        return 1u << HM_START | 1u << HM_CHANNEL | 1u << HM_END | 1u << HM_RETURN | 1u << HM_CALL;
    default:
        return 0;
    }
}

/* Which wanted marker text[0, n) starts with; M_PARTIAL when the text
 * ends inside one. */
static int match(const char *const *list, unsigned mask, const char *text, size_t n)
{
    int res = M_NONE;
    for (int i = 0; list[i]; i++) {
        if (!(mask & 1u << i) || list[i][0] != text[0])
            continue;
        size_t k = strlen(list[i]);
        if (n >= k && !memcmp(text, list[i], k))
            return i;
        if (n < k && !memcmp(text, list[i], n))
            res = M_PARTIAL;
    }
    return res;
}

/* Body ranges are gathered into runs, emitted when a run breaks. */
typedef struct run {
    split_emit emit;
    void *ud;
    split_kind kind;
    size_t at, len;
} run;

static void run_flush(run *r)
{
    if (r->len && r->emit)
        r->emit(r->ud, r->kind, r->at, r->len);
    r->len = 0;
}

static void run_put(run *r, split_kind kind, size_t at, size_t len)
{
    if (!len)
        return;
    if (r->len && r->kind == kind && r->at + r->len == at) {
        r->len += len;
        return;
    }
    run_flush(r);
    *r = (run){r->emit, r->ud, kind, at, len};
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void hold(splitter *sp, size_t p)
{
    if (!sp->ws_len)
        sp->ws_at = p;
    sp->ws_len++;
}

static void release(splitter *sp, run *r, split_kind kind)
{
    run_put(r, kind, sp->ws_at, sp->ws_len);
    sp->ws_len = 0;
}

/* The header's held text was none: it is content, and the state `state`. */
static void no_header(splitter *sp, run *r, int state)
{
    run_put(r, SPLIT_CONTENT, sp->hdr_at, sp->hdr_len);
    sp->hdr_len = 0;
    sp->state = state;
}

static void body_byte(splitter *sp, run *r, size_t p, char c)
{
    switch (sp->state) {
    case ST_START:
        if (blank(c)) {
            hold(sp, p);
            return;
        }
        release(sp, r, SPLIT_CONTENT);
        sp->state = ST_CONTENT;
        run_put(r, SPLIT_CONTENT, p, 1);
        return;
    case ST_REASON:
    case H_REASON:
        sp->touched = true;
        if (blank(c)) {
            hold(sp, p);
            return;
        }
        if (sp->any) /* blanks inside the thinking stay, those at its start go */
            release(sp, r, SPLIT_REASONING);
        sp->ws_len = 0;
        sp->any = true;
        run_put(r, SPLIT_REASONING, p, 1);
        return;
    case ST_CONTENT:
        if (sp->skip_ws && blank(c))
            return;
        sp->skip_ws = false;
        run_put(r, SPLIT_CONTENT, p, 1);
        return;
    case H_OUT:
    case H_CONTENT:
        run_put(r, SPLIT_CONTENT, p, 1);
        return;
    case H_HEADER: /* the header is markup; only the channel's name counts */
        if (!sp->hdr_len)
            sp->hdr_at = p;
        sp->hdr_len = p + 1 - sp->hdr_at;
        if (c == '\n' || sp->hdr_len > HEADER_MAX) {
            no_header(sp, r, H_CONTENT);
            return;
        }
        if (sp->in_chan && c != ' ' && c != '<' && sp->chan_len + 1 < sizeof sp->chan)
            sp->chan[sp->chan_len++] = c;
        else
            sp->in_chan = false;
        return;
    }
}

static void enter_reasoning(splitter *sp, int state)
{
    sp->state = state;
    sp->any = false;
    sp->ws_len = 0;
    sp->touched = true;
}

static void on_marker(splitter *sp, int m)
{
    if (sp->fam != RF_HARMONY) {
        if (sp->state == ST_START) { /* blanks before the opening tag go */
            enter_reasoning(sp, ST_REASON);
        } else {
            sp->ws_len = 0; /* and those before the closing one */
            sp->state = ST_CONTENT;
            sp->skip_ws = true;
        }
        return;
    }
    if (sp->state == H_REASON)
        sp->ws_len = 0;
    switch (m) {
    case HM_START:
    case HM_CHANNEL: /* a header; the channel's name follows <|channel|> */
        sp->state = H_HEADER;
        sp->chan_len = 0;
        sp->in_chan = m == HM_CHANNEL;
        return;
    case HM_MESSAGE:
        if (sp->chan_len == 8 && !memcmp(sp->chan, "analysis", 8))
            enter_reasoning(sp, H_REASON);
        else
            sp->state = H_CONTENT;
        sp->chan_len = 0;
        sp->in_chan = false;
        return;
    default: /* <|end|>, <|return|>, <|call|> */
        sp->state = H_OUT;
        return;
    }
}

void split_feed(splitter *sp, const char *text, size_t len, bool flush, split_emit emit, void *ud)
{
    const char *list[HM_COUNT + 1];
    markers(sp->fam, list);
    run r = {emit, ud, SPLIT_CONTENT, 0, 0};
    size_t p = sp->pos;
    while (p < len) {
        int m = match(list, wanted(sp), text + p, len - p);
        if (m == M_PARTIAL && !flush)
            break; /* decided by what comes next */
        if (m >= 0) {
            if (split_in_reasoning(sp))
                sp->touched = true;
            if (sp->state == H_HEADER && m >= HM_END)
                no_header(sp, &r, H_HEADER);
            sp->hdr_len = 0; /* the text before a marker in a header was its role */
            on_marker(sp, m);
            p += strlen(list[m]);
            continue;
        }
        body_byte(sp, &r, p, text[p]);
        p++;
    }
    sp->pos = p;
    if (flush && sp->state == H_HEADER)
        no_header(sp, &r, H_OUT);
    if (flush && sp->ws_len) {
        if (sp->state == ST_START)
            release(sp, &r, SPLIT_CONTENT);
        sp->ws_len = 0;
    }
    run_flush(&r);
}

/* The start of the last occurrence of needle in hay, or NULL. */
static const char *last_of(const char *hay, size_t len, const char *needle)
{
    const char *last = NULL, *p = hay, *end = hay + len;
    size_t k = strlen(needle);
    while ((p = memmem(p, (size_t)(end - p), needle, k))) {
        last = p;
        p += k;
    }
    return last;
}

void split_prime(splitter *sp, const char *tail, size_t len)
{
    if (sp->fam == RF_NONE)
        return;
    if (sp->fam == RF_HARMONY) {
        /* read the last message the prompt opens, as if the model wrote it */
        const char *at = last_of(tail, len, harmony[HM_START]);
        if (at)
            split_feed(sp, at, (size_t)(tail + len - at), false, NULL, NULL);
    } else {
        const char *open = last_of(tail, len, tags[sp->fam].open);
        const char *close = last_of(tail, len, tags[sp->fam].close);
        if (open && (!close || close < open))
            enter_reasoning(sp, ST_REASON);
    }
    sp->pos = 0;
    sp->ws_len = 0;
    sp->hdr_len = 0; /* the prompt's header text is the prompt's */
    sp->touched = false;
}
