/* Colours, the terminal's size and characters, signal flags. */
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "term.h"

bool color_wanted(int fd, bool no_color_opt)
{
    const char *nc = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    if (no_color_opt || (nc && *nc) || !isatty(fd))
        return false;
    return !term || strcmp(term, "dumb") != 0;
}

void palette_init(palette *p, bool on)
{
    p->bold = on ? "\033[1m" : "";
    p->dim = on ? "\033[2m" : "";
    p->red = on ? "\033[31m" : "";
    p->green = on ? "\033[32m" : "";
    p->reset = on ? "\033[0m" : "";
}

int term_width(int fd)
{
    struct winsize ws;
    return ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
}

bool term_unicode(void)
{
    const char *cs = setlocale(LC_CTYPE, NULL);
    return cs && (strstr(cs, "UTF-8") || strstr(cs, "utf8") || strstr(cs, "UTF8"));
}

volatile sig_atomic_t sig_interrupt, sig_resize, sig_resumed, sig_quit;

static struct sigaction old_int, old_winch, old_cont, old_term, old_hup;
static bool installed_winch;

static void on_signal(int sig)
{
    if (sig == SIGINT)
        sig_interrupt = 1;
    else if (sig == SIGWINCH)
        sig_resize = 1;
    else if (sig == SIGCONT)
        sig_resumed = 1;
    else
        sig_quit = sig;
}

void sig_install(bool winch)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    installed_winch = winch;
    if (winch) {
        sigaction(SIGWINCH, &sa, &old_winch);
        sigaction(SIGCONT, &sa, &old_cont);
    }
}

void sig_restore(void)
{
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    if (installed_winch) {
        sigaction(SIGWINCH, &old_winch, NULL);
        sigaction(SIGCONT, &old_cont, NULL);
    }
}
