// SPDX-License-Identifier: MIT
/*
 * Workloads whose wakers are known by construction (tests/record/offwake.sh):
 *
 *   wake pingpong [ROUNDS]  thread "ww-producer" writes a byte to a pipe in produce();
 *                           thread "ww-consumer" reads it in consume() and writes an
 *                           acknowledgement back in ack(), which the producer reads in
 *                           await_ack(). Every block of the consumer in consume()'s read
 *                           ends with the producer's write in produce().
 *   wake mutex [ROUNDS]     thread "ww-waiter" takes a mutex ROUNDS times that one of
 *                           "ww-a", "ww-b", "ww-c" holds, in the schedule a a a b c c:
 *                           the holder locked it before the waiter tries, holds it for
 *                           2 ms (nanosleep) and unlocks it, which wakes the waiter. The
 *                           waiter's blocked time is shared 3:1:2 between the three;
 *                           it measures its waits (CLOCK_MONOTONIC around each hand-off)
 *                           and prints "waited ww-a NS ww-b NS ww-c NS" before "done",
 *                           the shares of this run (a loaded machine stretches some).
 *   wake timer [ROUNDS]     thread "ww-sleeper" sleeps 2 ms in nap() ROUNDS times: a
 *                           timer interrupt wakes it every time.
 *   wake pipeline [ROUNDS]  a chain of three (tests/record/chain.sh): "ww-origin" naps
 *                           1 ms in origin_nap() (a timer wakes it) and writes a byte to
 *                           pipe A in origin_write(); "ww-relay" blocks reading A in
 *                           relay_read(), then writes the byte to pipe B in
 *                           relay_write(); "ww-sink" blocks reading B in sink_read().
 *                           The sink's waits end with the relay's write, which the
 *                           origin's write woke, which a timer woke.
 *
 * Each prints "ready PID" first and "done" at the end. Default ROUNDS: 2000 (pingpong),
 * 300 (mutex), 300 (timer), 1000 (pipeline). Build: cc -O1 -fno-omit-frame-pointer -pthread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long rounds;
static int to_consumer[2], to_producer[2];

static void name(const char *n)
{
	prctl(PR_SET_NAME, n, 0, 0, 0);
}

static void die(const char *what)
{
	fprintf(stderr, "wake: %s: %s\n", what, strerror(errno));
	exit(1);
}

/*
 * The syscalls inline, so that the blocked (or waking) instruction lies in the function
 * named in the test: a frame-pointer walk from inside libc's wrapper, which keeps no
 * frame, would skip its caller.
 */
static inline __attribute__((always_inline)) long sys3(long nr, long a, long b, long c)
{
	long ret;

#if defined(__x86_64__)
	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(nr), "D"(a), "S"(b), "d"(c)
		     : "rcx", "r11", "memory");
#else
	ret = syscall(nr, a, b, c);
	if (ret < 0)
		ret = -errno;
#endif
	return ret;
}

static inline __attribute__((always_inline)) void nap_ns(long ns)
{
	struct timespec ts = { 0, ns };

	while (sys3(SYS_nanosleep, (long)&ts, (long)&ts, 0) == -EINTR)
		;
}

__attribute__((noinline)) static void produce(char c)
{
	if (sys3(SYS_write, to_consumer[1], (long)&c, 1) != 1)
		die("write");
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void await_ack(void)
{
	char c;

	if (sys3(SYS_read, to_producer[0], (long)&c, 1) != 1)
		die("read");
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static char consume(void)
{
	char c;

	if (sys3(SYS_read, to_consumer[0], (long)&c, 1) != 1)
		die("read");
	__asm__ volatile("" ::: "memory");
	return c;
}

__attribute__((noinline)) static void ack(char c)
{
	if (sys3(SYS_write, to_producer[1], (long)&c, 1) != 1)
		die("write");
	__asm__ volatile("" ::: "memory");
}

static void *producer(void *arg)
{
	long i;

	(void)arg;
	name("ww-producer");
	for (i = 0; i < rounds; i++) {
		produce('x');
		await_ack();
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long i;

	(void)arg;
	name("ww-consumer");
	for (i = 0; i < rounds; i++)
		ack(consume());
	return NULL;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t turn[3], locked;

__attribute__((noinline)) static void hold_and_release(void)
{
	nap_ns(2000000);
	pthread_mutex_unlock(&lock);
	__asm__ volatile("" ::: "memory");
}

static void *holder(void *arg)
{
	long id = (long)arg;
	static const char *const names[] = { "ww-a", "ww-b", "ww-c" };

	name(names[id]);
	for (;;) {
		while (sem_wait(&turn[id]) && errno == EINTR)
			;
		if (!rounds)
			return NULL;
		pthread_mutex_lock(&lock);
		sem_post(&locked);
		hold_and_release();
	}
}

__attribute__((noinline)) static void take(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	__asm__ volatile("" ::: "memory");
}

static int pipe_a[2], pipe_b[2];

__attribute__((noinline)) static void origin_nap(void)
{
	nap_ns(1000000);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void origin_write(char c)
{
	if (sys3(SYS_write, pipe_a[1], (long)&c, 1) != 1)
		die("write");
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static char relay_read(void)
{
	char c;

	if (sys3(SYS_read, pipe_a[0], (long)&c, 1) != 1)
		die("read");
	__asm__ volatile("" ::: "memory");
	return c;
}

__attribute__((noinline)) static void relay_write(char c)
{
	if (sys3(SYS_write, pipe_b[1], (long)&c, 1) != 1)
		die("write");
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static char sink_read(void)
{
	char c;

	if (sys3(SYS_read, pipe_b[0], (long)&c, 1) != 1)
		die("read");
	__asm__ volatile("" ::: "memory");
	return c;
}

static void *origin(void *arg)
{
	long i;

	(void)arg;
	name("ww-origin");
	for (i = 0; i < rounds; i++) {
		origin_nap();
		origin_write('x');
	}
	return NULL;
}

static void *relay(void *arg)
{
	long i;

	(void)arg;
	name("ww-relay");
	for (i = 0; i < rounds; i++)
		relay_write(relay_read());
	return NULL;
}

static void *sink(void *arg)
{
	long i;

	(void)arg;
	name("ww-sink");
	for (i = 0; i < rounds; i++)
		sink_read();
	return NULL;
}

static long long waited[3];

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *waiter(void *arg)
{
	static const int schedule[] = { 0, 0, 0, 1, 2, 2 };
	long long t0;
	long i;

	(void)arg;
	name("ww-waiter");
	for (i = 0; i < rounds; i++) {
		t0 = now_ns();
		sem_post(&turn[schedule[i % 6]]);
		while (sem_wait(&locked) && errno == EINTR)
			;
		take();
		waited[schedule[i % 6]] += now_ns() - t0;
	}
	return NULL;
}

__attribute__((noinline)) static void nap(void)
{
	nap_ns(2000000);
	__asm__ volatile("" ::: "memory");
}

static void *sleeper(void *arg)
{
	long i;

	(void)arg;
	name("ww-sleeper");
	for (i = 0; i < rounds; i++)
		nap();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	const char *what = argc > 1 ? argv[1] : "";
	char *end;
	long i;

	rounds = !strcmp(what, "pingpong") ? 2000 : !strcmp(what, "pipeline") ? 1000 : 300;
	if (argc > 2) {
		errno = 0;
		rounds = strtol(argv[2], &end, 10);
		if (errno || *end || rounds <= 0 || rounds > 10000000) {
			fprintf(stderr, "wake: invalid ROUNDS '%s'\n", argv[2]);
			return 2;
		}
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (!strcmp(what, "pingpong")) {
		if (pipe(to_consumer) || pipe(to_producer))
			die("pipe");
		if (pthread_create(&t[0], NULL, consumer, NULL) ||
		    pthread_create(&t[1], NULL, producer, NULL))
			die("pthread_create");
		pthread_join(t[1], NULL);
		pthread_join(t[0], NULL);
	} else if (!strcmp(what, "mutex")) {
		sem_init(&locked, 0, 0);
		for (i = 0; i < 3; i++) {
			sem_init(&turn[i], 0, 0);
			if (pthread_create(&t[i], NULL, holder, (void *)i))
				die("pthread_create");
		}
		if (pthread_create(&t[3], NULL, waiter, NULL))
			die("pthread_create");
		pthread_join(t[3], NULL);
		rounds = 0;
		for (i = 0; i < 3; i++) {
			sem_post(&turn[i]);
			pthread_join(t[i], NULL);
		}
		printf("waited ww-a %lld ww-b %lld ww-c %lld\n", waited[0], waited[1], waited[2]);
	} else if (!strcmp(what, "pipeline")) {
		if (pipe(pipe_a) || pipe(pipe_b))
			die("pipe");
		if (pthread_create(&t[0], NULL, sink, NULL) ||
		    pthread_create(&t[1], NULL, relay, NULL) ||
		    pthread_create(&t[2], NULL, origin, NULL))
			die("pthread_create");
		for (i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(what, "timer")) {
		if (pthread_create(&t[0], NULL, sleeper, NULL))
			die("pthread_create");
		pthread_join(t[0], NULL);
	} else {
		fprintf(stderr, "usage: wake pingpong|mutex|timer|pipeline [ROUNDS]\n");
		return 2;
	}
	printf("done\n");
	return 0;
}
