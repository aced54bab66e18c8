/* Tab completion: slash commands, then their arguments (setting names and
 * values, topics, branches; paths are readline's). */
#include <stdio.h>
#include <string.h>

#include "chat.h"
#include "complete.h"

/* /set takes the session's settings, "show-thinking", "markdown" and "system". */
static const char *const *set_names(void)
{
    static const char *names[32];
    if (!names[0]) {
        int n = 0;
        for (const char *const *s = cf_session_setting_names(); *s && n < 28; s++)
            names[n++] = *s;
        names[n++] = "show-thinking";
        names[n++] = "markdown";
        names[n] = "system";
    }
    return names;
}

/* /help takes the command names without their slash. */
static const char *const *help_names(void)
{
    static const char *names[32];
    if (!names[0])
        for (int i = 0; slash_names[i] && i < 31; i++)
            names[i] = slash_names[i] + 1;
    return names;
}

/* The values /set NAME takes when they are words, or NULL. */
static const char *const *set_values(const char *name, size_t len)
{
    static const char *const onoff[] = {"on", "off", NULL};
    static const char *const thinking[] = {"on", "off", "auto", NULL};
    static const char *const effort[] = {"low", "medium", "high", "auto", NULL};
    static const char *const seed[] = {"random", NULL};
    static const struct {
        const char *name;
        const char *const *values;
    } known[] = {{"probs", onoff},         {"markdown", onoff},          {"show-thinking", onoff},
                 {"thinking", thinking},   {"reasoning-effort", effort}, {"seed", seed}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strlen(known[i].name) == len && !strncmp(known[i].name, name, len))
            return known[i].values;
    return NULL;
}

/* /switch takes the branches' names, and the numbers of those without. */
static const char *const *branch_names(const cf_session *s)
{
    enum { MAX = 64 };
    static char numbers[MAX][12];
    static const char *names[MAX + 1];
    int n = 0;
    for (int k = 0; s && k < cf_session_n_branches(s) && n < MAX; k++, n++) {
        cf_branch_info b;
        cf_session_branch(s, k, &b);
        snprintf(numbers[n], sizeof numbers[n], "%d", b.id);
        names[n] = *b.name ? b.name : numbers[n];
    }
    names[n] = NULL;
    return names;
}

complete_kind complete_what(const cf_session *s, const char *line, int start,
                            const char *const **words)
{
    if (line[0] != '/')
        return COMPLETE_NOTHING;
    if (start == 0) {
        *words = slash_names;
        return COMPLETE_WORDS;
    }
    size_t cmd = strcspn(line, " \t");
    size_t gap = strspn(line + cmd, " \t");
    /* /set NAME VALUE: the value, when it is one of a few words */
    const char *arg = line + cmd + gap;
    size_t arg_len = strcspn(arg, " \t");
    if (cmd == 4 && !strncmp(line, "/set", 4) && arg_len && arg[arg_len] &&
        (size_t)start == (size_t)(arg - line) + arg_len + strspn(arg + arg_len, " \t"))
        return (*words = set_values(arg, arg_len)) ? COMPLETE_WORDS : COMPLETE_NOTHING;
    /* else only the word right after the command is completed */
    if ((size_t)start != cmd + gap)
        return COMPLETE_NOTHING;
    if (!strncmp(line, "/switch", cmd) && cmd == 7)
        *words = branch_names(s);
    else if (!strncmp(line, "/set", cmd) && cmd == 4)
        *words = set_names();
    else if (!strncmp(line, "/show", cmd) && cmd == 5)
        *words = show_topics;
    else if (!strncmp(line, "/help", cmd) && cmd == 5)
        *words = help_names();
    else if ((!strncmp(line, "/save", cmd) || !strncmp(line, "/load", cmd)) && cmd == 5)
        return COMPLETE_FILES;
    else
        return COMPLETE_NOTHING;
    return COMPLETE_WORDS;
}
