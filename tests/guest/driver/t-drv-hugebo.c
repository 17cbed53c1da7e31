// SPDX-License-Identifier: MIT
/*
 * Huge-page backing of BOs.  The driver backs BOs from a private shmem
 * mount with huge=within_size, so every 2 MiB of a BO that its size
 * covers is one huge folio, and one DMA segment the device moves in one
 * piece.  The stock Debian kernel has transparent huge pages, so the
 * mount must be there (debugfs state: huge_bo) and a fresh 6 MiB + 4 KiB
 * BO must reach the device in segments of at least 2 MiB (debugfs bos).
 * The device then copies across the whole BO, huge folios and the 4 KiB
 * tail alike.  A BO of 256 KiB or more but less than 2 MiB (a model's
 * activation arena, its weights) is backed by one huge folio too, so the
 * device reaches it as one run instead of page by page.
 *
 * With --fallback (t-zz-param.sh, after loading with huge_bo=0), and on
 * a kernel without transparent huge pages (the debug kernel's config),
 * the mount must be off and the same BO, in 4 KiB pages, must work the
 * same: that is the driver's fallback, tested rather than skipped.
 */
#include <stdbool.h>
#include <unistd.h>

#include "vnpu_t.h"

#define BIG	((6ull << 20) + 4096)
#define HALF	(BIG / 2)
/* blazeface-front's activation arena, and a BO just past the threshold. */
static const uint64_t sub_huge[] = { 1966080, 256 << 10 };

/* The debugfs "bos" line of the first BO of @size: segments, largest. */
static int bo_segments(uint64_t size, unsigned int *segs, uint64_t *largest)
{
	char link[256], path[512], line[128];
	const char *pci;
	unsigned long long sz, lg;
	unsigned int n_segs;
	ssize_t n;
	FILE *f;

	n = readlink("/sys/class/accel/accel0/device", link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = 0;
	pci = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/bos", pci);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llu %u %llu", &sz, &n_segs, &lg) == 3 &&
		    sz == size) {
			*segs = n_segs;
			*largest = lg;
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -ENOENT;
}

int main(int argc, char **argv)
{
	bool huge_off = argc > 1 && !strcmp(argv[1], "--fallback");
	bool thp = access("/sys/kernel/mm/transparent_hugepage", F_OK) == 0;
	bool fallback = huge_off || !thp;
	struct drm_vnpu_job_status st;
	struct t_bo big, cmd;
	unsigned int segs = 0;
	uint64_t largest = 0, i;
	uint32_t bos[2];
	uint32_t *w;
	size_t len;
	int fd, r;

	fd = t_open();
	T_REQUIRE(fd >= 0);
	if (fallback)
		t_ok(t_debugfs_state("huge_bo") == 0,
		     "%s: BOs stay on the kernel's shmem mount",
		     huge_off ? "huge_bo=0" : "no transparent huge pages in this kernel");
	else
		t_ok(t_debugfs_state("huge_bo") == 1,
		     "BOs are backed from the huge-page shmem mount");

	T_REQUIRE(t_bo_new(fd, BIG, 0, &big) == 0);
	T_REQUIRE(t_bo_new(fd, 4096, DRM_VNPU_BO_DEVICE_READONLY, &cmd) == 0);
	r = bo_segments(BIG, &segs, &largest);
	t_ok(r == 0, "debugfs lists the BO (%d)", r);
	if (!fallback) {
		t_ok(largest >= (2u << 20),
		     "a 6 MiB + 4 KiB BO reaches the device in %u DMA segments, the largest %llu bytes (at least 2 MiB)",
		     segs, (unsigned long long)largest);
		t_ok(segs <= 4, "at most one segment per huge folio and the tail (%u)",
		     segs);
	}

	for (i = 0; i < sizeof(sub_huge) / sizeof(sub_huge[0]); i++) {
		struct t_bo bo;

		T_REQUIRE(t_bo_new(fd, sub_huge[i], 0, &bo) == 0);
		segs = 0;
		largest = 0;
		r = bo_segments(sub_huge[i], &segs, &largest);
		t_ok(r == 0, "debugfs lists the %llu-byte BO (%d)",
		     (unsigned long long)sub_huge[i], r);
		if (!fallback)
			t_ok(segs == 1 && largest == sub_huge[i],
			     "a %llu-byte BO reaches the device in one DMA segment (%u, the largest %llu bytes)",
			     (unsigned long long)sub_huge[i], segs,
			     (unsigned long long)largest);
	}

	w = big.map;
	for (i = 0; i < HALF / 4; i++) {
		w[i] = (uint32_t)(i * 2654435761u);
		w[HALF / 4 + i] = 0;
	}
	len = t_cmd_copy(cmd.map, big.va, big.va + HALF, HALF);
	bos[0] = big.handle;
	bos[1] = cmd.handle;
	r = t_run(fd, cmd.va, len, 0, bos, 2, &st);
	t_ok(r == DRM_VNPU_JOB_OK, "the device copies 3 MiB + 2 KiB across huge folios and the tail (state %d)", r);
	for (i = 0; i < HALF / 4; i++)
		if (w[HALF / 4 + i] != (uint32_t)(i * 2654435761u))
			break;
	t_ok(i == HALF / 4, "every word arrived (first difference at word %llu of %llu)",
	     (unsigned long long)i, (unsigned long long)(HALF / 4));
	close(fd);
	return t_done();
}
