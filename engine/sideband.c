// SPDX-License-Identifier: MIT
/*
 * profiler: the kernel's records of processes (fork, exec, executable mmaps), read from
 * one dummy perf event per CPU, so that a process started during a recording is named
 * from them instead of from /proc/PID/maps (see sideband__open() and DESIGN.md).
 *
 * Each drain copies every CPU's new records, sorts them by time (CLOCK_MONOTONIC, the
 * clock of the BPF programs' events) and applies them to a table of process images:
 * per PID, the images it ran, each from its exec or fork to its next exec or its exit,
 * with its executable mappings (later ones cut what they overlap: a munmap is not
 * recorded, a mapping over it is). An image forked from a known image starts with its
 * parent's mappings. An image is complete when every record of it was read: it started
 * after the events were opened and no record was lost while it ran.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "engine.h"
#include "sideband.h"

#define SB_MAX_VMAS  65536		     /* per image; more: the image is incomplete */
#define SB_RETAIN_NS (10ULL * 1000000000ULL) /* images kept after they ended */
#define SB_GC_NS     1000000000ULL
/* room the kernel may need for one record: an mmap record with a PATH_MAX name */
#define SB_RECORD_ROOM (4096 + 256)

struct sb_image {
	uint64_t start; /* the exec or fork that began it */
	uint64_t end;	/* the exec that replaced it or the exit; 0 while it runs */
	bool complete;
	uint32_t version;	     /* bumped by every mapping (sideband__image()) */
	struct symbolizer_vma *vmas; /* sorted by start, not overlapping */
	size_t nr, cap;
};

struct sb_proc {
	pid_t pid;
	struct sb_image *imgs; /* sorted by start */
	size_t nr, cap;
};

struct sb_ring {
	int fd;
	void *base; /* the control page, then @size bytes of data */
	size_t size;
	uint64_t last_ts; /* of the last record read: a loss began after it */
	bool full;	  /* found with less room than a record may take */
};

/* a record copied out of a ring, waiting for the sort */
struct sb_rec {
	uint64_t ts;
	uint32_t off, len; /* in the drain's byte buffer */
	uint32_t seq;	   /* order of reading: ties keep each ring's order */
	uint32_t cpu;
};

struct sideband {
	struct sb_ring *rings;
	int nr_rings;
	size_t mmap_bytes;
	struct hashmap procs; /* hash__u64(pid) -> struct sb_proc * */
	struct strset *strs;
	uint8_t *bytes;
	size_t nr_bytes, cap_bytes;
	struct sb_rec *recs;
	size_t nr_recs, cap_recs;
	uint64_t since, last_gc;
	struct sideband_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int ring_open(struct sb_ring *r, int cpu, size_t data_bytes)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.watermark = 1,
		.wakeup_watermark = data_bytes / 4,
	};
	long page = sysconf(_SC_PAGESIZE);

	r->fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->size = data_bytes;
	r->base = mmap(NULL, page + data_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	return 0;
}

void sideband__free(struct sideband *sb)
{
	struct hashmap_iter it;
	struct sb_proc *p;
	uint64_t val;
	size_t k;
	int c;

	if (!sb)
		return;
	for (c = 0; c < sb->nr_rings; c++) {
		if (sb->rings[c].base)
			munmap(sb->rings[c].base, sb->mmap_bytes);
		if (sb->rings[c].fd >= 0)
			close(sb->rings[c].fd);
	}
	for (hashmap__iter_init(&sb->procs, &it); hashmap__iter_next(&sb->procs, &it, &val);) {
		p = (struct sb_proc *)(uintptr_t)val;
		for (k = 0; k < p->nr; k++)
			free(p->imgs[k].vmas);
		free(p->imgs);
		free(p);
	}
	hashmap__free(&sb->procs);
	strset__free(sb->strs);
	free(sb->rings);
	free(sb->bytes);
	free(sb->recs);
	free(sb);
}

int sideband__open(size_t ring_bytes, struct sideband **out)
{
	int nr_cpus = (int)sysconf(_SC_NPROCESSORS_CONF), cpu, err;
	long page = sysconf(_SC_PAGESIZE);
	struct sideband *sb;
	bool *online = NULL;

	*out = NULL;
	if (nr_cpus <= 0 || page <= 0)
		return -EINVAL;
	if (ring_bytes < (size_t)page || (ring_bytes & (ring_bytes - 1)))
		return -EINVAL;
	sb = calloc(1, sizeof(*sb));
	online = calloc(nr_cpus, sizeof(*online));
	if (!sb || !online) {
		err = -ENOMEM;
		goto cleanup;
	}
	sb->strs = strset__new();
	sb->rings = calloc(nr_cpus, sizeof(*sb->rings));
	if (!sb->strs || !sb->rings) {
		err = -ENOMEM;
		goto cleanup;
	}
	sb->mmap_bytes = page + ring_bytes;
	err = cpu_list__parse("/sys/devices/system/cpu/online", online, nr_cpus);
	if (err)
		goto cleanup;
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		struct sb_ring *r = &sb->rings[sb->nr_rings];

		if (!online[cpu])
			continue;
		r->fd = -1;
		err = ring_open(r, cpu, ring_bytes);
		if (err == -ENODEV) { /* went offline meanwhile */
			if (r->fd >= 0)
				close(r->fd);
			continue;
		}
		sb->nr_rings++;
		if (err)
			goto cleanup;
	}
	sb->since = sb->last_gc = mono_ns();
	*out = sb;
	sb = NULL;
cleanup:
	free(online);
	sideband__free(sb);
	return err;
}

uint64_t sideband__since(const struct sideband *sb)
{
	return sb ? sb->since : 0;
}

int sideband__nr_fds(const struct sideband *sb)
{
	return sb ? sb->nr_rings : 0;
}

int sideband__fd(const struct sideband *sb, int i)
{
	return sb->rings[i].fd;
}

void sideband__stats(const struct sideband *sb, struct sideband_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (sb)
		*st = sb->st;
}

/* ---- the table of images ---- */

static struct sb_proc *proc_find(struct sideband *sb, pid_t pid)
{
	return (struct sb_proc *)(uintptr_t)hashmap__find(&sb->procs, hash__u64((uint32_t)pid),
							  NULL, NULL);
}

/* The image @pid ran at @ts (the last one begun by then), or NULL. */
static struct sb_image *image_at(struct sideband *sb, pid_t pid, uint64_t ts)
{
	struct sb_proc *p = proc_find(sb, pid);
	size_t i;

	if (!p)
		return NULL;
	for (i = p->nr; i > 0; i--)
		if (p->imgs[i - 1].start <= ts)
			return &p->imgs[i - 1];
	return NULL;
}

/*
 * A new image of @pid from @ts on: the one before it ends there. Returns it (its
 * pointer valid until the next image of @pid) or NULL when out of memory.
 */
static struct sb_image *image_new(struct sideband *sb, pid_t pid, uint64_t ts)
{
	struct sb_proc *p = proc_find(sb, pid);
	struct sb_image *im;
	size_t i;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || hashmap__insert(&sb->procs, hash__u64((uint32_t)pid), (uintptr_t)p)) {
			free(p);
			return NULL;
		}
		p->pid = pid;
	}
	if (p->nr == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 2;

		im = realloc(p->imgs, cap * sizeof(*im));
		if (!im)
			return NULL;
		p->imgs = im;
		p->cap = cap;
	}
	/* records of one PID arrive in time order but for a rare late one: keep the order */
	for (i = p->nr; i > 0 && p->imgs[i - 1].start > ts; i--)
		;
	memmove(&p->imgs[i + 1], &p->imgs[i], (p->nr - i) * sizeof(*im));
	p->nr++;
	im = &p->imgs[i];
	*im = (struct sb_image){.start = ts, .complete = true, .version = 1};
	if (i > 0 && (!p->imgs[i - 1].end || p->imgs[i - 1].end > ts))
		p->imgs[i - 1].end = ts;
	if (i + 1 < p->nr)
		im->end = p->imgs[i + 1].start;
	return im;
}

/*
 * Maps @v in @im: what it overlaps is cut away (the kernel maps over a range without
 * a record of the unmap). Returns 0 or -ENOMEM.
 */
static int image_map(struct sb_image *im, const struct symbolizer_vma *v)
{
	struct symbolizer_vma left, right;
	size_t lo = 0, hi = im->nr, mid, j, nr_new;
	bool has_left = false, has_right = false;

	if (im->nr + 3 > SB_MAX_VMAS) {
		im->complete = false;
		return 0;
	}
	if (array__grow((void **)&im->vmas, &im->cap, im->nr + 3, sizeof(*im->vmas)))
		return -ENOMEM;
	/* the first mapping ending after v's start */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (im->vmas[mid].end <= v->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (j = lo; j < im->nr && im->vmas[j].start < v->end; j++) {
		const struct symbolizer_vma *o = &im->vmas[j];

		if (o->start < v->start) {
			left = *o;
			left.end = v->start;
			has_left = true;
		}
		if (o->end > v->end) {
			right = *o;
			right.pgoff += v->end - o->start;
			right.start = v->end;
			has_right = true;
		}
	}
	if (!++im->version)
		im->version = 1;
	/* [lo, j) is replaced by left, v, right */
	nr_new = has_left + 1 + has_right;
	memmove(&im->vmas[lo + nr_new], &im->vmas[j], (im->nr - j) * sizeof(*v));
	im->nr = im->nr - (j - lo) + nr_new;
	if (has_left)
		im->vmas[lo++] = left;
	im->vmas[lo++] = *v;
	if (has_right)
		im->vmas[lo] = right;
	return 0;
}

/* Every image running at @ts (or begun since) may have lost records. */
static void images_lost(struct sideband *sb, uint64_t ts)
{
	struct hashmap_iter it;
	struct sb_proc *p;
	uint64_t val;
	size_t k;

	for (hashmap__iter_init(&sb->procs, &it); hashmap__iter_next(&sb->procs, &it, &val);) {
		p = (struct sb_proc *)(uintptr_t)val;
		for (k = 0; k < p->nr; k++)
			if (!p->imgs[k].end || p->imgs[k].end > ts)
				p->imgs[k].complete = false;
	}
}

/* Drops the images that ended more than SB_RETAIN_NS before @now. */
static void images_gc(struct sideband *sb, uint64_t now)
{
	struct hashmap_iter it;
	struct sb_proc *p;
	uint64_t val;
	size_t k, n;

	for (hashmap__iter_init(&sb->procs, &it); hashmap__iter_next(&sb->procs, &it, &val);) {
		p = (struct sb_proc *)(uintptr_t)val;
		for (k = 0, n = 0; k < p->nr; k++) {
			if (p->imgs[k].end && p->imgs[k].end + SB_RETAIN_NS < now) {
				free(p->imgs[k].vmas);
				continue;
			}
			p->imgs[n++] = p->imgs[k];
		}
		p->nr = n;
		if (n)
			continue;
		hashmap__iter_remove(&sb->procs, &it);
		free(p->imgs);
		free(p);
	}
}

/* ---- records ---- */

/* the sample_id every record ends with (PERF_SAMPLE_TID | PERF_SAMPLE_TIME) */
struct sb_id {
	uint32_t pid, tid;
	uint64_t time;
};

struct sb_task {
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct sb_mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

struct sb_comm {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[];
};

static int apply_fork(struct sideband *sb, const struct sb_task *t)
{
	struct sb_image *parent, *im;
	size_t nr;

	if (t->pid == t->ppid)
		return 0; /* a thread */
	im = image_new(sb, t->pid, t->time);
	if (!im)
		return -ENOMEM;
	sb->st.forks++;
	/* image_new() may move the parent's images only when they are the child's */
	parent = image_at(sb, t->ppid, t->time);
	if (!parent || !parent->complete || (parent->end && parent->end <= t->time)) {
		im->complete = false;
		return 0;
	}
	nr = parent->nr;
	if (nr) {
		im->vmas = malloc(nr * sizeof(*im->vmas));
		if (!im->vmas)
			return -ENOMEM;
		memcpy(im->vmas, parent->vmas, nr * sizeof(*im->vmas));
		im->nr = im->cap = nr;
	}
	return 0;
}

static int apply_mmap(struct sideband *sb, const struct sb_mmap2 *m, size_t len, uint64_t ts)
{
	size_t name_max = len - sizeof(*m) - sizeof(struct sb_id);
	const char *name = m->filename;
	struct symbolizer_vma v;
	struct sb_image *im;

	if (!(m->prot & PROT_EXEC) || !m->len || m->addr + m->len < m->addr)
		return 0;
	if (m->h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		return 0; /* not asked for: no device and inode in it */
	if (!memchr(name, '\0', name_max)) {
		sb->st.bad++;
		return 0;
	}
	im = image_at(sb, m->pid, ts);
	if (!im) {
		sb->st.mmaps_unknown++;
		return 0;
	}
	sb->st.mmaps++;
	if (!strcmp(name, "//anon"))
		name = "";
	v = (struct symbolizer_vma){
		.start = m->addr,
		.end = m->addr + m->len,
		.pgoff = m->pgoff,
		.inode = m->ino,
		.dev_major = m->maj,
		.dev_minor = m->min,
		.exec = true,
		.path = strset__intern(sb->strs, name),
	};
	if (!v.path)
		return -ENOMEM;
	return image_map(im, &v);
}

static int apply(struct sideband *sb, const struct sb_rec *rec)
{
	const uint8_t *data = sb->bytes + rec->off;
	const struct perf_event_header *h = (const void *)data;
	size_t len = rec->len;
	const struct sb_task *t = (const void *)data;
	const struct sb_comm *c = (const void *)data;
	struct sb_ring *ring = &sb->rings[rec->cpu];
	struct sb_image *im;

	switch (h->type) {
	case PERF_RECORD_FORK:
		if (len < sizeof(*t))
			break;
		return apply_fork(sb, t);
	case PERF_RECORD_EXIT:
		if (len < sizeof(*t))
			break;
		if (t->pid == t->tid && (im = image_at(sb, t->pid, t->time)) && !im->end)
			im->end = t->time;
		return 0;
	case PERF_RECORD_COMM:
		if (len < sizeof(*c) + sizeof(struct sb_id))
			break;
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC))
			return 0;
		sb->st.execs++;
		return image_new(sb, c->pid, rec->ts) ? 0 : -ENOMEM;
	case PERF_RECORD_MMAP2:
		if (len < sizeof(struct sb_mmap2) + sizeof(struct sb_id))
			break;
		return apply_mmap(sb, (const void *)data, len, rec->ts);
	case PERF_RECORD_LOST:
		if (len < sizeof(*h) + 16 + sizeof(struct sb_id))
			break;
		sb->st.lost += *(const uint64_t *)(data + sizeof(*h) + 8);
		sb->st.lost_records++;
		images_lost(sb, ring->last_ts);
		return 0;
	default:
		return 0;
	}
	sb->st.bad++;
	return 0;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct sb_rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The time of record @data[0..len): FORK and EXIT carry theirs, others the sample_id's. */
static uint64_t rec_time(const uint8_t *data, size_t len)
{
	const struct perf_event_header *h = (const void *)data;
	uint64_t ts;

	if ((h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT) &&
	    len >= sizeof(struct sb_task))
		return ((const struct sb_task *)data)->time;
	memcpy(&ts, data + len - sizeof(ts), sizeof(ts));
	return ts;
}

/* Copies the records of ring @cpu into the drain's buffers. Returns 0 or -ENOMEM. */
static int ring_read(struct sideband *sb, int cpu)
{
	struct sb_ring *r = &sb->rings[cpu];
	struct perf_event_mmap_page *pg = r->base;
	const uint8_t *data = (const uint8_t *)r->base + (sb->mmap_bytes - r->size);
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = pg->data_tail;
	int err = 0;

	/* the kernel writes a LOST record only with its next record: a ring this full may
	 * have dropped some already */
	r->full = head - tail + SB_RECORD_ROOM > r->size;

	while (tail < head) {
		struct perf_event_header h;
		size_t at = tail % r->size, first;
		struct sb_rec *rec;
		uint8_t *dst;

		first = MIN(sizeof(h), r->size - at);
		memcpy(&h, data + at, first);
		memcpy((uint8_t *)&h + first, data, sizeof(h) - first);
		if (h.size < sizeof(h) + sizeof(struct sb_id) || h.size > head - tail) {
			/* a torn or corrupt ring: nothing after this can be trusted */
			sb->st.bad++;
			images_lost(sb, r->last_ts);
			tail = head;
			break;
		}
		if (array__grow((void **)&sb->bytes, &sb->cap_bytes, sb->nr_bytes + h.size, 1) ||
		    array__grow((void **)&sb->recs, &sb->cap_recs, sb->nr_recs + 1,
				sizeof(*sb->recs))) {
			err = -ENOMEM;
			break;
		}
		dst = sb->bytes + sb->nr_bytes;
		first = MIN((size_t)h.size, r->size - at);
		memcpy(dst, data + at, first);
		memcpy(dst + first, data, h.size - first);
		rec = &sb->recs[sb->nr_recs];
		*rec = (struct sb_rec){
			.ts = rec_time(dst, h.size),
			.off = sb->nr_bytes,
			.len = h.size,
			.seq = sb->nr_recs,
			.cpu = cpu,
		};
		sb->nr_recs++;
		sb->nr_bytes += h.size;
		tail += h.size;
		sb->st.records++;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}

int sideband__drain(struct sideband *sb)
{
	uint64_t now;
	size_t i;
	int c, err = 0;

	if (!sb)
		return 0;
	sb->nr_recs = sb->nr_bytes = 0;
	for (c = 0; c < sb->nr_rings && !err; c++)
		err = ring_read(sb, c);
	if (sb->nr_recs > 1)
		qsort(sb->recs, sb->nr_recs, sizeof(*sb->recs), rec_cmp);
	for (i = 0; i < sb->nr_recs && !err; i++) {
		const struct sb_rec *rec = &sb->recs[i];

		err = apply(sb, rec);
		if (rec->ts > sb->rings[rec->cpu].last_ts)
			sb->rings[rec->cpu].last_ts = rec->ts;
	}
	for (c = 0; c < sb->nr_rings && !err; c++) {
		if (!sb->rings[c].full)
			continue;
		sb->st.rings_full++;
		images_lost(sb, sb->rings[c].last_ts);
	}
	if (sb->nr_recs) {
		now = mono_ns();
		if (now - sb->last_gc >= SB_GC_NS) {
			images_gc(sb, now);
			sb->last_gc = now;
		}
	}
	return err;
}

int sideband__image(struct sideband *sb, pid_t pid, uint64_t ts, const struct symbolizer_vma **v,
		    size_t *n, uint32_t *version)
{
	struct sb_image *im = sb ? image_at(sb, pid, ts) : NULL;

	*v = NULL;
	*n = 0;
	if (!im || !im->complete) {
		if (sb)
			sb->st.lookups_missed++;
		return -ENOENT;
	}
	sb->st.lookups++;
	*v = im->vmas;
	*n = im->nr;
	if (version)
		*version = im->version;
	return 0;
}
