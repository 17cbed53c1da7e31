#!/bin/sh
# The project's Debian packages on a Debian system with the device: dpkg -i
# of what `make check-deb` built, DKMS building vnpu.ko against the guest's
# own linux-headers, the module loading and the accel node appearing, then
# the packaged, dynamically linked tools on the device and their manual
# pages.  One TAP line per check; a check whose premise failed fails too
# rather than skipping, since the premise is part of what is tested.
cd /root/vnpu || exit 1
n=0
tap() {	# tap OK DESCRIPTION [LOG]: the log's tail goes out as TAP comments
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && [ -f "$3" ] && tail -n 30 "$3" | sed 's/^/# /'
	fi
}
krel=$(uname -r)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
packages="libnpu1 npu-tools python3-npu vnpu-dkms"

# Installed together, as apt would: python3-npu and npu-tools depend on
# libnpu1; the dependencies from Debian are in the image already (the guest
# has no network).  vnpu-dkms's postinst builds the module.
dpkg -i debs/*.deb > /tmp/dpkg.log 2>&1
rc=$?
installed=0
for p in $packages; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -qx 'install ok installed' &&
		installed=$((installed + 1))
done
[ $rc = 0 ] && [ $installed = 4 ]
tap $((! $?)) "dpkg -i $packages: $installed of 4 installed (dpkg exit $rc)" /tmp/dpkg.log

ver=$(dpkg-query -W -f='${Version}' vnpu-dkms 2>/dev/null)
status=$(dkms status -m vnpu -k "$krel" 2>&1)
echo "$status" | sed 's/^/# /'
echo "$status" | grep -q "^vnpu/${ver%%-*}, $krel, x86_64: installed"
tap $((! $?)) "DKMS built and installed vnpu/$ver for $krel against linux-headers-$krel" /tmp/dpkg.log

ko=$(modinfo -n vnpu 2>/dev/null)
vermagic=$(modinfo -F vermagic vnpu 2>/dev/null)
case "$ko" in
"/lib/modules/$krel/updates/dkms/vnpu.ko"* | "/usr/lib/modules/$krel/updates/dkms/vnpu.ko"*)
	[ "${vermagic%% *}" = "$krel" ] ;;
*) false ;;
esac
tap $((! $?)) "modinfo vnpu: the DKMS module ($ko), vermagic ${vermagic%% *}"

modprobe vnpu > /tmp/modprobe.log 2>&1 && [ -d /sys/module/vnpu ]
tap $((! $?)) "modprobe vnpu loads it with its DRM dependencies" /tmp/modprobe.log

i=0
while [ ! -c /dev/accel/accel0 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
drv=$(basename "$(readlink /sys/class/accel/accel0/device/driver 2>/dev/null)")
[ -c /dev/accel/accel0 ] && [ "$drv" = vnpu ]
tap $((! $?)) "/dev/accel/accel0 appears, bound to driver '$drv'"

# The packaged binaries, linked to the packaged library.
lib=/usr/lib/$multiarch/libnpu.so.1
for tool in npu-info npu-run; do
	path=$(command -v $tool)
	owner=$(dpkg-query -S "$path" 2>/dev/null | cut -d: -f1)
	resolved=$(ldd "$path" 2>/dev/null | sed -n 's/^[[:space:]]*libnpu\.so\.1 => \([^ ]*\) .*/\1/p')
	# /lib is /usr/lib (merged /usr): the same file by either name.
	[ "$owner" = npu-tools ] && [ -n "$resolved" ] &&
		[ "$(readlink -f "$resolved")" = "$(readlink -f "$lib")" ]
	tap $((! $?)) "$tool is npu-tools' $path, dynamically linked to ${resolved:-no libnpu.so.1}"
done

npu-info > /tmp/npu-info.log 2>&1
rc=$?
sed 's/^/# /' /tmp/npu-info.log
[ $rc = 0 ] && grep -q '^ *node: */dev/accel/accel0$' /tmp/npu-info.log &&
	grep -q '^ *kernel driver: *vnpu$' /tmp/npu-info.log
tap $((! $?)) "npu-info lists /dev/accel/accel0 with driver vnpu (exit $rc)"

# An ONNX node test from Debian's libonnx-testdata (what tests/onnx runs),
# every node on the device, compared with its expected output.
d=onnx/test_conv_with_strides_padding
npu-run $d/model.onnx --input $d/test_data_set_0/input_0.pb --input $d/test_data_set_0/input_1.pb \
	--expect $d/test_data_set_0/output_0.pb --profile > /tmp/npu-run.log 2>&1
rc=$?
sed 's/^/# /' /tmp/npu-run.log
[ $rc = 0 ] && grep -q 'on the NPU' /tmp/npu-run.log &&
	grep -q '^split: \([1-9][0-9]*\) of \1 nodes on the device' /tmp/npu-run.log
tap $((! $?)) "npu-run ${d#onnx/}: matches its expected output, all nodes on the device (exit $rc)"

# The real BlazeFace model against onnxruntime's outputs (make models), with
# the tolerance the guest's model tests use for it.
m=models/blazeface/face_detection_front_128x128_barracuda.onnx
r=models/ref/blazeface-front
set --
for o in "$r"/out/*.npy; do set -- "$@" --expect "$o"; done
npu-run $m --input $r/in/input_0.npy "$@" --rtol 1e-3 --atol 1e-3 > /tmp/npu-run-bf.log 2>&1
rc=$?
sed 's/^/# /' /tmp/npu-run-bf.log
[ $rc = 0 ] && grep -q 'on the NPU' /tmp/npu-run-bf.log
tap $((! $?)) "npu-run blazeface-front on the device matches onnxruntime (exit $rc)"

# Every tool npu-tools ships has its manual page, and man renders it.
for path in $(dpkg-query -L npu-tools | grep '^/usr/bin/'); do
	tool=${path##*/}
	page=$(man -w "$tool" 2>/dev/null)
	MANWIDTH=80 man "$tool" 2>/dev/null | grep -q "^NAME" && [ "$page" = "/usr/share/man/man1/$tool.1.gz" ]
	tap $((! $?)) "man $tool: ${page:-no page}"
done

echo "1..$n"
