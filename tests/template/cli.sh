#!/bin/sh
# confab template from the command line: exact output on stdout (no added
# newline), one error line and exit 1 for a broken template, models' own
# templates and BOS/EOS, --name, --tools, --var, usage errors.
bin=${CONFAB_BIN:?} shared=${CONFAB_SHARED:?}
[ -d "$shared/templates" ] || exit 77
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

printf '[{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "What is the capital of France?"}]' >"$tmp/b.json"

# a shared template, byte for byte as jinja2 renders it (expected.json)
printf '<|system|>\nYou are a helpful assistant.<|end|>\n<|user|>\nWhat is the capital of France?<|end|>\n<|assistant|>\n' >"$tmp/want"
"$bin" template -f "$shared/templates/microsoft-Phi-3.5-mini-instruct.jinja" --messages "$tmp/b.json" \
    --bos '<s>' --eos '<|endoftext|>' --add-generation-prompt >"$tmp/got" 2>"$tmp/err" || fail "phi-3.5: exit $? $(cat "$tmp/err")"
cmp -s "$tmp/want" "$tmp/got" || fail "phi-3.5: output differs: $(od -c "$tmp/got" | tail -3)"
[ -s "$tmp/err" ] && fail "phi-3.5: stderr not empty"

# without the generation prompt this template ends with eos_token
printf '<|system|>\nYou are a helpful assistant.<|end|>\n<|user|>\nWhat is the capital of France?<|end|>\n<|endoftext|>' >"$tmp/want"
"$bin" template -f "$shared/templates/microsoft-Phi-3.5-mini-instruct.jinja" --messages "$tmp/b.json" \
    --eos '<|endoftext|>' >"$tmp/got" || fail "phi-3.5 without prompt: exit $?"
cmp -s "$tmp/want" "$tmp/got" || fail "phi-3.5 without prompt differs"

# a broken template: exit 1, nothing on stdout, one line naming the place
printf '{%% for m in messages %%}\n{{ m.content }\n' >"$tmp/broken.jinja"
"$bin" template -f "$tmp/broken.jinja" --messages "$tmp/b.json" >"$tmp/got" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "broken: exit $rc, expected 1"
[ -s "$tmp/got" ] && fail "broken: wrote to stdout"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "broken: $(wc -l <"$tmp/err") lines on stderr"
grep -q '^confab: template line 2, column ' "$tmp/err" || fail "broken: $(cat "$tmp/err")"

# an error raised by the template itself, one line even when its message has newlines
printf '{{ raise_exception("no system role\\nplease") }}' >"$tmp/raise.jinja"
"$bin" template -f "$tmp/raise.jinja" --messages "$tmp/b.json" >"$tmp/got" 2>"$tmp/err"
[ $? -eq 1 ] || fail "raise: exit status"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'no system role please' "$tmp/err" || fail "raise: $(cat "$tmp/err")"

# a built-in by name
printf '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n' >"$tmp/want"
"$bin" template --name chatml --messages "$tmp/b.json" --add-generation-prompt >"$tmp/got" || fail "chatml: exit $?"
cmp -s "$tmp/want" "$tmp/got" || fail "chatml differs"
"$bin" template --name nonsense --messages "$tmp/b.json" >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown built-in: exit status"

# a model's own template, BOS and EOS (phi3's template adds eos_token)
if [ -f "$shared/models/phi3.Q8_0.gguf" ]; then
    "$bin" template -m "$shared/models/phi3.Q8_0.gguf" --messages "$tmp/b.json" >"$tmp/got" || fail "-m phi3: exit $?"
    printf '<|system|>\nYou are a helpful assistant.<|end|>\n<|user|>\nWhat is the capital of France?<|end|>\n<|endoftext|>' >"$tmp/want"
    cmp -s "$tmp/want" "$tmp/got" || fail "-m phi3 differs: $(cat "$tmp/got")"
    "$bin" template -m "$shared/models/stories260K.gguf" --messages "$tmp/b.json" >/dev/null 2>"$tmp/err"
    [ $? -eq 1 ] && grep -q 'no tokenizer.chat_template' "$tmp/err" || fail "-m without a template: $(cat "$tmp/err")"
fi
"$bin" template -m "$tmp/b.json" --messages "$tmp/b.json" >/dev/null 2>&1
[ $? -eq 3 ] || fail "-m on a non-model: exit status"

# --tools and --var reach the template
printf '[{"type": "function", "function": {"name": "get_weather"}}]' >"$tmp/tools.json"
printf '{{ tools[0].function.name }}|{{ enable_thinking }}|{{ n + 1 }}|{{ bos_token is defined }}' >"$tmp/vars.jinja"
out=$("$bin" template -f "$tmp/vars.jinja" --messages "$tmp/b.json" --tools "$tmp/tools.json" \
    --var enable_thinking=false --var n=41)
[ "$out" = "get_weather|False|42|False" ] || fail "tools/vars: $out"
"$bin" template -f "$tmp/vars.jinja" --messages "$tmp/b.json" --var 'n={bad' >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "variable 'n'" "$tmp/err" || fail "bad --var JSON: $(cat "$tmp/err")"

# bad messages, usage errors, help
printf '[{"role": "user", "content": "x"' >"$tmp/bad.json"
"$bin" template --name chatml --messages "$tmp/bad.json" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q 'messages: JSON line 1' "$tmp/err" || fail "bad messages: $(cat "$tmp/err")"
"$bin" template --name chatml >/dev/null 2>&1
[ $? -eq 2 ] || fail "no --messages: exit status"
"$bin" template -f "$tmp/vars.jinja" --name chatml --messages "$tmp/b.json" >/dev/null 2>&1
[ $? -eq 2 ] || fail "two sources: exit status"
"$bin" template --help | grep -q 'add-generation-prompt' || fail "--help"

[ $fails -eq 0 ] && echo "template-cli: ok"
exit $((fails > 0))
