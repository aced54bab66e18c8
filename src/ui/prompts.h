/* System prompt presets (prompts/NAME.txt). */
#ifndef CONFAB_UI_PROMPTS_H
#define CONFAB_UI_PROMPTS_H

/* The text of --system-file ARG: ARG itself when it names a readable file,
 * else the preset ARG (ARG.txt) from, in this order,
 *   ${XDG_CONFIG_HOME:-~/.config}/confab/prompts/,
 *   the installed presets (PREFIX/share/confab/prompts/),
 *   the prompts/ folder of the source tree confab was built from.
 * Trailing newlines are dropped.  malloc'ed; NULL after printing one error
 * line that lists the presets found. */
char *prompt_load(const char *arg);

#endif
