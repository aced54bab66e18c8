#!/bin/sh
# need-packages.sh PKG...: make sure these Debian packages are installed.
# As root, install what is missing with apt-get; otherwise print the exact
# command to run and fail.  On systems without dpkg, assume the user knows.
command -v dpkg-query >/dev/null 2>&1 || exit 0
missing=""
# A tool that is on the PATH from elsewhere counts (Node.js's own nodejs
# package ships npm and conflicts with Debian's npm package).
for p in "$@"; do
    dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed ||
        command -v "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q $missing || { apt-get update -q && apt-get install -y -q $missing; }
    exit $?
fi
echo "confab needs these Debian packages:$missing"
echo "install them with:  sudo apt-get install -y$missing"
exit 1
