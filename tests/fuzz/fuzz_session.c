/* The session-file loader, over a session of the tiny chat model.  Each
 * input is sealed with the file's checksum first (else almost every
 * mutation would stop at the checksum).  A file that loads must then chat
 * one short turn, save, and load again; one that does not must leave a
 * message.  Between inputs the session goes back to a pristine file.
 * Seeds: sessions saved by confab (seeds.sh) and tests/session/v1.session. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/session.h"
#include "fuzz_util.h"
#include "session_internal.h"

static cf_session *s;
static char pristine[512], again[512];

static void open_session(void)
{
    cf_session_params p = {.model_path = fuzz_shared("models/stories260K-chatml.gguf"),
                           .n_ctx = 128, .n_threads = 1};
    cf_err err;
    fuzz_require(cf_session_new(&p, &s, &err) == 0, "%s", err.msg);
    snprintf(pristine, sizeof pristine, "%s/pristine.session", fuzz_dir());
    snprintf(again, sizeof again, "%s/again.session", fuzz_dir());
    fuzz_require(cf_session_save(s, pristine, &err) == 0, "%s", err.msg);
}

/* One short turn, as the chat would go on after a load. */
static void chat_a_little(void)
{
    cf_err err = {0};
    char *text;
    int n, cached;
    if (cf_session_prompt_text(s, "Hi", &text, &n, &cached, &err) == 0)
        free(text);
    else
        fuzz_require_message(&err);
    fuzz_require(cf_session_set(s, "n-predict", "2", &err) == 0, "%s", err.msg);
    if (cf_session_begin_reply(s, "Hi", &err) != 0) {
        fuzz_require_message(&err);
        return;
    }
    const char *piece;
    int rc;
    while ((rc = cf_session_next(s, &piece, &err)) == CF_NEXT_TOKEN)
        ;
    if (rc < 0)
        fuzz_require_message(&err);
    cf_session_end_reply(s, false);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!s)
        open_session();
    uint8_t *img = malloc(size ? size : 1);
    fuzz_require(img != NULL, "out of memory");
    memcpy(img, data, size);
    if (size >= 16) {
        uint64_t sum = sess_checksum(img, size - 8);
        memcpy(img + size - 8, &sum, 8);
    }
    const char *path = fuzz_file(0, img, size);
    free(img);
    cf_err err = {0};
    int before = cf_session_n_messages(s);
    if (cf_session_load(s, path, &err) != 0) {
        fuzz_require_message(&err);
        fuzz_require(cf_session_n_messages(s) == before, "a failed load changed the session");
        return 0;
    }
    chat_a_little();
    fuzz_require(cf_session_save(s, again, &err) == 0, "saving a loaded session: %s", err.msg);
    fuzz_require(cf_session_load(s, again, &err) == 0, "loading what was saved: %s", err.msg);
    fuzz_require(cf_session_load(s, pristine, &err) == 0, "%s", err.msg);
    return 0;
}
