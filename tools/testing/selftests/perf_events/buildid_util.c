// SPDX-License-Identifier: GPL-2.0
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "buildid_util.h"

size_t bid_page_size(void)
{
	static size_t page;

	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcmp(v, value);
}

int bid_expect(void)
{
	const char *v = getenv("BUILDID_EXPECT");

	if (!v || !*v)
		return BID_EXPECT_ANY;
	if (!strcmp(v, "feature"))
		return BID_EXPECT_FEATURE;
	if (!strcmp(v, "series"))
		return BID_EXPECT_SERIES;
	return -EINVAL;
}

bool bid_lab(void)
{
	return env_is("BUILDID_LAB", "1");
}

bool bid_cold(void)
{
	return env_is("BUILDID_COLD", "1");
}

/*
 * The bitfield word follows read_format in every ABI version.  Accessed with
 * memcpy: the header declares it as __u64 bitfields, and a uint64_t pointer
 * into it would break strict aliasing.
 */
static size_t flags_offset(void)
{
	return offsetof(struct perf_event_attr, read_format) + sizeof(__u64);
}

uint64_t bid_attr_flags(const struct perf_event_attr *attr)
{
	uint64_t v;

	memcpy(&v, (const char *)attr + flags_offset(), sizeof(v));
	return v;
}

void bid_attr_set_flags(struct perf_event_attr *attr, uint64_t bits)
{
	uint64_t v = bid_attr_flags(attr) | bits;

	memcpy((char *)attr + flags_offset(), &v, sizeof(v));
}

void bid_attr_init(struct perf_event_attr *attr, const struct bid_opts *o)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr->disabled = 1;
	attr->sample_id_all = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->mmap = o->mmap;
	attr->mmap2 = o->mmap2;
	attr->mmap_data = o->mmap_data;
	attr->inherit = o->inherit;
	/* By bit number: older uapi headers have no build_id field. */
	if (o->build_id)
		bid_attr_set_flags(attr, bid_flag_bit(BID_ATTR_BUILD_ID_BIT));
	bid_attr_set_flags(attr, o->extra_flag_bits);
}

int bid_open(const struct bid_opts *o)
{
	struct perf_event_attr attr;
	int fd;

	bid_attr_init(&attr, o);
	fd = syscall(__NR_perf_event_open, &attr, o->cpu_wide ? -1 : 0,
		     o->on_cpu ? o->cpu : -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int bid_probe(void)
{
	struct bid_opts o = BID_OPTS_DEFAULT;
	int fd = bid_open(&o);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int bid_event_open(struct bid_event *ev, const struct bid_opts *o)
{
	unsigned int pages = o->data_pages ? o->data_pages : 16;
	int fd;

	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
	fd = bid_open(o);
	if (fd < 0)
		return fd;
	ev->data_size = (size_t)pages * bid_page_size();
	ev->map_len = ev->data_size + bid_page_size();
	ev->base = mmap(NULL, ev->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ev->base == MAP_FAILED) {
		int err = -errno;

		close(fd);
		ev->base = NULL;
		return err;
	}
	ev->fd = fd;
	return 0;
}

void bid_event_close(struct bid_event *ev)
{
	if (ev->base)
		munmap(ev->base, ev->map_len);
	if (ev->fd >= 0)
		close(ev->fd);
	ev->base = NULL;
	ev->fd = -1;
}

int bid_event_enable(struct bid_event *ev)
{
	return ioctl(ev->fd, PERF_EVENT_IOC_ENABLE, 0) ? -errno : 0;
}

int bid_event_disable(struct bid_event *ev)
{
	return ioctl(ev->fd, PERF_EVENT_IOC_DISABLE, 0) ? -errno : 0;
}

int bid_event_drain(struct bid_event *ev,
		    int (*fn)(const struct perf_event_header *h, void *arg), void *arg)
{
	struct perf_event_mmap_page *pc = ev->base;
	const unsigned char *data = (const unsigned char *)ev->base + bid_page_size();
	uint64_t head, tail;
	unsigned char *copy;
	int ret = 0;

	copy = malloc(65536);
	if (!copy)
		return -ENOMEM;
	/* Pairs with the kernel's store of data_head: record bytes are visible. */
	head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	tail = pc->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail % ev->data_size, first;

		/* Headers are 8-byte aligned and never straddle the end. */
		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || tail + h.size > head) {
			ret = -EPROTO;
			break;
		}
		first = ev->data_size - off;
		if (first >= h.size) {
			memcpy(copy, data + off, h.size);
		} else {
			memcpy(copy, data + off, first);
			memcpy(copy + first, data, h.size - first);
		}
		tail += h.size;
		if (h.type == PERF_RECORD_LOST)
			ev->lost += *(uint64_t *)(copy + sizeof(h) + 8);
		ret = fn((const struct perf_event_header *)copy, arg);
		if (ret)
			break;
	}
	/* Our reads of the records complete before the kernel may overwrite them. */
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
	free(copy);
	return ret;
}

int bid_parse_mmap2(const struct perf_event_header *h, struct bid_mmap2 *out)
{
	const unsigned char *p = (const unsigned char *)h;
	size_t name_end, n, i;

	if (h->type != PERF_RECORD_MMAP2)
		return -EINVAL;
	if (h->size < BID_MMAP2_FIXED_SIZE + 8 + BID_SAMPLE_ID_SIZE || h->size % 8)
		return -EPROTO;
	memset(out, 0, sizeof(*out));
	out->misc = h->misc;
	out->size = h->size;
	p += sizeof(*h);
	memcpy(&out->pid, p, 4);
	memcpy(&out->tid, p + 4, 4);
	memcpy(&out->addr, p + 8, 8);
	memcpy(&out->len, p + 16, 8);
	memcpy(&out->pgoff, p + 24, 8);
	memcpy(out->raw, p + 32, 24);
	memcpy(&out->prot, p + 56, 4);
	memcpy(&out->flags, p + 60, 4);
	p += 64;
	/* The name is NUL-padded to 8 bytes; the trailer follows it. */
	name_end = h->size - BID_SAMPLE_ID_SIZE - BID_MMAP2_FIXED_SIZE;
	n = strnlen((const char *)p, name_end);
	if (n == name_end || n >= sizeof(out->filename))
		return -EPROTO;
	memcpy(out->filename, p, n);
	out->filename_field = name_end;
	out->filename_padding_zero = true;
	for (i = n; i < name_end; i++)
		if (p[i])
			out->filename_padding_zero = false;
	p += name_end;
	memcpy(&out->sid_pid, p, 4);
	memcpy(&out->sid_tid, p + 4, 4);
	memcpy(&out->sid_time, p + 8, 8);
	return 0;
}

struct find_ctx {
	pid_t pid;
	uint64_t addr;
	const char *path;
	struct bid_mmap2 *out;
	struct bid_mmap2 tmp;
	int found;
	int err;
};

static int find_cb(const struct perf_event_header *h, void *arg)
{
	struct find_ctx *c = arg;
	int err;

	if (h->type != PERF_RECORD_MMAP2)
		return 0;
	err = bid_parse_mmap2(h, &c->tmp);
	if (err) {
		c->err = err;
		return 0;
	}
	if ((pid_t)c->tmp.pid != c->pid)
		return 0;
	if (c->addr && c->tmp.addr != c->addr)
		return 0;
	if (c->path && strcmp(c->tmp.filename, c->path))
		return 0;
	if (!c->found++)
		*c->out = c->tmp;
	return 0;
}

int bid_find_mmap2(struct bid_event *ev, pid_t pid, uint64_t addr, const char *path,
		   struct bid_mmap2 *out)
{
	struct find_ctx *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return -ENOMEM;
	c->pid = pid;
	c->addr = addr;
	c->path = path;
	c->out = out;
	ret = bid_event_drain(ev, find_cb, c);
	if (!ret)
		ret = c->err ? c->err : c->found;
	free(c);
	return ret;
}

int bid_fixture_path(const char *name, char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	/* kselftest runs each program from its directory: the fallback without /proc */
	if (n < 0)
		n = snprintf(exe, sizeof(exe), "./prog");
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/buildid_fixtures/%s", exe, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int bid_expected_id(const char *name, uint8_t *id, size_t max)
{
	char path[PATH_MAX], hex[256];
	size_t n, i;
	FILE *f;
	int err;

	err = bid_fixture_path(name, path, sizeof(path) - 3);
	if (err)
		return err;
	strcat(path, ".id");
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(hex, sizeof(hex), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	n = strspn(hex, "0123456789abcdef");
	if (n == 0 || n % 2 || n / 2 > max)
		return -EINVAL;
	for (i = 0; i < n / 2; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		id[i] = v;
	}
	return n / 2;
}

char *bid_hex(const uint8_t *p, size_t n, char *buf)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(buf + 2 * i, "%02x", p[i]);
	buf[2 * n] = '\0';
	return buf;
}

int bid_record_fd(const struct bid_opts *o, int fd, size_t len, off_t off,
		  int prot, int flags, void **addr_out, struct bid_mmap2 *rec)
{
	struct bid_event ev;
	void *addr;
	int err;

	err = bid_event_open(&ev, o);
	if (err)
		return err;
	err = bid_event_enable(&ev);
	if (err)
		goto out;
	addr = mmap(NULL, len, prot, flags, fd, off);
	if (addr == MAP_FAILED)
		err = -errno;
	bid_event_disable(&ev);
	if (!err) {
		*addr_out = addr;
		err = bid_find_mmap2(&ev, getpid(), (uintptr_t)addr, NULL, rec);
	}
out:
	bid_event_close(&ev);
	return err;
}

int bid_record_mapping(const struct bid_opts *o, const char *path, size_t len,
		       off_t off, int prot, int flags, void **addr_out,
		       struct bid_mmap2 *rec)
{
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = bid_record_fd(o, fd, len, off, prot, flags, addr_out, rec);
	close(fd);
	return ret;
}

int bid_read_file(int fd, size_t *size)
{
	char buf[65536];
	size_t total = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), total)) > 0)
		total += n;
	if (n < 0)
		return -errno;
	if (size)
		*size = total;
	return 0;
}

uint64_t bid_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int bid_resident_pages(int fd, size_t size, size_t *resident)
{
	size_t page = bid_page_size(), pages = (size + page - 1) / page, i;
	unsigned char *vec;
	void *p;
	int err = 0;

	*resident = 0;
	if (!size)
		return 0;
	vec = calloc(pages, 1);
	if (!vec)
		return -ENOMEM;
	/* mincore() of a file mapping reports the page cache and faults nothing in. */
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
	} else {
		if (mincore(p, size, vec))
			err = -errno;
		munmap(p, size);
	}
	for (i = 0; !err && i < pages; i++)
		*resident += vec[i] & 1;
	free(vec);
	return err;
}

int bid_evict_fd(int fd)
{
	size_t resident = 1;
	struct stat st;
	int i, err;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return 0;
	if (major(st.st_dev) == 0)
		return -ENOTBLK;
	for (i = 0; i < 20 && resident; i++) {
		err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		if (err)
			return -err;
		err = bid_resident_pages(fd, st.st_size, &resident);
		if (err)
			return err;
		/*
		 * Dirty pages cannot be dropped: write them back (only then, a
		 * flush per file would make every case slow).
		 */
		if (resident && !i && fdatasync(fd))
			return -errno;
		if (resident && i)
			usleep(50 * 1000);
	}
	return resident ? -EBUSY : 0;
}

int bid_evict_fixtures(char *bad, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	struct dirent *de;
	int err, fd;
	DIR *d;

	err = bid_fixture_path("", dir, sizeof(dir));
	if (err)
		return err;
	snprintf(bad, len, "%s", dir);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s%s", dir, de->d_name);
		snprintf(bad, len, "%s", path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			break;
		}
		err = bid_evict_fd(fd);
		close(fd);
		if (err)
			break;
	}
	closedir(d);
	return err;
}
