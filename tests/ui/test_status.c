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
        if (w >= 40)
            CHECKF(strstr(out, "temp 0.80") && strstr(out, "top-k 40"),
                   "width %d drops the sampler: '%s'", w, out);
    }
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
