// SPDX-License-Identifier: MIT
/* test_poll.c - idle-poll state machine and rx/tx budgets, injected clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "internal/rt.h"

#define US 1000ull

static void test_idle_poll_period_zero(void **state)
{
	struct nvmfd_idle_poll ip;

	nvmfd_idle_poll_init(&ip, 0);
	assert_false(nvmfd_idle_poll_update(&ip, false, 0));
	assert_true(nvmfd_idle_poll_update(&ip, true, 10));
	assert_false(nvmfd_idle_poll_update(&ip, false, 10));
	assert_false(nvmfd_idle_poll_update(&ip, false, 1000000));
	assert_int_equal(ip.polls, 1);
	assert_int_equal(ip.sleeps, 3);
}

static void test_idle_poll_keeps_polling_with_progress(void **state)
{
	struct nvmfd_idle_poll ip;

	nvmfd_idle_poll_init(&ip, 50);
	/* progress every 40us, shorter than the 50us period */
	for (uint64_t t = 0; t < 100000 * US; t += 40 * US) {
		assert_true(nvmfd_idle_poll_update(&ip, true, t));
		assert_true(nvmfd_idle_poll_update(&ip, false, t + 39 * US));
	}
	assert_int_equal(ip.sleeps, 0);
}

static void test_idle_poll_sleeps_exactly_after_period(void **state)
{
	struct nvmfd_idle_poll ip;
	uint64_t t0 = 1000 * US;

	nvmfd_idle_poll_init(&ip, 50);
	assert_true(nvmfd_idle_poll_update(&ip, true, t0));
	assert_true(nvmfd_idle_poll_update(&ip, false, t0 + 1));
	assert_true(nvmfd_idle_poll_update(&ip, false, t0 + 49 * US));
	assert_true(nvmfd_idle_poll_update(&ip, false, t0 + 50 * US - 1));
	assert_false(nvmfd_idle_poll_update(&ip, false, t0 + 50 * US));
	assert_int_equal(ip.sleeps, 1);

	/* after sleeping, the next wake-up starts a fresh period at its first
	 * idle pass, not at the old progress */
	assert_true(nvmfd_idle_poll_update(&ip, false, t0 + 500 * US));
	assert_true(nvmfd_idle_poll_update(&ip, false, t0 + 549 * US));
	assert_false(nvmfd_idle_poll_update(&ip, false, t0 + 550 * US));

	/* progress resets the timer */
	assert_true(nvmfd_idle_poll_update(&ip, false, t0 + 600 * US));
	assert_true(nvmfd_idle_poll_update(&ip, true, t0 + 640 * US));
	assert_true(nvmfd_idle_poll_update(&ip, false, t0 + 680 * US));
	assert_false(nvmfd_idle_poll_update(&ip, false, t0 + 690 * US));
	assert_int_equal(ip.sleeps, 3);
}

static void test_idle_poll_clock_backwards(void **state)
{
	struct nvmfd_idle_poll ip;

	nvmfd_idle_poll_init(&ip, 10);
	assert_true(nvmfd_idle_poll_update(&ip, true, 100 * US));
	assert_true(nvmfd_idle_poll_update(&ip, false, 50 * US));
	assert_false(nvmfd_idle_poll_update(&ip, false, 110 * US));
}

static void test_budget_bytes_and_pdus(void **state)
{
	struct nvmfd_budget rx;

	nvmfd_budget_init(&rx, 8192, 4);
	nvmfd_budget_start_pass(&rx, 1000, 100);
	assert_int_equal(rx.deadline_ns, 1000 + 100 * US);
	assert_true(nvmfd_budget_left(&rx));
	assert_true(nvmfd_budget_charge(&rx, 4096, 1));
	assert_false(nvmfd_budget_charge(&rx, 4096, 1)); /* bytes used up */
	assert_false(nvmfd_budget_left(&rx));
	assert_false(nvmfd_budget_charge(&rx, 1, 0));
	assert_int_equal(rx.exhausted, 1);

	nvmfd_budget_start_slice(&rx);
	assert_true(nvmfd_budget_left(&rx));
	for (int i = 0; i < 3; i++)
		assert_true(nvmfd_budget_charge(&rx, 8, 1));
	assert_false(nvmfd_budget_charge(&rx, 8, 1)); /* 4th PDU */
	assert_int_equal(rx.exhausted, 2);

	assert_false(nvmfd_budget_expired(&rx, 1000 + 100 * US - 1));
	assert_true(nvmfd_budget_expired(&rx, 1000 + 100 * US));
}

static void test_budget_unlimited(void **state)
{
	struct nvmfd_budget tx;

	nvmfd_budget_init(&tx, 0, 0);
	nvmfd_budget_start_pass(&tx, 5, 0);
	assert_int_equal(tx.deadline_ns, 0);
	for (int i = 0; i < 1000; i++)
		assert_true(nvmfd_budget_charge(&tx, 1 << 20, 1));
	assert_false(nvmfd_budget_expired(&tx, UINT64_MAX));
	assert_int_equal(tx.exhausted, 0);
}

/* rx/tx alternation as a transport would drive it, with an injected clock */
static void test_budget_alternation(void **state)
{
	struct nvmfd_budget rx, tx;
	uint64_t now = 0, rx_pending = 1000000, tx_pending = 30000;
	int slices = 0;

	nvmfd_budget_init(&rx, 16384, 0);
	nvmfd_budget_init(&tx, 16384, 0);
	nvmfd_budget_start_pass(&rx, now, 50);
	nvmfd_budget_start_pass(&tx, now, 50);
	while ((rx_pending || tx_pending) && !nvmfd_budget_expired(&rx, now)) {
		nvmfd_budget_start_slice(&rx);
		while (rx_pending && nvmfd_budget_left(&rx)) {
			nvmfd_budget_charge(&rx, 4096, 1);
			rx_pending -= rx_pending > 4096 ? 4096 : rx_pending;
			now += 1 * US;
		}
		nvmfd_budget_start_slice(&tx);
		while (tx_pending && nvmfd_budget_left(&tx)) {
			nvmfd_budget_charge(&tx, 4096, 1);
			tx_pending -= tx_pending > 4096 ? 4096 : tx_pending;
			now += 1 * US;
		}
		slices++;
	}
	/* 4 rx PDUs + up to 4 tx PDUs per round, 1us each: tx (8 PDUs) is
	 * done after 2 rounds (16us), then rx alone takes 4us per round; the
	 * 50us deadline is seen at the top of round 12 (16 + 9 * 4 = 52us). */
	assert_int_equal(slices, 11);
	assert_int_equal(tx_pending, 0);
	assert_int_equal(rx_pending, 1000000 - 11 * 4 * 4096);
	assert_int_equal(now, 52 * US);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_poll_period_zero),
		cmocka_unit_test(test_idle_poll_keeps_polling_with_progress),
		cmocka_unit_test(test_idle_poll_sleeps_exactly_after_period),
		cmocka_unit_test(test_idle_poll_clock_backwards),
		cmocka_unit_test(test_budget_bytes_and_pdus),
		cmocka_unit_test(test_budget_unlimited),
		cmocka_unit_test(test_budget_alternation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
