/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The few kernel interfaces dm-pcm's pure-logic files use, for building
 * them unchanged into host test programs (as tools/testing/radix-tree
 * does for the kernel's own code).
 */
#ifndef PCM_KERNEL_SHIM_H
#define PCM_KERNEL_SHIM_H

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned long long u64;	/* as in the kernel, on every arch */
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef long long s64;

typedef uint32_t __le32;
typedef uint64_t __le64;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the host tests assume a little-endian host"
#endif
#define cpu_to_le32(x)		((__le32)(x))
#define cpu_to_le64(x)		((__le64)(x))
#define le32_to_cpu(x)		((u32)(x))
#define le64_to_cpu(x)		((u64)(x))
#define __packed		__attribute__((packed))

/* lib/crc32.c's crc32_le(): reflected polynomial 0xedb88320 */
static inline u32 crc32_le(u32 crc, const void *p, size_t len)
{
	const uint8_t *b = p;
	int k;

	while (len--) {
		crc ^= *b++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320U & -(crc & 1));
	}
	return crc;
}

/* crc32_le_shift(): by its definition, @crc continued over @len zero bytes */
static inline u32 crc32_le_shift(u32 crc, size_t len)
{
	static const uint8_t zero;

	while (len--)
		crc = crc32_le(crc, &zero, 1);
	return crc;
}

#define U64_MAX			UINT64_MAX

/* Copy with truncation check: -E2BIG when @src does not fit. */
static inline long strscpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (!size)
		return -E2BIG;
	if (n >= size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = '\0';
		return -E2BIG;
	}
	memcpy(dst, src, n + 1);
	return (long)n;
}

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define BIT_ULL(n)		(1ULL << (n))
#define BUILD_BUG_ON(c)		_Static_assert(!(c), #c)
#define hweight64(x)		((unsigned int)__builtin_popcountll(x))
#define is_power_of_2(n)	((n) != 0 && (((n) & ((n) - 1)) == 0))

static inline u64 div_u64_rem(u64 dividend, u32 divisor, u32 *remainder)
{
	*remainder = dividend % divisor;
	return dividend / divisor;
}

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

static inline u64 div64_u64_rem(u64 dividend, u64 divisor, u64 *remainder)
{
	*remainder = dividend % divisor;
	return dividend / divisor;
}

/* (a * mul) / div with a 128-bit product; the quotient must fit 64 bits */
static inline u64 mul_u64_u64_div_u64(u64 a, u64 mul, u64 div)
{
	return (u64)(((unsigned __int128)a * mul) / div);
}

/* include/linux/minmax.h, without its type checks: each argument once */
#define min(a, b)		({ __typeof__(a) __a = (a); __typeof__(b) __b = (b); __a < __b ? __a : __b; })
#define max(a, b)		({ __typeof__(a) __a = (a); __typeof__(b) __b = (b); __a > __b ? __a : __b; })
#define min_t(t, a, b)		min((t)(a), (t)(b))
#define max_t(t, a, b)		max((t)(a), (t)(b))
#define ALIGN(x, a)		(((x) + (a) - 1) / (a) * (a))
#define SMP_CACHE_BYTES		64
#define swap(a, b)		do { __typeof__(a) __t = (a); (a) = (b); (b) = __t; } while (0)

#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define U32_MAX			UINT32_MAX

/* bitops: 1-based index of the highest set bit, 0 for none */
static inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

static inline u8 bitrev8(u8 b)
{
	b = (b & 0xf0) >> 4 | (b & 0x0f) << 4;
	b = (b & 0xcc) >> 2 | (b & 0x33) << 2;
	return (b & 0xaa) >> 1 | (b & 0x55) << 1;
}

#define cpu_to_be32(x)		__builtin_bswap32(x)
#define swab64(x)		__builtin_bswap64(x)

/* math64.h, as on 64-bit kernels (CONFIG_ARCH_SUPPORTS_INT128) */
static inline u64 mul_u64_u64_shr(u64 a, u64 mul, unsigned int shift)
{
	return (u64)(((unsigned __int128)a * mul) >> shift);
}

static inline u64 mul_u64_u32_shr(u64 a, u32 mul, unsigned int shift)
{
	return (u64)(((unsigned __int128)a * mul) >> shift);
}

/*
 * Allocation, module and warning macros for lib/bch.c and its users.  A
 * WARN_ON that fires is a bug: the host build stops there.
 */
#define GFP_KERNEL		0
#define kmalloc(size, gfp)	((void)(gfp), malloc(size))
#define kzalloc(size, gfp)	((void)(gfp), calloc(1, size))
#define kcalloc(n, size, gfp)	((void)(gfp), calloc(n, size))
#define kfree(p)		free(p)
#define kvmalloc(size, gfp)	((void)(gfp), malloc(size))
#define kvfree(p)		free(p)
#define printk(...)		fprintf(stderr, __VA_ARGS__)
#define KERN_ERR		""
#define EXPORT_SYMBOL_GPL(sym)
#define MODULE_LICENSE(s)
#define MODULE_AUTHOR(s)
#define MODULE_DESCRIPTION(s)
#define WARN_ON(c)		({ int __w = !!(c); if (__w) { \
				   fprintf(stderr, "WARN_ON(%s) at %s:%d\n", #c, __FILE__, __LINE__); \
				   abort(); } __w; })
#ifndef __always_inline		/* glibc's sys/cdefs.h has it */
#define __always_inline		inline __attribute__((always_inline))
#endif
#define __aligned(x)		__attribute__((aligned(x)))
#define noinline		__attribute__((noinline))
#define unlikely(c)		__builtin_expect(!!(c), 0)
#define likely(c)		__builtin_expect(!!(c), 1)

#define __printf(a, b)		__attribute__((format(printf, a, b)))

static inline int vscnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	int n;

	if (!size)
		return 0;
	n = vsnprintf(buf, size, fmt, ap);
	if (n < 0)
		return 0;
	return (size_t)n >= size ? (int)size - 1 : n;
}

static inline __printf(3, 4) int scnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vscnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

/* The kernel's memchr_inv(): the first byte that is not @c, NULL if none. */
static inline void *memchr_inv(const void *start, int c, size_t bytes)
{
	const unsigned char *p = start;
	size_t i;

	for (i = 0; i < bytes; i++)
		if (p[i] != (unsigned char)c)
			return (void *)(p + i);
	return NULL;
}

/* The kernel's kstrtoull: whole string, optional trailing newline. */
static inline int kstrtoull(const char *s, unsigned int base, unsigned long long *res)
{
	char *end;

	if (*s == '-' || *s == ' ' || *s == '\0')
		return -EINVAL;
	errno = 0;
	*res = strtoull(s, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end == '\n')
		end++;
	return *end ? -EINVAL : 0;
}

/*
 * Locks and atomics.  The host programs are single-threaded, except
 * test-timing-threads (PCM_SHIM_THREADS, built with ThreadSanitizer).
 * Single-threaded, a lock only checks that it is never taken twice (a
 * missing unlock or a nested channel lock fails the run instead of
 * passing unseen); threaded, it is an error-checking pthread mutex.
 */
#ifdef PCM_SHIM_THREADS
#include <pthread.h>

typedef struct { pthread_mutex_t m; } spinlock_t;

static inline void spin_lock_init(spinlock_t *l)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&l->m, &a);
	pthread_mutexattr_destroy(&a);
}

static inline void pcm_shim_check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "shim: %s: %s\n", what, strerror(err));
		abort();
	}
}

#define spin_lock(l)		pcm_shim_check(pthread_mutex_lock(&(l)->m), "spin_lock")
#define spin_unlock(l)		pcm_shim_check(pthread_mutex_unlock(&(l)->m), "spin_unlock")

/*
 * A reader holds the seqcount's lock instead of retrying: the kernel's
 * lock-free read of a struct that a writer may be changing is a data race
 * by ThreadSanitizer's rules, and what this build tests is the rest.
 */
typedef struct { spinlock_t *lock; } seqcount_spinlock_t;
#define seqcount_spinlock_init(s, l)	((s)->lock = (l))
#define read_seqcount_begin(s)		(spin_lock((s)->lock), 0U)
#define read_seqcount_retry(s, start)	((void)(start), spin_unlock((s)->lock), 0)
#define write_seqcount_begin(s)		((void)(s))
#define write_seqcount_end(s)		((void)(s))
#else
typedef struct { int held; } spinlock_t;
#define spin_lock_init(l)	((l)->held = 0)
#define spin_lock(l)		pcm_shim_lock(&(l)->held, 1)
#define spin_unlock(l)		pcm_shim_lock(&(l)->held, 0)

static inline void pcm_shim_lock(int *held, int take)
{
	if (*held == take) {
		fprintf(stderr, "shim: %s a lock that is %s\n", take ? "taking" : "releasing",
			take ? "held" : "free");
		abort();
	}
	*held = take;
}

typedef struct { unsigned int seq; } seqcount_spinlock_t;
#define seqcount_spinlock_init(s, l)	((void)(l), (s)->seq = 0)
#define read_seqcount_begin(s)		((s)->seq)
#define read_seqcount_retry(s, start)	((s)->seq != (start))
#define write_seqcount_begin(s)		((s)->seq++)
#define write_seqcount_end(s)		((s)->seq++)
#endif

typedef struct { s64 counter; } atomic64_t;
#define atomic64_read(v)	__atomic_load_n(&(v)->counter, __ATOMIC_RELAXED)
#define atomic64_set(v, i)	__atomic_store_n(&(v)->counter, (i), __ATOMIC_RELAXED)
static inline bool atomic64_try_cmpxchg(atomic64_t *v, s64 *old, s64 new)
{
	return __atomic_compare_exchange_n(&v->counter, old, new, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/*
 * x86 SIMD in the kernel (asm/cpufeature.h, asm/fpu/api.h, asm/simd.h):
 * the CPU's own features, and knobs a test sets to force the fallbacks
 * (a CPU without PCLMULQDQ, a context where the FPU may not be used).
 * kernel_fpu_begin() does not nest: the shim fails the run if it does,
 * or if a section is left open (pcm_shim_fpu_depth).  PCM_SHIM_NO_X86
 * builds the code as for another architecture (no CONFIG_X86_64).
 */
#if defined(__x86_64__) && !defined(PCM_SHIM_NO_X86)
#define CONFIG_X86_64		1
#define X86_FEATURE_PCLMULQDQ	"pclmul"
#define X86_FEATURE_SSSE3	"ssse3"
#define X86_FEATURE_AVX		"avx"
#define XFEATURE_MASK_SSE	2
#define XFEATURE_MASK_YMM	4
__attribute__((weak)) bool pcm_shim_no_cpu_simd, pcm_shim_no_simd, pcm_shim_no_avx;
__attribute__((weak)) int pcm_shim_fpu_depth, pcm_shim_fpu_sections;
#define boot_cpu_has(f)		(!pcm_shim_no_cpu_simd && __builtin_cpu_supports(f))

/* (__builtin_cpu_supports("avx") asks the OS too: XGETBV) */
#define cpu_has_xfeatures(mask, name)	(!pcm_shim_no_avx)

static inline bool may_use_simd(void)
{
	return !pcm_shim_no_simd;
}

static inline void kernel_fpu_begin(void)
{
	if (pcm_shim_fpu_depth++)
		abort();
	pcm_shim_fpu_sections++;
}

static inline void kernel_fpu_end(void)
{
	if (--pcm_shim_fpu_depth)
		abort();
}
#endif

#endif
