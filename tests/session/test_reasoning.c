/* Replies with reasoning, through the real session: scripted replies
 * (CONFAB_TEST_REPLIES) on the model with the real Qwen3 vocabulary, its
 * own template and the 2026 reasoning templates.  The split is the same
 * however the markers and characters are cut across tokens; unterminated
 * thinking (n-predict, stopped) is kept and marked; the thinking switches
 * change the rendered prompt; a turn after reasoning that the template
 * drops re-evaluates only from the first difference; reasoning, flags and
 * settings survive save and load, and a version-1 file still loads.  The
 * splitter itself is checked against every two-way cut of its input. */
#include "sess_util.h"
#include "session_internal.h"

#define QWEN3 "models/qwen3-bpe.Q8_0.gguf"
#define T2026 "templates/2026/"

/* ---- helpers -------------------------------------------------------------------- */

/* A session whose replies are the lines given (NULL-terminated), on
 * model_rel, with a 2026 template (NULL: the model's own). */
static cf_session *open_model_scripted(const char *model_rel, const char *tmpl, int n_predict,
                                       const char *const *lines)
{
    char path[64];
    temp_path(path, sizeof path, "replies");
    FILE *f = fopen(path, "w");
    for (const char *const *l = lines; f && *l; l++)
        fprintf(f, "%s\n", *l);
    if (f)
        fclose(f);
    char tmpl_path[512] = "";
    if (tmpl)
        snprintf(tmpl_path, sizeof tmpl_path, "%s", shared_path(tmpl));
    cf_session_params p = {.model_path = shared_path(model_rel), .n_ctx = 1024, .n_threads = 1,
                           .chat_template_file = tmpl ? tmpl_path : NULL};
    cf_session *s = NULL;
    cf_err err;
    setenv("CONFAB_TEST_REPLIES", path, 1);
    int rc = cf_session_new(&p, &s, &err);
    unsetenv("CONFAB_TEST_REPLIES");
    unlink(path);
    CHECKF(rc == 0, "%s", err.msg);
    char np[16];
    snprintf(np, sizeof np, "%d", n_predict);
    if (s)
        CHECK(cf_session_set(s, "n-predict", np, &err) == 0);
    return s;
}

static cf_session *open_scripted(const char *tmpl, int n_predict, const char *const *lines)
{
    return open_model_scripted(QWEN3, tmpl, n_predict, lines);
}

typedef struct streamed {
    char reasoning[2048], content[2048];
    int pieces_in_thinking; /* calls that said the reply was inside its reasoning */
} streamed;

static void append(char *buf, const char *text)
{
    size_t n = strlen(buf), k = strlen(text);
    if (n + k < 2048)
        memcpy(buf + n, text, k + 1);
}

/* One exchange, both parts streamed into *out; the stop reason or -1.
 * stop_after > 0: stop (as Ctrl-C does) after that many calls. */
static int talk(cf_session *s, const char *msg, streamed *out, int stop_after)
{
    cf_err err;
    cf_reply_part part;
    int rc, calls = 0;
    memset(out, 0, sizeof *out);
    if (cf_session_begin_reply(s, msg, &err) != 0) {
        CHECKF(0, "begin_reply: %s", err.msg);
        return -1;
    }
    while ((rc = cf_session_next_part(s, &part, &err)) == CF_NEXT_TOKEN) {
        append(out->reasoning, part.reasoning);
        append(out->content, part.content);
        out->pieces_in_thinking += part.thinking;
        if (stop_after > 0 && ++calls == stop_after)
            break;
    }
    cf_session_end_reply(s, rc == CF_NEXT_TOKEN);
    CHECKF(rc >= 0, "next: %s", err.msg);
    return rc < 0 ? -1 : (int)cf_session_last_stats(s)->stop;
}

static const cf_message *last_reply(const cf_session *s)
{
    return cf_session_message(s, cf_session_n_messages(s) - 1);
}

static bool same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* The scripted line of text with every byte its own piece. */
static void byte_pieces(const char *text, char *out, size_t cap)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p && n + 6 < cap; p++)
        n += (size_t)snprintf(out + n, cap - n, "%s\\x%02x", n ? "|" : "", *p);
}

/* ---- the split in a chat ------------------------------------------------------------- */

typedef struct split_case {
    const char *tmpl, *line, *reasoning, *content;
} split_case;

static void test_split(void)
{
    static const split_case cases[] = {
        /* Qwen3, its template from the GGUF: markers whole, cut, and absent */
        {NULL, "<think>\\nSeven times six is forty-two.\\n</think>\\n\\n42.",
         "Seven times six is forty-two.", "42."},
        {NULL, "<thi|nk>\\n  Hmm|, caf\\xc3|\\xa9 </th|ink>|\\n\\nFine.", "Hmm, caf\xc3\xa9", "Fine."},
        {NULL, "  Just an answer.\\n", NULL, "  Just an answer.\n"},
        {NULL, "Write <think> tags.", NULL, "Write <think> tags."},
        {NULL, "<think>\\n\\n</think>\\n\\nNo thinking.", NULL, "No thinking."},
        {NULL, "<think>a\\n\\nb</think>c\\n", "a\n\nb", "c\n"},
        /* Qwen3.5 opens the block in its generation prompt */
        {T2026 "Qwen3.5-4B.jinja", "Already thinking.\\n</think>\\n\\nDone.", "Already thinking.",
         "Done."},
        /* gpt-oss channels (here plain text in the Qwen3 vocabulary) */
        {T2026 "openai-gpt-oss-120b.jinja",
         "<\\|channel\\|>analysis<\\|message\\|>Think it over.<\\|end\\|><\\|start\\|>assistant"
         "<\\|channel\\|>final<\\|message\\|>The answer.",
         "Think it over.", "The answer."},
        /* text the model writes with no channel header is the answer */
        {T2026 "openai-gpt-oss-120b.jinja", "Forty-two.", NULL, "Forty-two."},
        {T2026 "openai-gpt-oss-120b.jinja", "Seven times six\\nis 42.", NULL,
         "Seven times six\nis 42."},
        {T2026 "google-gemma-4-31B-it.jinja", "<\\|channel>thought\\nHmm.<channel\\|>Gemma says hi.",
         "Hmm.", "Gemma says hi."},
        {T2026 "mistralai-Ministral-3-14B-Reasoning-2512.jinja", "[THINK]Plan.[/THINK]Result.",
         "Plan.", "Result."},
        {T2026 "Kimi-K2-Thinking.jinja", "<think>k</think>K.", "k", "K."},
        {T2026 "HuggingFaceTB-SmolLM3-3B.jinja", "<think>\\ns\\n</think>\\nS.", "s", "S."},
        /* GLM-4.6 starts its reply with a newline, then the block */
        {T2026 "GLM-4.6.jinja", "\\n<think>Weigh it.</think>\\nGLM answers.", "Weigh it.",
         "GLM answers."},
        {T2026 "GLM-4.6.jinja", "\\n<think></think>\\nNo thought.", NULL, "No thought."},
        /* DeepSeek-V3.1 closes an empty block in its generation prompt
         * unless thinking is on */
        {T2026 "deepseek-ai-DeepSeek-V3.1.jinja", "Plain answer.", NULL, "Plain answer."},
        {T2026 "deepseek-ai-DeepSeek-V3.1.jinja", "Write <think> tags.", NULL, "Write <think> tags."},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const split_case *c = &cases[i];
        /* each line twice more: every byte a token of its own */
        char bytes[4096], unescaped[1024];
        size_t k = 0;
        for (const char *p = c->line; *p && k + 1 < sizeof unescaped; p++) {
            if (*p == '|')
                continue;
            if (p[0] == '\\' && p[1] == '|') {
                unescaped[k++] = '|';
                p++;
            } else if (p[0] == '\\' && p[1] == 'n') {
                unescaped[k++] = '\n';
                p++;
            } else if (p[0] == '\\' && p[1] == 'x') {
                unsigned v;
                sscanf(p + 2, "%2x", &v);
                unescaped[k++] = (char)v;
                p += 3;
            } else {
                unescaped[k++] = *p;
            }
        }
        unescaped[k] = 0;
        byte_pieces(unescaped, bytes, sizeof bytes);
        const char *lines[] = {c->line, bytes, NULL};
        cf_session *s = open_scripted(c->tmpl, -1, lines);
        if (!s)
            continue;
        for (int round = 0; round < 2; round++) {
            streamed st;
            int why = talk(s, round ? "Again." : "Hello.", &st, 0);
            const cf_message *m = last_reply(s);
            const char *how = round ? "byte by byte" : "as written";
            CHECKF(why == CF_STOP_EOG, "case %zu %s: stop %d", i, how, why);
            CHECKF(same(m->content, c->content), "case %zu %s: content '%s'", i, how, m->content);
            CHECKF(c->reasoning ? same(m->reasoning, c->reasoning) : !m->reasoning,
                   "case %zu %s: reasoning '%s'", i, how, m->reasoning ? m->reasoning : "(none)");
            CHECKF(same(st.content, c->content) &&
                       same(st.reasoning, c->reasoning ? c->reasoning : ""),
                   "case %zu %s: streamed '%s' / '%s'", i, how, st.reasoning, st.content);
            CHECK(!m->thinking_cut && !m->cut);
            CHECK(!c->reasoning || st.pieces_in_thinking > 0);
        }
        cf_session_free(s);
    }
}

/* Reasoning tokens are counted apart, the markers with them. */
static void test_counts(void)
{
    const char *lines[] = {"<think>\\nSeven times six.\\n</think>\\n\\nForty-two.", NULL};
    cf_session *s = open_scripted(NULL, -1, lines);
    if (!s)
        return;
    streamed st;
    talk(s, "7 * 6?", &st, 0);
    cf_tokens think = {0}, all = {0};
    cf_err err;
    const char *t1 = "<think>\nSeven times six.\n</think>", *t2 = "\n\nForty-two.";
    char both[128];
    snprintf(both, sizeof both, "%s%s", t1, t2);
    CHECK(cf_tokenize(s->tok, t1, strlen(t1), false, true, &think, &err) == 0);
    CHECK(cf_tokenize(s->tok, both, strlen(both), false, true, &all, &err) == 0);
    const cf_turn_stats *t = cf_session_last_stats(s);
    CHECKF(t->reasoning_tokens == (int)think.n && t->gen_tokens == (int)all.n,
           "%d reasoning of %d tokens; expected %zu of %zu", t->reasoning_tokens, t->gen_tokens,
           think.n, all.n);
    CHECK(t->reasoning_ms > 0 && t->reasoning_ms <= t->gen_ms);
    /* the message keeps each part as tokens that spell it */
    const sess_msg *m = &s->msgs[s->n_msgs - 1];
    char text[64];
    size_t n = cf_detokenize(s->tok, m->ids.ids, m->ids.n, false, false, text, sizeof text - 1);
    text[n] = 0;
    CHECKF(same(text, "Forty-two.") && !memcmp(m->ids.ids, all.ids + all.n - m->ids.n,
                                               m->ids.n * sizeof *m->ids.ids),
           "content tokens spell '%s'", text);
    n = cf_detokenize(s->tok, m->rids.ids, m->rids.n, false, false, text, sizeof text - 1);
    text[n] = 0;
    CHECKF(same(text, "Seven times six."), "reasoning tokens spell '%s'", text);
    cf_tokens_free(&think);
    cf_tokens_free(&all);
    cf_session_free(s);
}

/* gpt-oss's <|end|> closes the analysis channel, not the reply, where the
 * vocabulary has it as an end-of-generation token (Phi-3's does). */
static void test_channel_end(void)
{
    const char *lines[] = {"<\\|channel\\|>analysis<\\|message\\|>Ponder.|<\\|end\\|>|<\\|start\\|>"
                           "assistant<\\|channel\\|>final<\\|message\\|>Answer.",
                           NULL};
    cf_session *s = open_model_scripted("models/phi3.Q8_0.gguf", T2026 "openai-gpt-oss-120b.jinja",
                                        -1, lines);
    if (!s)
        return;
    cf_token end = cf_tok_find(s->tok, "<|end|>", 7);
    CHECK(end != CF_TOKEN_NULL && cf_tok_is_eog(s->tok, end) && cf_tok_is_control(s->tok, end));
    streamed st;
    CHECK(talk(s, "Hi.", &st, 0) == CF_STOP_EOG);
    const cf_message *m = last_reply(s);
    CHECKF(same(m->reasoning, "Ponder.") && same(m->content, "Answer.") && !m->thinking_cut,
           "'%s' / '%s'", m->reasoning, m->content);
    cf_session_free(s);
}

/* ---- unterminated thinking -------------------------------------------------------------- */

static void test_cut(void)
{
    const char *lines[] = {"<think>\\nOne two three four five six seven eight nine ten.",
                           "<think>\\nOne two three four five six seven eight nine ten.",
                           "<think>\\nAll done.\\n</think>\\n\\nThe end.", NULL};
    cf_session *s = open_scripted(NULL, 6, lines);
    if (!s)
        return;
    streamed st;
    /* n-predict ends it inside the thinking */
    CHECK(talk(s, "Count.", &st, 0) == CF_STOP_N_PREDICT);
    const cf_message *m = last_reply(s);
    CHECKF(m->thinking_cut && !m->cut && same(m->reasoning, "One two three four") &&
               same(m->content, ""),
           "n-predict: '%s' / '%s', thinking cut %d", m->reasoning, m->content, m->thinking_cut);
    CHECK(same(st.reasoning, "One two three four"));
    /* stopped by the user (Ctrl-C) after three tokens */
    CHECK(cf_session_set(s, "n-predict", "-1", NULL) == 0);
    CHECK(talk(s, "Count again.", &st, 3) == CF_STOP_USER);
    m = last_reply(s);
    CHECKF(m->thinking_cut && m->cut && same(m->reasoning, "One"), "stopped: '%s'", m->reasoning);
    /* the chat goes on, and a reply that closes its thinking is not cut */
    CHECK(talk(s, "Finish.", &st, 0) == CF_STOP_EOG);
    m = last_reply(s);
    CHECK(!m->thinking_cut && !m->cut && same(m->reasoning, "All done.") &&
          same(m->content, "The end."));
    /* the cut replies are still in the conversation */
    CHECK(cf_session_n_messages(s) == 6 && cf_session_message(s, 1)->thinking_cut &&
          cf_session_message(s, 3)->thinking_cut);
    cf_session_free(s);
    /* a reply that ends (end-of-generation) inside <think>: thinking, cut */
    const char *open_only[] = {"<think>\\nIt never closes.", NULL};
    if (!(s = open_scripted(NULL, -1, open_only)))
        return;
    CHECK(talk(s, "Think.", &st, 0) == CF_STOP_EOG);
    m = last_reply(s);
    CHECKF(m->thinking_cut && !m->cut && same(m->reasoning, "It never closes.") &&
               same(m->content, "") && same(st.reasoning, "It never closes."),
           "unclosed: '%s' / '%s', thinking cut %d", m->reasoning, m->content, m->thinking_cut);
    cf_session_free(s);
}

/* ---- the thinking switches ----------------------------------------------------------------- */

static char *prompt_of(cf_session *s, int *n_tokens, int *n_cached)
{
    char *text = NULL;
    cf_err err;
    int a, b;
    CHECKF(cf_session_prompt_text(s, "Hi.", &text, n_tokens ? n_tokens : &a,
                                  n_cached ? n_cached : &b, &err) == 0,
           "%s", err.msg);
    return text;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

static void test_switches(void)
{
    const char *none[] = {NULL};
    cf_session *s = open_scripted(NULL, 4, none);
    if (!s)
        return;
    cf_err err;
    char buf[32];
    CHECK(same(cf_session_reasoning(s)->family, "think") && cf_session_reasoning(s)->thinking_switch);
    char *text = prompt_of(s, NULL, NULL);
    CHECKF(text && same(text, "<|im_start|>user\nHi.<|im_end|>\n<|im_start|>assistant\n"), "'%s'",
           text);
    free(text);
    CHECK(cf_session_set(s, "thinking", "off", &err) == 0 &&
          same(cf_session_get(s, "thinking", buf, sizeof buf), "off"));
    text = prompt_of(s, NULL, NULL);
    CHECKF(text && ends_with(text, "<|im_start|>assistant\n<think>\n\n</think>\n\n"), "'%s'", text);
    free(text);
    CHECK(cf_session_set(s, "thinking", "maybe", &err) != 0 && strstr(err.msg, "auto, on, off"));
    CHECK(same(cf_session_get(s, "thinking", buf, sizeof buf), "off"));
    CHECK(cf_session_set(s, "thinking", "on", &err) == 0);
    text = prompt_of(s, NULL, NULL);
    CHECK(text && ends_with(text, "<|im_start|>assistant\n"));
    free(text);
    cf_session_free(s);

    /* gpt-oss reads reasoning_effort; its analysis of earlier turns is dropped */
    const char *lines[] = {"<\\|channel\\|>analysis<\\|message\\|>Hmm.<\\|end\\|><\\|start\\|>"
                           "assistant<\\|channel\\|>final<\\|message\\|>Yes.",
                           NULL};
    s = open_scripted(T2026 "openai-gpt-oss-120b.jinja", -1, lines);
    if (!s)
        return;
    CHECK(same(cf_session_reasoning(s)->family, "gpt-oss") && cf_session_reasoning(s)->effort);
    text = prompt_of(s, NULL, NULL);
    CHECK(text && strstr(text, "Reasoning: medium"));
    free(text);
    CHECK(cf_session_set(s, "reasoning-effort", "high", &err) == 0);
    text = prompt_of(s, NULL, NULL);
    CHECK(text && strstr(text, "Reasoning: high"));
    free(text);
    CHECK(cf_session_set(s, "reasoning-effort", "extreme", &err) != 0);
    streamed st;
    CHECK(talk(s, "Well?", &st, 0) == CF_STOP_EOG && same(last_reply(s)->reasoning, "Hmm."));
    text = prompt_of(s, NULL, NULL);
    CHECKF(text && strstr(text, "<|start|>assistant<|channel|>final<|message|>Yes.<|end|>") &&
               !strstr(text, "Hmm."),
           "'%s'", text);
    free(text);
    cf_session_free(s);

    /* Qwen3.5: off closes the block the generation prompt opens */
    const char *plain[] = {"Straight answer.", NULL};
    s = open_scripted(T2026 "Qwen3.5-4B.jinja", -1, plain);
    if (!s)
        return;
    CHECK(cf_session_set(s, "thinking", "off", &err) == 0);
    CHECK(talk(s, "Quick.", &st, 0) == CF_STOP_EOG && same(last_reply(s)->content, "Straight answer.") &&
          !last_reply(s)->reasoning && !last_reply(s)->thinking_cut);
    cf_session_free(s);

    /* GLM-4.6: off asks with /nothink and closes the block in the
     * generation prompt; the reply is all content */
    s = open_scripted(T2026 "GLM-4.6.jinja", -1, plain);
    if (!s)
        return;
    CHECK(cf_session_set(s, "thinking", "off", &err) == 0);
    CHECK(talk(s, "Quick.", &st, 0) == CF_STOP_EOG && same(last_reply(s)->content, "Straight answer.") &&
          !last_reply(s)->reasoning && !last_reply(s)->thinking_cut);
    text = prompt_of(s, NULL, NULL);
    CHECKF(text &&
               strstr(text, "<|user|>\nQuick./nothink<|assistant|>\n<think></think>\nStraight answer."),
           "'%s'", text);
    free(text);
    cf_session_free(s);
    /* DeepSeek-V3.1 takes enable_thinking as its thinking: on opens the
     * block in the generation prompt, off (its default) closes it empty */
    const char *reasoned[] = {"Reasoned.</think>Answer.", NULL};
    s = open_scripted(T2026 "deepseek-ai-DeepSeek-V3.1.jinja", -1, reasoned);
    if (!s)
        return;
    CHECK(same(cf_session_reasoning(s)->family, "think") && cf_session_reasoning(s)->thinking_switch);
    text = prompt_of(s, NULL, NULL);
    CHECKF(text && ends_with(text, "<\xef\xbd\x9c" "Assistant\xef\xbd\x9c><think></think>"), "'%s'", text);
    free(text);
    CHECK(cf_session_set(s, "thinking", "on", &err) == 0);
    text = prompt_of(s, NULL, NULL);
    CHECKF(text && ends_with(text, "<\xef\xbd\x9c" "Assistant\xef\xbd\x9c><think>"), "'%s'", text);
    free(text);
    CHECK(talk(s, "Why?", &st, 0) == CF_STOP_EOG && same(last_reply(s)->reasoning, "Reasoned.") &&
          same(last_reply(s)->content, "Answer."));
    cf_session_free(s);
    /* Nemotron Nano v2 switches by /think or /no_think in a message (its
     * namespace's enable_thinking is no variable): off puts /no_think
     * after the system prompt, which the template takes out of what it
     * shows, and closes the block in the generation prompt */
    s = open_scripted(T2026 "NVIDIA-Nemotron-Nano-v2.jinja", -1, reasoned);
    if (!s)
        return;
    CHECK(cf_session_reasoning(s)->thinking_switch && cf_session_reasoning(s)->thinking_text);
    text = prompt_of(s, NULL, NULL);
    CHECKF(text && ends_with(text, "<SPECIAL_11>Assistant\n<think>\n"), "'%s'", text);
    free(text);
    CHECK(cf_session_set(s, "thinking", "off", &err) == 0);
    text = prompt_of(s, NULL, NULL);
    CHECKF(text && ends_with(text, "<SPECIAL_11>Assistant\n<think></think>") && !strstr(text, "/no_think"), "'%s'",
           text);
    free(text);
    CHECK(cf_session_set_system(s, "Be brief.", &err) == 0);
    text = prompt_of(s, NULL, NULL);
    CHECKF(text && strstr(text, "<SPECIAL_10>System\nBe brief.") && !strstr(text, "/no_think") &&
               ends_with(text, "<think></think>"),
           "'%s'", text);
    free(text);
    CHECK(cf_session_set(s, "thinking", "on", &err) == 0);
    text = prompt_of(s, NULL, NULL);
    CHECKF(text && strstr(text, "Be brief.") && ends_with(text, "<think>\n"), "'%s'", text);
    free(text);
    cf_session_free(s);
}

/* ---- the cache after reasoning is dropped -------------------------------------------------------- */

static void test_reuse(void)
{
    const char *lines[] = {"<think>\\nSeven times six is forty-two.\\n</think>\\n\\n42.",
                           "<think>\\nSeven sevens.\\n</think>\\n\\n49.", "Plain.", NULL};
    cf_session *s = open_scripted(NULL, -1, lines);
    if (!s)
        return;
    streamed st;
    talk(s, "What is 7 * 6?", &st, 0);
    int n1;
    int32_t *h1 = history(s, &n1);
    int first_prompt = cf_session_last_stats(s)->prompt_tokens;
    /* what the next turn renders: the first reply without its thinking */
    int n_tokens, n_cached;
    char *text = prompt_of(s, &n_tokens, &n_cached);
    CHECKF(text && strstr(text, "<|im_start|>assistant\n42.<|im_end|>\n") && !strstr(text, "Seven"),
           "'%s'", text);
    free(text);
    /* the cache agrees up to the first reply's start, not a token further */
    CHECKF(n_cached == first_prompt, "%d cached, the first prompt was %d", n_cached, first_prompt);
    talk(s, "And 7 * 7?", &st, 0);
    const cf_turn_stats *t = cf_session_last_stats(s);
    cf_tokens full = {0};
    cf_err err;
    /* prefilled: exactly from the first difference to the end */
    s->n_msgs--; /* the rendering of turn 2's prompt: without its reply */
    CHECK(sess_prompt_tokens(s, s->n_msgs, true, &full, NULL, NULL, &err) == 0);
    s->n_msgs++;
    CHECKF(t->prompt_tokens == (int)full.n - first_prompt, "turn 2 prefilled %d of %zu tokens",
           t->prompt_tokens, full.n);
    int n2;
    const int32_t *h2 = cf_session_tokens(s, &n2);
    CHECK(n2 > (int)full.n && !memcmp(h2, full.ids, full.n * sizeof *h2));
    CHECK(!memcmp(h1, h2, (size_t)first_prompt * sizeof *h1));
    /* turn 2 starts after the first reply's closing text, as rendered now */
    cf_tokens before = {0};
    const char *turn1 = "<|im_start|>user\nWhat is 7 * 6?<|im_end|>\n<|im_start|>assistant\n"
                        "42.<|im_end|>\n";
    CHECK(cf_tokenize(s->tok, turn1, strlen(turn1), false, true, &before, &err) == 0);
    CHECKF(s->msgs[2].start == (int)before.n, "turn 2 starts at %d, not %zu", s->msgs[2].start,
           before.n);
    /* undo goes back there, and the same message prefills only its turn */
    CHECK(cf_session_undo(s, &err) == 0);
    int n;
    cf_session_tokens(s, &n);
    CHECK(n == (int)before.n);
    talk(s, "And 7 * 7?", &st, 0);
    CHECKF(cf_session_last_stats(s)->prompt_tokens == (int)(full.n - before.n),
           "after undo: %d prefilled", cf_session_last_stats(s)->prompt_tokens);
    cf_tokens_free(&before);
    cf_tokens_free(&full);
    free(h1);
    cf_session_free(s);
}

/* ---- save and load ---------------------------------------------------------------------------------- */

static void test_save(void)
{
    const char *lines[] = {"<think>\\nDeep.\\n</think>\\n\\nShallow.", "<think>\\nUnfinished",
                           NULL};
    cf_session *s = open_scripted(NULL, -1, lines);
    if (!s)
        return;
    cf_err err;
    char path[64], buf[32];
    streamed st;
    talk(s, "One.", &st, 0);
    talk(s, "Two.", &st, 0);
    CHECK(cf_session_set(s, "thinking", "off", &err) == 0);
    temp_path(path, sizeof path, "think-session");
    CHECK(cf_session_save(s, path, &err) == 0);
    cf_session *t = open_shared(QWEN3, 1024, NULL, 5);
    if (t && cf_session_load(t, path, &err) == 0) {
        CHECK(cf_session_n_messages(t) == 4);
        const cf_message *a = cf_session_message(t, 1), *b = cf_session_message(t, 3);
        CHECK(same(a->reasoning, "Deep.") && same(a->content, "Shallow.") && !a->thinking_cut);
        CHECK(same(b->reasoning, "Unfinished") && same(b->content, "") && b->thinking_cut);
        CHECK(same(cf_session_get(t, "thinking", buf, sizeof buf), "off"));
        CHECK(t->msgs[1].rids.n == s->msgs[1].rids.n && t->msgs[1].ids.n == s->msgs[1].ids.n);
        /* the next turn renders as in the saved session */
        int na, ca, nb, cb;
        char *x = prompt_of(s, &na, &ca), *y = prompt_of(t, &nb, &cb);
        CHECK(x && y && same(x, y) && na == nb && ca == cb);
        free(x);
        free(y);
    } else {
        CHECKF(0, "load: %s", err.msg);
    }
    cf_session_free(t);
    cf_session_free(s);
    unlink(path);

    /* a file of version 1 (written before reasoning) loads */
    const char *src = getenv("CONFAB_SRC");
    char v1[4096];
    snprintf(v1, sizeof v1, "%s/tests/session/v1.session", src ? src : ".");
    s = open_shared("models/stories260K-chatml.gguf", 256, NULL, 3);
    if (!s)
        return;
    CHECKF(cf_session_load(s, v1, &err) == 0, "%s", err.msg);
    CHECK(cf_session_n_messages(s) == 2 && same(cf_session_message(s, 0)->content, "Hi.") &&
          !cf_session_message(s, 1)->reasoning && !cf_session_message(s, 1)->thinking_cut &&
          same(cf_session_get(s, "thinking", buf, sizeof buf), "auto"));
    cf_branch_info b0;
    cf_session_branch(s, 0, &b0);
    CHECK(cf_session_n_branches(s) == 1 && b0.id == 1 && same(b0.name, "main") && b0.current);
    int n, n_tokens, n_cached;
    cf_session_tokens(s, &n);
    char *text = prompt_of(s, &n_tokens, &n_cached);
    CHECKF(n > 0 && n_cached == n, "%d of the loaded %d tokens agree", n_cached, n);
    free(text);
    CHECK(exchange(s, "Hi.", NULL, 0) == CF_STOP_N_PREDICT);
    CHECKF(cf_session_last_stats(s)->prompt_tokens == n_tokens - n,
           "the loaded cache was used: %d prefilled", cf_session_last_stats(s)->prompt_tokens);
    cf_session_free(s);
}

/* ---- the splitter alone ---------------------------------------------------------------------------- */

typedef struct collected {
    const char *base; /* the text the offsets are into */
    char text[2][512];
} collected;

static void collect(void *ud, split_kind kind, size_t at, size_t len)
{
    collected *c = ud;
    size_t n = strlen(c->text[kind]);
    if (n + len < sizeof c->text[kind]) {
        memcpy(c->text[kind] + n, c->base + at, len);
        c->text[kind][n + len] = 0;
    }
}

/* Split text fed in two pieces, cut at `cut` (0: whole). */
static void split_at(reasoning_family f, const char *prompt_tail, const char *text, size_t cut,
                     collected *out, bool *in_reasoning)
{
    splitter sp;
    split_init(&sp, f);
    split_prime(&sp, prompt_tail, strlen(prompt_tail));
    memset(out, 0, sizeof *out);
    out->base = text;
    if (cut)
        split_feed(&sp, text, cut, false, collect, out);
    split_feed(&sp, text, strlen(text), true, collect, out);
    *in_reasoning = split_in_reasoning(&sp);
}

static void test_splitter(void)
{
    static const struct {
        reasoning_family f;
        const char *tail, *text, *reasoning, *content;
        bool cut;
    } cases[] = {
        {RF_THINK, "", " \n<think> a  b \n</think>\n\n c ", "a  b", "c ", false},
        {RF_THINK, "<think>\n", "still </think>x", "still", "x", false},
        {RF_THINK, "<think></think>", "<think>y", "y", "", true},
        {RF_THINK, "", "x <think>y</think>", "", "x <think>y</think>", false},
        {RF_HARMONY, "<|start|>assistant",
         "<|channel|>analysis<|message|>A <|end|><|start|>assistant<|channel|>commentary"
         "<|message|>C1<|end|><|start|>assistant<|channel|>final<|message|>F<|return|>",
         "A", "C1F", false},
        {RF_HARMONY, "<|start|>assistant", "<|channel|>analysis<|message|>cut", "cut", "", true},
        {RF_HARMONY, "", "plain text", "", "plain text", false},
        /* no header where one was opened: content, whatever ends it */
        {RF_HARMONY, "<|start|>assistant", "Forty-two.", "", "Forty-two.", false},
        {RF_HARMONY, "<|start|>assistant",
         "42<|end|><|start|>assistant<|channel|>final<|message|>!", "", "42!", false},
        {RF_HARMONY, "<|start|>assistant", "Forty\ntwo", "", "Forty\ntwo", false},
        {RF_HARMONY, "<|start|>assistant",
         "A long answer that no header could be, since a header is a role, a channel and a "
         "recipient at most, and this goes on and on.", "",
         "A long answer that no header could be, since a header is a role, a channel and a "
         "recipient at most, and this goes on and on.", false},
        {RF_HARMONY, "<|start|>assistant", " to=functions.f<|channel|>commentary json<|message|>{}",
         "", "{}", false},
        {RF_GEMMA4, "<|turn>model\n", "<|channel>thought\nt<channel|>g", "t", "g", false},
        {RF_MISTRAL, "", "[THINK]m[/THINK]M", "m", "M", false},
        {RF_COMMAND_R, "", "<|START_THINKING|>p<|END_THINKING|>P", "p", "P", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = strlen(cases[i].text);
        for (size_t cut = 0; cut < len; cut++) {
            collected c;
            bool in;
            split_at(cases[i].f, cases[i].tail, cases[i].text, cut, &c, &in);
            CHECKF(same(c.text[SPLIT_REASONING], cases[i].reasoning) &&
                       same(c.text[SPLIT_CONTENT], cases[i].content) && in == cases[i].cut,
                   "splitter case %zu cut at %zu: '%s' / '%s'", i, cut, c.text[SPLIT_REASONING],
                   c.text[SPLIT_CONTENT]);
        }
    }
    /* the families by their templates' signs, and gpt-oss's <|end|> */
    CHECK(reasoning_detect("{{ '<think>' }}", 15) == RF_THINK);
    CHECK(reasoning_detect("<|channel|>analysis", 19) == RF_HARMONY);
    CHECK(reasoning_detect("<|im_start|>", 12) == RF_NONE);
    CHECK(reasoning_continues(RF_HARMONY, "<|end|>", 7) && !reasoning_continues(RF_THINK, "<|end|>", 7));
    CHECK(reasoning_is_markup(RF_HARMONY, "<|message|>", 11) && !reasoning_is_markup(RF_THINK, "<|im_end|>", 10));
}

int main(void)
{
    test_splitter();
    if (!shared_dir())
        return TEST_SKIP;
    test_split();
    test_counts();
    test_channel_end();
    test_cut();
    test_switches();
    test_reuse();
    test_save();
    return test_summary("session-reasoning");
}
