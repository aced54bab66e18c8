/* Tool calls in every format of the table (src/chat/tool_calls.c): each
 * vector parsed whole and fed in pieces of every size from 1 to 9 bytes
 * (what was let out as content while streaming is always a prefix of the
 * final content, and the calls come out the same); the format each real
 * template of ../shared teaches (skipped without it); a required call's
 * grammar takes the call it describes and nothing else. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/grammar.h"
#include "confab/tools.h"
#include "harness.h"

typedef struct vector {
    cf_tool_format f;
    const char *text;
    const char *content;   /* after the calls are taken out */
    int n;                 /* calls */
    const char *name[2], *args[2], *id[2];
} vector;

#pragma GCC diagnostic ignored "-Wmissing-field-initializers" /* the vectors' unused calls */

#define DS_CALLS "<\xef\xbd\x9ctool\xe2\x96\x81""calls\xe2\x96\x81""begin\xef\xbd\x9c>"
#define DS_CALLS_END "<\xef\xbd\x9ctool\xe2\x96\x81""calls\xe2\x96\x81""end\xef\xbd\x9c>"
#define DS_CALL "<\xef\xbd\x9ctool\xe2\x96\x81""call\xe2\x96\x81""begin\xef\xbd\x9c>"
#define DS_CALL_END "<\xef\xbd\x9ctool\xe2\x96\x81""call\xe2\x96\x81""end\xef\xbd\x9c>"
#define DS_SEP "<\xef\xbd\x9ctool\xe2\x96\x81""sep\xef\xbd\x9c>"

static const vector vectors[] = {
    /* Qwen3, Qwen2.5, Hermes, Granite 4 */
    {CF_TOOLS_HERMES, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
     "</tool_call>", "", 1, {"get_weather"}, {"{\"city\":\"Paris\"}"}},
    {CF_TOOLS_HERMES, "Let me look.\n\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n"
     "<tool_call>\n{\"arguments\": {\"x\": [1, 2]}, \"name\": \"b\"}\n</tool_call>", "Let me look.", 2,
     {"a", "b"}, {"{}", "{\"x\":[1,2]}"}},
    {CF_TOOLS_HERMES, "No call here, just <b>text</b>.", "No call here, just <b>text</b>.", 0},
    {CF_TOOLS_HERMES, "<tool_call>\n{\"name\": \"f\", \"arguments\": \"{\\\"q\\\": 1}\"}", "", 1, {"f"},
     {"{\"q\":1}"}},
    {CF_TOOLS_HERMES, "broken <tool_call>{\"name\": ", "broken <tool_call>{\"name\": ", 0},
    /* Qwen3.5's XML */
    {CF_TOOLS_QWEN_XML, "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
     "</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>", "Sure.", 1,
     {"get_weather"}, {"{\"city\":\"Paris\",\"days\":3}"}},
    /* Llama 3.x */
    {CF_TOOLS_LLAMA3, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}", "", 1,
     {"get_weather"}, {"{\"city\":\"Oslo\"}"}},
    {CF_TOOLS_LLAMA3, "<|python_tag|>{\"name\": \"f\", \"parameters\": {}}", "", 1, {"f"}, {"{}"}},
    {CF_TOOLS_LLAMA3, "The answer is {braces} in text.", "The answer is {braces} in text.", 0},
    {CF_TOOLS_LLAMA3, "{\"not\": \"a call\"}", "{\"not\": \"a call\"}", 0},
    /* Mistral Nemo / Small */
    {CF_TOOLS_MISTRAL, "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"a\": 1}, \"id\": \"abc123def\"}, "
     "{\"name\": \"g\", \"arguments\": {}}]", "", 2, {"f", "g"}, {"{\"a\":1}", "{}"},
     {"abc123def", NULL}},
    /* Ministral 3, Magistral */
    {CF_TOOLS_MISTRAL_ARGS, "Checking.[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Rome\"}"
     "[TOOL_CALLS]now[ARGS]{}", "Checking.", 2, {"get_weather", "now"}, {"{\"city\":\"Rome\"}", "{}"}},
    /* Gemma 4 */
    {CF_TOOLS_GEMMA4, "<|tool_call>call:get_weather{city:<|\"|>New York, NY<|\"|>,days:2,"
     "opts:{metric:true,tags:[<|\"|>a<|\"|>,1]}}<tool_call|>", "", 1, {"get_weather"},
     {"{\"city\":\"New York, NY\",\"days\":2,\"opts\":{\"metric\":true,\"tags\":[\"a\",1]}}"}},
    /* DeepSeek V3.1, and R1's way */
    {CF_TOOLS_DEEPSEEK, "ok" DS_CALLS DS_CALL "get_weather" DS_SEP "{\"city\": \"Lima\"}" DS_CALL_END
     DS_CALLS_END, "ok", 1, {"get_weather"}, {"{\"city\":\"Lima\"}"}},
    {CF_TOOLS_DEEPSEEK, DS_CALLS DS_CALL "function" DS_SEP "f\n```json\n{\"a\": true}\n```" DS_CALL_END
     DS_CALLS_END, "", 1, {"f"}, {"{\"a\":true}"}},
    /* GLM 4.5/4.6 */
    {CF_TOOLS_GLM, "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Bern</arg_value>\n"
     "<arg_key>n</arg_key>\n<arg_value>4</arg_value>\n</tool_call>", "", 1, {"get_weather"},
     {"{\"city\":\"Bern\",\"n\":4}"}},
    /* Kimi K2 */
    {CF_TOOLS_KIMI, "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
     "<|tool_call_argument_begin|>{\"city\": \"Kyiv\"}<|tool_call_end|><|tool_calls_section_end|>", "",
     1, {"get_weather"}, {"{\"city\":\"Kyiv\"}"}, {"functions.get_weather:0"}},
    /* Command R7B */
    {CF_TOOLS_COMMAND_R, "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"f\", "
     "\"parameters\": {\"x\": \"y\"}}]<|END_ACTION|>", "", 1, {"f"}, {"{\"x\":\"y\"}"}},
    /* Nemotron Nano v2 */
    {CF_TOOLS_NEMOTRON, "<TOOLCALL>[{\"name\": \"f\", \"arguments\": {\"a\": \"b\"}}]</TOOLCALL>", "", 1,
     {"f"}, {"{\"a\":\"b\"}"}},
    /* LFM2's Python calls */
    {CF_TOOLS_PYTHONIC, "Let me check. <|tool_call_start|>[get_weather(city=\"Paris\", days=3, "
     "opts={'metric': True, 'tags': ['a', None]}), now()]<|tool_call_end|>", "Let me check.", 2,
     {"get_weather", "now"},
     {"{\"city\":\"Paris\",\"days\":3,\"opts\":{\"metric\":true,\"tags\":[\"a\",null]}}", "{}"}},
    /* the bare call a required grammar writes */
    {CF_TOOLS_JSON, " {\"name\": \"f\", \"arguments\": {\"k\": null}}", "", 1, {"f"}, {"{\"k\":null}"}},
    {CF_TOOLS_NONE, "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
     "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", 0},
};

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static void check_result(const vector *v, const char *content, const cf_tool_call *c, int n,
                         const char *how)
{
    CHECKF(!strcmp(content, v->content), "%s %s: content '%s', wanted '%s'",
           cf_tools_format_name(v->f), how, content, v->content);
    CHECKF(n == v->n, "%s %s: %d calls, wanted %d (%s)", cf_tools_format_name(v->f), how, n, v->n,
           v->text);
    for (int i = 0; i < n && i < v->n; i++)
        CHECKF(!strcmp(c[i].name, v->name[i]) && !strcmp(c[i].arguments, v->args[i]) &&
                   same(c[i].id, v->id[i]),
               "%s %s: call %d is %s(%s) id %s, wanted %s(%s)", cf_tools_format_name(v->f), how, i,
               c[i].name, c[i].arguments, c[i].id ? c[i].id : "-", v->name[i], v->args[i]);
}

static void test_vectors(void)
{
    for (size_t k = 0; k < sizeof vectors / sizeof vectors[0]; k++) {
        const vector *v = &vectors[k];
        for (size_t step = 0; step <= 9; step++) { /* 0: whole */
            cf_tool_parser p;
            cf_tool_parser_init(&p, v->f);
            size_t len = strlen(v->text), safe = 0;
            for (size_t at = 0; at < len;) {
                size_t n = step ? (len - at < step ? len - at : step) : len;
                long s = cf_tool_parser_feed(&p, v->text + at, n);
                CHECK(s >= (long)safe);
                safe = (size_t)s;
                at += n;
            }
            char *content, how[32];
            cf_tool_call *calls;
            int n;
            CHECK(cf_tool_parser_finish(&p, &content, &calls, &n, NULL) == 0);
            snprintf(how, sizeof how, step ? "in pieces of %zu" : "whole", step);
            check_result(v, content, calls, n, how);
            CHECKF(safe <= strlen(content) && !strncmp(content, v->text, safe),
                   "%s %s: let %zu bytes out as content, of '%s'", cf_tools_format_name(v->f), how,
                   safe, content);
            free(content);
            cf_tool_calls_free(calls, n);
            cf_tool_parser_free(&p);
        }
    }
}

/* Streaming lets plain text out as it comes: all but what could still
 * open a call. */
static void test_streaming(void)
{
    cf_tool_parser p;
    cf_tool_parser_init(&p, CF_TOOLS_HERMES);
    CHECK(cf_tool_parser_feed(&p, "Hello there", 11) == 11);
    CHECK(cf_tool_parser_feed(&p, " <tool", 6) == 11);
    CHECK(cf_tool_parser_feed(&p, "s are", 5) == 22);
    CHECK(cf_tool_parser_feed(&p, " fun\n", 5) == 26);
    CHECK(cf_tool_parser_feed(&p, "<tool_call>", 11) == 26);
    CHECK(cf_tool_parser_feed(&p, "more", 4) == 26);
    cf_tool_parser_free(&p);
}

/* gpt-oss: the arguments are the content, the function is in the header */
static void test_harmony(void)
{
    static const char raw[] = "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant "
                              "to=functions.get_weather<|channel|>commentary json<|message|>"
                              "{\"city\": \"Oslo\"}";
    cf_tool_parser p;
    cf_tool_parser_init(&p, CF_TOOLS_HARMONY);
    CHECK(cf_tool_parser_feed(&p, "{\"city\": ", 9) == 0);
    CHECK(cf_tool_parser_feed(&p, "\"Oslo\"}", 7) == 0);
    cf_tools_harmony_recipient(&p, raw, strlen(raw));
    char *content;
    cf_tool_call *calls;
    int n;
    CHECK(!strcmp(p.recipient, "get_weather") &&
          cf_tool_parser_finish(&p, &content, &calls, &n, NULL) == 0 && n == 1 &&
          !strcmp(calls[0].name, "get_weather") && !strcmp(calls[0].arguments, "{\"city\":\"Oslo\"}") &&
          !*content);
    free(content);
    cf_tool_calls_free(calls, n);
    cf_tool_parser_free(&p);
    /* a final answer: no recipient, the text is content */
    cf_tool_parser_init(&p, CF_TOOLS_HARMONY);
    cf_tool_parser_feed(&p, "Sunny.", 6);
    cf_tools_harmony_recipient(&p, "<|channel|>final<|message|>Sunny.", 33);
    CHECK(!*p.recipient && cf_tool_parser_finish(&p, &content, &calls, &n, NULL) == 0 && n == 0 &&
          !strcmp(content, "Sunny."));
    free(content);
    cf_tool_parser_free(&p);
}

static void test_detect(void)
{
    static const struct {
        const char *file;
        cf_tool_format f;
    } want[] = {
        {"templates/2026/Qwen-Qwen3-0.6B.jinja", CF_TOOLS_HERMES},
        {"templates/2026/Qwen3.5-4B.jinja", CF_TOOLS_QWEN_XML},
        {"templates/2026/openai-gpt-oss-120b.jinja", CF_TOOLS_HARMONY},
        {"templates/2026/google-gemma-4-31B-it.jinja", CF_TOOLS_GEMMA4},
        {"templates/2026/mistralai-Ministral-3-14B-Reasoning-2512.jinja", CF_TOOLS_MISTRAL_ARGS},
        {"templates/2026/deepseek-ai-DeepSeek-V3.1.jinja", CF_TOOLS_DEEPSEEK},
        {"templates/2026/ibm-granite-granite-4.0.jinja", CF_TOOLS_HERMES},
        {"templates/2026/GLM-4.6.jinja", CF_TOOLS_GLM},
        {"templates/2026/Kimi-K2-Thinking.jinja", CF_TOOLS_KIMI},
        {"templates/2026/HuggingFaceTB-SmolLM3-3B.jinja", CF_TOOLS_NONE}, /* this one has no tools */
        {"templates/Qwen-Qwen2.5-7B-Instruct.jinja", CF_TOOLS_HERMES},
        {"templates/NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", CF_TOOLS_HERMES},
        {"templates/meta-llama-Llama-3.1-8B-Instruct.jinja", CF_TOOLS_LLAMA3},
        {"templates/meta-llama-Llama-3.2-3B-Instruct.jinja", CF_TOOLS_LLAMA3},
        {"templates/mistralai-Mistral-Nemo-Instruct-2407.jinja", CF_TOOLS_MISTRAL},
        {"templates/CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", CF_TOOLS_COMMAND_R},
        {"templates/google-gemma-2-2b-it.jinja", CF_TOOLS_NONE},
        {"templates/2026/NVIDIA-Nemotron-Nano-v2.jinja", CF_TOOLS_NEMOTRON},
        {"templates/2026/LFM2-8B-A1B.jinja", CF_TOOLS_PYTHONIC},
        {"templates/llama-cpp-deepseek-r1.jinja", CF_TOOLS_DEEPSEEK},
    };
    if (!shared_dir()) {
        fprintf(stderr, "no ../shared: the templates' formats are not checked\n");
        return;
    }
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        FILE *f = fopen(shared_path(want[i].file), "rb");
        if (!f) {
            CHECKF(0, "cannot read %s", want[i].file);
            continue;
        }
        static char src[1 << 20];
        size_t n = fread(src, 1, sizeof src, f);
        fclose(f);
        cf_tool_format got = cf_tools_detect(src, n);
        CHECKF(got == want[i].f, "%s: %s, wanted %s", want[i].file, cf_tools_format_name(got),
               cf_tools_format_name(want[i].f));
    }
}

static void test_grammar(void)
{
    const char *tools = "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
                        "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": "
                        "{\"type\": \"string\"}}, \"required\": [\"city\"]}}}, "
                        "{\"type\": \"function\", \"function\": {\"name\": \"now\"}}]";
    cf_grammar *g;
    cf_tool_format as;
    CHECK(cf_tools_grammar(CF_TOOLS_HERMES, tools, NULL, true, &g, &as, NULL) == 0 &&
          as == CF_TOOLS_HERMES);
    const char *call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}"
                       "\n</tool_call>";
    CHECK(cf_grammar_matches(g, call, strlen(call), true));
    const char *other = "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";
    CHECK(cf_grammar_matches(g, other, strlen(other), true));
    const char *bad = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>";
    CHECK(!cf_grammar_matches(g, bad, strlen(bad), true)); /* city is required */
    cf_grammar_free(g);
    /* one function by name; an unframed format writes the bare call */
    CHECK(cf_tools_grammar(CF_TOOLS_GEMMA4, tools, "now", true, &g, &as, NULL) == 0 &&
          as == CF_TOOLS_JSON);
    const char *bare = "{\"name\": \"now\", \"arguments\": {}}";
    CHECK(cf_grammar_matches(g, bare, strlen(bare), true));
    const char *wrong = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"x\"}}";
    CHECK(!cf_grammar_matches(g, wrong, strlen(wrong), true));
    cf_grammar_free(g);
    CHECK(cf_tools_grammar(CF_TOOLS_LLAMA3, tools, NULL, true, &g, &as, NULL) == 0 &&
          as == CF_TOOLS_LLAMA3);
    const char *l3 = "{\"name\": \"now\", \"parameters\": {}}";
    CHECK(cf_grammar_matches(g, l3, strlen(l3), true));
    cf_grammar_free(g);
    cf_err err;
    CHECK(cf_tools_grammar(CF_TOOLS_HERMES, tools, "nope", true, &g, &as, &err) < 0 &&
          strstr(err.msg, "no tool is named 'nope'"));
    const char *ranged = "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": "
                         "{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integer\", "
                         "\"minimum\": 1}}}}}]";
    CHECK(cf_tools_grammar(CF_TOOLS_HERMES, ranged, NULL, true, &g, &as, &err) < 0 &&
          strstr(err.msg, "'minimum' is not supported"));
}

int main(void)
{
    test_vectors();
    test_streaming();
    test_harmony();
    test_detect();
    test_grammar();
    return test_summary("tool-calls");
}
