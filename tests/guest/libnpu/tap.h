/* SPDX-License-Identifier: MIT */
/*
 * Minimal TAP producer for the libnpu guest tests.  The plan is printed at
 * the end ("1..N" trailing is valid TAP), so tests can add cases as they
 * discover what the device supports.
 */
#ifndef NPU_TAP_H
#define NPU_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "npu/npu.h"

static int tap_count;
static int tap_failures;

__attribute__((format(printf, 2, 3)))
static inline int tap_ok(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		tap_failures++;
	return ok;
}

/* Expect @got == @want for an npu_* return value; the reason on failure. */
#define TAP_RET(got, want, ...) do {					\
	int g_ = (got), w_ = (want);					\
	if (!tap_ok(g_ == w_, __VA_ARGS__))				\
		printf("#   got %d (%s), want %d (%s)\n", g_,		\
		       npu_strerror(g_), w_, npu_strerror(w_));		\
} while (0)

__attribute__((format(printf, 2, 3)))
static inline void tap_skip(const char *reason, const char *fmt, ...)
{
	va_list ap;

	printf("ok %d - ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", reason);
	fflush(stdout);
}

/* Abort the whole test: later cases would only cascade. */
#define TAP_BAIL(...) do {						\
	printf("Bail out! ");						\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	exit(1);							\
} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failures ? 1 : 0;
}

#endif /* NPU_TAP_H */
