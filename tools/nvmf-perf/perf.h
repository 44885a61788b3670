/* SPDX-License-Identifier: MIT */
/*
 * perf.h - nvmf-perf internals shared by main.c, opts.c and verify.c (and
 * their unit tests in tests/unit/host/).
 */
#ifndef NVMF_PERF_H
#define NVMF_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvmfd/host.h>

/* Exit codes (documented in --help). */
#define PERF_EXIT_OK 0
#define PERF_EXIT_IO 1 /* verify mismatch or I/O error status */
#define PERF_EXIT_USAGE 2
#define PERF_EXIT_CONN 3 /* connection or protocol error */

enum perf_pattern {
	PERF_READ,
	PERF_WRITE,
	PERF_RANDREAD,
	PERF_RANDWRITE,
	PERF_RW,
	PERF_RANDRW,
};

/**
 * struct perf_opts - parsed command line.
 * @discover: "discover" sub-command.
 * @help:     -h/--help was given (usage printed by the caller).
 * @trid:     -r transport ID.
 * @depth:    -q outstanding I/Os per queue.
 * @io_size:  -o bytes per I/O.
 * @pattern:  -w workload.
 * @read_pct: -M percentage of reads for rw/randrw (0..100).
 * @seconds:  -t run time.
 * @queues:   -P I/O queues (connections, one thread each).
 * @nsid:     --ns, 0 = first active namespace.
 * @warmup:   --warmup seconds excluded from the statistics.
 * @hdgst, @ddgst: --digest hdr,data.
 * @verify:   --verify.
 * @json:     --json.
 * @busy_poll: --busy-poll: never sleep in poll() (SPDK style).
 * @timeout_ms: --timeout for every wait.
 * @disable_sqflow: --disable-sqflow: Connect CATTR bit 2 on I/O queues.
 */
struct perf_opts {
	bool discover;
	bool help;
	struct nvmfd_host_trid trid;
	bool have_trid;
	uint32_t depth;
	uint32_t io_size;
	enum perf_pattern pattern;
	uint32_t read_pct;
	uint32_t seconds;
	uint32_t queues;
	uint32_t nsid;
	uint32_t warmup;
	bool hdgst;
	bool ddgst;
	bool verify;
	bool json;
	bool busy_poll;
	uint32_t timeout_ms;
	bool disable_sqflow;
};

/**
 * perf_parse_args() - parse argv (getopt_long; resets optind).
 * @argc, @argv: as main() got them.
 * @o:   out.
 * @err: out: message on failure.
 * @len: bytes at @err.
 * Return: 0; -EINVAL on a usage error.
 */
int perf_parse_args(int argc, char **argv, struct perf_opts *o, char *err, size_t len);

/** perf_pattern_name() - "randread" etc. */
const char *perf_pattern_name(enum perf_pattern p);

/** perf_usage() - the --help text. */
const char *perf_usage(void);

/* Verify block format: a 32-byte header, then a pattern derived from
 * (lba, gen); the CRC32C covers the whole block with the crc field zero. */
#define PERF_VERIFY_MAGIC 0x4656504eu /* "NPVF" */
#define PERF_VERIFY_HDR 32

/**
 * perf_verify_fill() - write the verify image of one logical block.
 * @blk:      @lba_size bytes.
 * @lba_size: bytes, >= 64.
 * @lba:      the block's LBA.
 * @gen:      generation (> 0).
 */
void perf_verify_fill(void *blk, uint32_t lba_size, uint64_t lba, uint64_t gen);

/**
 * perf_verify_check() - check one block read back.
 * @blk:        @lba_size bytes.
 * @lba_size:   bytes.
 * @lba:        expected LBA.
 * @gen:        expected generation.
 * @msg:        out: what is wrong.
 * @len:        bytes at @msg.
 * Return: 0 if the block is exactly what perf_verify_fill(lba, gen) wrote;
 *         -EILSEQ otherwise.
 */
int perf_verify_check(const void *blk, uint32_t lba_size, uint64_t lba, uint64_t gen, char *msg,
		      size_t len);

#endif /* NVMF_PERF_H */
