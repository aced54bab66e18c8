/* The full-screen status bar's text at every width; "thinking" while a
 * reply thinks, the last reply's thinking and answer tokens after; the
 * threads beside the speed when other programs' work cut them. */
#include <locale.h>
#include <string.h>

#include "harness.h"
#include "text.h"
#include "tui.h"

int main(void)
{
    if (!setlocale(LC_CTYPE, "C.UTF-8")) {
        fprintf(stderr, "no UTF-8 locale: skipped\n");
        return TEST_SKIP;
    }
    status_info si = {
        .model = "stories260K", .ctx_used = 256, .ctx_total = 512, .tps = 123.45, .temp = 0.8,
        .top_p = 0.95, .top_k = 40, .saved = "unsaved", .generating = true, .unicode = true,
    };
    char out[1024];
    status_format(&si, 120, out, sizeof out);
    static const char *const parts[] = {"generating", "stories260K", "ctx [█████░░░░░] 256/512",
                                        "123.5 t/s", "temp 0.80", "top-k 40", "top-p 0.95",
                                        "unsaved"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        CHECKF(strstr(out, parts[i]), "'%s' lacks '%s'", out, parts[i]);
    /* exactly as wide as asked, whatever the width */
    for (int w = 1; w <= 160; w++) {
        status_format(&si, w, out, sizeof out);
        CHECKF(utf8_width(out, strlen(out)) == w, "width %d: '%s'", w, out);
        if (w >= 50)
            CHECKF(strstr(out, "temp 0.80") && strstr(out, "top-k 40"),
                   "width %d drops the sampler: '%s'", w, out);
        /* a fixed order: a field shows only with every more important one */
        static const char *const order[] = {"generating", "stories260K", "temp 0.80", "top-k 40",
                                            "t/s", "unsaved", "ctx ["};
        for (size_t i = 1; i < sizeof order / sizeof order[0]; i++)
            CHECKF(!strstr(out, order[i]) || strstr(out, order[i - 1]),
                   "width %d: '%s' without '%s': '%s'", w, order[i], order[i - 1], out);
    }
    /* 100 columns after a reply that thought, greedy (F9), not saved: the
     * model, the speed and the save state stay */
    status_info after = si;
    after.generating = false;
    after.temp = 0;
    after.think_tokens = 312;
    after.answer_tokens = 45;
    after.saved = "not saved";
    after.branch = "branch 2";
    status_format(&after, 100, out, sizeof out);
    CHECKF(strstr(out, "stories260K") && strstr(out, "123.5 t/s") && strstr(out, "not saved") &&
               strstr(out, "temp 0 (greedy)"),
           "100 columns: '%s'", out);
    /* remote, no sampler setting given: the server's own values */
    status_info remote = si;
    remote.remote = true;
    remote.server_sets = SERVER_TEMP | SERVER_TOP_K | SERVER_TOP_P;
    status_format(&remote, 120, out, sizeof out);
    CHECKF(strstr(out, "sampling: server default") && !strstr(out, "temp") &&
               !strstr(out, "top-k") && !strstr(out, "top-p") && strstr(out, "remote stories260K"),
           "remote: '%s'", out);
    /* the temperature given (F5, /set temp), the rest still the server's */
    remote.server_sets = SERVER_TOP_K | SERVER_TOP_P;
    status_format(&remote, 120, out, sizeof out);
    CHECKF(strstr(out, "temp 0.80") && strstr(out, "top-k: server's") &&
               strstr(out, "top-p: server's") && !strstr(out, "default"),
           "remote, temp given: '%s'", out);
    si.temp = 0;
    si.top_k = 0;
    si.generating = false;
    si.unicode = false;
    si.tps = -1;
    si.scrolled = 12;
    status_format(&si, 120, out, sizeof out);
    CHECKF(strstr(out, "temp 0 (greedy)") && strstr(out, "top-k off") && strstr(out, "ready") &&
               strstr(out, "ctx [#####-----]") && strstr(out, "scrolled 12") &&
               strstr(out, "- t/s") && !strstr(out, "│") && !strstr(out, "think"),
           "'%s'", out);
    si.think_tokens = 312;
    si.answer_tokens = 45;
    si.scrolled = 0;
    status_format(&si, 120, out, sizeof out);
    CHECKF(strstr(out, "think 312, answer 45"), "'%s'", out);
    si.generating = si.thinking = si.unicode = true;
    status_format(&si, 120, out, sizeof out);
    CHECKF(strstr(out, " ● thinking…") && !strstr(out, "think 312"), "'%s'", out);
    for (int w = 1; w <= 160; w++) {
        status_format(&si, w, out, sizeof out);
        CHECKF(utf8_width(out, strlen(out)) == w, "width %d: '%s'", w, out);
    }
    /* threads cut by other programs' work show beside the speed */
    si.tps = 80;
    si.threads = 4;
    si.fewest_threads = 4;
    status_format(&si, 120, out, sizeof out);
    CHECKF(strstr(out, "80.0 t/s") && !strstr(out, "threads"), "'%s'", out);
    si.fewest_threads = 3;
    status_format(&si, 120, out, sizeof out);
    CHECKF(strstr(out, "80.0 t/s on 3 of 4 threads"), "'%s'", out);
    return test_summary("ui-status");
}
