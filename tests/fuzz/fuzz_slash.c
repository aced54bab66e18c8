/* The chat's input: lines as typed (continued lines and """ blocks),
 * slash commands with their arguments, and messages, over a chat on the
 * tiny chat model with a small context (so replies, shifts, /undo, /regen
 * all happen).  Each error is one line.  /save and /load reach only files
 * in a private folder.  Between inputs
 * the chat goes back to a pristine session. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat.h"
#include "fuzz_util.h"
#include "input.h"

enum { MAX_LINES = 64 };

static void say(chat *c, out_kind kind, const char *text)
{
    (void)c;
    if (kind == OUT_ERROR)
        fuzz_require(text[0] && !strchr(text, '\n'), "not one error line: '%s'", text);
}

static void part(void *ud, const cf_reply_part *p)
{
    (void)ud;
    (void)p;
}

static bool never(void *ud)
{
    (void)ud;
    return false;
}

static int reply(chat *c)
{
    stream_hooks h = {part, never, NULL};
    return chat_stream(c, &h);
}

static const chat_view view = {say, reply, NULL, NULL, NULL, NULL, NULL, NULL};
static chat c;
static chat_opts opts;
static char pristine[512];

static void open_chat(void)
{
    const char *model = fuzz_shared("models/stories260K-chatml.gguf"), *dir = fuzz_dir();
    setenv("HOME", dir, 1);
    setenv("XDG_DATA_HOME", dir, 1);
    setenv("XDG_CONFIG_HOME", dir, 1);
    cf_session_params p = {.model_path = model, .n_ctx = 96, .n_threads = 1};
    cf_session *s;
    cf_err err;
    fuzz_require(cf_session_new(&p, &s, &err) == 0 && cf_session_set(s, "n-predict", "8", &err) == 0,
                 "%s", err.msg);
    snprintf(pristine, sizeof pristine, "%s/pristine.session", dir);
    fuzz_require(cf_session_save(s, pristine, &err) == 0, "%s", err.msg);
    opts_init(&opts);
    c = (chat){.s = s, .opts = &opts, .model_path = model, .view = &view};
}

static void reset_chat(void)
{
    cf_err err;
    fuzz_require(cf_session_load(c.s, pristine, &err) == 0, "%s", err.msg);
    free(c.session_path);
    c = (chat){.s = c.s, .opts = &opts, .model_path = c.model_path, .view = &view,
               .show_thinking = true};
}

/* /save and /load reach only the private folder: a bare file name is put
 * there, a path is dropped (NULL). */
static char *confine(const char *text)
{
    if (strncmp(text, "/save", 5) && strncmp(text, "/load", 5))
        return strdup(text);
    const char *arg = text + 5 + strspn(text + 5, " \t");
    char *out = NULL;
    if (!*arg || arg == text + 5)
        out = strdup(text);
    else if (!strchr(arg, '/') && asprintf(&out, "%.5s %s/%s", text, fuzz_dir(), arg) < 0)
        out = NULL;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!c.s)
        open_chat();
    reset_chat();
    char *copy = malloc(size + 1);
    fuzz_require(copy != NULL, "out of memory");
    memcpy(copy, data, size);
    copy[size] = 0;
    input_asm a = {0};
    int lines = 0;
    for (char *line = copy; line && lines < MAX_LINES && !c.quit; lines++) {
        char *nl = memchr(line, '\n', size - (size_t)(line - copy));
        if (nl)
            *nl = 0;
        if (input_feed(&a, line) == 1) {
            char *msg = input_take(&a);
            char *clean = msg ? chat_clean_input(&c, msg, strlen(msg)) : NULL;
            char *line_in = clean ? confine(clean) : NULL;
            if (line_in)
                chat_input(&c, line_in);
            free(line_in);
            free(clean);
            free(msg);
        }
        line = nl ? nl + 1 : NULL;
    }
    input_free(&a);
    free(copy);
    return 0;
}
