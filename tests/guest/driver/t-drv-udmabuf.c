// SPDX-License-Identifier: MIT
/*
 * dma-buf import from another driver: udmabuf turns a memfd into a
 * dma-buf, vnpu imports it with PRIME and maps it into the file's device
 * address space.  Jobs read from and write into the memfd's pages, which
 * the process sees through its own mapping of the memfd; the import keeps
 * the pages alive after the dma-buf fd and the memfd are closed.
 */
#define _GNU_SOURCE
#include <linux/udmabuf.h>
#include <sys/syscall.h>
#include "vnpu_t.h"

#define UBUF_SIZE	(64 * 1024)

int main(void)
{
	struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC,
					 .size = UBUF_SIZE };
	struct drm_vnpu_job_status st;
	struct drm_vnpu_bo_info info = {};
	struct t_bo cmd, own;
	uint64_t *mem;
	int fd, ufd, memfd, buf, ret;
	uint32_t handle;
	size_t n;

	ufd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (ufd < 0) {
		printf("ok 1 # SKIP no /dev/udmabuf (CONFIG_UDMABUF)\n1..1\n");
		return 0;
	}
	memfd = memfd_create("vnpu-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	T_REQUIRE(memfd >= 0);
	T_REQUIRE(ftruncate(memfd, UBUF_SIZE) == 0);
	/* udmabuf insists the memfd can no longer shrink under it. */
	T_REQUIRE(fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) == 0);
	mem = mmap(NULL, UBUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	T_REQUIRE(mem != MAP_FAILED);
	mem[0] = 0x0dd0beefcafef00dull;

	create.memfd = memfd;
	buf = ioctl(ufd, UDMABUF_CREATE, &create);
	T_REQUIRE(buf >= 0);

	fd = t_open();
	T_REQUIRE(fd >= 0);
	T_REQUIRE(t_bo_new(fd, 4096, 0, &cmd) == 0);
	T_REQUIRE(t_bo_new(fd, 4096, 0, &own) == 0);

	ret = drmPrimeFDToHandle(fd, buf, &handle) ? -errno : 0;
	t_ok(ret == 0, "udmabuf dma-buf imported (%d)", ret);
	T_REQUIRE(ret == 0);
	info.handle = handle;
	ret = t_ioctl(fd, DRM_IOCTL_VNPU_BO_INFO, &info);
	t_ok(ret == 0 && info.size == UBUF_SIZE && info.va,
	     "BO_INFO maps the import: va %#llx size %llu (%d)",
	     (unsigned long long)info.va, (unsigned long long)info.size, ret);

	/* Device reads the other driver's pages... */
	n = t_cmd_copy(cmd.map, info.va, own.va, 8);
	/* ...and writes them, at both ends of the buffer. */
	n += t_cmd_write((char *)cmd.map + n, info.va + 8, 0x1111222233334444ull);
	n += t_cmd_write((char *)cmd.map + n, info.va + UBUF_SIZE - 8, 0x5555666677778888ull);
	ret = t_run(fd, cmd.va, n, 0, (uint32_t[]){ cmd.handle, own.handle, handle }, 3,
		    &st);
	t_ok(ret == DRM_VNPU_JOB_OK, "job reading and writing the import runs (%d)", ret);
	t_ok(*(uint64_t *)own.map == 0x0dd0beefcafef00dull,
	     "device read the memfd's contents");
	t_ok(mem[1] == 0x1111222233334444ull &&
	     mem[UBUF_SIZE / 8 - 1] == 0x5555666677778888ull,
	     "the memfd sees the device's writes");

	/* One past the end is not mapped: the guard page faults. */
	n = t_cmd_write(cmd.map, info.va + UBUF_SIZE, 1);
	ret = t_run(fd, cmd.va, n, 1, (uint32_t[]){ cmd.handle, handle }, 2, &st);
	t_ok(ret == DRM_VNPU_JOB_MMU_FAULT && st.fault_va == info.va + UBUF_SIZE,
	     "a write past the import faults at its end (%d)", ret);

	/* The import holds the pages: drop every other reference to them. */
	close(buf);
	munmap(mem, UBUF_SIZE);
	n = t_cmd_copy(cmd.map, info.va + 8, own.va, 8);
	ret = t_run(fd, cmd.va, n, 2, (uint32_t[]){ cmd.handle, own.handle, handle }, 2,
		    &st);
	t_ok(ret == DRM_VNPU_JOB_OK && *(uint64_t *)own.map == 0x1111222233334444ull,
	     "import still usable after the dma-buf fd and mapping are gone (%d)", ret);

	/* Re-importing the same dma-buf from the memfd gives a working BO too. */
	buf = ioctl(ufd, UDMABUF_CREATE, &create);
	T_REQUIRE(buf >= 0);
	{
		uint32_t h2;

		ret = drmPrimeFDToHandle(fd, buf, &h2) ? -errno : 0;
		t_ok(ret == 0 && h2 != handle, "a second udmabuf is a second BO");
		close(buf);
		{
			struct drm_gem_close c = { .handle = h2 };

			t_ok(ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c) == 0, "second import closes");
		}
	}
	{
		struct drm_gem_close c = { .handle = handle };

		t_ok(ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c) == 0, "import closes");
	}
	close(memfd);
	close(ufd);
	close(fd);
	return t_done();
}
