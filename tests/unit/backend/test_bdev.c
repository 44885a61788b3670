// SPDX-License-Identifier: MIT
/*
 * test_bdev.c - block device backend.
 *
 * The open error paths run everywhere. The I/O tests need a block device:
 * they attach a loop device over a temporary file (the same LOOP_CONFIGURE
 * that losetup uses, with LO_FLAGS_AUTOCLEAR so the device detaches itself
 * when the last fd closes, even if the test dies) and are skipped when the
 * sandbox has no loop support or no permission.
 */
#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "bk_test.h"

#include "backend/bk_int.h"

struct bdev_loop {
	int fd; /* keeps the loop device alive; -1 when none */
	char dev[64];
};

/* Attach a loop device with @blksize-byte blocks over c->path (created at
 * BKT_SIZE). Return: 0 or -errno (caller skips). */
static int loop_attach(struct bkt_ctx *c, struct bdev_loop *lp, unsigned int blksize)
{
	struct loop_config cfg;
	int ctl, n, bfd, rc;

	lp->fd = -1;
	snprintf(c->dir, sizeof(c->dir), "/tmp/nvmfd-bk-XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	snprintf(c->path, sizeof(c->path), "%s/loop.img", c->dir);
	bfd = open(c->path, O_RDWR | O_CREAT, 0600);
	assert_true(bfd >= 0);
	assert_int_equal(ftruncate(bfd, BKT_SIZE), 0);

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		rc = -errno;
		goto out_close_bfd;
	}
	n = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (n < 0) {
		rc = -errno;
		goto out_close_bfd;
	}
	snprintf(lp->dev, sizeof(lp->dev), "/dev/loop%d", n);
	lp->fd = open(lp->dev, O_RDWR | O_CLOEXEC);
	if (lp->fd < 0) {
		rc = -errno;
		goto out_close_bfd;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = (uint32_t)bfd;
	cfg.block_size = blksize;
	cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	if (ioctl(lp->fd, LOOP_CONFIGURE, &cfg) < 0) {
		rc = -errno;
		goto out_close_loop;
	}
	close(bfd);
	return 0;

out_close_loop:
	close(lp->fd);
	lp->fd = -1;
out_close_bfd:
	close(bfd);
	return rc;
}

static struct bdev_loop loops[8];
static unsigned int nloops;

static int bdev_setup(void **state, unsigned int blksize, unsigned int lba_shift, bool iopoll)
{
	struct bkt_ctx *c = bkt_ctx_new();
	struct bdev_loop *lp = &loops[nloops++ % 8];
	int rc;

	*state = c;
	if (iopoll) {
		nvmfd_bk_ring_destroy(&c->ring);
		c->ring = bkt_ring(64, true);
	}
	rc = loop_attach(c, lp, blksize);
	if (rc < 0) {
		fprintf(stderr, "no loop device (%d): skip\n", rc);
		c->skip = true;
		return 0;
	}
	c->opts.type = NVMFD_BK_BDEV;
	c->opts.path = lp->dev;
	c->opts.lba_shift = lba_shift;
	assert_int_equal(nvmfd_bk_open(&c->opts, &c->bk), 0);
	/* Loop devices have no poll queues (queue/io_poll = 0), so the backend
	 * would keep off the IOPOLL ring; force it there to exercise the
	 * polled path or its -EOPNOTSUPP fallback to the main ring. */
	if (iopoll)
		c->bk->iopoll_capable = true;
	return 0;
}

static int bdev_teardown(void **state)
{
	bkt_teardown(state);
	for (unsigned int i = 0; i < 8; i++) {
		if (loops[i].fd >= 0)
			close(loops[i].fd); /* autoclear detaches */
		loops[i].fd = -1;
	}
	return 0;
}

static int setup_loop512(void **state)
{
	return bdev_setup(state, 512, 0, false);
}

static int setup_loop512_iopoll(void **state)
{
	return bdev_setup(state, 512, 0, true);
}

static int setup_loop4k(void **state)
{
	return bdev_setup(state, 4096, 0, false);
}

static void test_bdev_open_errors(void **state)
{
	struct nvmfd_bk_opts o = { .type = NVMFD_BK_BDEV };
	struct bkt_ctx *c = bkt_ctx_new();
	struct nvmfd_bk *bk = NULL;
	int fd;

	*state = c;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	o.path = "";
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	o.path = "/nonexistent/nvmfd-no-such-device";
	assert_int_equal(nvmfd_bk_open(&o, &bk), -ENOENT);

	/* A regular file is not a block device. */
	snprintf(c->dir, sizeof(c->dir), "/tmp/nvmfd-bk-XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	snprintf(c->path, sizeof(c->path), "%s/plain.img", c->dir);
	fd = open(c->path, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	close(fd);
	o.path = c->path;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -ENOTBLK);
	/* Character device: /dev/null refuses O_DIRECT or is not a bdev. */
	o.path = "/dev/null";
	assert_true(nvmfd_bk_open(&o, &bk) < 0);
	o.lba_shift = 10;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	assert_null(bk);
	bkt_teardown(state);
}

static void test_bdev_geometry(void **state)
{
	struct bkt_ctx *c = *state;
	struct nvmfd_bk_opts o;
	struct nvmfd_bk *bk = NULL;
	unsigned int shift;

	BKT_SKIP_IF(c);
	assert_int_equal(nvmfd_bk_get_type(c->bk), NVMFD_BK_BDEV);
	assert_int_equal(nvmfd_bk_size(c->bk), BKT_SIZE);
	assert_true(nvmfd_bk_needs_aligned_buf(c->bk));
	o = c->opts;
	/* exclusive: a second exporter (O_EXCL + flock) is refused, read-only
	 * too; once closed, read-only exporters share the device and keep a
	 * writer out */
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EBUSY);
	assert_null(bk);
	o.read_only = true;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EBUSY);
	shift = nvmfd_bk_lba_shift(c->bk);
	assert_int_equal(nvmfd_bk_close(&c->bk), 0);
	{
		struct nvmfd_bk *ro2 = NULL;

		assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
		assert_true(nvmfd_bk_is_read_only(bk));
		assert_int_equal(nvmfd_bk_open(&o, &ro2), 0);
		o.read_only = false;
		assert_int_equal(nvmfd_bk_open(&o, &c->bk), -EBUSY);
		assert_int_equal(nvmfd_bk_close(&ro2), 0);
		assert_int_equal(nvmfd_bk_close(&bk), 0);
	}
	if (shift == 9) {
		/* 4 KiB namespace blocks over a 512 B device are fine. */
		o.lba_shift = 12;
		assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
		assert_int_equal(nvmfd_bk_lba_shift(bk), 12);
		assert_int_equal(nvmfd_bk_size(bk), BKT_SIZE);
		assert_int_equal(nvmfd_bk_close(&bk), 0);
	} else {
		assert_int_equal(shift, 12);
		/* Smaller blocks than the device's: refused. */
		o.lba_shift = 9;
		assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
		assert_null(bk);
	}
	/* reopen for the teardown */
	assert_int_equal(nvmfd_bk_open(&c->opts, &c->bk), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bdev_open_errors),
		cmocka_unit_test_setup_teardown(test_bdev_geometry, setup_loop512, bdev_teardown),
		cmocka_unit_test_setup_teardown(test_bdev_geometry, setup_loop4k, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_rw, setup_loop512, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_flush, setup_loop512, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_write_zeroes, setup_loop512, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_discard, setup_loop512, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_errors, setup_loop512, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_ring_full, setup_loop512, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_eventfd, setup_loop512, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_stats, setup_loop512, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_chain, setup_loop512, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_rw, setup_loop4k, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_write_zeroes, setup_loop4k, bdev_teardown),
		/* READ/WRITE on the IOPOLL ring (or its fallback). */
		cmocka_unit_test_setup_teardown(bkt_test_rw, setup_loop512_iopoll, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_flush, setup_loop512_iopoll, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_write_zeroes, setup_loop512_iopoll, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_chain, setup_loop512_iopoll, bdev_teardown),
		cmocka_unit_test_setup_teardown(bkt_test_stats, setup_loop512_iopoll, bdev_teardown),
	};

	for (unsigned int i = 0; i < 8; i++)
		loops[i].fd = -1;
	return cmocka_run_group_tests_name("backend-bdev", tests, NULL, NULL);
}
