/* Tab completion: slash commands, then their arguments. */
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

complete_kind complete_what(const char *line, int start, const char *const **words)
{
    if (line[0] != '/')
        return COMPLETE_NOTHING;
    if (start == 0) {
        *words = slash_names;
        return COMPLETE_WORDS;
    }
    /* Only the word right after the command is completed. */
    size_t cmd = strcspn(line, " \t");
    size_t gap = strspn(line + cmd, " \t");
    if ((size_t)start != cmd + gap)
        return COMPLETE_NOTHING;
    if (!strncmp(line, "/set", cmd) && cmd == 4)
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
