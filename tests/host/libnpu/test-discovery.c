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

/*
 * npu__device_list_at() and the list's public accessors: *@infos is an
 * array of the entries, copied one at a time as a caller would.
 */
static int list_at(const char *sys, const char *dev, bool query,
		   struct npu_device_list **dl, struct npu_device_info **infos,
		   size_t *n)
{
	size_t i;
	int ret = npu__device_list_at(sys, dev, query, dl);

	if (ret)
		return ret;
	*n = npu_device_list_count(*dl);
	*infos = *n ? calloc(*n, sizeof(**infos)) : NULL;
	for (i = 0; i < *n; i++)
		assert_int_equal(npu_device_list_get_info(*dl, i, &(*infos)[i],
							  sizeof((*infos)[i])), 0);
	return 0;
}

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
	struct npu_device_list *dl;
	size_t n = 99;

	assert_int_equal(list_at(t->sys, t->dev, true, &dl, &list, &n), 0);
	assert_int_equal(n, 0);
	assert_null(list);
	free(list);
	npu_device_list_free(dl);
}

static void test_list(void **state)
{
	struct tree *t = *state;
	struct npu_device_info *list;
	struct npu_device_list *dl;
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

	assert_int_equal(list_at(t->sys, t->dev, false, &dl, &list, &n), 0);
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
	free(list);
	npu_device_list_free(dl);
}

/* Query failures are reported per device and do not hide it. */
static void test_query_errors(void **state)
{
	struct tree *t = *state;
	struct npu_device_info *list;
	struct npu_device_list *dl;
	char accel[PATH_MAX];
	size_t n;

	add_pci_accel(t, "0000:00:04.0", "accel0", "0x1234", "0x4e50", "vnpu");
	add_pci_accel(t, "0000:00:05.0", "accel1", "0x1234", "0x4e50", "vnpu");
	/* accel0 has no node; accel1's node is a plain file, not DRM */
	snprintf(accel, sizeof(accel), "%s/accel", t->dev);
	xmkdirs(accel);
	xwrite(accel, "accel1", "");

	assert_int_equal(list_at(t->sys, t->dev, true, &dl, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(list[0].query_error, -ENOENT);
	assert_int_equal(list[1].query_error, -ENODEV);
	assert_int_equal(list[1].caps, 0);
	free(list);
	npu_device_list_free(dl);
}

/* An accel device whose parent is not PCI is skipped. */
static void test_non_pci_parent(void **state)
{
	struct tree *t = *state;
	char plat[PATH_MAX], cls[PATH_MAX];
	struct npu_device_info *list;
	struct npu_device_list *dl;
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

	assert_int_equal(list_at(t->sys, t->dev, false, &dl, &list, &n), 0);
	assert_int_equal(n, 0);
	free(list);
	npu_device_list_free(dl);
}

static void test_list_args(void **state)
{
	struct tree *t = *state;
	struct npu_device_list *dl;

	assert_int_equal(npu__device_list_at(NULL, t->dev, false, &dl), -EINVAL);
	assert_int_equal(npu__device_list_at(t->sys, NULL, false, &dl), -EINVAL);
	assert_int_equal(npu__device_list_at(t->sys, t->dev, false, NULL), -EINVAL);
}

/*
 * The list is opaque and read one entry at a time with the caller's size
 * (the old array API made callers index with their compiled sizeof, so
 * npu_device_info could never grow).  An older caller's smaller struct
 * gets only its prefix; a newer caller's larger one gets zeros beyond.
 */
static void test_list_get_info(void **state)
{
	struct tree *t = *state;
	struct npu_device_list *dl;
	struct npu_device_info info;
	struct {
		struct npu_device_info info;
		uint8_t newer[16];
	} big;
	uint8_t small[offsetof(struct npu_device_info, pci_address) + 8];

	add_pci_accel(t, "0000:00:04.0", "accel2", "0x1234\n", "0x4e50\n", "vnpu");
	add_pci_accel(t, "0000:00:05.0", "accel3", "0x1234\n", "0x4e50\n", "vnpu");
	assert_int_equal(npu__device_list_at(t->sys, t->dev, false, &dl), 0);
	assert_int_equal(npu_device_list_count(dl), 2);
	assert_int_equal(npu_device_list_get_info(dl, 1, &info, sizeof(info)), 0);
	assert_int_equal(info.minor, 3);
	assert_string_equal(info.pci_address, "0000:00:05.0");
	assert_int_equal(npu_device_list_get_info(dl, 2, &info, sizeof(info)), -ERANGE);
	assert_int_equal(npu_device_list_get_info(dl, 0, &info, 0), -EINVAL);
	assert_int_equal(npu_device_list_get_info(dl, 0, NULL, sizeof(info)), -EINVAL);
	assert_int_equal(npu_device_list_get_info(NULL, 0, &info, sizeof(info)), -EINVAL);

	memset(small, 0xa5, sizeof(small));
	assert_int_equal(npu_device_list_get_info(dl, 0, (void *)small,
						  sizeof(small) - 8), 0);
	assert_int_equal(((struct npu_device_info *)(void *)small)->minor, 2);
	/* the bytes beyond the size given are not touched */
	assert_int_equal(small[sizeof(small) - 1], 0xa5);

	memset(&big, 0xa5, sizeof(big));
	assert_int_equal(npu_device_list_get_info(dl, 0, &big.info, sizeof(big)), 0);
	assert_int_equal(big.info.minor, 2);
	assert_int_equal(big.newer[0], 0);
	assert_int_equal(big.newer[15], 0);
	npu_device_list_free(dl);
	assert_int_equal(npu_device_list_count(NULL), 0);
	npu_device_list_free(NULL);
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
		cmocka_unit_test_setup_teardown(test_list_get_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_args, setup, teardown),
		cmocka_unit_test(test_parse_pci),
		cmocka_unit_test(test_parse_hex),
	};

	return cmocka_run_group_tests_name("libnpu-discovery", tests, NULL, NULL);
}
