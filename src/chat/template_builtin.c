/* Built-in chat formats, byte for byte as llama.cpp's llm_chat_apply_template
 * writes them (its quirks included: llama2 has no generation prompt, gemma
 * and llama3 trim contents, gemma folds a system message into the next user
 * turn), and llm_chat_detect_template's rules for picking one from the text
 * of a Jinja template. */
#include <string.h>

#include "template_builtin.h"

enum {
    T_NONE,
    T_CHATML,
    T_LLAMA2,
    T_LLAMA2_SYS,
    T_LLAMA2_SYS_BOS,
    T_LLAMA2_SYS_STRIP,
    T_MISTRAL_V1,
    T_MISTRAL_V3,
    T_MISTRAL_V3_TEKKEN,
    T_MISTRAL_V7,
    T_MISTRAL_V7_TEKKEN,
    T_PHI3,
    T_PHI4,
    T_FALCON3,
    T_ZEPHYR,
    T_MONARCH,
    T_GEMMA,
    T_ORION,
    T_OPENCHAT,
    T_VICUNA,
    T_VICUNA_ORCA,
    T_DEEPSEEK,
    T_DEEPSEEK2,
    T_DEEPSEEK3,
    T_COMMAND_R,
    T_LLAMA3,
    T_CHATGLM3,
    T_CHATGLM4,
    T_GLMEDGE,
    T_MINICPM,
    T_EXAONE3,
    T_EXAONE4,
    T_RWKV_WORLD,
    T_GRANITE,
    T_GIGACHAT,
    T_MEGREZ,
    T_BAILING,
    T_LLAMA4,
    T_SMOLVLM,
    T_COUNT
};

#define EOS_S "</s>"
#define DS_EOS "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>" /* <｜end▁of▁sentence｜> */
#define DS_USER "<\xEF\xBD\x9CUser\xEF\xBD\x9C>"           /* <｜User｜> */
#define DS_ASSISTANT "<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C>" /* <｜Assistant｜> */

static const char *const names[T_COUNT + 1] = {
    [T_NONE] = "none",
    [T_CHATML] = "chatml",
    [T_LLAMA2] = "llama2",
    [T_LLAMA2_SYS] = "llama2-sys",
    [T_LLAMA2_SYS_BOS] = "llama2-sys-bos",
    [T_LLAMA2_SYS_STRIP] = "llama2-sys-strip",
    [T_MISTRAL_V1] = "mistral-v1",
    [T_MISTRAL_V3] = "mistral-v3",
    [T_MISTRAL_V3_TEKKEN] = "mistral-v3-tekken",
    [T_MISTRAL_V7] = "mistral-v7",
    [T_MISTRAL_V7_TEKKEN] = "mistral-v7-tekken",
    [T_PHI3] = "phi3",
    [T_PHI4] = "phi4",
    [T_FALCON3] = "falcon3",
    [T_ZEPHYR] = "zephyr",
    [T_MONARCH] = "monarch",
    [T_GEMMA] = "gemma",
    [T_ORION] = "orion",
    [T_OPENCHAT] = "openchat",
    [T_VICUNA] = "vicuna",
    [T_VICUNA_ORCA] = "vicuna-orca",
    [T_DEEPSEEK] = "deepseek",
    [T_DEEPSEEK2] = "deepseek2",
    [T_DEEPSEEK3] = "deepseek3",
    [T_COMMAND_R] = "command-r",
    [T_LLAMA3] = "llama3",
    [T_CHATGLM3] = "chatglm3",
    [T_CHATGLM4] = "chatglm4",
    [T_GLMEDGE] = "glmedge",
    [T_MINICPM] = "minicpm",
    [T_EXAONE3] = "exaone3",
    [T_EXAONE4] = "exaone4",
    [T_RWKV_WORLD] = "rwkv-world",
    [T_GRANITE] = "granite",
    [T_GIGACHAT] = "gigachat",
    [T_MEGREZ] = "megrez",
    [T_BAILING] = "bailing",
    [T_LLAMA4] = "llama4",
    [T_SMOLVLM] = "smolvlm",
};

static const char *const stops[T_COUNT][3] = {
    [T_NONE] = {NULL},
    [T_CHATML] = {"<|im_end|>", NULL},
    [T_LLAMA2] = {EOS_S, NULL},
    [T_LLAMA2_SYS] = {EOS_S, NULL},
    [T_LLAMA2_SYS_BOS] = {EOS_S, NULL},
    [T_LLAMA2_SYS_STRIP] = {EOS_S, NULL},
    [T_MISTRAL_V1] = {EOS_S, NULL},
    [T_MISTRAL_V3] = {EOS_S, NULL},
    [T_MISTRAL_V3_TEKKEN] = {EOS_S, NULL},
    [T_MISTRAL_V7] = {EOS_S, NULL},
    [T_MISTRAL_V7_TEKKEN] = {EOS_S, NULL},
    [T_PHI3] = {"<|end|>", NULL},
    [T_PHI4] = {"<|im_end|>", NULL},
    [T_FALCON3] = {"<|endoftext|>", "<|user|>", NULL},
    [T_ZEPHYR] = {"<|endoftext|>", NULL},
    [T_MONARCH] = {EOS_S, NULL},
    [T_GEMMA] = {"<end_of_turn>", NULL},
    [T_ORION] = {EOS_S, NULL},
    [T_OPENCHAT] = {"<|end_of_turn|>", NULL},
    [T_VICUNA] = {EOS_S, NULL},
    [T_VICUNA_ORCA] = {EOS_S, NULL},
    [T_DEEPSEEK] = {"<|EOT|>", NULL},
    [T_DEEPSEEK2] = {DS_EOS, NULL},
    [T_DEEPSEEK3] = {DS_EOS, NULL},
    [T_COMMAND_R] = {"<|END_OF_TURN_TOKEN|>", NULL},
    [T_LLAMA3] = {"<|eot_id|>", NULL},
    [T_CHATGLM3] = {"<|user|>", "<|observation|>", NULL},
    [T_CHATGLM4] = {"<|user|>", "<|observation|>", NULL},
    [T_GLMEDGE] = {"<|user|>", "<|observation|>", NULL},
    [T_MINICPM] = {"<\xE7\x94\xA8\xE6\x88\xB7>", NULL},
    [T_EXAONE3] = {"[|endofturn|]", NULL},
    [T_EXAONE4] = {"[|endofturn|]", NULL},
    [T_RWKV_WORLD] = {"\n\n", NULL},
    [T_GRANITE] = {"<|end_of_text|>", NULL},
    [T_GIGACHAT] = {"<|message_sep|>", NULL},
    [T_MEGREZ] = {"<|turn_end|>", NULL},
    [T_BAILING] = {"<role>", NULL},
    [T_LLAMA4] = {"<|eot|>", NULL},
    [T_SMOLVLM] = {"<end_of_utterance>", NULL},
};

int cf_builtin_find(const char *name)
{
    for (int i = 0; i < T_COUNT; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

const char *cf_builtin_name(int id)
{
    return id >= 0 && id < T_COUNT ? names[id] : NULL;
}

const char *const *cf_builtin_names(void)
{
    return names;
}

const char *const *cf_builtin_stops(int id)
{
    return stops[id >= 0 && id < T_COUNT ? id : T_NONE];
}

/* ---- detection ---------------------------------------------------------- */

typedef struct hay {
    const char *s;
    size_t n;
} hay;

static bool has(hay h, const char *needle)
{
    return memmem(h.s, h.n, needle, strlen(needle)) != NULL;
}

int cf_builtin_detect(const char *src, size_t len)
{
    hay h = {src, len};
    for (int i = 0; i < T_COUNT; i++) /* the text may just be a name */
        if (strlen(names[i]) == len && memcmp(names[i], src, len) == 0 && i != T_NONE)
            return i;
    if (has(h, "<|im_start|>"))
        return has(h, "<|im_sep|>") ? T_PHI4 : has(h, "<end_of_utterance>") ? T_SMOLVLM : T_CHATML;
    if ((len >= 7 && memcmp(src, "mistral", 7) == 0) || has(h, "[INST]")) {
        if (has(h, "[SYSTEM_PROMPT]"))
            return T_MISTRAL_V7;
        if (has(h, "' [INST] ' + system_message") || has(h, "[AVAILABLE_TOOLS]")) {
            if (has(h, " [INST]"))
                return T_MISTRAL_V1;
            if (has(h, "\"[INST]\""))
                return T_MISTRAL_V3_TEKKEN;
            return T_MISTRAL_V3;
        }
        if (has(h, "content.strip()"))
            return T_LLAMA2_SYS_STRIP;
        if (has(h, "bos_token + '[INST]"))
            return T_LLAMA2_SYS_BOS;
        if (has(h, "<<SYS>>"))
            return T_LLAMA2_SYS;
        return T_LLAMA2;
    }
    if (has(h, "<|assistant|>") && has(h, "<|end|>"))
        return T_PHI3;
    if (has(h, "[gMASK]<sop>"))
        return T_CHATGLM4;
    if (has(h, "<|assistant|>") && has(h, "<|user|>"))
        return has(h, "</s>") ? T_FALCON3 : T_GLMEDGE;
    if (has(h, "<|{{ item['role'] }}|>") && has(h, "<|begin_of_image|>"))
        return T_GLMEDGE;
    if (has(h, "<|user|>") && has(h, "<|endoftext|>"))
        return T_ZEPHYR;
    if (has(h, "bos_token + message['role']"))
        return T_MONARCH;
    if (has(h, "<start_of_turn>"))
        return T_GEMMA;
    if (has(h, "'\\n\\nAssistant: ' + eos_token"))
        return T_ORION;
    if (has(h, "GPT4 Correct "))
        return T_OPENCHAT;
    if (has(h, "USER: ") && has(h, "ASSISTANT: "))
        return has(h, "SYSTEM: ") ? T_VICUNA_ORCA : T_VICUNA;
    if (has(h, "### Instruction:") && has(h, "<|EOT|>"))
        return T_DEEPSEEK;
    if (has(h, "<|START_OF_TURN_TOKEN|>") && has(h, "<|USER_TOKEN|>"))
        return T_COMMAND_R;
    if (has(h, "<|start_header_id|>") && has(h, "<|end_header_id|>"))
        return T_LLAMA3;
    if (has(h, "[gMASK]sop"))
        return T_CHATGLM3;
    if (has(h, "<\xE7\x94\xA8\xE6\x88\xB7>"))
        return T_MINICPM;
    if (has(h, "'Assistant: ' + message['content'] + eos_token"))
        return T_DEEPSEEK2;
    if (has(h, DS_ASSISTANT) && has(h, DS_USER) && has(h, DS_EOS))
        return T_DEEPSEEK3;
    if (has(h, "[|system|]") && has(h, "[|assistant|]") && has(h, "[|endofturn|]"))
        return has(h, "[|tool|]") ? T_EXAONE4 : T_EXAONE3;
    if (has(h, "rwkv-world") || has(h, "{{- 'User: ' + message['content']|trim + '\\n\\n' -}}"))
        return T_RWKV_WORLD;
    if (has(h, "<|start_of_role|>"))
        return T_GRANITE;
    if (has(h, "message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1]"))
        return T_GIGACHAT;
    if (has(h, "<|role_start|>"))
        return T_MEGREZ;
    if (has(h, "<role>ASSISTANT</role>") && has(h, "'HUMAN'"))
        return T_BAILING;
    if (has(h, "<|header_start|>") && has(h, "<|header_end|>"))
        return T_LLAMA4;
    return -1;
}

/* ---- formatting --------------------------------------------------------- */

static void put(cf_jbuf *b, const char *s)
{
    cf_jbuf_puts(b, s);
}

static void put_content(cf_jbuf *b, const cf_turn *t)
{
    cf_jbuf_put(b, t->content, t->content_len);
}

/* llama.cpp's trim(): C isspace on bytes at both ends. */
static void put_trimmed(cf_jbuf *b, const cf_turn *t)
{
    const char *s = t->content;
    size_t a = 0, e = t->content_len;
    while (a < e && strchr(" \t\n\v\f\r", s[a]) && s[a])
        a++;
    while (e > a && strchr(" \t\n\v\f\r", s[e - 1]) && s[e - 1])
        e--;
    cf_jbuf_put(b, s + a, e - a);
}

static bool is(const cf_turn *t, const char *role)
{
    return strcmp(t->role, role) == 0;
}

/* <|role|>\n content <end> per message (phi3, zephyr, falcon3, chatglm4, glmedge). */
static void tagged(cf_jbuf *b, const cf_turn *t, size_t n, const char *after_tag, const char *end)
{
    for (size_t i = 0; i < n; i++) {
        put(b, "<|");
        put(b, t[i].role);
        put(b, "|>");
        put(b, after_tag);
        put_content(b, &t[i]);
        put(b, end);
    }
}

static void mistral(cf_jbuf *b, int id, const cf_turn *t, size_t n)
{
    const char *lead = id == T_MISTRAL_V1 ? " " : "", *trail = id == T_MISTRAL_V3_TEKKEN ? "" : " ";
    bool inside = false;
    for (size_t i = 0; i < n; i++) {
        if (!inside) {
            put(b, lead);
            put(b, "[INST]");
            put(b, trail);
            inside = true;
        }
        if (is(&t[i], "system")) {
            put_content(b, &t[i]);
            put(b, "\n\n");
        } else if (is(&t[i], "user")) {
            put_content(b, &t[i]);
            put(b, lead);
            put(b, "[/INST]");
        } else {
            put(b, trail);
            if (id == T_MISTRAL_V3)
                put_trimmed(b, &t[i]);
            else
                put_content(b, &t[i]);
            put(b, "</s>");
            inside = false;
        }
    }
}

static void llama2(cf_jbuf *b, int id, const cf_turn *t, size_t n)
{
    bool sys = id != T_LLAMA2, strip = id == T_LLAMA2_SYS_STRIP, inside = true;
    put(b, "[INST] ");
    for (size_t i = 0; i < n; i++) {
        if (!inside) {
            inside = true;
            put(b, id == T_LLAMA2_SYS_BOS ? "<s>[INST] " : "[INST] ");
        }
        bool system = is(&t[i], "system");
        if (system && sys)
            put(b, "<<SYS>>\n");
        if (strip)
            put_trimmed(b, &t[i]);
        else
            put_content(b, &t[i]);
        if (system) {
            put(b, sys ? "\n<</SYS>>\n\n" : "\n");
        } else if (is(&t[i], "user")) {
            put(b, " [/INST]");
        } else {
            put(b, "</s>");
            inside = false;
        }
    }
}

static void gemma(cf_jbuf *b, const cf_turn *t, size_t n, bool add_ass)
{
    cf_jbuf system = {0};
    for (size_t i = 0; i < n; i++) {
        if (is(&t[i], "system")) { /* no system turn in gemma: it joins the next user turn */
            put_trimmed(&system, &t[i]);
            continue;
        }
        bool model = is(&t[i], "assistant");
        put(b, "<start_of_turn>");
        put(b, model ? "model" : t[i].role);
        put(b, "\n");
        if (system.n && !model) {
            cf_jbuf_put(b, system.p, system.n);
            put(b, "\n\n");
            system.n = 0;
        }
        put_trimmed(b, &t[i]);
        put(b, "<end_of_turn>\n");
    }
    if (system.failed)
        b->failed = true;
    cf_jbuf_free(&system);
    if (add_ass)
        put(b, "<start_of_turn>model\n");
}

static void orion(cf_jbuf *b, const cf_turn *t, size_t n)
{
    cf_jbuf system = {0};
    for (size_t i = 0; i < n; i++) {
        if (is(&t[i], "system")) {
            put_content(&system, &t[i]);
        } else if (is(&t[i], "user")) {
            put(b, "Human: ");
            if (system.n) {
                cf_jbuf_put(b, system.p, system.n);
                put(b, "\n\n");
                system.n = 0;
            }
            put_content(b, &t[i]);
            put(b, "\n\nAssistant: </s>");
        } else {
            put_content(b, &t[i]);
            put(b, "</s>");
        }
    }
    if (system.failed)
        b->failed = true;
    cf_jbuf_free(&system);
}

/* Formats with one prefix and suffix per role (others are skipped). */
typedef struct role_fmt {
    const char *system[2], *user[2], *assistant[2], *other[2];
    bool trim;
    const char *gen; /* the generation prompt */
} role_fmt;

static void by_role(cf_jbuf *b, const role_fmt *f, const cf_turn *t, size_t n, bool add_ass)
{
    for (size_t i = 0; i < n; i++) {
        const char *const *pair = is(&t[i], "system") ? f->system : is(&t[i], "user") ? f->user
                                  : is(&t[i], "assistant") ? f->assistant : f->other;
        if (!pair[0])
            continue;
        put(b, pair[0]);
        if (f->trim)
            put_trimmed(b, &t[i]);
        else
            put_content(b, &t[i]);
        put(b, pair[1]);
    }
    if (add_ass && f->gen)
        put(b, f->gen);
}

static const role_fmt fmt_vicuna = {{"", "\n\n"}, {"USER: ", "\n"}, {"ASSISTANT: ", "</s>\n"}, {NULL, NULL}, false, "ASSISTANT:"};
static const role_fmt fmt_vicuna_orca = {{"SYSTEM: ", "\n"}, {"USER: ", "\n"}, {"ASSISTANT: ", "</s>\n"}, {NULL, NULL}, false, "ASSISTANT:"};
static const role_fmt fmt_deepseek = {{"", ""}, {"### Instruction:\n", "\n"}, {"### Response:\n", "\n<|EOT|>\n"}, {NULL, NULL}, false, "### Response:\n"};
static const role_fmt fmt_command_r = {
    {"<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
    {"<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
    {"<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
    {NULL, NULL}, true, "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"};
static const role_fmt fmt_deepseek2 = {{"", "\n\n"}, {"User: ", "\n\n"}, {"Assistant: ", DS_EOS}, {NULL, NULL}, false, "Assistant:"};
static const role_fmt fmt_deepseek3 = {{"", "\n\n"}, {DS_USER, ""}, {DS_ASSISTANT, DS_EOS}, {NULL, NULL}, false, DS_ASSISTANT};
static const role_fmt fmt_exaone3 = {{"[|system|]", "[|endofturn|]\n"}, {"[|user|]", "\n"}, {"[|assistant|]", "[|endofturn|]\n"}, {NULL, NULL}, true, "[|assistant|]"};
static const role_fmt fmt_minicpm = {{"", ""}, {"<\xE7\x94\xA8\xE6\x88\xB7>", "<AI>"}, {"", ""}, {"", ""}, true, NULL};
static const role_fmt fmt_mistral_v7 = {{"[SYSTEM_PROMPT] ", "[/SYSTEM_PROMPT]"}, {"[INST] ", "[/INST]"}, {" ", "</s>"}, {" ", "</s>"}, false, NULL};
static const role_fmt fmt_mistral_v7_tekken = {{"[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]"}, {"[INST]", "[/INST]"}, {"", "</s>"}, {"", "</s>"}, false, NULL};
static const role_fmt fmt_smolvlm = {{"", "\n\n"}, {"User: ", "<end_of_utterance>\n"}, {"Assistant: ", "<end_of_utterance>\n"}, {"Assistant: ", "<end_of_utterance>\n"}, false, "Assistant:"};

/* <open>role<close> content <end> per message, plus a generation prompt. */
static void role_header(cf_jbuf *b, const cf_turn *t, size_t n, const char *open, const char *close,
                        const char *end, bool trim)
{
    for (size_t i = 0; i < n; i++) {
        put(b, open);
        put(b, t[i].role);
        put(b, close);
        if (trim)
            put_trimmed(b, &t[i]);
        else
            put_content(b, &t[i]);
        put(b, end);
    }
}

static void upper_ascii(cf_jbuf *b, const char *s)
{
    for (; *s; s++)
        cf_jbuf_putc(b, *s >= 'a' && *s <= 'z' ? (char)(*s - 32) : *s);
}

void cf_builtin_apply(int id, const cf_turn *t, size_t n, bool add_ass, cf_jbuf *b)
{
    switch (id) {
    case T_NONE:
        for (size_t i = 0; i < n; i++)
            put_content(b, &t[i]);
        break;
    case T_CHATML:
        role_header(b, t, n, "<|im_start|>", "\n", "<|im_end|>\n", false);
        if (add_ass)
            put(b, "<|im_start|>assistant\n");
        break;
    case T_MISTRAL_V7: by_role(b, &fmt_mistral_v7, t, n, false); break;
    case T_MISTRAL_V7_TEKKEN: by_role(b, &fmt_mistral_v7_tekken, t, n, false); break;
    case T_MISTRAL_V1:
    case T_MISTRAL_V3:
    case T_MISTRAL_V3_TEKKEN: mistral(b, id, t, n); break;
    case T_LLAMA2:
    case T_LLAMA2_SYS:
    case T_LLAMA2_SYS_BOS:
    case T_LLAMA2_SYS_STRIP: llama2(b, id, t, n); break;
    case T_PHI3:
        tagged(b, t, n, "\n", "<|end|>\n");
        if (add_ass)
            put(b, "<|assistant|>\n");
        break;
    case T_PHI4:
        role_header(b, t, n, "<|im_start|>", "<|im_sep|>", "<|im_end|>", false);
        if (add_ass)
            put(b, "<|im_start|>assistant<|im_sep|>");
        break;
    case T_FALCON3:
        tagged(b, t, n, "\n", "\n");
        if (add_ass)
            put(b, "<|assistant|>\n");
        break;
    case T_ZEPHYR:
        tagged(b, t, n, "\n", "<|endoftext|>\n");
        if (add_ass)
            put(b, "<|assistant|>\n");
        break;
    case T_MONARCH:
        for (size_t i = 0; i < n; i++) {
            if (i)
                put(b, "<s>"); /* the first BOS is the tokenizer's */
            put(b, t[i].role);
            put(b, "\n");
            put_content(b, &t[i]);
            put(b, "</s>\n");
        }
        if (add_ass)
            put(b, "<s>assistant\n");
        break;
    case T_GEMMA: gemma(b, t, n, add_ass); break;
    case T_ORION: orion(b, t, n); break;
    case T_OPENCHAT:
        for (size_t i = 0; i < n; i++) {
            if (!is(&t[i], "system")) {
                put(b, "GPT4 Correct ");
                char first = t[i].role[0];
                cf_jbuf_putc(b, first >= 'a' && first <= 'z' ? (char)(first - 32) : first);
                if (first)
                    put(b, t[i].role + 1);
                put(b, ": ");
            }
            put_content(b, &t[i]);
            put(b, "<|end_of_turn|>");
        }
        if (add_ass)
            put(b, "GPT4 Correct Assistant:");
        break;
    case T_VICUNA: by_role(b, &fmt_vicuna, t, n, add_ass); break;
    case T_VICUNA_ORCA: by_role(b, &fmt_vicuna_orca, t, n, add_ass); break;
    case T_DEEPSEEK: by_role(b, &fmt_deepseek, t, n, add_ass); break;
    case T_COMMAND_R: by_role(b, &fmt_command_r, t, n, add_ass); break;
    case T_LLAMA3:
        role_header(b, t, n, "<|start_header_id|>", "<|end_header_id|>\n\n", "<|eot_id|>", true);
        if (add_ass)
            put(b, "<|start_header_id|>assistant<|end_header_id|>\n\n");
        break;
    case T_CHATGLM3:
        put(b, "[gMASK]sop");
        tagged(b, t, n, "\n ", "");
        if (add_ass)
            put(b, "<|assistant|>");
        break;
    case T_CHATGLM4:
        put(b, "[gMASK]<sop>");
        tagged(b, t, n, "\n", "");
        if (add_ass)
            put(b, "<|assistant|>\n");
        break;
    case T_GLMEDGE:
        tagged(b, t, n, "\n", "");
        if (add_ass)
            put(b, "<|assistant|>");
        break;
    case T_MINICPM: by_role(b, &fmt_minicpm, t, n, false); break;
    case T_DEEPSEEK2: by_role(b, &fmt_deepseek2, t, n, add_ass); break;
    case T_DEEPSEEK3: by_role(b, &fmt_deepseek3, t, n, add_ass); break;
    case T_EXAONE3: by_role(b, &fmt_exaone3, t, n, add_ass); break;
    case T_EXAONE4: {
        role_fmt f = fmt_exaone3;
        f.other[0] = NULL;
        for (size_t i = 0; i < n; i++) {
            if (is(&t[i], "tool")) {
                put(b, "[|tool|]");
                put_trimmed(b, &t[i]);
                put(b, "[|endofturn|]\n");
            } else {
                by_role(b, &f, &t[i], 1, false);
            }
        }
        if (add_ass)
            put(b, "[|assistant|]");
        break;
    }
    case T_RWKV_WORLD:
        for (size_t i = 0; i < n; i++) {
            const char *prefix = is(&t[i], "system") ? "System: " : is(&t[i], "user") ? "User: "
                                 : is(&t[i], "assistant") ? "Assistant: " : NULL;
            if (!prefix)
                continue;
            put(b, prefix);
            put_trimmed(b, &t[i]);
            put(b, "\n\n");
            if (is(&t[i], "user") && i + 1 == n)
                put(b, "Assistant:");
        }
        break;
    case T_GRANITE:
        for (size_t i = 0; i < n; i++) {
            put(b, "<|start_of_role|>");
            put(b, t[i].role);
            put(b, "<|end_of_role|>");
            if (is(&t[i], "assistant_tool_call"))
                put(b, "<|tool_call|>");
            put_content(b, &t[i]);
            put(b, "<|end_of_text|>\n");
        }
        if (add_ass)
            put(b, "<|start_of_role|>assistant<|end_of_role|>");
        break;
    case T_GIGACHAT: {
        bool sys = n && is(&t[0], "system");
        put(b, "<s>");
        if (sys) {
            put_content(b, &t[0]);
            put(b, "<|message_sep|>");
        }
        for (size_t i = sys; i < n; i++) {
            if (is(&t[i], "user")) {
                put(b, "user<|role_sep|>");
                put_content(b, &t[i]);
                put(b, "<|message_sep|>available functions<|role_sep|>[]<|message_sep|>");
            } else if (is(&t[i], "assistant")) {
                put(b, "assistant<|role_sep|>");
                put_content(b, &t[i]);
                put(b, "<|message_sep|>");
            }
        }
        if (add_ass)
            put(b, "assistant<|role_sep|>");
        break;
    }
    case T_MEGREZ:
        role_header(b, t, n, "<|role_start|>", "<|role_end|>", "<|turn_end|>", false);
        if (add_ass)
            put(b, "<|role_start|>assistant<|role_end|>");
        break;
    case T_BAILING:
        for (size_t i = 0; i < n; i++) {
            put(b, "<role>");
            if (is(&t[i], "user"))
                put(b, "HUMAN");
            else
                upper_ascii(b, t[i].role);
            put(b, "</role>");
            put_content(b, &t[i]);
        }
        if (add_ass)
            put(b, "<role>ASSISTANT</role>");
        break;
    case T_LLAMA4:
        role_header(b, t, n, "<|header_start|>", "<|header_end|>\n\n", "<|eot|>", true);
        if (add_ass)
            put(b, "<|header_start|>assistant<|header_end|>\n\n");
        break;
    case T_SMOLVLM:
        put(b, "<|im_start|>");
        by_role(b, &fmt_smolvlm, t, n, add_ass);
        break;
    default: break;
    }
}
