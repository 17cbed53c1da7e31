#!/bin/sh
# python3-npu's own pytest suite (python/tests) on the device, against the
# installed package rather than the tree's build: Debian's python3 imports
# npu from /usr/lib/python3/dist-packages (the tests directory only adds
# its conftest and TAP plugin, after the installed package).  The tests
# that check how the host reports having no device cannot apply to a
# machine with one; they run in the host layer and are left out here, by
# name, so that a skip in this layer is a real one.
cd /root/vnpu || exit 1
t=/root/vnpu/python-tests
where=$(python3 -c 'import npu, sys; sys.stdout.write(npu.__file__)' 2>&1)
case "$where" in
/usr/lib/python3/dist-packages/npu/*) ;;
*)
	echo "not ok 1 - import npu from the installed python3-npu: $where"
	echo "1..1"
	exit 1 ;;
esac
echo "# npu imported from $where"
deselect=""
for host_only in \
	test_devices.py::test_no_device_on_the_host \
	"test_devices.py::test_absent_device_is_a_clear_error[Device(0)]" \
	"test_devices.py::test_absent_device_is_a_clear_error[Context(0)]" \
	test_devices.py::test_model_on_absent_device_is_a_clear_error; do
	echo "# not in this layer: $host_only (the host layer runs it: it checks a machine without a device)"
	deselect="$deselect --deselect=$host_only"
done
# The BlazeFace model and onnxruntime's outputs come in the payload, where
# the tests look for $VNPU_CACHE/models; the example is read from the
# documentation page it is published in.
# shellcheck disable=SC2086
VNPU_CACHE=/root/vnpu NPU_PY_DOC=/root/vnpu/python.rst PYTHONPATH=$t PYTHONDONTWRITEBYTECODE=1 \
	exec python3 -m pytest -p tap -p no:cacheprovider -q --rootdir=$t --import-mode=append $deselect $t
