/* The replies' format (/set format): with a schema's file every reply over
 * several seeds is a whole document of the schema and ends there, json
 * gives a JSON object's prefix at least, off gives free text back; a bad
 * value is one error line and changes nothing. */
#include "confab/grammar.h"
#include "sess_util.h"

static const char schema[] =
    "{\"type\": \"object\", \"properties\": {\"answer\": {\"enum\": [\"yes\", \"no\"]}, "
    "\"score\": {\"type\": \"integer\"}}, \"required\": [\"answer\", \"score\"]}";

int main(void)
{
    if (!shared_dir()) {
        fprintf(stderr, "no ../shared: skipped\n");
        return TEST_SKIP;
    }
    char path[] = "/tmp/confab-format-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, schema, sizeof schema - 1) == (ssize_t)(sizeof schema - 1));
    close(fd);
    cf_grammar *g, *json;
    cf_err err;
    CHECK(!cf_grammar_from_json_schema(schema, &g, &err) && !cf_grammar_json(&json, &err));
    static char text[16384];
    char buf[64], seed[8];
    cf_session *s = open_shared("models/qwen3-bpe.Q8_0.gguf", 1024, NULL, 300);
    if (!s)
        return test_summary("session-format");
    CHECK(!cf_session_set(s, "temp", "1", &err));
    CHECK(strcmp(cf_session_get(s, "format", buf, sizeof buf), "off") == 0);
    CHECKF(!cf_session_set(s, "format", path, &err), "%s", err.msg);
    CHECK(strcmp(cf_session_get(s, "format", buf, sizeof buf), path) == 0);
    for (int i = 1; i <= 4; i++) {
        snprintf(seed, sizeof seed, "%d", i);
        CHECK(!cf_session_set(s, "seed", seed, &err));
        int stop = exchange(s, "Is it raining?", text, sizeof text);
        CHECKF(stop == CF_STOP_EOG && cf_grammar_matches(g, text, strlen(text), true),
               "seed %d: stop %d, '%s'", i, stop, text);
    }
    CHECK(!cf_session_set(s, "format", "json", &err));
    exchange(s, "And now?", text, sizeof text);
    CHECKF(text[0] == '{' && cf_grammar_matches(json, text, strlen(text), false), "json: '%s'",
           text);
    /* a bad value: one line, the format as it was */
    CHECK(cf_session_set(s, "format", "/nonexistent.json", &err) == -1 && !strchr(err.msg, '\n'));
    CHECK(strstr(err.msg, "'/nonexistent.json' is not json, off, or a JSON schema's file"));
    CHECK(strcmp(cf_session_get(s, "format", buf, sizeof buf), "json") == 0);
    CHECK(!cf_session_set(s, "format", "off", &err));
    exchange(s, "Free text?", text, sizeof text);
    CHECKF(!cf_grammar_matches(json, text, strlen(text), false), "off: '%s'", text);
    cf_session_free(s);
    cf_grammar_free(g);
    cf_grammar_free(json);
    unlink(path);
    return test_summary("session-format");
}
