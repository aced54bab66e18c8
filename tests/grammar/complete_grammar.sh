#!/bin/sh
# confab complete --json-schema / --json / --grammar end to end: sampled
# output over several seeds is JSON of the schema's shape (checked with
# python3's json where there is one), a GBNF grammar given as text is kept
# to, and a bad grammar, schema or file is one error line with exit code 2.
bin=${CONFAB_BIN:?} models=${CONFAB_SHARED:?}/models
[ -d "$models" ] || exit 77
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
m=$models/qwen3-bpe.Q8_0.gguf
cat >"$tmp/schema.json" <<'JSON'
{"type": "object",
 "properties": {"name": {"type": "string", "maxLength": 8},
                "ok": {"type": "boolean"},
                "size": {"enum": ["S", "M", "L"]}},
 "required": ["name", "ok", "size"]}
JSON
check='import json, sys
v = json.load(sys.stdin)
assert list(v) == ["name", "ok", "size"], v
assert isinstance(v["name"], str) and len(v["name"]) <= 8 and isinstance(v["ok"], bool)
assert v["size"] in ("S", "M", "L")'
for seed in 1 2 3 4 5; do
    "$bin" complete -m "$m" -p "A shirt, as JSON:" -n 300 --temp 1 -s "$seed" -t 2 \
        --json-schema "$tmp/schema.json" >"$tmp/out" || fail "--json-schema seed $seed: rc $?"
    if command -v python3 >/dev/null; then
        python3 -c "$check" <"$tmp/out" 2>/dev/null || fail "seed $seed: not the schema's: $(cat "$tmp/out")"
    fi
done
# inline text, as llama.cpp's -j and --grammar take it
out=$("$bin" complete -m "$m" -p x -n 40 --temp 1 -s 3 -j '{"type": "integer"}')
printf "%s" "$out" | grep -qx -e '-\{0,1\}[0-9]\{1,16\}' || fail "-j inline: '$out'"
out=$("$bin" complete -m "$m" -p x -n 40 --temp 1 -s 3 --grammar 'root ::= "yes" | "no"')
[ "$out" = yes ] || [ "$out" = no ] || fail "--grammar inline: '$out'"
printf 'root ::= [a-c]{3} "."\n' >"$tmp/g.gbnf"
out=$("$bin" complete -m "$m" -p x -n 40 --temp 1 -s 4 --grammar-file "$tmp/g.gbnf")
printf "%s" "$out" | grep -qx '[a-c][a-c][a-c]\.' || fail "--grammar-file: '$out'"
out=$("$bin" complete -m "$m" -p x -n 60 --temp 1 -s 5 --json)
case $out in "{"*) ;; *) fail "--json: '$out'" ;; esac
# greedy: the same bits at 1 and 2 threads
a=$("$bin" complete -m "$m" -p x -n 60 --temp 0 -t 1 --json-schema "$tmp/schema.json" --ids)
b=$("$bin" complete -m "$m" -p x -n 60 --temp 0 -t 2 --json-schema "$tmp/schema.json" --ids)
[ "$a" = "$b" ] || fail "greedy differs between 1 and 2 threads"

check_err() { # pattern args...
    pat=$1
    shift
    msg=$("$bin" complete -m "$m" -p x "$@" 2>&1 >/dev/null); rc=$?
    [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$msg" | wc -l)" -eq 1 ] &&
        printf "%s" "$msg" | grep -q -e "$pat" || fail "complete $*: rc $rc, '$msg'"
}
check_err "^confab: grammar: line 1, column 10: undefined rule 'x'$" --grammar 'root ::= x'
check_err "^confab: json schema: keyword 'pattern' is not supported$" -j '{"type": "string", "pattern": "a"}'
check_err "^confab: --json-schema: cannot read 'nothere.json'$" --json-schema nothere.json
check_err "give one of them" --json --grammar 'root ::= "a"'
check_err "cannot be used together" --json --lookup
rm -rf "$tmp"
[ $fails -eq 0 ] && echo "complete-grammar: ok"
