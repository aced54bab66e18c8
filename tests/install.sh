#!/bin/sh
# make install: meson configures the build for PREFIX (default ~/.local)
# and installs the binary, the man page and the presets there.  The install
# itself runs into a scratch DESTDIR from the built tree (the suite's build
# keeps its prefix); make's commands are checked as make would run them.
bin=${CONFAB_BIN:?} src=${CONFAB_SRC:?}
build=$(dirname "$bin")
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v make >/dev/null 2>&1 || { echo "no make: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmds=$(make -s -n -C "$src" install BUILD="$build" PREFIX="$tmp/p" 2>&1)
echo "$cmds" | grep -qxF "meson configure $build -Dprefix=$tmp/p" || fail "make install: '$cmds'"
echo "$cmds" | grep -qxF "meson install -C $build" || fail "make install: '$cmds'"
cmds=$(HOME=/home/someone make -s -n -C "$src" install BUILD="$build" 2>&1)
echo "$cmds" | grep -qxF "meson configure $build -Dprefix=/home/someone/.local" ||
    fail "the default prefix: '$cmds'"

prefix=$(meson introspect --buildoptions "$build" 2>/dev/null |
    python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])' 2>/dev/null)
[ -n "$prefix" ] || { echo "meson introspect gave no prefix: skipped"; exit 77; }
meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/d" >"$tmp/log" 2>&1 ||
    fail "meson install: $(tail -3 "$tmp/log")"
root=$tmp/d$prefix
[ -x "$root/bin/confab" ] || fail "no $root/bin/confab"
[ -f "$root/share/man/man1/confab.1" ] || fail "no man page in $root/share/man/man1"
[ -f "$root/share/confab/prompts/storyteller.txt" ] || fail "no presets in $root/share/confab/prompts"
"$root/bin/confab" --help >/dev/null || fail "the installed confab does not run"
[ $fails -eq 0 ] && echo "install: ok"
exit $fails
