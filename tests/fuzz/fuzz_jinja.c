/* The Jinja lexer, parser and renderer: the input is a chat template,
 * rendered (under small limits, so a runaway template ends soon with its
 * error) for a conversation with a system prompt, a tool call, its result
 * and reasoning, with and without the generation prompt.  Seeds: the
 * shared templates; jinja.dict holds the language's tokens. */
#include <stdlib.h>
#include <string.h>

#include "confab/template.h"
#include "fuzz_util.h"

static const char messages[] =
    "[{\"role\": \"system\", \"content\": \"Be brief.\"},"
    " {\"role\": \"user\", \"content\": \"What is the weather in Paris?\"},"
    " {\"role\": \"assistant\", \"content\": \"\", \"reasoning_content\": \"Ask the tool.\","
    "  \"tool_calls\": [{\"id\": \"c1\", \"type\": \"function\", \"function\":"
    "   {\"name\": \"weather\", \"arguments\": {\"city\": \"Paris\"}}}]},"
    " {\"role\": \"tool\", \"tool_call_id\": \"c1\", \"name\": \"weather\", \"content\": \"22 C\"},"
    " {\"role\": \"assistant\", \"content\": \"<think>Easy.</think>It is 22 C.\"},"
    " {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"Thanks!\"}]}]";
static const char tools[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"weather\", \"description\": \"Weather\","
    " \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}},"
    " \"required\": [\"city\"]}}}]";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *src = (const char *)data;
    (void)cf_chat_detect(src, size);
    cf_chat_template *t;
    cf_err err = {0};
    if (cf_chat_template_from_jinja(src, size, "fuzz", &t, &err) != 0) {
        fuzz_require_message(&err);
        return 0;
    }
    (void)cf_chat_template_reasoning(t);
    (void)cf_chat_template_stops(t);
    static const char *const names[] = {"enable_thinking", "reasoning_effort"};
    static const char *const values[] = {"true", "\"high\""};
    static const cf_jinja_limits limits = {200000, 0, 1 << 20, 64 << 20};
    for (int gen = 0; gen < 2; gen++) {
        cf_chat_opts o = {.bos_token = "<s>", .eos_token = "</s>", .add_generation_prompt = gen,
                          .tools_json = gen ? tools : NULL, .n_vars = gen ? 2 : 0,
                          .var_names = names, .var_json = values, .now = 1768435200,
                          .limits = &limits};
        char *out = NULL;
        size_t len;
        if (cf_chat_render_json(t, messages, sizeof messages - 1, &o, &out, &len, &err) != 0)
            fuzz_require_message(&err);
        else
            fuzz_require(out[len] == 0 && strlen(out) <= len, "the rendering is not its length");
        free(out);
    }
    cf_chat_template_free(t);
    return 0;
}
