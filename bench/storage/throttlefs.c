/*
 * bench/storage/throttlefs.c: a FUSE pass-through file system whose writes go through one
 * token bucket shared by all writers, so that I/O benchmarks write to storage of a known,
 * limited bandwidth instead of into the page cache.
 *
 *   throttlefs [--rate-mbps R] [--read-rate-mbps R2] [--capacity-bytes C] [--burst-bytes B]
 *              <backing_dir> <mountpoint> [fuse options, e.g. -f -d -o ...]
 *
 *   --rate-mbps R        write bandwidth, R * 1e6 bytes/s, shared by every writer of every
 *                        file (all processes and threads); 0 or absent: unthrottled
 *   --read-rate-mbps R2  read bandwidth, a second bucket; absent: reads are unthrottled
 *                        (reads served from the kernel's page cache of the mount never reach
 *                        throttlefs; mount with -o direct_io to charge every read)
 *   --burst-bytes B      bucket depth; default 1 MiB
 *   --capacity-bytes C   writes, fallocate and truncate that would take the sum of the sizes
 *                        of the regular files under the mount above C fail with ENOSPC;
 *                        statfs reports a file system of C bytes
 *   --no-writeback-kick  do not start the backing store's writeback after each write
 *                        (default: sync_file_range(SYNC_FILE_RANGE_WRITE) on the range
 *                        written, so that dirty data does not pile up in the backing page
 *                        cache and a final fsync costs little more than the throttle)
 *   Sizes take an optional K, M or G suffix (powers of 1024).
 *
 * Every operation passes through to backing_dir (the *at() calls on a descriptor of it; an
 * open file keeps its backing descriptor in fi->fh and is read and written with pread and
 * pwrite). Metadata operations are not throttled. The mount asks for max_write 1 MiB (the
 * kernel then sends writes of up to 1 MiB; fuse_main takes no -o max_write, so init sets
 * it), -o max_threads=64 (writers sleeping in the bucket
 * each hold a worker thread) and never the kernel's writeback cache: every write(2) reaches
 * throttlefs before it returns, so its time is the throttled time. A write is charged in
 * pieces of at most 256 KiB, each sleeping (outside every lock) until the bucket has its
 * tokens, in the order the pieces asked (a reservation scheme, so concurrent writers share
 * the rate fairly). fsync goes to the backing descriptor.
 *
 * On exit (fusermount3 -u, SIGTERM, SIGINT) it prints what it wrote and read on stderr.
 *
 * Build: cc -O2 -Wall -Wextra $(pkg-config --cflags fuse3) throttlefs.c \
 *          $(pkg-config --libs fuse3) -lpthread -o throttlefs
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <fuse.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define PIECE_BYTES ((size_t)256 << 10)
/* The default bucket: about what a storage device's write cache absorbs. Deeper, a writer that
 * idles between bursts (compressing the next field) banks the idle time and then writes above
 * the rate: at 400 MB/s a depth of 1/20 s let 20 MB of each burst through at once. */
#define DEFAULT_BURST ((double)(1 << 20))

/* ------------------------------------------------------------------ token bucket */

/* A token bucket kept as its "theoretical arrival time" (GCRA): tat is the time at which the
 * bucket would be full again if nothing more were taken. Taking n tokens moves tat on by
 * n / rate (from now, if the bucket is already full); the taker may go once tat is at most
 * burst / rate ahead of now. Reservations are made in the order they arrive, under the
 * mutex; the sleeping happens outside it. */
struct bucket {
  pthread_mutex_t mu;
  double rate;    /* bytes per second; 0: unlimited */
  double burst_s; /* bucket depth, in seconds at rate */
  double tat;     /* CLOCK_MONOTONIC seconds */
  uint64_t bytes; /* charged so far */
  uint64_t slept_ns;
};

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_until(double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec += 1;
    ts.tv_nsec -= 1000000000L;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

static void bucket_take(struct bucket *b, size_t n) {
  if (b->rate <= 0) {
    __atomic_add_fetch(&b->bytes, n, __ATOMIC_RELAXED);
    return;
  }
  pthread_mutex_lock(&b->mu);
  double now = mono_now();
  if (b->tat < now) b->tat = now;
  b->tat += (double)n / b->rate;
  double wake = b->tat - b->burst_s;
  b->bytes += n;
  pthread_mutex_unlock(&b->mu);
  if (wake > now) {
    sleep_until(wake);
    __atomic_add_fetch(&b->slept_ns, (uint64_t)((wake - now) * 1e9), __ATOMIC_RELAXED);
  }
}

/* ------------------------------------------------------------------ state */

static struct {
  int root;         /* descriptor of the backing directory */
  char *root_path;  /* its absolute path */
  struct bucket wbucket, rbucket;
  /* capacity: all size-changing operations hold cap_mu while they check and change */
  int64_t capacity; /* bytes; < 0: unlimited, no accounting */
  int64_t used;     /* sum of the sizes of the regular files (tracked) */
  pthread_mutex_t cap_mu;
  uint64_t nwrites, nreads, max_write, enospc;
  int kick_writeback; /* sync_file_range after each write (default on; --no-writeback-kick) */
  double t_start;
} S = {
    .root = -1,
    .kick_writeback = 1,
    .capacity = -1,
    .wbucket = {.mu = PTHREAD_MUTEX_INITIALIZER},
    .rbucket = {.mu = PTHREAD_MUTEX_INITIALIZER},
    .cap_mu = PTHREAD_MUTEX_INITIALIZER,
};

static int cap_on(void) { return S.capacity >= 0; }

/* path relative to the backing directory: "/" -> ".", "/a/b" -> "a/b" */
static const char *rel(const char *path) {
  if (path == NULL) return NULL;
  while (*path == '/') path++;
  return *path ? path : ".";
}

static int64_t walk_sum;
static int walk_cb(const char *p, const struct stat *st, int type, struct FTW *f) {
  (void)p;
  (void)f;
  if (type == FTW_F && S_ISREG(st->st_mode)) walk_sum += st->st_size;
  return 0;
}

/* The sum of the sizes of the regular files under the backing directory (a file with
 * several hard links counts once per link). Called with cap_mu held, or before mounting. */
static int64_t recount_used(void) {
  walk_sum = 0;
  nftw(S.root_path, walk_cb, 64, FTW_PHYS | FTW_MOUNT);
  return walk_sum;
}

/* size of a regular file named by path (0 if absent or not regular, -1 on stat failure) */
static int64_t size_at(const char *r, int *nlink_one) {
  struct stat st;
  if (fstatat(S.root, r, &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT ? 0 : -1;
  if (nlink_one) *nlink_one = st.st_nlink == 1;
  return S_ISREG(st.st_mode) ? st.st_size : 0;
}

static void used_add(int64_t d) {
  S.used += d;
  if (S.used < 0) S.used = 0;
}

/* Whether `growth` more bytes fit; recounts once (to repair drift, e.g. files that were
 * unlinked while open, or changes made in the backing directory behind the mount) before
 * refusing. cap_mu held. */
static int fits(int64_t growth) {
  if (growth <= 0 || S.used + growth <= S.capacity) return 1;
  S.used = recount_used();
  return S.used + growth <= S.capacity;
}

/* become the caller's owner when we create something as root */
static void chown_to_caller(const char *r) {
  if (geteuid() != 0) return;
  struct fuse_context *c = fuse_get_context();
  if (c && (c->uid != 0 || c->gid != 0))
    if (fchownat(S.root, r, c->uid, c->gid, AT_SYMLINK_NOFOLLOW) != 0) {
      /* not fatal: the file stays root's */
    }
}

/* ------------------------------------------------------------------ operations */

static void *tfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
  cfg->use_ino = 1;
  cfg->nullpath_ok = 1;  /* operations on open files get their fi->fh, path may be NULL */
  cfg->hard_remove = 1;  /* unlink open files for real (no .fuse_hidden files) */
  cfg->kernel_cache = 0; /* drop the mount's page cache of a file when it is opened */
  cfg->auto_cache = 0;
  /* Never let the kernel buffer writes: every write must reach the bucket. */
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  /* writes of up to 1 MiB per request (fuse_main takes no -o max_write; libfuse caps this
   * at its buffer size, 1 MiB in libfuse 3.14, and asks the kernel for as many pages) */
  conn->max_write = 1u << 20;
  S.t_start = mono_now();
  return NULL;
}

static void tfs_destroy(void *p) {
  (void)p;
  double t = mono_now() - S.t_start;
  fprintf(stderr,
          "throttlefs: unmounted after %.1f s: wrote %" PRIu64 " bytes in %" PRIu64
          " requests (largest %" PRIu64 ", slept %.2f s), read %" PRIu64 " bytes in %" PRIu64
          " requests, %" PRIu64 " ENOSPC\n",
          t, S.wbucket.bytes, S.nwrites, S.max_write, 1e-9 * (double)S.wbucket.slept_ns,
          S.rbucket.bytes, S.nreads, S.enospc);
}

static int tfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
  int r = fi ? fstat((int)fi->fh, st) : fstatat(S.root, rel(path), st, AT_SYMLINK_NOFOLLOW);
  return r == 0 ? 0 : -errno;
}

static int tfs_access(const char *path, int mask) {
  return faccessat(S.root, rel(path), mask, 0) == 0 ? 0 : -errno;
}

static int tfs_readlink(const char *path, char *buf, size_t size) {
  if (size == 0) return -EINVAL;
  ssize_t n = readlinkat(S.root, rel(path), buf, size - 1);
  if (n < 0) return -errno;
  buf[n] = '\0';
  return 0;
}

static int tfs_opendir(const char *path, struct fuse_file_info *fi) {
  int fd = openat(S.root, rel(path), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return -errno;
  DIR *d = fdopendir(fd);
  if (!d) {
    int e = errno;
    close(fd);
    return -e;
  }
  fi->fh = (uint64_t)(uintptr_t)d;
  return 0;
}

static int tfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
                       struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
  (void)path;
  (void)off;
  (void)flags;
  DIR *d = (DIR *)(uintptr_t)fi->fh;
  /* the whole directory in one go (offset 0 to filler): libfuse keeps it for later calls */
  rewinddir(d);
  errno = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_ino = e->d_ino;
    st.st_mode = (mode_t)(DTTOIF(e->d_type));
    if (filler(buf, e->d_name, &st, 0, 0)) break;
  }
  return 0;
}

static int tfs_releasedir(const char *path, struct fuse_file_info *fi) {
  (void)path;
  closedir((DIR *)(uintptr_t)fi->fh);
  return 0;
}

static int tfs_mknod(const char *path, mode_t mode, dev_t rdev) {
  const char *r = rel(path);
  int rc = S_ISFIFO(mode) ? mkfifoat(S.root, r, mode) : mknodat(S.root, r, mode, rdev);
  if (rc != 0) return -errno;
  chown_to_caller(r);
  return 0;
}

static int tfs_mkdir(const char *path, mode_t mode) {
  const char *r = rel(path);
  if (mkdirat(S.root, r, mode) != 0) return -errno;
  chown_to_caller(r);
  return 0;
}

static int tfs_symlink(const char *target, const char *path) {
  const char *r = rel(path);
  if (symlinkat(target, S.root, r) != 0) return -errno;
  chown_to_caller(r);
  return 0;
}

static int tfs_link(const char *from, const char *to) {
  /* another name of the same data: counts once more in the capacity (see recount_used) */
  if (!cap_on()) return linkat(S.root, rel(from), S.root, rel(to), 0) == 0 ? 0 : -errno;
  pthread_mutex_lock(&S.cap_mu);
  int64_t sz = size_at(rel(from), NULL);
  int rc = linkat(S.root, rel(from), S.root, rel(to), 0) == 0 ? 0 : -errno;
  if (rc == 0 && sz > 0) used_add(sz);
  pthread_mutex_unlock(&S.cap_mu);
  return rc;
}

static int tfs_unlink(const char *path) {
  const char *r = rel(path);
  if (!cap_on()) return unlinkat(S.root, r, 0) == 0 ? 0 : -errno;
  pthread_mutex_lock(&S.cap_mu);
  int one = 1;
  int64_t sz = size_at(r, &one);
  int rc = unlinkat(S.root, r, 0) == 0 ? 0 : -errno;
  if (rc == 0 && sz > 0) used_add(-sz);
  pthread_mutex_unlock(&S.cap_mu);
  return rc;
}

static int tfs_rmdir(const char *path) {
  return unlinkat(S.root, rel(path), AT_REMOVEDIR) == 0 ? 0 : -errno;
}

static int tfs_rename(const char *from, const char *to, unsigned int flags) {
  const char *rf = rel(from), *rt = rel(to);
  if (!cap_on() || (flags & RENAME_EXCHANGE))
    return renameat2(S.root, rf, S.root, rt, flags) == 0 ? 0 : -errno;
  pthread_mutex_lock(&S.cap_mu);
  struct stat sf, st;
  int64_t gone = 0; /* the file replaced at `to`, unless it is `from` itself */
  if (fstatat(S.root, rt, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
      !(fstatat(S.root, rf, &sf, AT_SYMLINK_NOFOLLOW) == 0 && sf.st_ino == st.st_ino &&
        sf.st_dev == st.st_dev))
    gone = st.st_size;
  int rc = renameat2(S.root, rf, S.root, rt, flags) == 0 ? 0 : -errno;
  if (rc == 0 && gone > 0) used_add(-gone);
  pthread_mutex_unlock(&S.cap_mu);
  return rc;
}

static int tfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
  int r = fi ? fchmod((int)fi->fh, mode) : fchmodat(S.root, rel(path), mode, 0);
  return r == 0 ? 0 : -errno;
}

static int tfs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
  int r = fi ? fchown((int)fi->fh, uid, gid)
             : fchownat(S.root, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);
  return r == 0 ? 0 : -errno;
}

static int do_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
  if (fi) return ftruncate((int)fi->fh, size) == 0 ? 0 : -errno;
  int fd = openat(S.root, rel(path), O_WRONLY);
  if (fd < 0) return -errno;
  int rc = ftruncate(fd, size) == 0 ? 0 : -errno;
  close(fd);
  return rc;
}

static int64_t cur_size(const char *path, struct fuse_file_info *fi) {
  struct stat st;
  int r = fi ? fstat((int)fi->fh, &st) : fstatat(S.root, rel(path), &st, AT_SYMLINK_NOFOLLOW);
  return r == 0 && S_ISREG(st.st_mode) ? st.st_size : -1;
}

static int tfs_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
  if (!cap_on()) return do_truncate(path, size, fi);
  pthread_mutex_lock(&S.cap_mu);
  int64_t before = cur_size(path, fi);
  int rc;
  if (before >= 0 && !fits(size - before)) {
    S.enospc++;
    rc = -ENOSPC;
  } else {
    rc = do_truncate(path, size, fi);
    if (rc == 0 && before >= 0) used_add(size - before);
  }
  pthread_mutex_unlock(&S.cap_mu);
  return rc;
}

static int tfs_utimens(const char *path, const struct timespec ts[2], struct fuse_file_info *fi) {
  int r = fi ? futimens((int)fi->fh, ts) : utimensat(S.root, rel(path), ts, AT_SYMLINK_NOFOLLOW);
  return r == 0 ? 0 : -errno;
}

/* open and create: the backing file with the caller's flags, less O_DIRECT (whose alignment
 * rules the callers' offsets need not meet; the kernel's FUSE side already bypasses its
 * cache for O_DIRECT opens) */
static int do_open(const char *path, int flags, mode_t mode, struct fuse_file_info *fi) {
  const char *r = rel(path);
  flags &= ~O_DIRECT;
  flags |= O_CLOEXEC;
  int64_t before = 0;
  if (cap_on()) {
    pthread_mutex_lock(&S.cap_mu);
    if (flags & O_TRUNC) before = size_at(r, NULL);
  }
  int fd = openat(S.root, r, flags, mode);
  int e = errno;
  if (cap_on()) {
    if (fd >= 0 && (flags & O_TRUNC) && before > 0) used_add(-before);
    pthread_mutex_unlock(&S.cap_mu);
  }
  if (fd < 0) return -e;
  if (flags & O_CREAT) chown_to_caller(r);
  fi->fh = (uint64_t)fd;
  return 0;
}

static int tfs_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
  return do_open(path, fi->flags | O_CREAT, mode, fi);
}

static int tfs_open(const char *path, struct fuse_file_info *fi) {
  return do_open(path, fi->flags & ~O_CREAT, 0, fi);
}

static int tfs_read(const char *path, char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi) {
  (void)path;
  __atomic_add_fetch(&S.nreads, 1, __ATOMIC_RELAXED);
  size_t done = 0;
  while (done < size) {
    size_t n = size - done < PIECE_BYTES ? size - done : PIECE_BYTES;
    if (S.rbucket.rate > 0) bucket_take(&S.rbucket, n);
    ssize_t got = pread((int)fi->fh, buf + done, n, off + (off_t)done);
    if (got < 0) return done ? (int)done : -errno;
    if (S.rbucket.rate <= 0) __atomic_add_fetch(&S.rbucket.bytes, (uint64_t)got, __ATOMIC_RELAXED);
    done += (size_t)got;
    if ((size_t)got < n) break; /* end of file */
  }
  return (int)done;
}

/* pwrite all of buf; with a capacity, check and account under cap_mu */
static ssize_t write_piece(int fd, const char *buf, size_t n, off_t off) {
  if (!cap_on()) {
    size_t done = 0;
    while (done < n) {
      ssize_t w = pwrite(fd, buf + done, n - done, off + (off_t)done);
      if (w < 0) return done ? (ssize_t)done : -errno;
      done += (size_t)w;
    }
    return (ssize_t)done;
  }
  pthread_mutex_lock(&S.cap_mu);
  struct stat st;
  ssize_t rc;
  if (fstat(fd, &st) != 0) {
    rc = -errno;
  } else {
    int64_t end = (int64_t)off + (int64_t)n;
    int64_t growth = S_ISREG(st.st_mode) && end > st.st_size ? end - st.st_size : 0;
    if (!fits(growth)) {
      S.enospc++;
      rc = -ENOSPC;
    } else {
      size_t done = 0;
      rc = 0;
      while (done < n) {
        ssize_t w = pwrite(fd, buf + done, n - done, off + (off_t)done);
        if (w < 0) {
          rc = -errno;
          break;
        }
        done += (size_t)w;
      }
      if (done) rc = (ssize_t)done;
      struct stat st2;
      if (S_ISREG(st.st_mode) && fstat(fd, &st2) == 0) used_add(st2.st_size - st.st_size);
    }
  }
  pthread_mutex_unlock(&S.cap_mu);
  return rc;
}

static int tfs_write(const char *path, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi) {
  (void)path;
  __atomic_add_fetch(&S.nwrites, 1, __ATOMIC_RELAXED);
  uint64_t m = __atomic_load_n(&S.max_write, __ATOMIC_RELAXED);
  while (size > m && !__atomic_compare_exchange_n(&S.max_write, &m, size, 0, __ATOMIC_RELAXED,
                                                  __ATOMIC_RELAXED)) {
  }
  size_t done = 0;
  while (done < size) {
    size_t n = size - done < PIECE_BYTES ? size - done : PIECE_BYTES;
    bucket_take(&S.wbucket, n);
    ssize_t w = write_piece((int)fi->fh, buf + done, n, off + (off_t)done);
    if (w < 0) {
      if (done == 0) return (int)w;
      break;
    }
    done += (size_t)w;
  }
  /* start the backing file system's writeback of what was just written (asynchronously), so
   * that dirty data does not pile up in its page cache for a later fsync to pay for */
  if (S.kick_writeback) sync_file_range((int)fi->fh, off, (off_t)done, SYNC_FILE_RANGE_WRITE);
  return (int)done;
}

static int tfs_statfs(const char *path, struct statvfs *sv) {
  (void)path;
  if (fstatvfs(S.root, sv) != 0) return -errno;
  if (cap_on()) {
    pthread_mutex_lock(&S.cap_mu);
    int64_t used = S.used;
    pthread_mutex_unlock(&S.cap_mu);
    uint64_t real_free = (uint64_t)sv->f_bavail * sv->f_frsize;
    uint64_t cap_free = used < S.capacity ? (uint64_t)(S.capacity - used) : 0;
    uint64_t freeb = cap_free < real_free ? cap_free : real_free;
    sv->f_bsize = sv->f_frsize = 4096;
    sv->f_blocks = (fsblkcnt_t)(S.capacity / 4096);
    sv->f_bfree = sv->f_bavail = (fsblkcnt_t)(freeb / 4096);
  }
  return 0;
}

static int tfs_flush(const char *path, struct fuse_file_info *fi) {
  (void)path;
  /* close a duplicate: what close() of the caller's descriptor would have done */
  int fd = dup((int)fi->fh);
  if (fd < 0) return -errno;
  return close(fd) == 0 ? 0 : -errno;
}

static int tfs_release(const char *path, struct fuse_file_info *fi) {
  (void)path;
  close((int)fi->fh);
  return 0;
}

static int tfs_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
  (void)path;
  int r = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);
  return r == 0 ? 0 : -errno;
}

static int tfs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi) {
  (void)path;
  int fd = dirfd((DIR *)(uintptr_t)fi->fh);
  int r = datasync ? fdatasync(fd) : fsync(fd);
  return r == 0 ? 0 : -errno;
}

static int tfs_fallocate(const char *path, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi) {
  (void)path;
  int fd = (int)fi->fh;
  if (!cap_on()) return fallocate(fd, mode, off, len) == 0 ? 0 : -errno;
  pthread_mutex_lock(&S.cap_mu);
  struct stat st, st2;
  int rc;
  if (fstat(fd, &st) != 0) {
    rc = -errno;
  } else {
    int64_t end = (int64_t)off + (int64_t)len;
    int grows = !(mode & FALLOC_FL_KEEP_SIZE) && end > st.st_size;
    if (grows && !fits(end - st.st_size)) {
      S.enospc++;
      rc = -ENOSPC;
    } else {
      rc = fallocate(fd, mode, off, len) == 0 ? 0 : -errno;
      if (fstat(fd, &st2) == 0) used_add(st2.st_size - st.st_size);
    }
  }
  pthread_mutex_unlock(&S.cap_mu);
  return rc;
}

static off_t tfs_lseek(const char *path, off_t off, int whence, struct fuse_file_info *fi) {
  (void)path;
  off_t r = lseek((int)fi->fh, off, whence);
  return r >= 0 ? r : -errno;
}

static const struct fuse_operations tfs_ops = {
    .init = tfs_init,
    .destroy = tfs_destroy,
    .getattr = tfs_getattr,
    .access = tfs_access,
    .readlink = tfs_readlink,
    .opendir = tfs_opendir,
    .readdir = tfs_readdir,
    .releasedir = tfs_releasedir,
    .mknod = tfs_mknod,
    .mkdir = tfs_mkdir,
    .symlink = tfs_symlink,
    .link = tfs_link,
    .unlink = tfs_unlink,
    .rmdir = tfs_rmdir,
    .rename = tfs_rename,
    .chmod = tfs_chmod,
    .chown = tfs_chown,
    .truncate = tfs_truncate,
    .utimens = tfs_utimens,
    .create = tfs_create,
    .open = tfs_open,
    .read = tfs_read,
    .write = tfs_write,
    .statfs = tfs_statfs,
    .flush = tfs_flush,
    .release = tfs_release,
    .fsync = tfs_fsync,
    .fsyncdir = tfs_fsyncdir,
    .fallocate = tfs_fallocate,
    .lseek = tfs_lseek,
};

/* ------------------------------------------------------------------ command line */

static void usage(const char *prog) {
  fprintf(stderr,
          "usage: %s [--rate-mbps R] [--read-rate-mbps R2] [--capacity-bytes C]\n"
          "          [--burst-bytes B] [--no-writeback-kick]\n"
          "          <backing_dir> <mountpoint> [fuse options: -f -d -o ...]\n"
          "  rates in MB/s (1e6 bytes/s), 0 = unthrottled; sizes in bytes, optional K/M/G\n",
          prog);
}

static int parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || v < 0) return -1;
  *out = v;
  return 0;
}

static int parse_bytes(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || v < 0) return -1;
  double mul = 1;
  switch (*end) {
    case 'k': case 'K': mul = 1024.0; end++; break;
    case 'm': case 'M': mul = 1048576.0; end++; break;
    case 'g': case 'G': mul = 1073741824.0; end++; break;
    default: break;
  }
  if (mul > 1 && *end == 'i') end++;
  if (mul > 1 && (*end == 'B' || *end == 'b')) end++;
  if (*end) return -1;
  *out = (int64_t)(v * mul);
  return 0;
}

/* "--name value" or "--name=value": the value if argv[*i] is that option, else NULL */
static const char *opt_value(int argc, char **argv, int *i, const char *name, int *bad) {
  size_t len = strlen(name);
  if (strncmp(argv[*i], name, len) != 0) return NULL;
  if (argv[*i][len] == '=') return argv[*i] + len + 1;
  if (argv[*i][len] != '\0') return NULL;
  if (*i + 1 >= argc) {
    *bad = 1;
    return NULL;
  }
  return argv[++*i];
}

int main(int argc, char **argv) {
  double rate = 0, read_rate = 0;
  int64_t burst = -1;
  const char *backing = NULL, *mountpoint = NULL;
  char **fargv = calloc((size_t)argc + 8, sizeof *fargv);
  int fargc = 0, bad = 0;
  if (!fargv) return 1;
  fargv[fargc++] = argv[0];
  /* our defaults first: a later -o on the command line overrides them */
  fargv[fargc++] = "-o";
  fargv[fargc++] = "fsname=throttlefs,subtype=throttlefs,max_threads=64,max_idle_threads=16";
  for (int i = 1; i < argc; i++) {
    const char *v;
    if ((v = opt_value(argc, argv, &i, "--rate-mbps", &bad))) {
      if (parse_double(v, &rate)) bad = 1;
    } else if ((v = opt_value(argc, argv, &i, "--read-rate-mbps", &bad))) {
      if (parse_double(v, &read_rate)) bad = 1;
    } else if ((v = opt_value(argc, argv, &i, "--capacity-bytes", &bad))) {
      if (parse_bytes(v, &S.capacity)) bad = 1;
    } else if ((v = opt_value(argc, argv, &i, "--burst-bytes", &bad))) {
      if (parse_bytes(v, &burst) || burst <= 0) bad = 1;
    } else if (!strcmp(argv[i], "--no-writeback-kick")) {
      S.kick_writeback = 0;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(argv[0]);
      return 0;
    } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
      fargv[fargc++] = argv[i++];
      fargv[fargc++] = argv[i];
    } else if (argv[i][0] == '-') {
      fargv[fargc++] = argv[i];
    } else if (!backing) {
      backing = argv[i];
    } else if (!mountpoint) {
      mountpoint = argv[i];
      fargv[fargc++] = argv[i];
    } else {
      bad = 1;
    }
    if (bad) {
      fprintf(stderr, "throttlefs: bad argument near '%s'\n", argv[i]);
      usage(argv[0]);
      return 2;
    }
  }
  if (!backing || !mountpoint) {
    usage(argv[0]);
    return 2;
  }
  S.root_path = realpath(backing, NULL);
  if (!S.root_path) {
    fprintf(stderr, "throttlefs: backing directory %s: %s\n", backing, strerror(errno));
    return 1;
  }
  S.root = open(S.root_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (S.root < 0) {
    fprintf(stderr, "throttlefs: backing directory %s: %s\n", S.root_path, strerror(errno));
    return 1;
  }
  S.wbucket.rate = rate * 1e6;
  S.rbucket.rate = read_rate * 1e6;
  for (int k = 0; k < 2; k++) {
    struct bucket *b = k ? &S.rbucket : &S.wbucket;
    if (b->rate <= 0) continue;
    const double depth = burst > 0 ? (double)burst : DEFAULT_BURST;
    b->burst_s = depth / b->rate;
  }
  if (cap_on()) S.used = recount_used();
  umask(0); /* modes arrive with the caller's umask applied */
  fprintf(stderr,
          "throttlefs: %s on %s, write %.1f MB/s (burst %.0f bytes), read %s%.1f MB/s, capacity ",
          S.root_path, mountpoint, rate, S.wbucket.burst_s * S.wbucket.rate,
          read_rate > 0 ? "" : "unthrottled ", read_rate);
  if (cap_on())
    fprintf(stderr, "%" PRId64 " bytes (%" PRId64 " used)\n", S.capacity, S.used);
  else
    fprintf(stderr, "unlimited\n");
  int rc = fuse_main(fargc, fargv, &tfs_ops, NULL);
  free(fargv);
  return rc;
}
