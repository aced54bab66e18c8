/* Chat prompts as tokens:
 *   - cf_tokenize_parts gives exactly cf_tokenize's tokens of the whole
 *     text when the literal parts hold no control-token text, on every
 *     shared vocabulary (SPM and BPE, with and without chat tokens);
 *   - control-token text in a literal part stays text, in a template part
 *     it is parsed;
 *   - a TOKENS part passes its ids through, and the text after it continues
 *     the text (no SPM space prefix);
 *   - the session's rendering of llama.cpp's phi-3 reference conversations
 *     gives llama.cpp's tokens;
 *   - every real template in ../shared/templates chats with prefix reuse;
 *   - which models do not look trained to chat (cf_session_untrained). */
#include <dirent.h>

#include "json_file.h"
#include "sess_util.h"
#include "session_internal.h"

static const char *const models[] = {
    "models/qwen2.Q8_0.gguf",       "models/phi3.Q8_0.gguf",        "models/llama-bpe.Q8_0.gguf",
    "models/stories260K-chatml.gguf", "models/llama-spm.Q8_0.gguf", "models/gpt2.F16.gguf",
};

/* template text, user text, template text */
static const char *const triples[][3] = {
    {"<|im_start|>user\n", "Hello! Who are you?", "<|im_end|>\n<|im_start|>assistant\n"},
    {"<|user|>\n", "  leading spaces and\ttabs\n\nand newlines  ", "<|end|>\n<|assistant|>\n"},
    {"[INST] ", "Ünïcødé — 日本語 🙂 text", " [/INST]"},
    {"", "no template text at all", ""},
    {"<s>", "x", "</s>"},
    {"<|start_header_id|>user<|end_header_id|>\n\n", "42 + 58 = 100?", "<|eot_id|>"},
};

static bool same(const cf_tokens *a, const cf_tokens *b)
{
    return a->n == b->n && memcmp(a->ids, b->ids, a->n * sizeof *a->ids) == 0;
}

static int count_control(const cf_tokenizer *t, const cf_tokens *v)
{
    int n = 0;
    for (size_t i = 0; i < v->n; i++)
        n += cf_tok_is_control(t, v->ids[i]);
    return n;
}

static void test_parts(const char *model)
{
    cf_gguf *g;
    cf_tokenizer *t;
    cf_err err;
    if (cf_gguf_open(shared_path(model), &g, &err) != 0 || cf_tokenizer_create(g, &t, &err) != 0) {
        CHECKF(0, "%s: %s", model, err.msg);
        return;
    }
    cf_tokens whole = {0}, parts = {0}, tail = {0};
    for (size_t i = 0; i < sizeof triples / sizeof triples[0]; i++) {
        const char *const *x = triples[i];
        char text[512];
        snprintf(text, sizeof text, "%s%s%s", x[0], x[1], x[2]);
        cf_tok_part p[3] = {
            {.kind = CF_PART_TEXT, .text = x[0], .len = strlen(x[0])},
            {.kind = CF_PART_LITERAL, .text = x[1], .len = strlen(x[1])},
            {.kind = CF_PART_TEXT, .text = x[2], .len = strlen(x[2])},
        };
        whole.n = parts.n = 0;
        CHECK(cf_tokenize(t, text, strlen(text), true, true, &whole, &err) == 0);
        CHECK(cf_tokenize_parts(t, p, 3, true, &parts, &err) == 0);
        CHECKF(same(&whole, &parts), "%s: '%s' in parts: %zu tokens, whole %zu", model, text,
               parts.n, whole.n);

        /* the same with control-token text typed by the user */
        p[1] = (cf_tok_part){.kind = CF_PART_LITERAL, .text = text, .len = strlen(text)};
        cf_tokens typed = {0};
        CHECK(cf_tokenize_parts(t, p, 3, true, &typed, &err) == 0);
        CHECKF(count_control(t, &typed) == count_control(t, &whole),
               "%s: control tokens typed by the user were parsed", model);
        cf_tokens_free(&typed);

        /* ids pass through; the text after them goes on without a space */
        const cf_token ids[3] = {5, 6, 7};
        cf_tok_part q[3] = {
            {.kind = CF_PART_TEXT, .text = x[0], .len = strlen(x[0])},
            {.kind = CF_PART_TOKENS, .ids = ids, .n_ids = 3},
            {.kind = CF_PART_LITERAL, .text = "Hello world", .len = 11},
        };
        parts.n = tail.n = 0;
        CHECK(cf_tokenize_parts(t, q, 3, false, &parts, &err) == 0);
        CHECK(cf_tokenize(t, x[0], strlen(x[0]), false, true, &tail, &err) == 0);
        CHECK(parts.n > tail.n + 3 && memcmp(parts.ids + tail.n, ids, sizeof ids) == 0);
        char spelled[64];
        size_t n = 0;
        for (size_t k = tail.n + 3; k < parts.n; k++) {
            cf_str piece = cf_tok_piece(t, parts.ids[k], true);
            if (n + piece.len < sizeof spelled) {
                memcpy(spelled + n, piece.ptr, piece.len);
                n += piece.len;
            }
        }
        spelled[n] = '\0';
        CHECKF(strcmp(spelled, "Hello world") == 0, "%s: text after ids spells '%s'", model,
               spelled);
    }
    cf_tokens_free(&whole);
    cf_tokens_free(&parts);
    cf_tokens_free(&tail);
    cf_tokenizer_free(t);
    cf_gguf_close(g);
}

/* llama.cpp's phi-3 chat references (refs/phi3.Q8_0.chat.json) rendered by
 * the session from the model's own template. */
static void test_phi3_reference(void)
{
    cf_err err;
    cf_json *doc = json_load_file(shared_path("refs/phi3.Q8_0.chat.json"));
    cf_session *s = open_shared("models/phi3.Q8_0.gguf", 512, NULL, 1);
    const cf_json *convs = doc ? cf_json_get(doc, "conversations") : NULL;
    int checked = 0;
    for (size_t c = 0; s && convs && c < convs->n; c++) {
        const cf_json *conv = json_at(convs, c), *msgs = cf_json_get(conv, "messages");
        if (!cf_json_get(conv, "add_generation_prompt")->b)
            continue; /* the Jinja template then ends with eos_token; llama.cpp's built-in not */
        while (s->n_msgs > 0)
            sess_pop_msg(s);
        for (size_t i = 0; i < msgs->n; i++) {
            const char *role = cf_json_get(json_at(msgs, i), "role")->str;
            const cf_json *content = cf_json_get(json_at(msgs, i), "content");
            cf_role r = strcmp(role, "system") == 0 ? CF_ROLE_SYSTEM
                        : strcmp(role, "user") == 0 ? CF_ROLE_USER : CF_ROLE_ASSISTANT;
            CHECK(sess_push_msg(s, r, content->str, content->len, &err) == 0);
        }
        cf_tokens got = {0};
        CHECKF(sess_prompt_tokens(s, s->n_msgs, true, &got, NULL, NULL, &err) == 0, "%s", err.msg);
        const cf_json *want = cf_json_get(conv, "tokens");
        bool eq = got.n == want->n;
        for (size_t i = 0; eq && i < got.n; i++)
            eq = got.ids[i] == (int32_t)json_num(json_at(want, i));
        CHECKF(eq, "phi3 conversation '%s': %zu tokens, llama.cpp %zu",
               cf_json_get(conv, "id")->str, got.n, want->n);
        checked++;
        cf_tokens_free(&got);
    }
    CHECK(checked == 3);
    cf_session_free(s);
    cf_json_free(doc);
}

/* Every real chat template in ../shared/templates chats through the
 * session (with a system prompt), and a message costs the same at turn 2
 * and turn 4: the cached prefix holds across turns.  firefunction-v2 needs
 * a `functions` variable a chat does not have. */
static void test_real_templates(void)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", shared_path("templates"));
    DIR *d = opendir(dir);
    int tried = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".jinja") != 0 ||
            strstr(e->d_name, "firefunction"))
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        cf_session_params p = {.model_path = shared_path("models/qwen2.Q8_0.gguf"), .n_ctx = 2048,
                               .chat_template_file = path, .system_prompt = "Be brief."};
        cf_session *s;
        cf_err err;
        if (cf_session_new(&p, &s, &err) != 0) {
            CHECKF(0, "%s: %s", e->d_name, err.msg);
            continue;
        }
        CHECK(cf_session_set(s, "n-predict", "4", &err) == 0);
        const char *msgs[] = {"Hello there", "How are you?", "Hello there", "How are you?"};
        int cost[4] = {0};
        for (int k = 0; k < 4; k++) {
            CHECKF(exchange(s, msgs[k], NULL, 0) == CF_STOP_N_PREDICT ||
                       cf_session_last_stats(s)->stop == CF_STOP_EOG,
                   "%s turn %d", e->d_name, k + 1);
            cost[k] = cf_session_last_stats(s)->prompt_tokens;
        }
        CHECKF(cost[1] == cost[3] && cost[1] > 0, "%s: the same message cost %d then %d tokens",
               e->d_name, cost[1], cost[3]);
        tried++;
        cf_session_free(s);
    }
    if (d)
        closedir(d);
    CHECKF(tried >= 20, "%d templates tried", tried);
}

/* No chat template in the file, or no token for the end of a turn in the
 * template in use (the file's or the one asked for). */
static void test_chat_training(void)
{
    static const struct {
        const char *model, *tmpl, *why;
    } cases[] = {
        {"models/stories260K.gguf", NULL, "its file has no chat template (chatml is a guess)"},
        {"models/stories260K-chatml.gguf", NULL, "its vocabulary has no <|im_end|> token"},
        {"models/stories260K-llama2chat.gguf", NULL, NULL},
        {"models/stories260K.gguf", "llama2", NULL},
        {"models/stories260K.gguf", "chatml", "its vocabulary has no <|im_end|> token"},
        {"models/qwen3-bpe.Q8_0.gguf", NULL, NULL},
        {"models/phi3.Q8_0.gguf", NULL, NULL},
        {"models/qwen3.Q8_0.gguf", NULL, "its file has no chat template (chatml is a guess)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cf_session_params p = {.model_path = shared_path(cases[i].model), .n_threads = 1,
                               .chat_template = cases[i].tmpl};
        cf_session *s;
        cf_err err;
        if (cf_session_new(&p, &s, &err) != 0) {
            CHECKF(0, "%s: %s", cases[i].model, err.msg);
            continue;
        }
        const char *why = cf_session_untrained(s);
        CHECKF(cases[i].why ? why && !strcmp(why, cases[i].why) : !why, "%s %s: %s", cases[i].model,
               cases[i].tmpl ? cases[i].tmpl : "", why ? why : "(trained)");
        cf_session_free(s);
    }
}

/* Every template family of 2026 by the same rule, on the 512-token
 * stories vocabulary: not chat-trained (its replies capped at
 * CF_SESSION_UNTRAINED_N_PREDICT tokens) unless the marker the template
 * ends a reply with is a token there, as Ministral's eos_token (</s>) is. */
static void test_chat_training_2026(void)
{
    static const struct {
        const char *file, *marker; /* NULL: trained */
    } cases[] = {
        {"GLM-4.6.jinja", "<|user|>"},
        {"HuggingFaceTB-SmolLM3-3B.jinja", "<|im_end|>"},
        {"Kimi-K2-Thinking.jinja", "<|im_end|>"},
        {"LFM2-8B-A1B.jinja", "<|im_end|>"},
        {"NVIDIA-Nemotron-Nano-v2.jinja", "<SPECIAL_12>"},
        {"Qwen-Qwen3-0.6B.jinja", "<|im_end|>"},
        {"Qwen3.5-4B.jinja", "<|im_end|>"},
        {"deepseek-ai-DeepSeek-V3.1.jinja",
         "<\xef\xbd\x9c" "end\xe2\x96\x81" "of\xe2\x96\x81" "sentence\xef\xbd\x9c>"},
        {"google-gemma-4-31B-it.jinja", "<turn|>"},
        {"ibm-granite-granite-4.0.jinja", "<|end_of_text|>"},
        {"mistralai-Ministral-3-14B-Reasoning-2512.jinja", NULL},
        {"openai-gpt-oss-120b.jinja", "<|end|>"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char file[512];
        snprintf(file, sizeof file, "templates/2026/%s", cases[i].file);
        cf_session_params p = {.model_path = shared_path("models/stories260K.gguf"),
                               .n_threads = 1, .chat_template_file = shared_path(file)};
        cf_session *s;
        cf_err err;
        if (cf_session_new(&p, &s, &err) != 0) {
            CHECKF(0, "%s: %s", cases[i].file, err.msg);
            continue;
        }
        char want[128] = "", np[16];
        if (cases[i].marker)
            snprintf(want, sizeof want, "its vocabulary has no %s token", cases[i].marker);
        const char *why = cf_session_untrained(s);
        CHECKF(cases[i].marker ? why && !strcmp(why, want) : !why, "%s: %s", cases[i].file,
               why ? why : "(trained)");
        cf_session_get(s, "n-predict", np, sizeof np);
        CHECKF(atoi(np) == (why ? CF_SESSION_UNTRAINED_N_PREDICT : -1), "%s: n-predict %s",
               cases[i].file, np);
        cf_session_free(s);
    }
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        test_parts(models[i]);
    test_phi3_reference();
    test_real_templates();
    test_chat_training();
    test_chat_training_2026();
    return test_summary("session-prompt");
}
