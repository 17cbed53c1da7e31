#!/usr/bin/env bash
# Build and install vnpu.ko with DKMS, the way the vnpu-dkms package does on
# a user's machine, against the cached Debian 6.12 headers (never the host's
# kernel).  Every DKMS tree lives in a scratch directory under $VNPU_BUILD:
# nothing is added to /usr/src, /var/lib/dkms or /lib/modules.  Results
# become TAP in $1.
set -uo pipefail
. "$(dirname "$0")/env.sh"
results=$1

n=0 fails=0
tap=()
report() { # ok|not-ok description [log]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		tap+=("ok $n - $2")
	else
		tap+=("not ok $n - $2")
		fails=$((fails + 1))
		[ -n "${3:-}" ] && tail -n 40 "$3"
	fi
}
finish() {
	{
		echo "TAP version 13"
		echo "1..$n"
		printf '%s\n' "${tap[@]}"
		echo "# dkms: $((n - fails)) passed, $fails failed, 0 skipped"
	} > "$results"
	tail -n 1 "$results"
	[ "$fails" = 0 ]
	exit
}

rel=$("$VNPU_TOP/scripts/kernel.sh") || { report not-ok "resolve the Debian 6.12 kernel"; finish; }
hdrs=$VNPU_KERNEL_CACHE/$rel/root/usr/src/linux-headers-$rel
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$VNPU_TOP/dkms.conf")
scratch=$VNPU_BUILD/dkms
log=$scratch/dkms.log
rm -rf "$scratch" && mkdir -p "$scratch/src" "$scratch/tree" "$scratch/lib/modules"
: > "$log"
# The kernel's own module tree (hard links: depmod replaces files by
# rename), so what DKMS installs must resolve against drm and gpu-sched.
cp -al "$VNPU_KERNEL_CACHE/$rel/root/lib/modules/$rel" "$scratch/lib/modules/"

# No module signing: DKMS would otherwise create a machine owner key in
# /var/lib/dkms on a host that has Debian's sign-file installed.
dkms_run() {
	echo "+ dkms $*" >> "$log"
	sign_file=$scratch/no-sign-file dkms "$@" \
		--sourcetree "$scratch/src" --dkmstree "$scratch/tree" \
		--installtree "$scratch/lib/modules" >> "$log" 2>&1
}
kargs=(-k "$rel" --kernelsourcedir "$hdrs" -j "$(nproc)")

# `dkms add` of the checkout, as the README says (DKMS copies it into its
# source tree); the vnpu-dkms package installs the same kernel part.
if dkms_run add "$VNPU_TOP"; then
	report ok "dkms add of the checkout: vnpu/$ver"
else
	report not-ok "dkms add vnpu/$ver" "$log"
	finish
fi
if dkms_run build -m vnpu -v "$ver" "${kargs[@]}"; then
	report ok "dkms build for $rel against the cached headers"
else
	report not-ok "dkms build for $rel against the cached headers" "$log"
	finish
fi
if dkms_run install -m vnpu -v "$ver" --no-depmod "${kargs[@]}"; then
	report ok "dkms install into a scratch module tree"
else
	report not-ok "dkms install into a scratch module tree" "$log"
	finish
fi

# The installed module is the driver for that exact kernel: depmod
# resolves every symbol it imports, with matching CRCs, from the kernel's
# own modules, and modprobe would load it from where DKMS put it.
ko=$(find "$scratch/lib/modules/$rel" -name 'vnpu.ko*' | head -n1)
if [ -n "$ko" ] && depmod -b "$scratch" -e -E "$hdrs/Module.symvers" "$rel" >> "$log" 2>&1 &&
   ! grep -q 'needs unknown symbol\|disagrees about version' "$log" &&
   modinfo -b "$scratch" -k "$rel" -F vermagic vnpu 2>>"$log" | grep -q "^$rel "; then
	report ok "depmod resolves ${ko#"$scratch"/} against $rel"
else
	report not-ok "depmod resolves vnpu.ko against $rel" "$log"
fi
deps=$(modprobe -d "$scratch" -S "$rel" --show-depends vnpu 2>>"$log")
if grep -q 'gpu-sched' <<<"$deps" && grep -q 'drm_shmem_helper' <<<"$deps" &&
   tail -n 1 <<<"$deps" | grep -q '/updates/dkms/vnpu\.ko'; then
	report ok "modprobe --show-depends: drm, gpu-sched, drm_shmem_helper, then the DKMS vnpu.ko"
else
	echo "$deps" >> "$log"
	report not-ok "modprobe --show-depends vnpu" "$log"
fi
if dkms status -m vnpu -v "$ver" --dkmstree "$scratch/tree" \
	--installtree "$scratch/lib/modules" 2>>"$log" | grep -q "$rel.*installed"; then
	report ok "dkms status: installed for $rel"
else
	report not-ok "dkms status: installed for $rel" "$log"
fi
if dkms_run remove -m vnpu -v "$ver" --no-depmod -k "$rel" && [ -z "$(find "$scratch/lib/modules" -name 'vnpu.ko*')" ]; then
	report ok "dkms remove takes the module out again"
else
	report not-ok "dkms remove takes the module out again" "$log"
fi
finish
