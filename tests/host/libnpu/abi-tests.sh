#!/bin/sh
# SPDX-License-Identifier: MIT
#
# libnpu's exported ABI (TAP): libnpu.a and libnpu.so export exactly the
# npu_* functions the public headers declare, nothing internal (npu__*,
# the reference ops' vnpu_*), every one of them in exactly one named
# version node of libnpu.map, and the version numbers agree.  Paths are
# filled in by libnpu/Makefile.

SHLIB='@SHLIB@'
STLIB='@STLIB@'
MAP='@MAP@'
HEADERS='@HEADERS@'
VERSION='@VERSION@'
SYMBOLS='@SYMBOLS@'

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	fail=1
	echo "not ok $n - $1"
	[ -n "$2" ] && sed 's/^/# /' "$2" | head -20
}
check() {	# description, file that must be empty
	if [ -s "$2" ]; then not_ok "$1" "$2"; else ok "$1"; fi
}

# Defined global symbols of the archive (one relocatable object).
nm -g --defined-only "$STLIB" | awk 'NF == 3 { print $3 }' | sort > "$tmp/a"
# The shared library's, with their version node; the node symbols (A)
# are the nodes themselves.
nm -D --defined-only "$SHLIB" | awk 'NF == 3 && $2 != "A" { print $3 }' | sort > "$tmp/so-ver"
nm -D --defined-only "$SHLIB" | awk 'NF == 3 && $2 == "A" { print $3 }' | sort > "$tmp/so-nodes"
sed 's/@.*//' "$tmp/so-ver" | sort > "$tmp/so"

[ -s "$tmp/a" ] && [ -s "$tmp/so" ] || { echo "Bail out! no symbols read"; exit 1; }

grep -v '^npu_[a-z0-9][a-z0-9_]*$' "$tmp/a" > "$tmp/bad-a"
check "libnpu.a exports only npu_* public names" "$tmp/bad-a"
grep -v '^npu_[a-z0-9][a-z0-9_]*$' "$tmp/so" > "$tmp/bad-so"
check "libnpu.so exports only npu_* public names" "$tmp/bad-so"
grep -e '^npu__' -e '^vnpu_' "$tmp/a" "$tmp/so" > "$tmp/internal"
check "no npu__* or vnpu_* internal symbol is exported" "$tmp/internal"
diff "$tmp/a" "$tmp/so" > "$tmp/diff-a-so"
check "libnpu.a and libnpu.so export the same symbols" "$tmp/diff-a-so"

# Every exported symbol carries a default version (@@) of a named node.
grep -v '@@NPU_1\.[0-9][0-9]*$' "$tmp/so-ver" > "$tmp/unversioned"
check "every libnpu.so symbol is in a named version node" "$tmp/unversioned"

# The map: node of each listed name (no wildcards but local's '*').
awk '/^NPU_[0-9.]+ *\{/ { node = $1 } /^[ \t]+npu_[a-z0-9_]+;/ { gsub(/[ \t;]/, ""); print $0 "@@" node }' \
	"$MAP" | sort > "$tmp/map-ver"
grep -n 'npu_[a-z0-9_]*\*' "$MAP" > "$tmp/wild"
check "libnpu.map lists names, no npu_* wildcard" "$tmp/wild"
sed 's/@.*//' "$tmp/map-ver" | sort | uniq -d > "$tmp/dup"
check "no symbol is in two version nodes" "$tmp/dup"
diff "$tmp/map-ver" "$tmp/so-ver" > "$tmp/diff-map"
check "libnpu.so's symbols and nodes are exactly libnpu.map's" "$tmp/diff-map"
awk '/^NPU_[0-9.]+ *\{/ { print $1 }' "$MAP" | sort > "$tmp/map-nodes"
diff "$tmp/map-nodes" "$tmp/so-nodes" > "$tmp/diff-nodes"
check "libnpu.so defines every node of libnpu.map" "$tmp/diff-nodes"

# Every function the public headers declare is exported, and only those.
sed -n 's/^[a-z][a-z0-9_ ]*[ *]\(npu_[a-z0-9_]*\)(.*/\1/p' "$HEADERS"/*.h | sort -u > "$tmp/declared"
diff "$tmp/declared" "$tmp/so" > "$tmp/diff-decl"
check "exported symbols are the functions npu.h, ops.h, graph.h and kernel.h declare" "$tmp/diff-decl"

# Versions: the map's newest node, the library and the Debian symbols.
newest=$(awk '/^NPU_[0-9.]+ *\{/ { v = $1 } END { print v }' "$MAP")
case "$VERSION" in
"${newest#NPU_}".*) ok "library version $VERSION matches the newest node $newest" ;;
*) not_ok "library version $VERSION matches the newest node $newest" ;;
esac
# dpkg-gensymbols: one line per symbol and node, name@NODE minver.
{ sed 's/@@/@/' "$tmp/map-ver"; sed 's/.*/&@&/' "$tmp/map-nodes"; } | sort > "$tmp/want-sym"
awk '/^ / { print $1 }' "$SYMBOLS" | sort > "$tmp/have-sym"
diff "$tmp/want-sym" "$tmp/have-sym" > "$tmp/diff-sym"
check "debian/libnpu1.symbols lists every symbol with its node" "$tmp/diff-sym"
# Nodes since the ABI froze (1.3): each symbol needs its node's release.
awk '/^ / { n = split($1, v, "@NPU_1."); if (n == 2 && v[2] + 0 >= 3 && $2 != "1." v[2] ".0") print }' \
	"$SYMBOLS" > "$tmp/minver"
check "symbols of NPU_1.3 and later need libnpu1 of their node's version" "$tmp/minver"

echo "1..$n"
exit $fail
