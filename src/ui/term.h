/* Terminal odds and ends shared by the interactive modes: colours and
 * the signals they turn into flags. */
#ifndef CONFAB_UI_TERM_H
#define CONFAB_UI_TERM_H

#include <signal.h>
#include <stdbool.h>

/* SGR sequences, all "" when colour is off. */
typedef struct palette {
    const char *bold, *dim, *red, *green, *reset;
} palette;

/* Colour only on a terminal, never with NO_COLOR set or --no-color. */
bool color_wanted(int fd, bool no_color_opt);
void palette_init(palette *p, bool on);

/* The columns of the terminal on fd (80 when it does not say). */
int term_width(int fd);
/* Whether the locale's characters are UTF-8 (box drawing can be shown). */
bool term_unicode(void);

/* Set by the handlers sig_install puts in place (no SA_RESTART, so a
 * blocking read returns EINTR and the loop looks at them). */
extern volatile sig_atomic_t sig_interrupt; /* SIGINT */
extern volatile sig_atomic_t sig_resize;    /* SIGWINCH */
extern volatile sig_atomic_t sig_resumed;   /* SIGCONT: back from Ctrl-Z */
extern volatile sig_atomic_t sig_quit;      /* SIGTERM or SIGHUP: the signal number */

/* winch: SIGWINCH and SIGCONT too (line mode; ncurses has its own). */
void sig_install(bool winch);
void sig_restore(void);

#endif
