#!/usr/bin/env bash
# Build the debug guest kernel (lockdep, KASAN, kmemleak, DMA-API debug,
# debug objects, fault injection) from Debian's linux-source-6.12, out of
# tree in $VNPU_CACHE/debug-kernel/build: `make tinyconfig`, then
# scripts/debug-kernel.config merged on top with merge_config.sh.  Modules
# (gpu-sched, drm_shmem_helper) are installed under debug-kernel/root.
# Rebuilt only when the fragment or the source tarball changed (stamp).
# Prints the kernel release.
set -euo pipefail
. "$(dirname "$0")/env.sh"

frag=$VNPU_TOP/scripts/debug-kernel.config
src=$("$VNPU_TOP/scripts/linux-src.sh")
dir=$VNPU_CACHE/debug-kernel
build=$dir/build
root=$dir/root
mkdir -p "$build"
exec 9>"$dir/.lock"
flock 9

key=$(cat "$frag" "$src/.vnpu-unpacked" | sha256sum | cut -d' ' -f1)
stamp=$dir/.built
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ] &&
   [ -f "$build/arch/x86/boot/bzImage" ]; then
	cat "$build/include/config/kernel.release"
	exit 0
fi
rm -f "$stamp"

# The configuration is generated aside and only copied over when it
# differs, so an unchanged result keeps the build incremental.
gen=$dir/config-gen
mkdir -p "$gen"
make -s -C "$src" O="$gen" tinyconfig >"$dir/config.log" 2>&1 ||
	{ cat "$dir/config.log"; die "make tinyconfig failed"; }
(cd "$src" && scripts/kconfig/merge_config.sh -m -O "$gen" "$gen/.config" "$frag") \
	>>"$dir/config.log" 2>&1 || { cat "$dir/config.log"; die "merge_config.sh failed"; }
make -s -C "$src" O="$gen" olddefconfig >>"$dir/config.log" 2>&1 ||
	{ cat "$dir/config.log"; die "make olddefconfig failed"; }
# Every option the fragment asks for must survive olddefconfig.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*) want=$line ;;
	"# CONFIG_"*" is not set") want=$line ;;
	*) continue ;;
	esac
	opt=${want#\# }; opt=${opt%%[= ]*}
	if [[ $want == \#* ]]; then
		grep -q "^$opt=" "$gen/.config" && { log "debug kernel: $opt is set, fragment wants it off"; bad=1; }
	else
		grep -qxF "$want" "$gen/.config" || { log "debug kernel: wanted $want, got: $(grep "^$opt=\|^# $opt is not set" "$gen/.config" || echo missing)"; bad=1; }
	fi
done <"$frag"
[ "$bad" = 0 ] || die "the debug kernel configuration lost options of $frag"
cmp -s "$gen/.config" "$build/.config" || cp "$gen/.config" "$build/.config"

cc=gcc
command -v ccache >/dev/null && cc="ccache gcc"
log "building the debug kernel in $build (log: $dir/build.log)"
start=$(date +%s)
make -C "$src" O="$build" CC="$cc" -j"$(nproc)" bzImage modules >"$dir/build.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
# One progress line every 30 s: elapsed time and objects compiled so far.
while kill -0 $pid 2>/dev/null; do
	for _ in $(seq 30); do kill -0 $pid 2>/dev/null && sleep 1; done
	kill -0 $pid 2>/dev/null || break
	t=$(($(date +%s) - start))
	log "debug kernel: $((t / 60))m$((t % 60))s, $(grep -c '^  CC ' "$dir/build.log" || true) objects compiled"
done
wait $pid || { tail -n 40 "$dir/build.log"; die "debug kernel build failed (log: $dir/build.log)"; }
trap - EXIT
rm -rf "$root"
make -s -C "$src" O="$build" INSTALL_MOD_PATH="$root" modules_install >>"$dir/build.log" 2>&1 ||
	{ tail -n 20 "$dir/build.log"; die "modules_install failed"; }
t=$(($(date +%s) - start))
log "debug kernel built in $((t / 60))m$((t % 60))s"
echo "$key" >"$stamp"
cat "$build/include/config/kernel.release"
