/* Host memory work spread over a pool of threads: copies between caller
 * memory and pinned staging, and faulting in the pages of a fresh result. One
 * thread copies host memory at about 10 GB/s on an H100 server, where PCIe
 * moves 55 GB/s each way; 16 threads copy 40-50 GB/s, and fault a fresh
 * result's pages in at 30 GB/s (measured on the H100 machine of
 * benchmarks/matmul.py). */
#define _GNU_SOURCE /* CPU_COUNT, sched_getaffinity */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "host/host.h"

/* A job is cut into about this many parts per thread, claimed by whichever
 * thread is free (threads do not all start at once), but none smaller than
 * part_min_bytes, whose claim would cost more than its work. */
static const int64_t parts_per_thread = 4;
static const int64_t part_min_bytes = 64 << 10;
/* Below this a copy stays on the calling thread: waking a helper costs more. */
static const int64_t parallel_min_bytes = 1 << 20;
/* Pages are faulted in by parts of this size and alignment, the size of a
 * transparent huge page: two threads faulting in one huge page wait for each
 * other (one zeroes it, the other waits), which made a fresh result's copy
 * 7 times slower than into touched memory. */
static const int64_t huge_page = 2 << 20;
static const int64_t page = 4096;
/* A thread with nothing to do (a helper between jobs, a caller waiting for
 * the last parts of its own) polls this long before it sleeps: a call's
 * copies come tens of microseconds apart, and waking sleeping threads took
 * longer than that. Float32 from NumPy on an H100, builds alternated on one
 * machine: n = 1024 0.61-0.71 ms sleeping at once, 0.56 ms after 200 us of
 * polling (50 us: 0.62-0.67), n = 4096 4.9 -> 4.7 ms; in a loop of such
 * products the process kept 6 of 16 CPUs busy rather than 3.5. */
static const int64_t spin_ns = 200000;
/* The pool never grows past this; the CPUs the process may run on bound it first. */
enum { max_helpers = 63 };

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels say EINVAL */
#endif

/* The pool: started on the first parallel job, its threads live as long as
 * the process. Every working thread (a caller too) holds the lock only to
 * claim a part or count one done. Jobs a caller waits for go first in the
 * queue, background ones last. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t work, finished;
    int started, helpers;
    int no_populate; /* the kernel has no MADV_POPULATE_WRITE */
    struct host_job *queue;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
          0, 0, 0, NULL};

/* Copies bytes [begin, end) of the packed piece, line by line. */
static void copy_range(const struct host_job *job, int64_t begin, int64_t end) {
    const struct host_copy *t = job->copy;
    char *packed = t->packed + (begin - t->begin);
    while (begin < end) {
        const int64_t line = begin / t->line_bytes, offset = begin % t->line_bytes;
        const int64_t bytes = min64(end - begin, t->line_bytes - offset);
        char *host = t->host + (line / t->lines_per_matrix) * t->matrix_pitch +
                     (line % t->lines_per_matrix) * t->line_pitch + offset;
        if (t->to_host) memcpy(host, packed, (size_t)bytes);
        else memcpy(packed, host, (size_t)bytes);
        begin += bytes;
        packed += bytes;
    }
}

/* Faults in the pages of addresses [begin, end) (page-aligned) for writing,
 * leaving their contents as they are: the caller's other threads may be
 * writing results into them meanwhile. */
static void prefault_range(const struct host_job *job, int64_t begin, int64_t end) {
    char *p;
    (void)job;
    if (!pool.no_populate && madvise((void *)(intptr_t)begin, (size_t)(end - begin),
                                     MADV_POPULATE_WRITE) == 0)
        return;
    if (errno == EINVAL) pool.no_populate = 1; /* a benign race: every thread learns the same */
    /* An atomic add of 0 faults the page in for writing and loses no
     * concurrent store. */
    for (p = (char *)(intptr_t)begin; p < (char *)(intptr_t)end; p += page)
        __atomic_fetch_add(p, 0, __ATOMIC_RELAXED);
}

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Polls, the lock released, until ready(argument) or spin_ns have passed;
 * returns with the lock held. What it polls is written under the lock: a
 * poll is only a hint, which the caller checks again holding it. */
static void spin_until(int (*ready)(const void *), const void *argument) {
    const int64_t end = now_ns() + spin_ns;
    pthread_mutex_unlock(&pool.lock);
    while (!ready(argument) && now_ns() < end) cpu_relax();
    pthread_mutex_lock(&pool.lock);
}

static int work_queued(const void *unused) {
    (void)unused;
    return __atomic_load_n(&pool.queue, __ATOMIC_ACQUIRE) != NULL;
}

static int all_done(const void *job) {
    const struct host_job *j = job;
    return __atomic_load_n(&j->done, __ATOMIC_ACQUIRE) == j->parts;
}

/* Part p is [origin + p * part_bytes, origin + (p + 1) * part_bytes), within [begin, end). */
static void run_part(const struct host_job *job, int64_t part) {
    const int64_t start = job->origin + part * job->part_bytes;
    job->run(job, max64(job->begin, start), min64(job->end, start + job->part_bytes));
}

/* Claims the next part of the queue's first job; the lock is held. */
static struct host_job *claim(int64_t *part) {
    struct host_job *job = pool.queue;
    if (!job) return NULL;
    *part = job->claimed++;
    if (job->claimed == job->parts) __atomic_store_n(&pool.queue, job->next, __ATOMIC_RELEASE);
    return job;
}

static void finish(struct host_job *job) {
    __atomic_store_n(&job->done, job->done + 1, __ATOMIC_RELEASE);
    if (job->done == job->parts) pthread_cond_broadcast(&pool.finished);
}

static void *helper(void *unused) {
    (void)unused;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        int64_t part;
        struct host_job *job;
        while (!(job = claim(&part))) {
            spin_until(work_queued, NULL);
            if (!pool.queue) pthread_cond_wait(&pool.work, &pool.lock);
        }
        pthread_mutex_unlock(&pool.lock);
        run_part(job, part);
        pthread_mutex_lock(&pool.lock);
        finish(job);
    }
    return NULL;
}

/* Starts one helper per CPU the process may use, less the caller's; fewer if
 * the system refuses threads (the callers then work alone). The lock is held. */
static void start_helpers(void) {
    cpu_set_t cpus;
    int wanted = 1;
    pool.started = 1;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0) wanted = CPU_COUNT(&cpus);
    for (; pool.helpers < wanted - 1 && pool.helpers < max_helpers; ++pool.helpers) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, helper, NULL) != 0) break;
    }
}

/* Queues a job, first or last; the lock is held. */
static void submit(struct host_job *job, int first) {
    struct host_job **link = &pool.queue;
    if (!pool.started) start_helpers();
    if (!job->part_bytes) {
        job->origin = job->begin;
        job->part_bytes = max64(part_min_bytes, (job->end - job->begin) /
                                                    (parts_per_thread * (pool.helpers + 1)) + 1);
    }
    job->parts = (job->end - job->origin + job->part_bytes - 1) / job->part_bytes;
    job->claimed = job->done = 0;
    if (!first)
        while (*link) link = &(*link)->next;
    job->next = *link;
    __atomic_store_n(link, job, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool.work);
}

/* Works on the job's unclaimed parts, then waits for the others'; the lock is held. */
static void help_and_wait(struct host_job *job) {
    int64_t part;
    while (job->claimed < job->parts) {
        /* The queue's first job: this one, or another caller's that came after it. */
        struct host_job *first = claim(&part);
        pthread_mutex_unlock(&pool.lock);
        run_part(first, part);
        pthread_mutex_lock(&pool.lock);
        finish(first);
    }
    while (job->done < job->parts) {
        spin_until(all_done, job);
        if (job->done < job->parts) pthread_cond_wait(&pool.finished, &pool.lock);
    }
}

void host_copy_run(const struct host_copy *copy) {
    struct host_job job;
    memset(&job, 0, sizeof job);
    job.run = copy_range, job.copy = copy, job.begin = copy->begin, job.end = copy->end;
    if (copy->end - copy->begin < parallel_min_bytes) {
        copy_range(&job, copy->begin, copy->end);
        return;
    }
    pthread_mutex_lock(&pool.lock);
    submit(&job, 1);
    help_and_wait(&job);
    pthread_mutex_unlock(&pool.lock);
}

void host_prefault_start(struct host_job *job, void *begin, int64_t bytes) {
    memset(job, 0, sizeof *job);
    if (bytes < parallel_min_bytes) return; /* nothing to wait for: parts == 0 */
    job->run = prefault_range;
    job->begin = (int64_t)(intptr_t)begin / page * page;
    job->end = ((int64_t)(intptr_t)begin + bytes + page - 1) / page * page;
    job->part_bytes = huge_page;
    job->origin = job->begin / huge_page * huge_page; /* the first part may be shorter */
    pthread_mutex_lock(&pool.lock);
    submit(job, 0);
    pthread_mutex_unlock(&pool.lock);
}

void host_job_wait(struct host_job *job) {
    if (!job->parts) return;
    pthread_mutex_lock(&pool.lock);
    help_and_wait(job);
    pthread_mutex_unlock(&pool.lock);
}
