/* Text put on the next input line for the user to edit (/edit without an
 * editor): readline's startup hook inserts it when the next line begins. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <readline/readline.h>

#include "input.h"

static char *pending;

static int insert_pending(void)
{
    rl_startup_hook = NULL;
    if (pending) {
        rl_insert_text(pending);
        free(pending);
        pending = NULL;
    }
    return 0;
}

void line_prefill(const char *text)
{
    free(pending);
    pending = strdup(text);
    rl_startup_hook = insert_pending;
}
