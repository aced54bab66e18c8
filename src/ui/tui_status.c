/* The status bar: model, context as a bar, speed (and the threads, when
 * other programs' work cut them), sampler, save state,
 * thinking and answer tokens of the last reply, the branch, probs.  A
 * remote model shows "remote NAME", the tokens the server said the last
 * reply used, and "sampling: server default" until a sampler setting is
 * given (confab sends none then), "top-k: server's" for one not given
 * after. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "text.h"
#include "tui.h"

#define SEP " │ "
#define SEP_ASCII " | "

void status_format(const status_info *si, int width, char *out, size_t n)
{
    enum { BAR = 10 };
    const char *sep = si->unicode ? SEP : SEP_ASCII;
    char ctx[128], tps[96], temp[32], topk[32], topp[32], scroll[32], model[64], split[64];
    int fill = si->ctx_total > 0 ? (int)((double)si->ctx_used * BAR / si->ctx_total + 0.5) : 0;
    if (fill > BAR)
        fill = BAR;
    size_t k = (size_t)snprintf(ctx, sizeof ctx, "ctx [");
    for (int i = 0; i < BAR; i++)
        k += (size_t)snprintf(ctx + k, sizeof ctx - k, "%s",
                              i < fill ? (si->unicode ? "█" : "#") : (si->unicode ? "░" : "-"));
    snprintf(ctx + k, sizeof ctx - k, "] %d/%d", si->ctx_used, si->ctx_total);
    /* a server's context is its own: what it said the last reply used */
    if (si->remote && si->ctx_used > 0)
        snprintf(ctx, sizeof ctx, "used %d tok", si->ctx_used);
    else if (si->remote)
        snprintf(ctx, sizeof ctx, "used - tok");
    if (si->tps >= 0 && si->fewest_threads && si->fewest_threads < si->threads)
        snprintf(tps, sizeof tps, "%.1f t/s on %d of %d threads", si->tps, si->fewest_threads, si->threads);
    else if (si->tps >= 0)
        snprintf(tps, sizeof tps, "%.1f t/s", si->tps);
    else
        snprintf(tps, sizeof tps, "- t/s");
    /* a server's own choice is not ours to show */
    if (si->server_sets & SERVER_TEMP)
        snprintf(temp, sizeof temp, "temp: server's");
    else if (si->temp > 0)
        snprintf(temp, sizeof temp, "temp %.2f", si->temp);
    else
        snprintf(temp, sizeof temp, "temp 0 (greedy)");
    if (si->server_sets & SERVER_TOP_K)
        snprintf(topk, sizeof topk, "top-k: server's");
    else if (si->top_k > 0)
        snprintf(topk, sizeof topk, "top-k %ld", si->top_k);
    else
        snprintf(topk, sizeof topk, "top-k off");
    if (si->server_sets & SERVER_TOP_P)
        snprintf(topp, sizeof topp, "top-p: server's");
    else
        snprintf(topp, sizeof topp, "top-p %.2f", si->top_p);
    snprintf(scroll, sizeof scroll, "scrolled %d", si->scrolled);
    snprintf(model, sizeof model, "%s%.40s", si->remote ? "remote " : "", si->model);
    snprintf(split, sizeof split, "think %d%sanswer %d", si->think_tokens,
             si->unicode ? " · " : ", ", si->answer_tokens);

    /* Shown in this order.  When the bar is narrow the least important go
     * first: kept are the state, the model, what the hotkeys change, the
     * speed, whether it is saved, the context, the last reply's thinking,
     * the branch, probs, the scrolling, top-p.  A field that does not fit
     * leaves out every less important one too, so that fields do not come
     * and go as the values before them grow and shrink. */
    const char *state = !si->generating ? " ready"
                        : si->thinking  ? (si->unicode ? " ● thinking…" : " * thinking...")
                                        : (si->unicode ? " ● generating" : " * generating");
    bool server = si->server_sets == (SERVER_TEMP | SERVER_TOP_K | SERVER_TOP_P);
    const char *seg[] = {
        state, model, ctx, tps, server ? "sampling: server default" : temp,
        server ? NULL : topk, server ? NULL : topp, si->saved,
        si->scrolled ? scroll : NULL, !si->generating && si->think_tokens > 0 ? split : NULL,
        si->branch, si->probs ? "probs" : NULL,
    };
    enum { N_SEG = sizeof seg / sizeof seg[0] };
    static const int priority[N_SEG] = {0, 1, 6, 4, 2, 3, 11, 5, 10, 7, 8, 9};
    bool keep[N_SEG] = {false};
    int cols = 0, sep_w = utf8_width(sep, strlen(sep));
    for (int p = 0, full = 0; p < N_SEG && !full; p++)
        for (int i = 0; i < N_SEG; i++) {
            if (priority[i] != p || !seg[i])
                continue;
            int w = utf8_width(seg[i], strlen(seg[i])) + (cols ? sep_w : 0);
            full = cols + w > width;
            keep[i] = !full;
            cols += full ? 0 : w;
        }
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < N_SEG && used < n; i++)
        if (keep[i])
            used += (size_t)snprintf(out + used, n - used, "%s%s", used ? sep : "", seg[i]);
    while (cols < width && used + 1 < n) {
        out[used++] = ' ';
        cols++;
    }
    if (used < n)
        out[used] = 0;
}
