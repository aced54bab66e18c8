/* The slash commands.  Each one either does what it says or prints one
 * error line and changes nothing. */
#include <stdlib.h>
#include <string.h>

#include "chat.h"

typedef struct slash_cmd {
    const char *name;
    const char *args;
    const char *summary;
    const char *help;
    void (*run)(chat *c, const char *args);
} slash_cmd;

static void cmd_help(chat *c, const char *args);

static bool is_setting(const char *name)
{
    for (const char *const *n = cf_session_setting_names(); *n; n++)
        if (!strcmp(*n, name))
            return true;
    return false;
}

static void setting_list(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (const char *const *s = cf_session_setting_names(); *s && used < n; s++)
        used += (size_t)snprintf(buf + used, n - used, "%s, ", *s);
    if (used < n)
        snprintf(buf + used, n - used, "show-thinking, markdown, system");
}

/* The chat's own on|off settings (not the session's), or NULL. */
static bool *chat_switch(chat *c, const char *name)
{
    return !strcmp(name, "show-thinking") ? &c->show_thinking
           : !strcmp(name, "markdown")    ? &c->markdown
                                          : NULL;
}

static void set_switch(chat *c, const char *name, bool *flag, const char *value)
{
    int on = cf_parse_bool(value);
    if (on < 0) {
        chat_say(c, OUT_ERROR, "%s: '%s' is not one of on, off", name, value);
        return;
    }
    *flag = on;
    if (flag == &c->show_thinking && c->view->changed)
        c->view->changed(c, CHANGE_SHOW);
    chat_say(c, OUT_INFO, "%s = %s", name, on ? "on" : "off");
}

/* After /set thinking or reasoning-effort: a note when the template does
 * not read the variable, so the setting changes nothing. */
static void thinking_note(chat *c, const char *name)
{
    const cf_chat_reasoning *r = cf_session_reasoning(c->s);
    bool effort = !strcmp(name, "reasoning-effort");
    if (strcmp(name, "thinking") && !effort)
        return;
    if (effort ? !r->effort : !r->thinking_switch)
        chat_say(c, OUT_DIM, "note: the chat template does not read %s, so this changes nothing%s",
                 effort ? "reasoning_effort" : "enable_thinking",
                 effort || !r->effort ? "" : " (try /set reasoning-effort low)");
}

size_t slash_word(const char **args, char *word, size_t n)
{
    size_t len = strcspn(*args, " \t\n");
    snprintf(word, n, "%.*s", (int)len, *args);
    *args += len;
    *args += strspn(*args, " \t\n");
    return len;
}

static void cmd_set(chat *c, const char *args)
{
    char typed[64], name[64], list[512];
    size_t len = slash_word(&args, typed, sizeof typed);
    /* ollama's /set parameter NAME VALUE, and its /set think, /set nothink */
    if (!strcmp(typed, "parameter") && *args)
        len = slash_word(&args, typed, sizeof typed);
    bool think = (!strcmp(typed, "think") || !strcmp(typed, "nothink")) && !*args;
    const char *value = think ? (typed[0] == 't' ? "on" : "off") : args;
    setting_list(list, sizeof list);
    if (len == 0) {
        chat_say(c, OUT_ERROR, "usage: /set NAME VALUE (names: %s)", list);
        return;
    }
    if (think)
        snprintf(name, sizeof name, "thinking");
    else
        opts_canonical_name(typed, strlen(typed), name, sizeof name);
    cf_err err = {0};
    if (!strcmp(name, "system")) {
        if (cf_session_set_system(c->s, *value ? value : NULL, &err) < 0) {
            chat_say(c, OUT_ERROR, "%s", err.msg);
            return;
        }
        if (c->view->changed)
            c->view->changed(c, CHANGE_SYSTEM);
        chat_say(c, OUT_INFO, *value ? "system prompt set" : "system prompt removed");
        return;
    }
    if (!strcmp(name, "num-ctx") || !strcmp(name, "ctx-size")) {
        chat_say(c, OUT_ERROR, "%s: the context size is set when the chat starts (-c N)", typed);
        return;
    }
    bool *flag = chat_switch(c, name);
    if (!flag && !is_setting(name)) {
        chat_say(c, OUT_ERROR, "unknown setting '%s' (settings: %s)", typed, list);
        return;
    }
    if (!*value) {
        chat_say(c, OUT_ERROR, "/set %s needs a value", name);
        return;
    }
    if (flag) {
        set_switch(c, name, flag, value);
        return;
    }
    if (cf_session_set(c->s, name, value, &err) < 0) {
        chat_say(c, OUT_ERROR, "%s", err.msg);
        return;
    }
    char buf[64];
    chat_say(c, OUT_INFO, "%s = %s", name, cf_session_get(c->s, name, buf, sizeof buf));
    thinking_note(c, name);
}

static void cmd_show(chat *c, const char *args)
{
    slash_show(c, args);
}

static void cmd_save(chat *c, const char *args)
{
    chat_save(c, args);
}

static void cmd_load(chat *c, const char *args)
{
    if (!*args) {
        chat_say(c, OUT_ERROR, "usage: /load FILE");
        return;
    }
    chat_load(c, args);
}

/* The start of a message, for "removed ..." lines. */
static void excerpt(const char *text, char *buf, size_t n)
{
    size_t len = strcspn(text, "\n");
    if (len + 1 > n)
        len = n - 4;
    snprintf(buf, n, "%.*s%s", (int)len, text, text[len] ? "..." : "");
}

static void cmd_undo(chat *c, const char *args)
{
    (void)args;
    cf_err err = {0};
    char what[80] = "";
    for (int i = cf_session_n_messages(c->s) - 1; i >= 0; i--) {
        const cf_message *m = cf_session_message(c->s, i);
        if (m->role == CF_ROLE_USER) {
            excerpt(m->content, what, sizeof what);
            break;
        }
    }
    if (cf_session_undo(c->s, &err) < 0) {
        chat_say(c, OUT_ERROR, "%s", err.msg);
        return;
    }
    if (c->view->changed)
        c->view->changed(c, CHANGE_UNDONE);
    chat_say(c, OUT_INFO, "removed the last exchange (\"%s\")", what);
}

static void cmd_regen(chat *c, const char *args)
{
    (void)args;
    cf_err err = {0};
    if (cf_session_regen(c->s, &err) < 0) {
        chat_turn_failed(c, &err);
        return;
    }
    if (c->view->changed)
        c->view->changed(c, CHANGE_REGEN);
    c->view->reply(c);
}

static void cmd_clear(chat *c, const char *args)
{
    (void)args;
    cf_err err = {0};
    if (cf_session_clear(c->s, &err) < 0) {
        chat_say(c, OUT_ERROR, "%s", err.msg);
        return;
    }
    if (c->view->changed)
        c->view->changed(c, CHANGE_CLEARED);
    chat_say(c, OUT_INFO, "conversation cleared (the system prompt stays)");
}

static void cmd_bye(chat *c, const char *args)
{
    (void)args;
    c->quit = true;
}

static const slash_cmd cmds[] = {
    {"help", "[COMMAND]", "list the commands, or describe one",
     "/help lists the commands; /help NAME describes one.\n"
     "Messages: end a line with \\ to go on on the next one, or put the message\n"
     "between lines holding \"\"\".  A message that starts with / is a command; start\n"
     "it with // to send it as text (one slash is dropped).",
     cmd_help},
    {"set", "NAME VALUE", "change a sampler setting or the system prompt",
     "/set NAME VALUE changes a setting from the next token on:\n"
     "  temp X              temperature, 0 = greedy\n"
     "  top-k N             keep the N most likely tokens, 0 = all\n"
     "  top-p X             keep the most likely tokens up to probability X\n"
     "  min-p X             drop tokens less likely than X times the top one\n"
     "  typical X           locally typical sampling, 1 = off\n"
     "  repeat-penalty X    penalise the last repeat-last-n tokens, 1 = off\n"
     "  repeat-last-n N     how many recent tokens the penalties look at\n"
     "  presence-penalty X  penalise tokens already present, 0 = off\n"
     "  frequency-penalty X penalise tokens by how often they appeared, 0 = off\n"
     "  seed N|random       random seed\n"
     "  n-predict N         most tokens per reply, -1 = no limit\n"
     "  thinking on|off|auto\n"
     "                      whether a reasoning model thinks first (the template's\n"
     "                      enable_thinking; auto: its default), from the next message\n"
     "  reasoning-effort low|medium|high|auto\n"
     "                      how long it thinks (gpt-oss)\n"
     "  probs on|off        colour each token by its probability (and record them\n"
     "                      for /show probs)\n"
     "  show-thinking on|off\n"
     "                      show the thinking as it streams (it is kept either way)\n"
     "  markdown on|off     render replies' markdown on a terminal: styles, aligned\n"
     "                      tables, framed code blocks, rows wrapped at spaces\n"
     "/set system TEXT replaces the system prompt (no TEXT removes it); use \"\"\"\n"
     "for a prompt of several lines.  A bad name or value changes nothing; on/off\n"
     "also take 1/0, yes/no, true/false.\n"
     "ollama's and llama.cpp's spellings work too: /set parameter temperature 0.7,\n"
     "top_k, repeat_penalty, num_predict, typical_p; /set think, /set nothink.",
     cmd_set},
    {"show", "TOPIC", "show settings, model, template, context, stats, thinking, prompt, probs, system",
     "/show settings   the sampler settings and the system prompt\n"
     "/show model      the model's name, architecture, size and file (a remote\n"
     "                 model: the server and the models it lists)\n"
     "/show template   the chat template in use, its text (a Jinja one's), and how\n"
     "                 replies mark their thinking; --rendered: the prompt it renders\n"
     "                 for the next turn\n"
     "/show context    tokens used / total, messages, and what a context shift\n"
     "                 would drop (the oldest whole turns; the system prompt stays)\n"
     "/show stats      the last reply's token counts (thinking and answer), speeds,\n"
     "                 times and threads\n"
     "/show thinking [N]  the thinking of reply N (1 = the first; default the last)\n"
     "/show prompt [MESSAGE]  the exact text the chat template renders for the next\n"
     "                 turn, with MESSAGE as your message (default: an empty one)\n"
     "/show probs [N]  reply N's tokens with their probability and the top 5\n"
     "                 alternatives, its mean log-prob and perplexity (recorded\n"
     "                 while /set probs is on)\n"
     "/show system     the whole system prompt\n"
     "ollama's /show parameters and /show info are /show settings and /show model.",
     cmd_show},
    {"save", "[FILE]", "save the conversation",
     "/save FILE writes the session (conversation and cache) to FILE, which\n"
     "becomes the session file.  /save alone writes to the session file (from\n"
     "--session or the last /save or /load), else to a new file in\n"
     "~/.local/share/confab/sessions/.  Resume with /load or confab --session FILE.",
     cmd_save},
    {"load", "FILE", "resume a saved conversation",
     "/load FILE replaces the conversation with the one saved in FILE (a bare\n"
     "name is also looked for in ~/.local/share/confab/sessions/).  It must have\n"
     "been saved with the same model (with --session-any-model another model's\n"
     "brings its transcript); a remote chat's file (or any file in a remote chat)\n"
     "brings its transcript.  If it cannot be loaded, nothing changes.",
     cmd_load},
    {"undo", "", "forget the last message and its reply",
     "/undo removes your last message and the reply to it.", cmd_undo},
    {"regen", "", "write the last reply again",
     "/regen writes a new reply to your last message with the current settings, on\n"
     "a new branch: the old reply stays on the old one (/branches, /switch).",
     cmd_regen},
    {"edit", "[N]", "edit your message N (default the last) on a new branch",
     "/edit N opens your message N (1 = the first; default the last) in $VISUAL or\n"
     "$EDITOR; without an editor it is put on the input line to change.  The edited\n"
     "message is sent on a new branch and answered; the old one keeps the rest.",
     cmd_edit},
    {"branch", "[NAME]", "show the branch, or start a new one here",
     "/branch says which branch the conversation is on; /branch NAME starts a new\n"
     "branch here (what follows goes on it; the conversation so far stays on the\n"
     "old one too).  /regen and /edit start new branches by themselves.",
     cmd_branch},
    {"branches", "", "the conversation's tree of branches",
     "/branches draws the tree: each turn's first words, and where each branch\n"
     "ends, with its number and name (* the current one).",
     cmd_branches},
    {"switch", "N|NAME", "go to another branch",
     "/switch N or NAME goes to that branch; the cache keeps what the two share\n"
     "and the rest is evaluated at once (the counts are shown).",
     cmd_switch},
    {"clear", "", "start over (the system prompt stays)",
     "/clear forgets the conversation; the system prompt and settings stay.", cmd_clear},
    {"bye", "", "leave (also Ctrl-D, /quit, /exit)",
     "/bye leaves confab, saving first when --autosave or --session was given.", cmd_bye},
};
#define N_CMDS (sizeof cmds / sizeof cmds[0])

const char *const slash_names[] = {
    "/help", "/set", "/show", "/save", "/load", "/undo", "/regen", "/edit", "/branch",
    "/branches", "/switch", "/clear", "/bye", NULL,
};

static const slash_cmd *find(const char *name, size_t len)
{
    static const struct {
        const char *alias, *name;
    } aliases[] = {{"?", "help"}, {"quit", "bye"}, {"exit", "bye"}};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strlen(aliases[i].alias) == len && !strncmp(aliases[i].alias, name, len)) {
            name = aliases[i].name;
            len = strlen(name);
        }
    for (size_t i = 0; i < N_CMDS; i++)
        if (strlen(cmds[i].name) == len && !strncmp(cmds[i].name, name, len))
            return &cmds[i];
    return NULL;
}

static void cmd_help(chat *c, const char *args)
{
    if (*args) {
        const char *name = args[0] == '/' ? args + 1 : args;
        const slash_cmd *k = find(name, strcspn(name, " \t"));
        if (!k) {
            chat_say(c, OUT_ERROR, "no command /%s (try /help)", name);
            return;
        }
        chat_say(c, OUT_INFO, "%s", k->help); /* which starts with the command */
        return;
    }
    char buf[2048];
    size_t used = 0;
    for (size_t i = 0; i < N_CMDS && used < sizeof buf; i++) {
        char head[64];
        snprintf(head, sizeof head, "/%s %s", cmds[i].name, cmds[i].args);
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%-28s %s\n", head,
                                 cmds[i].summary);
    }
    if (used < sizeof buf)
        used += (size_t)snprintf(buf + used, sizeof buf - used,
                                 "Ctrl-C stops a reply, Ctrl-D leaves, Ctrl-Z suspends (fg "
                                 "resumes).  /help NAME for more; \"\"\" or a trailing \\ for "
                                 "messages of several lines.");
    if (c->view->keys && used < sizeof buf)
        snprintf(buf + used, sizeof buf - used, "\nKeys: %s", c->view->keys);
    chat_say(c, OUT_INFO, "%s", buf);
}

static void run(chat *c, const char *line)
{
    const char *name = line + 1;
    size_t len = strcspn(name, " \t\n");
    const char *args = name + len;
    args += strspn(args, " \t\n");
    const slash_cmd *k = find(name, len);
    if (!k) {
        chat_say(c, OUT_ERROR, "unknown command '/%.*s' (try /help)", (int)(len > 40 ? 40 : len),
                 name);
        return;
    }
    if (!*k->args && *args) {
        chat_say(c, OUT_ERROR, "/%s takes no argument", k->name);
        return;
    }
    /* Trailing blanks are not part of an argument. */
    char *a = strdup(args);
    if (!a) {
        chat_say(c, OUT_ERROR, "out of memory");
        return;
    }
    size_t n = strlen(a);
    while (n && (a[n - 1] == ' ' || a[n - 1] == '\t' || a[n - 1] == '\n'))
        a[--n] = 0;
    k->run(c, a);
    free(a);
}

void slash_run(chat *c, const char *line)
{
    c->in_command = true;
    run(c, line);
    c->in_command = false;
}
