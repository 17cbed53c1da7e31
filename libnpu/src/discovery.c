// SPDX-License-Identifier: MIT
/*
 * Device discovery through /sys/class/accel.
 *
 * libdrm's drmGetDevices2() does not know accel nodes and drmGetDevice2()
 * fails on an accel fd, so the class directory is walked here: each
 * accelN entry links to its PCI device, whose vendor/device/revision
 * files and driver link are readable by any user.  Opening the node for
 * the QUERY ioctl is then optional, so an unprivileged listing still
 * shows every device.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>

#include "npu_internal.h"

#define NPU_DRIVER_NAME "vnpu"

/* Strict hex: optional 0x, at least one digit, optional trailing newline. */
int npu__parse_hex(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	const char *p = s;

	if (!s)
		return -EINVAL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (!isxdigit((unsigned char)*p))
		return -EINVAL;
	for (; isxdigit((unsigned char)*p); p++) {
		unsigned int d = isdigit((unsigned char)*p) ? *p - '0' :
				 (tolower((unsigned char)*p) - 'a' + 10);

		if (v > (max - d) / 16)
			return -ERANGE;
		v = v * 16 + d;
	}
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Parse one hex field of exactly @digits digits (or 1..@digits if !exact). */
static const char *hex_field(const char *p, int digits, bool exact,
			     unsigned int *out)
{
	unsigned int v = 0;
	int n = 0;

	while (n < digits && isxdigit((unsigned char)p[n])) {
		unsigned char c = (unsigned char)tolower((unsigned char)p[n]);

		v = v * 16 + (isdigit(c) ? c - '0' : c - 'a' + 10);
		n++;
	}
	if (!n || (exact && n != digits))
		return NULL;
	*out = v;
	return p + n;
}

/*
 * "DDDD:BB:DD.F" or "BB:DD.F" (domain 0), any case, to the canonical
 * lower-case form sysfs uses.
 */
int npu__parse_pci_address(const char *s, char *out, size_t out_size)
{
	unsigned int dom = 0, bus, dev, fn;
	const char *p;

	if (!s || !out)
		return -EINVAL;
	p = hex_field(s, 4, true, &dom);
	if (p && *p == ':') {
		p = hex_field(p + 1, 2, true, &bus);
	} else {
		dom = 0;
		p = hex_field(s, 2, true, &bus);
	}
	if (!p || *p++ != ':')
		return -EINVAL;
	p = hex_field(p, 2, true, &dev);
	if (!p || *p++ != '.')
		return -EINVAL;
	p = hex_field(p, 1, true, &fn);
	if (!p || *p || dev > 0x1f || fn > 7)
		return -EINVAL;
	if (snprintf(out, out_size, "%04x:%02x:%02x.%x", dom, bus, dev, fn) >=
	    (int)out_size)
		return -ERANGE;
	return 0;
}

static int read_small_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	buf[n] = '\0';
	return 0;
}

static int read_hex_attr(const char *dir, const char *attr,
			 unsigned long max, unsigned long *out)
{
	char path[PATH_MAX], buf[64];
	int ret;

	if (snprintf(path, sizeof(path), "%s/%s", dir, attr) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	ret = read_small_file(path, buf, sizeof(buf));
	if (ret)
		return ret;
	return npu__parse_hex(buf, max, out);
}

/* Last path component of a symlink's target. */
static int link_basename(const char *path, char *out, size_t out_size)
{
	char target[PATH_MAX];
	const char *base;
	ssize_t n;

	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!*base || strlen(base) >= out_size)
		return -EINVAL;
	strcpy(out, base);
	return 0;
}

/* "accel" followed by a decimal minor without leading zeros. */
static bool parse_accel_name(const char *name, uint32_t *minor)
{
	unsigned long v = 0;
	const char *p;

	if (strncmp(name, "accel", 5))
		return false;
	p = name + 5;
	if (!isdigit((unsigned char)*p) || (p[0] == '0' && p[1]))
		return false;
	for (; *p; p++) {
		if (!isdigit((unsigned char)*p) || v > 100000)
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	*minor = (uint32_t)v;
	return true;
}

/* Fill @info from sysfs; -ENODEV when it is not a PCI vnpu device. */
static int read_sysfs_entry(const char *class_dir, const char *name,
			    const char *dev_root, struct npu_device_info *info)
{
	char path[PATH_MAX], pci[PATH_MAX];
	unsigned long v;
	int ret;

	memset(info, 0, sizeof(*info));
	if (!parse_accel_name(name, &info->minor))
		return -ENODEV;

	if (snprintf(pci, sizeof(pci), "%s/%s/device", class_dir, name) >=
	    (int)sizeof(pci))
		return -ENAMETOOLONG;
	ret = link_basename(pci, path, sizeof(path));
	if (ret)
		return -ENODEV;
	/* Only PCI parents have an address of this shape. */
	if (npu__parse_pci_address(path, info->pci_address,
				   sizeof(info->pci_address)))
		return -ENODEV;

	if (snprintf(path, sizeof(path), "%s/driver", pci) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (link_basename(path, info->driver, sizeof(info->driver)))
		return -ENODEV;
	if (strcmp(info->driver, NPU_DRIVER_NAME))
		return -ENODEV;

	/* An entry sysfs cannot describe is skipped, not fatal to the list. */
	if (read_hex_attr(pci, "vendor", 0xffff, &v))
		return -ENODEV;
	info->pci_vendor = (uint16_t)v;
	if (read_hex_attr(pci, "device", 0xffff, &v))
		return -ENODEV;
	info->pci_device = (uint16_t)v;
	/* Older kernels lack the revision attribute; not fatal. */
	if (!read_hex_attr(pci, "revision", 0xff, &v))
		info->pci_revision = (uint8_t)v;

	if (snprintf(info->node, sizeof(info->node), "%s/accel/%s", dev_root,
		     name) >= (int)sizeof(info->node))
		return -ENAMETOOLONG;
	info->query_error = -ENODATA;
	return 0;
}

/*
 * Open @node, make sure the vnpu driver is behind it and fill the QUERY
 * part of @info.  Returns the fd or a negative errno.
 */
int npu__open_node(const char *node, struct npu_device_info *info,
		   struct npu_device_limits *lim)
{
	drmVersionPtr ver;
	int fd, ret;

	fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ver = drmGetVersion(fd);
	if (!ver) {
		ret = errno == ENOTTY || !errno ? -ENODEV : -errno;
		goto err;
	}
	if (!ver->name || strcmp(ver->name, NPU_DRIVER_NAME)) {
		drmFreeVersion(ver);
		ret = -ENODEV;
		goto err;
	}
	snprintf(info->driver_version, sizeof(info->driver_version),
		 "%d.%d.%d", ver->version_major, ver->version_minor,
		 ver->version_patchlevel);
	drmFreeVersion(ver);
	ret = npu__query_fd(fd, info, lim);
	if (ret)
		goto err;
	return fd;
err:
	close(fd);
	return ret;
}

static int cmp_minor(const void *a, const void *b)
{
	const struct npu_device_info *x = a, *y = b;

	return (x->minor > y->minor) - (x->minor < y->minor);
}

static int list_new(struct npu_device_info *infos, size_t n,
		    struct npu_device_list **out)
{
	struct npu_device_list *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->infos = infos;
	l->count = n;
	*out = l;
	return 0;
}

int npu__device_list_at(const char *sysfs_root, const char *dev_root,
			bool query, struct npu_device_list **out)
{
	struct npu_device_info *infos = NULL, *tmp;
	size_t n = 0, cap = 0, i;
	char class_dir[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int ret = 0;

	if (!sysfs_root || !dev_root || !out)
		return -EINVAL;
	if (snprintf(class_dir, sizeof(class_dir), "%s/class/accel",
		     sysfs_root) >= (int)sizeof(class_dir))
		return -ENAMETOOLONG;

	dir = opendir(class_dir);
	if (!dir) {
		/* No accel class at all: a kernel without accel devices. */
		if (errno != ENOENT)
			return -errno;
		return list_new(NULL, 0, out);
	}
	while ((de = readdir(dir))) {
		struct npu_device_info info;

		ret = read_sysfs_entry(class_dir, de->d_name, dev_root, &info);
		if (ret == -ENODEV)
			continue;
		if (ret)
			goto err;
		if (n == cap) {
			cap = cap ? cap * 2 : 4;
			tmp = realloc(infos, cap * sizeof(*infos));
			if (!tmp) {
				ret = -ENOMEM;
				goto err;
			}
			infos = tmp;
		}
		infos[n++] = info;
	}
	closedir(dir);
	dir = NULL;

	if (n)
		qsort(infos, n, sizeof(*infos), cmp_minor);
	for (i = 0; i < n; i++) {
		infos[i].index = (uint32_t)i;
		if (query) {
			int fd = npu__open_node(infos[i].node, &infos[i], NULL);

			if (fd >= 0) {
				close(fd);
				infos[i].query_error = 0;
			} else {
				infos[i].query_error = fd;
			}
		}
	}
	ret = list_new(infos, n, out);
	if (ret)
		free(infos);
	return ret;
err:
	if (dir)
		closedir(dir);
	free(infos);
	return ret;
}

NPU_EXPORT int npu_device_list(struct npu_device_list **out)
{
	return npu__device_list_at("/sys", "/dev", true, out);
}

NPU_EXPORT size_t npu_device_list_count(const struct npu_device_list *list)
{
	return list ? list->count : 0;
}

NPU_EXPORT int npu_device_list_get_info(const struct npu_device_list *list,
					size_t index,
					struct npu_device_info *info,
					size_t size)
{
	if (!list || !info || !size)
		return -EINVAL;
	if (index >= list->count)
		return -ERANGE;
	npu__struct_out(info, size, &list->infos[index], sizeof(*info));
	return 0;
}

NPU_EXPORT void npu_device_list_free(struct npu_device_list *list)
{
	if (!list)
		return;
	free(list->infos);
	free(list);
}
