/* Token probabilities on the terminal (probs.c). */
#ifndef CONFAB_UI_PROBS_H
#define CONFAB_UI_PROBS_H

#include <stdbool.h>

#include "chat.h"

/* Five tones, from likely (p >= 0.8: the terminal's own colour) through
 * 0.5, 0.3 and 0.1 to unlikely; p < 0 (not recorded) is tone 0. */
enum { PROB_TONES = 5 };
int prob_tone(float p);
/* The escape that starts a tone's text ("" for none); end it with SGR 0. */
const char *prob_sgr(int tone, bool color);
/* The tones' colours in the 256-colour palette (-1: the default). */
extern const short prob_color256[PROB_TONES];

/* /show probs [N]: reply N's tokens (default the last), each with its p
 * and the top alternatives, then the mean log-prob and the perplexity. */
void show_probs(chat *c, const char *arg);

#endif
