// SPDX-License-Identifier: MIT
/*
 * Discovery against a fake sysfs: a real directory tree in a temp dir
 * laid out like /sys/class/accel -> /sys/devices/pci.../accel/accelN,
 * walked by the same code that walks /sys on a real system.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "npu_internal.h"

/* The temp dir paths are short; PATH_MAX buffers cannot truncate here. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

struct tree {
	char root[PATH_MAX];	/* temp dir */
	char sys[PATH_MAX];	/* <root>/sys */
	char dev[PATH_MAX];	/* <root>/dev */
};

static void xmkdirs(const char *path)
{
	char tmp[PATH_MAX], *p;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		assert_true(!mkdir(tmp, 0755) || errno == EEXIST);
		*p = '/';
	}
	assert_true(!mkdir(tmp, 0755) || errno == EEXIST);
}

static void xwrite(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void xsymlink(const char *target, const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(symlink(target, path), 0);
}

/*
 * One PCI function with an accel child, as the kernel lays it out:
 *   devices/pci0000:00/<bdf>/{vendor,device,revision,driver->...}
 *   devices/pci0000:00/<bdf>/accel/<name>/device -> ../../../<bdf>
 *   class/accel/<name> -> ../../devices/pci0000:00/<bdf>/accel/<name>
 * @driver NULL leaves the function unbound.
 */
static void add_pci_accel(struct tree *t, const char *bdf, const char *name,
			  const char *vendor, const char *device,
			  const char *driver)
{
	char pci[PATH_MAX], adir[PATH_MAX], cls[PATH_MAX], target[PATH_MAX];

	snprintf(pci, sizeof(pci), "%s/devices/pci0000:00/%s", t->sys, bdf);
	xmkdirs(pci);
	if (vendor)
		xwrite(pci, "vendor", vendor);
	if (device)
		xwrite(pci, "device", device);
	xwrite(pci, "revision", "0x01\n");
	if (driver) {
		char drv[PATH_MAX];

		snprintf(drv, sizeof(drv), "%s/bus/pci/drivers/%s", t->sys, driver);
		xmkdirs(drv);
		snprintf(target, sizeof(target), "../../../../bus/pci/drivers/%s",
			 driver);
		xsymlink(target, pci, "driver");
	}
	snprintf(adir, sizeof(adir), "%s/accel/%s", pci, name);
	xmkdirs(adir);
	snprintf(target, sizeof(target), "../../../%s", bdf);
	xsymlink(target, adir, "device");
	xwrite(adir, "dev", "261:0\n");

	snprintf(cls, sizeof(cls), "%s/class/accel", t->sys);
	xmkdirs(cls);
	snprintf(target, sizeof(target), "../../devices/pci0000:00/%s/accel/%s",
		 bdf, name);
	xsymlink(target, cls, name);
}

static int setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	const char *tmp = getenv("TMPDIR");

	assert_non_null(t);
	snprintf(t->root, sizeof(t->root), "%s/npu-sysfs-XXXXXX",
		 tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(t->root));
	snprintf(t->sys, sizeof(t->sys), "%s/sys", t->root);
	snprintf(t->dev, sizeof(t->dev), "%s/dev", t->root);
	xmkdirs(t->sys);
	xmkdirs(t->dev);
	*state = t;
	return 0;
}

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	struct tree *t = *state;

	nftw(t->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(t);
	return 0;
}

static void test_no_accel_class(void **state)
{
	struct tree *t = *state;
	struct npu_device_info *list = (void *)1;
	size_t n = 99;

	assert_int_equal(npu__device_list_at(t->sys, t->dev, true, &list, &n), 0);
	assert_int_equal(n, 0);
	assert_null(list);
	npu_device_list_free(list);
}

static void test_list(void **state)
{
	struct tree *t = *state;
	struct npu_device_info *list;
	size_t n;

	/* created out of order; the list comes back by ascending minor */
	add_pci_accel(t, "0000:00:05.0", "accel10", "0x1234\n", "0x4e50\n", "vnpu");
	add_pci_accel(t, "0000:00:04.0", "accel2", "0x1234\n", "0x4e50\n", "vnpu");
	add_pci_accel(t, "0000:00:06.0", "accel0", "0x8086\n", "0x643e\n",
		      "intel_vpu");			/* other driver */
	add_pci_accel(t, "0000:00:07.0", "accel1", "0x1234\n", "0x4e50\n",
		      NULL);				/* unbound */
	add_pci_accel(t, "0001:02:1f.7", "accel3", "0x1234\n", "0x4e51\n", "vnpu");
	add_pci_accel(t, "0000:00:08.0", "accel4", "garbage\n", "0x4e50\n",
		      "vnpu");				/* unreadable id */
	add_pci_accel(t, "0000:00:09.0", "accel5", "0x1234\n", NULL, "vnpu");
	/* names that are not accel minors */
	add_pci_accel(t, "0000:00:0a.0", "accel07", "0x1234\n", "0x4e50\n", "vnpu");
	add_pci_accel(t, "0000:00:0b.0", "accelX", "0x1234\n", "0x4e50\n", "vnpu");

	assert_int_equal(npu__device_list_at(t->sys, t->dev, false, &list, &n), 0);
	assert_int_equal(n, 3);

	assert_int_equal(list[0].index, 0);
	assert_int_equal(list[0].minor, 2);
	assert_string_equal(list[0].pci_address, "0000:00:04.0");
	assert_int_equal(list[0].pci_vendor, 0x1234);
	assert_int_equal(list[0].pci_device, 0x4e50);
	assert_int_equal(list[0].pci_revision, 1);
	assert_string_equal(list[0].driver, "vnpu");
	{
		char node[PATH_MAX];

		snprintf(node, sizeof(node), "%s/accel/accel2", t->dev);
		assert_string_equal(list[0].node, node);
	}
	/* not queried */
	assert_int_equal(list[0].query_error, -ENODATA);

	assert_int_equal(list[1].index, 1);
	assert_int_equal(list[1].minor, 3);
	assert_string_equal(list[1].pci_address, "0001:02:1f.7");
	assert_int_equal(list[1].pci_device, 0x4e51);

	assert_int_equal(list[2].index, 2);
	assert_int_equal(list[2].minor, 10);
	assert_string_equal(list[2].pci_address, "0000:00:05.0");
	npu_device_list_free(list);
}

/* Query failures are reported per device and do not hide it. */
static void test_query_errors(void **state)
{
	struct tree *t = *state;
	struct npu_device_info *list;
	char accel[PATH_MAX];
	size_t n;

	add_pci_accel(t, "0000:00:04.0", "accel0", "0x1234", "0x4e50", "vnpu");
	add_pci_accel(t, "0000:00:05.0", "accel1", "0x1234", "0x4e50", "vnpu");
	/* accel0 has no node; accel1's node is a plain file, not DRM */
	snprintf(accel, sizeof(accel), "%s/accel", t->dev);
	xmkdirs(accel);
	xwrite(accel, "accel1", "");

	assert_int_equal(npu__device_list_at(t->sys, t->dev, true, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(list[0].query_error, -ENOENT);
	assert_int_equal(list[1].query_error, -ENODEV);
	assert_int_equal(list[1].caps, 0);
	npu_device_list_free(list);
}

/* An accel device whose parent is not PCI is skipped. */
static void test_non_pci_parent(void **state)
{
	struct tree *t = *state;
	char plat[PATH_MAX], cls[PATH_MAX];
	struct npu_device_info *list;
	size_t n;

	snprintf(plat, sizeof(plat), "%s/devices/platform/vnpu.0/accel/accel0",
		 t->sys);
	xmkdirs(plat);
	xsymlink("../../../vnpu.0", plat, "device");
	snprintf(cls, sizeof(cls), "%s/class/accel", t->sys);
	xmkdirs(cls);
	xsymlink("../../devices/platform/vnpu.0/accel/accel0", cls, "accel0");
	/* a stray regular file in the class dir */
	xwrite(cls, "accel9", "");

	assert_int_equal(npu__device_list_at(t->sys, t->dev, false, &list, &n), 0);
	assert_int_equal(n, 0);
	npu_device_list_free(list);
}

static void test_list_args(void **state)
{
	struct tree *t = *state;
	struct npu_device_info *list;
	size_t n;

	assert_int_equal(npu__device_list_at(NULL, t->dev, false, &list, &n),
			 -EINVAL);
	assert_int_equal(npu__device_list_at(t->sys, NULL, false, &list, &n),
			 -EINVAL);
	assert_int_equal(npu__device_list_at(t->sys, t->dev, false, NULL, &n),
			 -EINVAL);
	assert_int_equal(npu__device_list_at(t->sys, t->dev, false, &list, NULL),
			 -EINVAL);
}

static void test_parse_pci(void **state)
{
	char out[32];

	(void)state;
	assert_int_equal(npu__parse_pci_address("0000:00:04.0", out, sizeof(out)), 0);
	assert_string_equal(out, "0000:00:04.0");
	assert_int_equal(npu__parse_pci_address("00:04.0", out, sizeof(out)), 0);
	assert_string_equal(out, "0000:00:04.0");
	assert_int_equal(npu__parse_pci_address("ABCD:EF:1F.7", out, sizeof(out)), 0);
	assert_string_equal(out, "abcd:ef:1f.7");

	assert_int_equal(npu__parse_pci_address("", out, sizeof(out)), -EINVAL);
	assert_int_equal(npu__parse_pci_address("0:0:4.0", out, sizeof(out)), -EINVAL);
	assert_int_equal(npu__parse_pci_address("0000:00:20.0", out, sizeof(out)),
			 -EINVAL);	/* device > 31 */
	assert_int_equal(npu__parse_pci_address("0000:00:04.8", out, sizeof(out)),
			 -EINVAL);	/* function > 7 */
	assert_int_equal(npu__parse_pci_address("0000:00:04.0x", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(npu__parse_pci_address("0000:00:04", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(npu__parse_pci_address("00000:00:04.0", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(npu__parse_pci_address("g000:00:04.0", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(npu__parse_pci_address(NULL, out, sizeof(out)), -EINVAL);
	assert_int_equal(npu__parse_pci_address("0000:00:04.0", out, 12), -ERANGE);
}

static void test_parse_hex(void **state)
{
	unsigned long v;

	(void)state;
	assert_int_equal(npu__parse_hex("0x1234\n", 0xffff, &v), 0);
	assert_int_equal(v, 0x1234);
	assert_int_equal(npu__parse_hex("4E50", 0xffff, &v), 0);
	assert_int_equal(v, 0x4e50);
	assert_int_equal(npu__parse_hex("0xffff", 0xffff, &v), 0);
	assert_int_equal(npu__parse_hex("0x10000", 0xffff, &v), -ERANGE);
	assert_int_equal(npu__parse_hex("0x", 0xffff, &v), -EINVAL);
	assert_int_equal(npu__parse_hex("", 0xffff, &v), -EINVAL);
	assert_int_equal(npu__parse_hex("0x12 ", 0xffff, &v), -EINVAL);
	assert_int_equal(npu__parse_hex("0x12\n\n", 0xffff, &v), -EINVAL);
	assert_int_equal(npu__parse_hex(NULL, 0xffff, &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_accel_class, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_non_pci_parent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_args, setup, teardown),
		cmocka_unit_test(test_parse_pci),
		cmocka_unit_test(test_parse_hex),
	};

	return cmocka_run_group_tests_name("libnpu-discovery", tests, NULL, NULL);
}
