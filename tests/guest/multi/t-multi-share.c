// SPDX-License-Identifier: MIT
/*
 * One buffer, two devices.  A BO made on device 0 is exported as a
 * dma-buf and imported on device 1: both devices' MMUs map the same
 * pages, so what a job on one writes, a job on the other reads, with no
 * copy.  Producers on device 0 and consumers on device 1 are all queued
 * before any is waited for, each with a long prefix of busy work, and
 * each consumer copies the shared buffer to a slice of its own: a
 * consumer that ran before its producer (read after write), or a producer
 * that overwrote the buffer before the previous consumer read it (write
 * after read), leaves a wrong pattern in a slice.  The order comes once
 * from the shared reservation object alone (implicit fences: the jobs
 * list the BO) and once from sync_file fences alone (the jobs do not list
 * it).  Then: importing into the same device gives the same pages, and
 * the importer keeps a working buffer after the exporter closed its
 * handle, its file and its device file while a job on the import ran.
 */
#include "multi.h"

#define CMD_BYTES	(1u << 20)
#define CMD_SLOT	(64u << 10)	/* command bytes per job */
#define BUSY_BYTES	(256u << 10)
#define BUSY_NS		60000000ll	/* device time of a job's busy prefix */
#define SHARED_BYTES	(256u << 10)
#define ITERATIONS	16

enum order { IMPLICIT, EXPLICIT, UNORDERED };
static const char *const order_name[] = {
	"implicit fences (the shared reservation object)",
	"sync_file fences only",
	"no fence at all",
};

struct dev {
	int fd;
	struct t_bo cmd, src, dst;
	unsigned int busy;	/* COPYs making the busy prefix */
	unsigned int slot;	/* next command slot */
};

static uint32_t pattern(enum order o, unsigned int i)
{
	return 0xa5000000u | (uint32_t)o << 16 | i;
}

static int dev_init(struct dev *d, unsigned int minor)
{
	d->fd = m_open(minor);
	if (d->fd < 0)
		return -errno;
	if (t_bo_new(d->fd, CMD_BYTES, 0, &d->cmd) || t_bo_new(d->fd, BUSY_BYTES, 0, &d->src) ||
	    t_bo_new(d->fd, BUSY_BYTES, 0, &d->dst))
		return -ENOMEM;
	d->busy = t_busy_count(d->fd, &d->cmd, d->src.va, d->dst.va, BUSY_BYTES, 4, BUSY_NS);
	/* Room for the busy prefix and one more command in a slot. */
	if (d->busy > (CMD_SLOT - 64) / sizeof(struct vnpu_cmd_copy))
		d->busy = (CMD_SLOT - 64) / sizeof(struct vnpu_cmd_copy);
	return 0;
}

/* A new command slot holding the busy prefix; @len gets its length. */
static char *dev_job(struct dev *d, uint64_t *va, size_t *len)
{
	char *p;

	if (d->slot == CMD_BYTES / CMD_SLOT)
		d->slot = 0;
	p = (char *)d->cmd.map + d->slot * CMD_SLOT;
	*va = d->cmd.va + d->slot * CMD_SLOT;
	d->slot++;
	*len = t_cmd_busy(p, CMD_SLOT - 64, d->src.va, d->dst.va, BUSY_BYTES, d->busy);
	return p;
}

/*
 * Queue every producer (device 0) and consumer (device 1) of one run,
 * then wait; returns how many consumers found something else than their
 * producer's pattern in their slice of @out, or -errno.
 */
static int pipeline(struct dev *d0, struct dev *d1, struct t_bo *shared0,
		    struct t_bo *shared1, struct t_bo *out, enum order o)
{
	uint32_t p_out = 0, c_in = 0, p_in = 0, c_out = 0;
	uint64_t pid = 0, cid = 0;
	unsigned int i, stale = 0;
	int ret = 0, state;

	if (o == EXPLICIT &&
	    (drmSyncobjCreate(d0->fd, 0, &p_out) || drmSyncobjCreate(d0->fd, 0, &c_in) ||
	     drmSyncobjCreate(d1->fd, 0, &p_in) || drmSyncobjCreate(d1->fd, 0, &c_out)))
		return -errno;
	memset(out->map, 0, out->size);
	for (i = 0; i < ITERATIONS && !ret; i++) {
		uint32_t pbos[] = { d0->cmd.handle, d0->src.handle, d0->dst.handle,
				    shared0->handle };
		uint32_t cbos[] = { d1->cmd.handle, d1->src.handle, d1->dst.handle,
				    out->handle, shared1->handle };
		/* Without implicit fences the shared BO stays off the lists. */
		uint32_t npbos = o == IMPLICIT ? 4 : 3, ncbos = o == IMPLICIT ? 5 : 4;
		uint64_t va;
		size_t len;
		char *p;

		p = dev_job(d0, &va, &len);
		len += t_cmd_fill(p + len, shared0->va, SHARED_BYTES, pattern(o, i));
		ret = m_submit(d0->fd, va, len, pbos, npbos, i ? c_in : 0, p_out, &pid);
		if (!ret && o == EXPLICIT)
			ret = m_move_fence(d0->fd, p_out, d1->fd, p_in);
		if (ret)
			break;
		p = dev_job(d1, &va, &len);
		len += t_cmd_copy(p + len, shared1->va, out->va + (uint64_t)i * SHARED_BYTES,
				  SHARED_BYTES);
		ret = m_submit(d1->fd, va, len, cbos, ncbos, p_in, c_out, &cid);
		if (!ret && o == EXPLICIT)
			ret = m_move_fence(d1->fd, c_out, d0->fd, c_in);
	}
	if (ret) {
		printf("# %s: iteration %u: %s\n", order_name[o], i, strerror(-ret));
	} else {
		/* Queues run in order: the last job of each is the last to end. */
		state = m_finish(d0->fd, pid);
		if (state == DRM_VNPU_JOB_OK)
			state = m_finish(d1->fd, cid);
		if (state != DRM_VNPU_JOB_OK) {
			printf("# %s: a last job ended in state %d\n", order_name[o], state);
			ret = -EIO;
		}
	}
	for (i = 0; i < ITERATIONS && !ret; i++) {
		const uint32_t *w = (const uint32_t *)((char *)out->map + (size_t)i * SHARED_BYTES);
		unsigned int k, bad = 0;

		for (k = 0; k < SHARED_BYTES / 4; k++)
			bad += w[k] != pattern(o, i);
		if (bad)
			printf("# %s: consumer %u: %u of %u words not its producer's (first 0x%08x)\n",
			       order_name[o], i, bad, SHARED_BYTES / 4, w[0]);
		stale += !!bad;
	}
	if (o == EXPLICIT) {
		drmSyncobjDestroy(d0->fd, p_out);
		drmSyncobjDestroy(d0->fd, c_in);
		drmSyncobjDestroy(d1->fd, p_in);
		drmSyncobjDestroy(d1->fd, c_out);
	}
	return ret ? ret : (int)stale;
}

/* A second file on the exporting device imports the same pages. */
static void same_device(struct dev *d0, struct t_bo *shared0)
{
	struct drm_vnpu_job_status st;
	struct t_bo self = {}, again = {};
	int fd, dmabuf, ret;
	size_t len;

	ret = drmPrimeHandleToFD(d0->fd, shared0->handle, DRM_CLOEXEC | DRM_RDWR, &dmabuf);
	T_REQUIRE(ret == 0);
	ret = drmPrimeFDToHandle(d0->fd, dmabuf, &again.handle);
	close(dmabuf);
	t_ok(!ret && again.handle == shared0->handle,
	     "importing into the exporting file gives back its own handle (%u, %u)",
	     again.handle, shared0->handle);

	fd = m_open(0);
	T_REQUIRE(fd >= 0);
	ret = m_share(d0->fd, shared0, fd, &self);
	t_ok(ret == 0, "another file of device 0 imports it (%d)", ret);
	if (ret) {
		close(fd);
		return;
	}
	{
		struct t_bo cmd;

		T_REQUIRE(t_bo_new(fd, 4096, 0, &cmd) == 0);
		len = t_cmd_write(cmd.map, self.va + 8, 0x5e1f5e1f5e1f5e1full);
		ret = t_run(fd, cmd.va, len, 0, (uint32_t[]){ cmd.handle, self.handle }, 2, &st);
		t_ok(ret == DRM_VNPU_JOB_OK &&
		     ((volatile uint64_t *)shared0->map)[1] == 0x5e1f5e1f5e1f5e1full,
		     "its job's write shows in the exporter's mapping (%d)", ret);
		m_bo_close(fd, &cmd);
	}
	m_bo_close(fd, &self);
	close(fd);
}

/*
 * The exporter lets go of everything (handle, mappings, device file)
 * while a job on the import runs: the import keeps the pages.
 */
static void exporter_gone(struct dev *d0, struct dev *d1)
{
	struct t_bo own, imp = {}, copy;
	unsigned int k, bad = 0;
	uint64_t va, id;
	size_t len;
	char *p;
	int ret;

	T_REQUIRE(t_bo_new(d0->fd, SHARED_BYTES, 0, &own) == 0);
	memset(own.map, 0x11, SHARED_BYTES);
	T_REQUIRE(m_share(d0->fd, &own, d1->fd, &imp) == 0);
	T_REQUIRE(t_bo_new(d1->fd, SHARED_BYTES, 0, &copy) == 0);

	p = dev_job(d1, &va, &len);
	len += t_cmd_fill(p + len, imp.va, SHARED_BYTES, 0x22222222);
	len += t_cmd_copy(p + len, imp.va, copy.va, SHARED_BYTES);
	ret = m_submit(d1->fd, va, len, (uint32_t[]){ d1->cmd.handle, d1->src.handle,
		       d1->dst.handle, imp.handle, copy.handle }, 5, 0, 0, &id);
	T_REQUIRE(ret == 0);

	m_bo_close(d0->fd, &own);
	m_bo_close(d0->fd, &d0->cmd);
	m_bo_close(d0->fd, &d0->src);
	m_bo_close(d0->fd, &d0->dst);
	close(d0->fd);
	d0->fd = -1;

	ret = m_finish(d1->fd, id);
	for (k = 0; k < SHARED_BYTES / 4; k++)
		bad += ((uint32_t *)copy.map)[k] != 0x22222222;
	t_ok(ret == DRM_VNPU_JOB_OK && !bad,
	     "a job on the import, running while the exporter closed its device file, "
	     "writes and reads it (%d, %u bad words)", ret, bad);
	t_ok(((volatile uint32_t *)imp.map)[SHARED_BYTES / 4 - 1] == 0x22222222,
	     "the importer's mapping reads the job's write");

	len = t_cmd_fill(p, imp.va, SHARED_BYTES, 0x33333333);
	ret = m_submit(d1->fd, va, len, (uint32_t[]){ d1->cmd.handle, imp.handle }, 2, 0, 0, &id);
	if (!ret)
		ret = m_finish(d1->fd, id);
	t_ok(ret == DRM_VNPU_JOB_OK && ((volatile uint32_t *)imp.map)[0] == 0x33333333,
	     "a new job on the import after the exporter is gone (%d)", ret);
	m_bo_close(d1->fd, &copy);
	m_bo_close(d1->fd, &imp);
}

int main(void)
{
	char pci0[256], pci1[256];
	struct dev d0 = {}, d1 = {};
	struct t_bo shared0, shared1 = {}, out;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = m_pci_of(0, pci0, sizeof(pci0));
	if (!ret)
		ret = m_pci_of(1, pci1, sizeof(pci1));
	t_ok(!ret && strcmp(pci0, pci1), "accel0 and accel1 are two PCI functions (%s, %s)",
	     ret ? "?" : pci0, ret ? "?" : pci1);
	T_REQUIRE(ret == 0);
	T_REQUIRE(dev_init(&d0, 0) == 0);
	T_REQUIRE(dev_init(&d1, 1) == 0);
	printf("# busy prefix: %u COPYs of %u KiB on device 0, %u on device 1\n",
	       d0.busy, BUSY_BYTES >> 10, d1.busy);

	T_REQUIRE(t_bo_new(d0.fd, SHARED_BYTES, 0, &shared0) == 0);
	ret = m_share(d0.fd, &shared0, d1.fd, &shared1);
	t_ok(ret == 0, "device 1 imports device 0's BO as a dma-buf (%d)", ret);
	T_REQUIRE(ret == 0);
	t_ok(shared1.size == SHARED_BYTES, "with its size (%llu)",
	     (unsigned long long)shared1.size);
	T_REQUIRE(t_bo_new(d1.fd, (uint64_t)ITERATIONS * SHARED_BYTES, 0, &out) == 0);

	((volatile uint32_t *)shared0.map)[7] = 0xc0ffee;
	t_ok(((volatile uint32_t *)shared1.map)[7] == 0xc0ffee,
	     "the importer's CPU mapping sees the exporter's pages");

	ret = pipeline(&d0, &d1, &shared0, &shared1, &out, IMPLICIT);
	t_ok(ret == 0, "%d producers on device 0, consumers on device 1, ordered by %s: "
	     "every consumer reads its producer's data (%d stale)", ITERATIONS,
	     order_name[IMPLICIT], ret);
	ret = pipeline(&d0, &d1, &shared0, &shared1, &out, EXPLICIT);
	t_ok(ret == 0, "the same ordered by %s, the BO on no job's list (%d stale)",
	     order_name[EXPLICIT], ret);
	/*
	 * The control: what the two runs above would see without their
	 * fences.  Device timing decides it, so it is reported, not judged.
	 */
	ret = pipeline(&d0, &d1, &shared0, &shared1, &out, UNORDERED);
	printf("# control, %s: %d of %d consumers read another producer's data\n",
	       order_name[UNORDERED], ret, ITERATIONS);

	same_device(&d0, &shared0);
	m_bo_close(d1.fd, &shared1);
	m_bo_close(d0.fd, &shared0);
	m_bo_close(d1.fd, &out);
	exporter_gone(&d0, &d1);
	close(d1.fd);
	return t_done();
}
