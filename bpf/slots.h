/* slots.h: direct-mapped per-CPU caches (an array slot per hash of the key, the whole key kept in the
 * slot and compared): the slot hash and the compare over keys laid out as 64-bit words, and the
 * rotation the caches that hash their inputs in place use. */
#pragma once

#include <linux/types.h>
#include "flowlabel.h"

static __always_inline __u32 rotl32(__u32 x, int n)
{
	return (x << n) | (x >> (32 - n));
}

/* A hash of the n 64-bit words at w for picking a slot: the words, each rotated by its position,
 * folded with XOR (independent operations, no chain of multiplies through every word), then mixed.
 * The caller masks it to its cache's size. */
static __always_inline __u32 words_slot(const void *w, int n)
{
	const __u64 *q = w;
	__u64 x = q[0];

#pragma unroll
	for (int i = 1; i < n; i++)
		x ^= (q[i] << (8 * i)) | (q[i] >> (64 - 8 * i));
	return fmix32((__u32)x ^ (__u32)(x >> 32));
}

/* Whether the n 64-bit words at a and b are equal. */
static __always_inline int words_same(const void *a, const void *b, int n)
{
	const __u64 *x = a, *y = b;
	__u64 d = 0;

#pragma unroll
	for (int i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}
