// SPDX-License-Identifier: MIT
/*
 * npu-info: list vnpu devices and what they can do, like clinfo or
 * vulkaninfo.  Runs without root; fields that need the device node open
 * are shown as unavailable with the reason when it cannot be opened.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu/npu.h"

static void print_caps(uint64_t caps)
{
	const char *sep = "";
	int bit;

	for (bit = 0; bit < 64; bit++) {
		uint64_t cap = 1ull << bit;
		const char *name;

		if (!(caps & cap))
			continue;
		name = npu_cap_name(cap);
		if (name)
			printf("%s%s", sep, name);
		else
			printf("%sbit%d", sep, bit);
		sep = " ";
	}
	printf("\n");
}

/* The limits need the device open; listing it did not. */
static void print_limits(const struct npu_device_info *d)
{
	struct npu_device_limits l;
	struct npu_device *dev;
	int ret;

	ret = npu_device_open_pci(d->pci_address, &dev);
	if (!ret) {
		ret = npu_device_get_limits(dev, &l, sizeof(l));
		npu_device_close(dev);
	}
	if (ret) {
		printf("  command limits:   unavailable (%s)\n", npu_strerror(ret));
		return;
	}
	printf("  command limits:   %s\n", l.reported ? "reported by the device" :
	       "not reported (hardware interface 1.0); libnpu assumes 1.1's");
	printf("    tensor elems:   %" PRIu64 "\n", l.tensor_elems);
	printf("    tensor bytes:   %" PRIu64 "\n", l.tensor_bytes);
	printf("    command bytes:  %" PRIu64 "\n", l.cmd_bytes);
	printf("    command MACs:   %" PRIu64 "\n", l.cmd_macs);
	printf("    reduction:      %" PRIu64 "\n", l.reduction);
	printf("    kernel dim:     %" PRIu64 "\n", l.kernel_dim);
	printf("    channels:       %" PRIu64 "\n", l.channels);
}

static void print_device(const struct npu_device_info *d)
{
	printf("Device %" PRIu32 ":\n", d->index);
	printf("  node:             %s\n", d->node);
	printf("  pci address:      %s\n", d->pci_address);
	printf("  pci id:           %04x:%04x rev %02x\n", d->pci_vendor,
	       d->pci_device, d->pci_revision);
	printf("  kernel driver:    %s\n", d->driver);
	if (d->query_error) {
		printf("  device query:     unavailable (%s)\n",
		       npu_strerror(d->query_error));
		return;
	}
	printf("  driver version:   %s\n", d->driver_version);
	printf("  hw version:       %" PRIu32 ".%" PRIu32 "\n",
	       d->hw_version >> 16, d->hw_version & 0xffff);
	printf("  platform:         %s\n",
	       d->platform == 1 ? "emulated" :
	       d->platform == 0 ? "silicon" : "unknown");
	printf("  capabilities:     ");
	print_caps(d->caps);
	printf("  queues:           %" PRIu32 "\n", d->num_queues);
	printf("  engines:          %" PRIu32 "\n", d->num_engines);
	printf("  va bits:          %" PRIu32 "\n", d->va_bits);
	printf("  va range:         0x%" PRIx64 "-0x%" PRIx64 "\n", d->va_start,
	       d->va_end);
	printf("  max buffer size:  %" PRIu64 " bytes\n", d->max_bo_size);
	printf("  max command size: %" PRIu32 " bytes\n", d->max_cmd_size);
	printf("  clock:            %" PRIu32 " MHz\n", d->clock_mhz);
	printf("  MACs per cycle:   %" PRIu32 "\n", d->macs_per_cycle);
	if (d->clock_mhz && d->macs_per_cycle)
		printf("  peak int8:        %.1f TOPS (modelled)\n",
		       2.0 * d->macs_per_cycle * d->clock_mhz / 1e6);
	print_limits(d);
}

int main(int argc, char **argv)
{
	struct npu_device_list *list;
	struct npu_device_info info;
	size_t count, i;
	int ret;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: %s\nLists vnpu devices and their capabilities.\n",
		       argv[0]);
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[1]);
		return 2;
	}
	ret = npu_device_list(&list);
	if (ret) {
		fprintf(stderr, "npu-info: listing devices: %s\n",
			npu_strerror(ret));
		return 1;
	}
	count = npu_device_list_count(list);
	printf("libnpu %s (API version %d), %zu vnpu device%s\n", npu_version(),
	       NPU_API_VERSION, count, count == 1 ? "" : "s");
	for (i = 0; i < count; i++)
		if (!npu_device_list_get_info(list, i, &info, sizeof(info)))
			print_device(&info);
	npu_device_list_free(list);
	return 0;
}
