// SPDX-License-Identifier: MIT
/*
 * replay.c - run LLVMFuzzerTestOneInput() over corpus files without
 * libFuzzer, so the committed corpus is exercised by every 'unit' test run.
 *
 * Usage: codec_fuzz_replay <dir-or-file>...
 * Exit: 0 when every input ran (a failed invariant aborts), 1 when an
 * argument cannot be read or no input was found.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX (1u << 20)

static int replay_file(const char *path, unsigned int *count)
{
	static uint8_t buf[REPLAY_MAX];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	(*count)++;
	return 0;
}

static int replay_path(const char *path, unsigned int *count)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int ret = 0;

	if (stat(path, &st)) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path, count);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char p[4096];

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		if (stat(p, &st) || !S_ISREG(st.st_mode))
			continue;
		ret = replay_file(p, count);
		if (ret)
			break;
	}
	closedir(d);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned int count = 0;

	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i], &count))
			return 1;
	printf("replayed %u inputs\n", count);
	return count ? 0 : 1;
}
