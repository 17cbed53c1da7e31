// SPDX-License-Identifier: MIT
/*
 * A main() for a libFuzzer target without libFuzzer: runs the target once
 * on each file named on the command line, as libFuzzer does when given
 * files, so the guest (which has no clang runtime) can replay reproducers
 * through the very checks of the target.  A finding aborts, as under
 * libFuzzer; a file that cannot be read exits 2.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer's own default -max_len for a corpus of small files is far below. */
#define REPLAY_MAX_BYTES	(16u << 20)

static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data;
	size_t n;

	if (!f) {
		perror(path);
		return 2;
	}
	data = malloc(REPLAY_MAX_BYTES);
	if (!data) {
		fclose(f);
		return 2;
	}
	n = fread(data, 1, REPLAY_MAX_BYTES, f);
	if (ferror(f) || !feof(f)) {
		fprintf(stderr, "%s: unreadable or over %u bytes\n", path, REPLAY_MAX_BYTES);
		fclose(f);
		free(data);
		return 2;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, n);
	free(data);
	printf("replayed %s (%zu bytes)\n", path, n);
	return 0;
}

int main(int argc, char **argv)
{
	int i, ret = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc && !ret; i++)
		ret = replay(argv[i]);
	return ret;
}
