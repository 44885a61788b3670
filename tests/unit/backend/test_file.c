// SPDX-License-Identifier: MIT
/*
 * test_file.c - regular-file backend, buffered and O_DIRECT (skipped where
 * the filesystem refuses O_DIRECT), plus creation/extension, the zero-fill
 * fallback on tmpfs and the short-read continuation.
 */
#include <fcntl.h>
#include <pthread.h>
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

/* nvmfd_bk_dirty(): clean after open; a write (not FUA), WRITE_ZEROES or
 * DISCARD makes it dirty until a FLUSH submitted after it completes; a
 * read, or a FUA write, leaves it as it was (the close skips the fsync of
 * a clean backend). */
static void test_file_dirty(void **state)
{
	struct bkt_ctx *c = *state;

	if (c->skip)
		skip();
	assert_false(nvmfd_bk_dirty(c->bk));
	bkt_pattern(c->wbuf, 4096, 5);
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, 0, 4096, c->rbuf, false), 4096);
	assert_false(nvmfd_bk_dirty(c->bk));
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, 0, 4096, c->wbuf, false), 4096);
	assert_true(nvmfd_bk_dirty(c->bk));
	assert_int_equal(bkt_do(c, NVMFD_BK_FLUSH, 0, 0, NULL, false), 0);
	assert_false(nvmfd_bk_dirty(c->bk));
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, 4096, 4096, c->wbuf, true), 4096);
	assert_false(nvmfd_bk_dirty(c->bk)); /* FUA: durable on completion */
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE_ZEROES, 0, 4096, NULL, false), 0);
	assert_true(nvmfd_bk_dirty(c->bk));
	assert_int_equal(bkt_do(c, NVMFD_BK_FLUSH, 0, 0, NULL, false), 0);
	assert_false(nvmfd_bk_dirty(c->bk));
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, 8192, 4096, c->wbuf, false), 4096);
	assert_true(nvmfd_bk_dirty(c->bk)); /* the teardown's close fsyncs it */
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

/*
 * Two threads, each with its own ring, share one backend (as queues on
 * different CPUs share a namespace). On tmpfs both race to latch the
 * zero-fill fallback. No cmocka asserts inside the threads: they count
 * mismatches and the main thread checks the counts.
 */
struct file_thr {
	struct nvmfd_bk *bk;
	uint64_t base;
	int errors;
};

struct thr_st {
	int n;
	int res;
};

static void thr_cb(struct nvmfd_bk_io *io, int res)
{
	struct thr_st *st = io->priv;

	st->n++;
	st->res = res;
}

static int thr_do(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, enum nvmfd_bk_op op,
		  uint64_t off, uint32_t len, void *buf)
{
	struct pollfd pfd = { .fd = nvmfd_bk_ring_event_fd(ring), .events = POLLIN };
	struct nvmfd_bk_io io;
	struct thr_st st = { 0, 0 };

	memset(&io, 0, sizeof(io));
	io.op = op;
	io.offset = off;
	io.len = len;
	io.buf = buf;
	io.priv = &st;
	io.cb = thr_cb;
	if (nvmfd_bk_submit(ring, bk, &io) < 0 || nvmfd_bk_ring_flush(ring) < 0)
		return INT_MIN;
	while (!st.n) {
		if (nvmfd_bk_ring_reap(ring, UINT_MAX) == 0 && poll(&pfd, 1, BKT_HANG_MS) != 1)
			return INT_MIN;
	}
	return st.res;
}

static void *thr_main(void *arg)
{
	struct file_thr *t = arg;
	struct nvmfd_bk_ring *ring = NULL;
	uint8_t *w = nvmfd_bk_buf_alloc(65536), *r = nvmfd_bk_buf_alloc(65536);

	if (!w || !r || nvmfd_bk_ring_create(8, false, &ring) < 0) {
		t->errors++;
		goto out;
	}
	for (uint32_t i = 0; i < 16; i++) {
		uint64_t off = t->base + (uint64_t)(i % 4) * 65536;

		bkt_pattern(w, 65536, i + (uint32_t)t->base);
		t->errors += thr_do(ring, t->bk, NVMFD_BK_WRITE, off, 65536, w) != 65536;
		t->errors += thr_do(ring, t->bk, NVMFD_BK_READ, off, 65536, r) != 65536;
		t->errors += memcmp(r, w, 65536) != 0;
		t->errors += thr_do(ring, t->bk, NVMFD_BK_WRITE_ZEROES, off + 4096, 8192, NULL) != 0;
		t->errors += thr_do(ring, t->bk, NVMFD_BK_READ, off, 65536, r) != 65536;
		t->errors += !bkt_is_zero(r + 4096, 8192);
		t->errors += memcmp(r, w, 4096) != 0;
	}
	t->errors += thr_do(ring, t->bk, NVMFD_BK_FLUSH, 0, 0, NULL) != 0;
out:
	nvmfd_bk_ring_destroy(&ring);
	free(w);
	free(r);
	return NULL;
}

static void test_file_threads(void **state)
{
	struct bkt_ctx *c = bkt_ctx_new();
	struct file_thr t[2];
	pthread_t th[2];
	struct statfs sfs;

	*state = c;
	if (statfs("/dev/shm", &sfs) == 0 && sfs.f_type == TMPFS_MAGIC && !access("/dev/shm", W_OK))
		file_tmpdir(c, "/dev/shm");
	else
		file_tmpdir(c, "/tmp");
	c->opts.type = NVMFD_BK_FILE;
	c->opts.path = c->path;
	c->opts.size = BKT_SIZE;
	assert_int_equal(nvmfd_bk_open(&c->opts, &c->bk), 0);
	for (int i = 0; i < 2; i++) {
		t[i].bk = c->bk;
		t[i].base = (uint64_t)i * (2 << 20);
		t[i].errors = 0;
		assert_int_equal(pthread_create(&th[i], NULL, thr_main, &t[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(t[i].errors, 0);
	}
	bkt_teardown(state);
}

/* One exporter per file (flock LOCK_EX); read-only exporters share it
 * (LOCK_SH) and keep a writer out; a read-only backend refuses writes. */
static void test_file_exclusive(void **state)
{
	struct bkt_ctx *c = *state;
	struct nvmfd_bk_opts o = c->opts;
	struct nvmfd_bk *bk = NULL, *ro2 = NULL, *keep;
	uint8_t *buf = nvmfd_bk_buf_alloc(4096);

	assert_non_null(buf);
	o.size = 0;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EBUSY);
	assert_null(bk);
	o.read_only = true;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EBUSY);
	keep = c->bk;
	assert_int_equal(nvmfd_bk_close(&keep), 0);
	c->bk = NULL;
	assert_int_equal(nvmfd_bk_open(&o, &c->bk), 0);
	assert_true(nvmfd_bk_is_read_only(c->bk));
	assert_int_equal(nvmfd_bk_open(&o, &ro2), 0);
	o.read_only = false;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EBUSY);
	/* size= would create/extend: refused read-only */
	o.read_only = true;
	o.size = BKT_SIZE;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	/* reads work, writes fail with -EROFS */
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, 0, 4096, buf, false), 4096);
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, 0, 4096, buf, false), -EROFS);
	assert_int_equal(nvmfd_bk_close(&ro2), 0);
	free(buf);
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
		cmocka_unit_test_setup_teardown(test_file_dirty, setup_buffered, bkt_teardown),
		cmocka_unit_test_setup_teardown(test_file_dirty, setup_direct, bkt_teardown),
		cmocka_unit_test_setup_teardown(test_file_short_read, setup_buffered, bkt_teardown),
		cmocka_unit_test(test_file_zero_fallback),
		cmocka_unit_test_setup_teardown(test_file_exclusive, setup_buffered, bkt_teardown),
		cmocka_unit_test(test_file_threads),
	};

	return cmocka_run_group_tests_name("backend-file", tests, NULL, NULL);
}
