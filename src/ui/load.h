/* Opening the session (loading the model) with progress on a terminal. */
#ifndef CONFAB_UI_LOAD_H
#define CONFAB_UI_LOAD_H

#include <stdbool.h>

#include "confab/session.h"

/* cf_session_new; when `show` (stderr is a terminal), a line with a
 * spinner and the elapsed time while it runs, then the time it took. */
int session_open(const cf_session_params *p, bool show, cf_session **out, cf_err *err);

#endif
