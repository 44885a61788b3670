// SPDX-License-Identifier: MIT
/*
 * test_file.c - regular-file backend, buffered and O_DIRECT (skipped where
 * the filesystem refuses O_DIRECT), plus creation/extension, the zero-fill
 * fallback on tmpfs and the short-read continuation.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "bk_test.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

static void file_tmpdir(struct bkt_ctx *c, const char *base)
{
	snprintf(c->dir, sizeof(c->dir), "%s/nvmfd-bk-XXXXXX", base);
	assert_non_null(mkdtemp(c->dir));
	snprintf(c->path, sizeof(c->path), "%s/ns0.img", c->dir);
}

static int file_setup(void **state, bool direct, unsigned int lba_shift)
{
	struct bkt_ctx *c = bkt_ctx_new();
	int rc;

	file_tmpdir(c, "/tmp");
	c->opts.type = NVMFD_BK_FILE;
	c->opts.path = c->path;
	c->opts.size = BKT_SIZE;
	c->opts.direct = direct;
	c->opts.lba_shift = lba_shift;
	rc = nvmfd_bk_open(&c->opts, &c->bk);
	if (direct && rc == -EINVAL)
		c->skip = true; /* filesystem without O_DIRECT */
	else
		assert_int_equal(rc, 0);
	*state = c;
	return 0;
}

static int setup_buffered(void **state)
{
	return file_setup(state, false, 0);
}

static int setup_direct(void **state)
{
	return file_setup(state, true, 0);
}

static int setup_direct_4k(void **state)
{
	return file_setup(state, true, 12);
}

/* Created at size=, extended when shorter, never shrunk; no size = the
 * file's own size. */
static void test_file_create_extend(void **state)
{
	struct bkt_ctx *c = bkt_ctx_new();
	struct nvmfd_bk_opts o = { .type = NVMFD_BK_FILE };
	struct nvmfd_bk *bk = NULL;
	struct stat st;
	int fd;

	*state = c;
	file_tmpdir(c, "/tmp");
	o.path = c->path;

	/* No file and no size: nothing to create. */
	assert_int_equal(nvmfd_bk_open(&o, &bk), -ENOENT);

	o.size = 1 << 20;
	assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
	assert_int_equal(stat(c->path, &st), 0);
	assert_int_equal(st.st_size, 1 << 20);
	assert_int_equal(nvmfd_bk_size(bk), 1 << 20);
	assert_int_equal(nvmfd_bk_lba_shift(bk), 9);
	assert_int_equal(nvmfd_bk_get_type(bk), NVMFD_BK_FILE);
	assert_false(nvmfd_bk_needs_aligned_buf(bk));
	assert_int_equal(nvmfd_bk_close(&bk), 0);

	/* Extend. */
	o.size = 4 << 20;
	assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
	assert_int_equal(stat(c->path, &st), 0);
	assert_int_equal(st.st_size, 4 << 20);
	assert_int_equal(nvmfd_bk_size(bk), 4 << 20);
	assert_int_equal(nvmfd_bk_close(&bk), 0);

	/* Smaller size=: the file keeps its length, the namespace is size=. */
	o.size = 2 << 20;
	assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
	assert_int_equal(stat(c->path, &st), 0);
	assert_int_equal(st.st_size, 4 << 20);
	assert_int_equal(nvmfd_bk_size(bk), 2 << 20);
	assert_int_equal(nvmfd_bk_close(&bk), 0);

	/* No size: the existing length, rounded down to the block size. */
	fd = open(c->path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (3 << 20) + 4096 + 100), 0);
	close(fd);
	o.size = 0;
	o.lba_shift = 12;
	assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
	assert_int_equal(nvmfd_bk_size(bk), (3 << 20) + 4096);
	assert_int_equal(nvmfd_bk_lba_shift(bk), 12);
	assert_int_equal(nvmfd_bk_close(&bk), 0);

	/* Invalid: size not a block multiple, empty file, a directory, no
	 * path, bad lba_shift, unknown type. */
	o.size = (1 << 20) + 512;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	fd = open(c->path, O_RDWR | O_TRUNC);
	assert_true(fd >= 0);
	close(fd);
	o.size = 0;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	o.path = c->dir;
	assert_true(nvmfd_bk_open(&o, &bk) < 0);
	o.path = NULL;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	o.path = c->path;
	o.size = 1 << 20;
	o.lba_shift = 11;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	o.lba_shift = 0;
	o.type = (enum nvmfd_bk_type)9;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	assert_int_equal(nvmfd_bk_open(NULL, &bk), -EINVAL);
	assert_null(bk);
	bkt_teardown(state);
}

static void test_file_direct_geometry(void **state)
{
	struct bkt_ctx *c = *state;

	BKT_SKIP_IF(c);
	assert_true(nvmfd_bk_needs_aligned_buf(c->bk));
	assert_int_equal(nvmfd_bk_size(c->bk), BKT_SIZE);
	assert_int_equal(((uintptr_t)c->rbuf) & 4095, 0);
}

/* Data written through the backend is in the file, at the same offset. */
static void test_file_data_in_file(void **state)
{
	struct bkt_ctx *c = *state;
	uint8_t buf[4096];
	int fd;

	bkt_pattern(c->wbuf, 4096, 11);
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, 1 << 20, 4096, c->wbuf, true), 4096);
	fd = open(c->path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, sizeof(buf), 1 << 20), 4096);
	close(fd);
	assert_memory_equal(buf, c->wbuf, 4096);
}

/* A file shortened behind the backend's back: the read is short, the
 * remainder is resubmitted, hits end of file and the io fails with -EIO. */
static void test_file_short_read(void **state)
{
	struct bkt_ctx *c = *state;
	int fd;

	fd = open(c->path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096 + 100), 0);
	close(fd);
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, 0, 8192, c->rbuf, false), -EIO);
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, 0, 4096, c->rbuf, false), 4096);
	/* A write past the end extends the file again and completes fully. */
	bkt_pattern(c->wbuf, 65536, 2);
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, 0, 65536, c->wbuf, false), 65536);
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, 0, 65536, c->rbuf, false), 65536);
	assert_memory_equal(c->rbuf, c->wbuf, 65536);
}

/* tmpfs has no FALLOC_FL_ZERO_RANGE: WRITE_ZEROES falls back to writing
 * zeroes (first io after the refusal, and the ones after it). */
static void test_file_zero_fallback(void **state)
{
	struct bkt_ctx *c = bkt_ctx_new();
	struct statfs sfs;

	*state = c;
	if (statfs("/dev/shm", &sfs) < 0 || sfs.f_type != TMPFS_MAGIC ||
	    access("/dev/shm", W_OK) < 0) {
		bkt_teardown(state);
		skip();
	}
	file_tmpdir(c, "/dev/shm");
	c->opts.type = NVMFD_BK_FILE;
	c->opts.path = c->path;
	c->opts.size = BKT_SIZE;
	assert_int_equal(nvmfd_bk_open(&c->opts, &c->bk), 0);
	assert_int_equal(bkt_zero_check(c, NVMFD_BK_WRITE_ZEROES, 4096, 3 * 131072 + 512), 0);
	assert_int_equal(bkt_zero_check(c, NVMFD_BK_WRITE_ZEROES, 1 << 20, 4096), 0);
	/* tmpfs punches holes. */
	assert_int_equal(bkt_zero_check(c, NVMFD_BK_DISCARD, 2 << 20, 65536), 0);
	bkt_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_create_extend),
		BKT_GENERIC_TESTS(setup_buffered),
		BKT_GENERIC_TESTS(setup_direct),
		BKT_GENERIC_TESTS(setup_direct_4k),
		cmocka_unit_test_setup_teardown(test_file_direct_geometry, setup_direct, bkt_teardown),
		cmocka_unit_test_setup_teardown(test_file_data_in_file, setup_buffered, bkt_teardown),
		cmocka_unit_test_setup_teardown(test_file_short_read, setup_buffered, bkt_teardown),
		cmocka_unit_test(test_file_zero_fallback),
	};

	return cmocka_run_group_tests_name("backend-file", tests, NULL, NULL);
}
