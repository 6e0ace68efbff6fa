/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Minimal TAP producer for the host unit tests: one TAP line per test
 * case, each case running any number of check()s; a failed check prints a
 * diagnostic and fails its case.
 */
#ifndef PCM_TAP_H
#define PCM_TAP_H

#include <stdio.h>

static int tap_cases, tap_failed_cases;
static long tap_checks, tap_case_failures;

#define check(cond, ...)						\
	do {								\
		tap_checks++;						\
		if (!(cond)) {						\
			tap_case_failures++;				\
			printf("#   %s:%d: check failed: %s: ",		\
			       __FILE__, __LINE__, #cond);		\
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

static inline void tap_run(const char *name, void (*fn)(void))
{
	long before = tap_checks;

	tap_case_failures = 0;
	fn();
	tap_cases++;
	if (tap_case_failures)
		tap_failed_cases++;
	printf("%sok %d - %s (%ld checks)\n", tap_case_failures ? "not " : "",
	       tap_cases, name, tap_checks - before);
	fflush(stdout);
}

#define RUN(fn) tap_run(#fn, fn)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_cases);
	return tap_failed_cases ? 1 : 0;
}

#endif
