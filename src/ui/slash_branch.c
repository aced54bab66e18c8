/* Branches at the prompt: /branch, /branches (the tree), /switch, /edit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chat.h"
#include "text.h"

/* ---- the tree -------------------------------------------------------------------------
 * Built from the branches' paths: a node is one turn (a user message and
 * the reply to it, or a system prompt); paths that agree turn for turn
 * share their nodes. */
typedef struct node {
    const cf_message *user, *reply; /* user: the system prompt at a system node */
    int parent, child, next;        /* -1: none */
    char ends[64];                  /* the branches that end here */
} node;

typedef struct tree {
    node *v;
    int n, cap;
} tree;

static bool same(const cf_message *a, const cf_message *b)
{
    if (!a || !b)
        return a == b;
    return a->role == b->role && !strcmp(a->content, b->content);
}

/* The child of p for this turn, added when there is none; -1 when out of
 * memory. */
static int child_for(tree *t, int p, const cf_message *user, const cf_message *reply)
{
    int last = -1;
    for (int k = t->v[p].child; k >= 0; last = k, k = t->v[k].next)
        if (same(t->v[k].user, user) && same(t->v[k].reply, reply))
            return k;
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 32;
        node *v = realloc(t->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n] = (node){user, reply, p, -1, -1, ""};
    if (last < 0)
        t->v[p].child = t->n;
    else
        t->v[last].next = t->n;
    return t->n++;
}

static int add_path(tree *t, cf_session *s, int k)
{
    cf_branch_info b;
    cf_session_branch(s, k, &b);
    int at = 0;
    for (int i = 0; i < b.n_messages && at >= 0;) {
        const cf_message *m = cf_session_branch_message(s, k, i++), *r = NULL;
        if (m->role == CF_ROLE_USER && i < b.n_messages &&
            cf_session_branch_message(s, k, i)->role == CF_ROLE_ASSISTANT)
            r = cf_session_branch_message(s, k, i++);
        at = child_for(t, at, m, r);
    }
    if (at < 0)
        return -1;
    size_t used = strlen(t->v[at].ends);
    snprintf(t->v[at].ends + used, sizeof t->v[at].ends - used, "%s%s%d%s%s", used ? ", " : "",
             b.current ? "* " : "", b.id, *b.name ? " " : "", b.name);
    return 0;
}

/* The first words of a text on one line, at most `cols` columns. */
static void first_words(const char *text, int cols, char *out, size_t n)
{
    size_t k = 0, i = 0, len = strlen(text);
    int w = 0;
    bool cut = false;
    while (i < len && (text[i] == ' ' || text[i] == '\n'))
        i++;
    while (i < len && k + 5 < n) {
        uint32_t cp;
        int l = utf8_decode(text + i, len - i, &cp);
        if (l <= 0)
            l = 1;
        int cw = cp == '\n' || cp == '\t' ? 1 : cp_width(cp);
        if (w + cw > cols) {
            cut = true;
            break;
        }
        if (cp == '\n' || cp == '\t' || cp < 0x20)
            out[k++] = ' ';
        else {
            memcpy(out + k, text + i, (size_t)l);
            k += (size_t)l;
        }
        w += cw;
        i += (size_t)l;
    }
    bool more = cut || i < len;
    while (k > 0 && out[k - 1] == ' ')
        k--;
    if (more)
        k += (size_t)snprintf(out + k, n - k, "…");
    out[k] = 0;
}

typedef struct printer {
    char *buf;
    size_t len, cap;
} printer;

static void emit(printer *p, const char *s)
{
    size_t n = strlen(s);
    if (buf_reserve(&p->buf, &p->cap, p->len + n + 1) == 0) {
        memcpy(p->buf + p->len, s, n + 1);
        p->len += n;
    }
}

static void print_node(printer *p, const tree *t, int k, const char *indent, const char *joint)
{
    const node *nd = &t->v[k];
    char u[96], r[96], line[512];
    first_words(nd->user->content, 28, u, sizeof u);
    if (nd->user->role == CF_ROLE_SYSTEM)
        snprintf(line, sizeof line, "%s%ssystem: %s", indent, joint, u);
    else {
        first_words(nd->reply ? nd->reply->content : "", 28, r, sizeof r);
        snprintf(line, sizeof line, "%s%s%s → %s", indent, joint, u, nd->reply ? r : "(no reply)");
    }
    emit(p, line);
    if (*nd->ends) {
        emit(p, "   [");
        emit(p, nd->ends);
        emit(p, "]");
    }
    emit(p, "\n");
    /* one child goes on below; several branch off, each indented */
    if (nd->child >= 0 && t->v[nd->child].next < 0) {
        char more[256];
        snprintf(more, sizeof more, "%s%s", indent, *joint ? (strstr(joint, "├") ? "│ " : "  ") : "");
        print_node(p, t, nd->child, more, "");
        return;
    }
    char deeper[256];
    snprintf(deeper, sizeof deeper, "%s%s", indent, *joint ? (strstr(joint, "├") ? "│ " : "  ") : "");
    for (int c = nd->child; c >= 0; c = t->v[c].next)
        print_node(p, t, c, deeper, t->v[c].next >= 0 ? "├ " : "└ ");
}

void cmd_branches(chat *c, const char *args)
{
    (void)args;
    cf_session *s = c->s;
    tree t = {0};
    printer p = {0};
    static const cf_message root = {.role = CF_ROLE_SYSTEM, .content = ""};
    if (!(t.v = malloc(sizeof *t.v))) {
        chat_say(c, OUT_ERROR, "out of memory");
        return;
    }
    t.v[0] = (node){&root, NULL, -1, -1, -1, ""}; /* the empty conversation */
    t.n = t.cap = 1;
    int n = cf_session_n_branches(s);
    for (int k = 0; k < n; k++)
        if (add_path(&t, s, k) < 0) {
            chat_say(c, OUT_ERROR, "out of memory");
            free(t.v);
            return;
        }
    char head[96];
    snprintf(head, sizeof head, "%d branch%s (* the current one; /switch N or NAME):\n", n,
             n == 1 ? "" : "es");
    emit(&p, head);
    if (*t.v[0].ends) {
        emit(&p, "(empty)   [");
        emit(&p, t.v[0].ends);
        emit(&p, "]\n");
    }
    for (int k = t.v[0].child; k >= 0; k = t.v[k].next)
        print_node(&p, &t, k, "", t.v[0].child == k && t.v[k].next < 0 ? "" :
                                  t.v[k].next >= 0 ? "├ " : "└ ");
    if (p.len && p.buf[p.len - 1] == '\n')
        p.buf[--p.len] = 0;
    chat_say(c, OUT_INFO, "%s", p.buf ? p.buf : "");
    free(p.buf);
    free(t.v);
}

/* ---- /branch, /switch ------------------------------------------------------------------ */

static void current_branch(cf_session *s, cf_branch_info *out)
{
    for (int k = 0; k < cf_session_n_branches(s); k++) {
        cf_session_branch(s, k, out);
        if (out->current)
            return;
    }
}

static void branch_label(const cf_branch_info *b, char *buf, size_t n)
{
    snprintf(buf, n, "%d%s%s", b->id, *b->name ? " " : "", b->name);
}

void cmd_branch(chat *c, const char *args)
{
    cf_branch_info b;
    char was[64], now[64];
    current_branch(c->s, &b);
    branch_label(&b, was, sizeof was);
    if (!*args) {
        chat_say(c, OUT_INFO, "on branch %s (%d message%s) of %d; /branch NAME starts a new one "
                 "here", was, b.n_messages, b.n_messages == 1 ? "" : "s",
                 cf_session_n_branches(c->s));
        return;
    }
    cf_err err = {0};
    if (cf_session_fork(c->s, args, &err) < 0) {
        chat_say(c, OUT_ERROR, "%s", err.msg);
        return;
    }
    current_branch(c->s, &b);
    branch_label(&b, now, sizeof now);
    if (c->view->changed)
        c->view->changed(c, CHANGE_BRANCHED);
    chat_say(c, OUT_INFO, "on branch %s now; the conversation so far stays on branch %s too", now,
             was);
}

void cmd_switch(chat *c, const char *args)
{
    if (!*args) {
        chat_say(c, OUT_ERROR, "usage: /switch N|NAME (/branches lists them)");
        return;
    }
    cf_err err = {0};
    int reused, prefilled;
    if (cf_session_switch(c->s, args, &reused, &prefilled, &err) < 0) {
        chat_say(c, OUT_ERROR, "%s", err.msg);
        return;
    }
    if (c->view->changed)
        c->view->changed(c, CHANGE_SWITCHED);
    cf_branch_info b;
    char now[64];
    current_branch(c->s, &b);
    branch_label(&b, now, sizeof now);
    chat_say(c, OUT_INFO, "switched to branch %s (%d message%s): %d tokens reused from the cache, "
             "%d prefilled", now, b.n_messages, b.n_messages == 1 ? "" : "s", reused, prefilled);
}

/* ---- /edit ---------------------------------------------------------------------------- */

/* The index of user message `want` (1 = the first), or -1. */
static int user_index(cf_session *s, int want)
{
    for (int i = 0, k = 0; i < cf_session_n_messages(s); i++)
        if (cf_session_message(s, i)->role == CF_ROLE_USER && ++k == want)
            return i;
    return -1;
}

/* The text after $VISUAL or $EDITOR edited it (malloc'ed), NULL when it
 * failed (said why). */
static char *run_editor(chat *c, const char *editor, const char *text)
{
    const char *tmp = getenv("TMPDIR"), *dir = tmp && *tmp ? tmp : "/tmp";
    char p[4096], cmd[4200], *out = NULL;
    int room = snprintf(p, sizeof p, "%s/confab-edit-XXXXXX.md", dir);
    int fd = room > 0 && room < (int)sizeof p ? mkstemps(p, 3) : -1;
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0 || fclose(f) != 0) {
        chat_say(c, OUT_ERROR, "/edit: cannot write a file for the editor in %s", dir);
        if (fd >= 0 && !f)
            close(fd);
        if (fd >= 0)
            unlink(p);
        return NULL;
    }
    snprintf(cmd, sizeof cmd, "%s '%s'", editor, p);
    if (c->view->suspend)
        c->view->suspend(c, true);
    int rc = system(cmd);
    if (c->view->suspend)
        c->view->suspend(c, false);
    size_t len = 0;
    if (rc != 0)
        chat_say(c, OUT_ERROR, "/edit: the editor (%s) failed (status %d); nothing changed",
                 editor, rc);
    else if (!(f = fopen(p, "rb")) || !(out = malloc(1 << 20)))
        chat_say(c, OUT_ERROR, "/edit: cannot read the edited file back");
    else {
        len = fread(out, 1, (1 << 20) - 1, f);
        while (len && (out[len - 1] == '\n' || out[len - 1] == '\r'))
            len--;
        out[len] = 0;
    }
    if (f)
        fclose(f);
    unlink(p);
    return out;
}

void chat_edit_send(chat *c, int index, const char *text)
{
    cf_err err = {0};
    if (cf_session_edit(c->s, index, text, &err) < 0) {
        chat_turn_failed(c, &err);
        return;
    }
    if (c->view->changed)
        c->view->changed(c, CHANGE_EDITED);
    cf_branch_info b;
    char now[64];
    current_branch(c->s, &b);
    branch_label(&b, now, sizeof now);
    chat_say(c, OUT_DIM, "on a new branch, %s (/branches shows the tree)", now);
    c->view->reply(c);
}

void cmd_edit(chat *c, const char *args)
{
    int users = 0;
    for (int i = 0; i < cf_session_n_messages(c->s); i++)
        users += cf_session_message(c->s, i)->role == CF_ROLE_USER;
    int want = users;
    if (*args) {
        char *end;
        long v = strtol(args, &end, 10);
        want = *end || v < 1 || v > users ? -1 : (int)v;
    }
    if (want < 1) {
        if (users)
            chat_say(c, OUT_ERROR, "/edit: no message '%s' of yours (1 to %d)", args, users);
        else
            chat_say(c, OUT_ERROR, "/edit: you have sent no message yet");
        return;
    }
    int index = user_index(c->s, want);
    const char *text = cf_session_message(c->s, index)->content;
    const char *editor = getenv("VISUAL");
    if (!editor || !*editor)
        editor = getenv("EDITOR");
    if (!editor || !*editor) {
        /* inline: the next line sent replaces it */
        c->edit_next = index + 1;
        if (c->view->prefill)
            c->view->prefill(c, text);
        chat_say(c, OUT_DIM, "editing message %d: change it and press Enter (a command cancels)",
                 want);
        return;
    }
    char *edited = run_editor(c, editor, text);
    if (!edited)
        return;
    if (!*edited || !strcmp(edited, text))
        chat_say(c, OUT_INFO, "/edit: the message is %s; nothing changed",
                 *edited ? "unchanged" : "empty");
    else
        chat_edit_send(c, index, edited);
    free(edited);
}
