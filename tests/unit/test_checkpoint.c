/* checkpoint_io: options, layout, names, stall model, file operations. */
#include <criterion/criterion.h>
#include <sys/wait.h>
#include <criterion/redirect.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bench/checkpoint/ch_ckpt.h"
#include "bench/checkpoint/ch_ckpt_io.h"
#include "bench/checkpoint/ch_ckpt_mem.h"
#include "base/ch_common.h"
#include "base/ch_parse.h"

static int parse(struct ch_ckpt_opts *o, const char *line)
{
	static char buf[512]; /* the options point into it */
	char *argv[32];
	int argc = 0;
	char *tok;

	snprintf(buf, sizeof(buf), "checkpoint_io %s", line);
	for (tok = strtok(buf, " "); tok && argc < 31; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	argv[argc] = NULL;
	return ch_ckpt_opts_parse(argc, argv, o);
}

Test(checkpoint, opts_defaults_and_values)
{
	struct ch_ckpt_opts o;
	cr_assert_eq(parse(&o, "--dir /x --size 1G --interval 30m"), 0);
	cr_assert_str_eq(o.dir, "/x");
	cr_assert_eq(o.size_bytes, 1ull << 30);
	cr_assert_float_eq(o.interval_sec, 1800.0, 1e-9);
	cr_assert_eq(o.files_per_rank, 1);
	cr_assert_eq(o.block_bytes, 16ull << 20);
	cr_assert_float_eq(o.timeout_sec, 600.0, 1e-9);
	cr_assert_eq(o.scaling, 1);
	cr_assert_eq(o.load, CH_CKPT_LOAD_AUTO);
	cr_assert_eq(o.corrupt_rank, -1);
	cr_assert_eq(parse(&o, "--dir /x --params 7e9 --files-per-rank 4 --load cpu --no-scaling --keep"), 0);
	cr_assert_eq(o.size_bytes, 112000000000ull); /* 7e9 x 16 */
	cr_assert_eq(o.files_per_rank, 4);
	cr_assert_eq(o.load, CH_CKPT_LOAD_CPU);
	cr_assert_eq(o.scaling, 0);
	cr_assert_eq(o.keep, 1);
	cr_assert_eq(parse(&o, "--dir /x --params 1e3 --bytes-per-param 14"), 0);
	cr_assert_eq(o.size_bytes, 14000);
}

Test(checkpoint, opts_bad, .init = cr_redirect_stderr)
{
	struct ch_ckpt_opts o;
	static const char *const bad[] = {
		"--size 1G",                          /* no --dir */
		"--dir /x",                           /* no size */
		"--dir /x --size 1G --params 7e9",    /* both */
		"--dir /x --size 0",
		"--dir /x --size 1Q",
		"--dir /x --size 1G --bytes-per-param 2",
		"--dir /x --size 1G --interval 0",
		"--dir /x --size 1G --interval -5m",
		"--dir /x --size 1G --interval 5parsecs",
		"--dir /x --size 1G --files-per-rank 0",
		"--dir /x --size 1G --block-size 1K",
		"--dir /x --size 1G --load disk",
		"--dir /x --size 1G --timeout -1",
		"--dir /x --size 1G --min-time 1",
		"--dir /x --size 1G stray",
		"--dir /x --size 1G --bogus",
	};
	size_t i;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(parse(&o, bad[i]), CH_ERR_USAGE, "'%s' accepted", bad[i]);
}

Test(checkpoint, shards_add_up_exactly)
{
	uint64_t totals[] = { 1, 7, 1000, 1ull << 30, (1ull << 30) + 3 };
	int ns[] = { 1, 2, 3, 4, 7 };
	size_t i, j;
	for (i = 0; i < sizeof(totals) / sizeof(totals[0]); i++)
		for (j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
			uint64_t sum = 0, mn = UINT64_MAX, mx = 0;
			int r;
			for (r = 0; r < ns[j]; r++) {
				uint64_t s = ch_ckpt_shard_bytes(totals[i], ns[j], r);
				sum += s;
				mn = s < mn ? s : mn;
				mx = s > mx ? s : mx;
			}
			cr_assert_eq(sum, totals[i]);
			cr_assert_leq(mx - mn, 1);
		}
	cr_assert_eq(ch_ckpt_shard_bytes(10, 4, 0), 3);
	cr_assert_eq(ch_ckpt_shard_bytes(10, 4, 1), 3);
	cr_assert_eq(ch_ckpt_shard_bytes(10, 4, 2), 2);
	cr_assert_eq(ch_ckpt_shard_bytes(10, 4, 4), 0);
	/* files: 10 bytes in 3 files are 4, 3, 3 */
	cr_assert_eq(ch_ckpt_file_offset(10, 3, 0), 0);
	cr_assert_eq(ch_ckpt_file_offset(10, 3, 1), 4);
	cr_assert_eq(ch_ckpt_file_offset(10, 3, 2), 7);
	cr_assert_eq(ch_ckpt_file_offset(10, 3, 3), 10);
}

Test(checkpoint, writer_points)
{
	int p[CH_CKPT_MAX_WRITER_POINTS], n;
	n = ch_ckpt_writer_points(1, p);
	cr_assert_eq(n, 1);
	cr_assert_eq(p[0], 1);
	n = ch_ckpt_writer_points(2, p);
	cr_assert_eq(n, 2);
	cr_assert(p[0] == 1 && p[1] == 2);
	n = ch_ckpt_writer_points(4, p);
	cr_assert_eq(n, 3);
	cr_assert(p[0] == 1 && p[1] == 2 && p[2] == 4);
	n = ch_ckpt_writer_points(64, p);
	cr_assert_eq(n, 4);
	cr_assert(p[0] == 1 && p[1] == 16 && p[2] == 32 && p[3] == 64);
	n = ch_ckpt_writer_points(6, p);
	cr_assert_eq(n, 3);
	cr_assert(p[0] == 1 && p[1] == 3 && p[2] == 6);
}

Test(checkpoint, host_bytes)
{
	/* the buffers hold the node's shards; a tmpfs stage holds them again */
	cr_assert_eq(ch_ckpt_host_bytes(3ull << 30, 0), 3ull << 30);
	cr_assert_eq(ch_ckpt_host_bytes(3ull << 30, 1), 6ull << 30);
	cr_assert_eq(ch_ckpt_host_bytes(UINT64_MAX / 2 + 1, 1), UINT64_MAX);
	cr_assert_eq(ch_ckpt_host_bytes(0, 1), 0);
}

Test(checkpoint, names)
{
	char b[256];
	cr_assert_str_eq(ch_ckpt_file_name(b, sizeof(b), "/d", "sync", 3, 12), "/d/checkpoint_io.sync.r00003.f012");
	cr_assert_null(ch_ckpt_file_name(b, 10, "/d", "sync", 3, 12));
	cr_assert(ch_ckpt_is_own_name("checkpoint_io.sync.r00003.f012"));
	cr_assert(ch_ckpt_is_own_name("checkpoint_io.stage.r00000.f000"));
	cr_assert(ch_ckpt_is_own_name("checkpoint_io.copy.r123456.f1024"));
	cr_assert(ch_ckpt_is_own_name("checkpoint_io.w16.r00001.f000"));
	cr_assert_not(ch_ckpt_is_own_name("checkpoint_io.sync.r00003.f012.bak"));
	cr_assert_not(ch_ckpt_is_own_name("checkpoint_io.other.r00003.f012"));
	cr_assert_not(ch_ckpt_is_own_name("checkpoint_io.w.r00001.f000"));
	cr_assert_not(ch_ckpt_is_own_name("model.pt"));
	cr_assert_not(ch_ckpt_is_own_name("checkpoint_io.sync.r3.f0"));
}

/* the canary's textbook case: 5.5 min every 30 min is 18.3% of wall-clock */
Test(checkpoint, stall_textbook)
{
	struct ch_ckpt_stall s;
	cr_assert_eq(ch_ckpt_stall_compute(330, 30, 600, 1800, &s), 0);
	cr_assert_float_eq(s.sync_frac, 330.0 / 1800, 1e-12);
	cr_assert_float_eq(s.staged_frac, 30.0 / 1800, 1e-12);
	cr_assert_float_eq(s.recovered_frac, 300.0 / 1800, 1e-12);
	cr_assert_float_eq(s.sync_gain_frac, 1800.0 / 1470 - 1, 1e-12);
	cr_assert_float_eq(s.staging_gain_frac, (1770.0 / 1800) / (1470.0 / 1800) - 1, 1e-12);
	cr_assert_eq(s.copy_keeps_up, 1);
	cr_assert_eq(ch_ckpt_stall_compute(330, 30, 1800, 1800, &s), 0);
	cr_assert_eq(s.copy_keeps_up, 0);
}

Test(checkpoint, stall_bad, .init = cr_redirect_stderr)
{
	struct ch_ckpt_stall s;
	cr_assert_eq(ch_ckpt_stall_compute(1, 1, 1, 0, &s), CH_ERR_USAGE);
	cr_assert_eq(ch_ckpt_stall_compute(-1, 1, 1, 10, &s), CH_ERR_USAGE);
	cr_assert_eq(ch_ckpt_stall_compute(10, 1, 1, 10, &s), CH_ERR_USAGE);
}

Test(checkpoint, duration)
{
	double v;
	cr_assert_eq(ch_parse_duration("--interval", "30m", &v), 0);
	cr_assert_float_eq(v, 1800, 1e-9);
	cr_assert_eq(ch_parse_duration("--interval", "2h", &v), 0);
	cr_assert_float_eq(v, 7200, 1e-9);
	cr_assert_eq(ch_parse_duration("--interval", "1600ms", &v), 0);
	cr_assert_float_eq(v, 1.6, 1e-12);
	cr_assert_eq(ch_parse_duration("--interval", "12", &v), 0);
	cr_assert_float_eq(v, 12, 1e-12);
}

static char tmpl[64];

static void mkscratch(void)
{
	snprintf(tmpl, sizeof(tmpl), "/tmp/test_checkpoint.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpl));
}

static void rmscratch(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	(void)!system(cmd);
}

Test(checkpoint, write_read_corrupt, .init = mkscratch, .fini = rmscratch)
{
	unsigned char buf[100000], scratch[4096];
	char path[128];
	struct ch_ckpt_ioerr e;
	uint64_t done;
	uint32_t crc;
	struct stat st;

	ch_ckpt_fill(buf, sizeof(buf), 7);
	crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf, sizeof(buf));
	snprintf(path, sizeof(path), "%s/checkpoint_io.sync.r00000.f000", tmpl);
	cr_assert_eq(ch_ckpt_write_file(path, buf, sizeof(buf), 4096, 1, &done, &e), 0);
	cr_assert_eq(done, sizeof(buf));
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq((uint64_t)st.st_size, sizeof(buf));
	cr_assert_eq(ch_ckpt_read_check(path, sizeof(buf), crc, scratch, sizeof(scratch), &e), 0);
	/* a second write to the same name is refused (O_EXCL) */
	cr_assert_eq(ch_ckpt_write_file(path, buf, sizeof(buf), 4096, 1, &done, &e), CH_ERR_RUNTIME);
	cr_assert_eq(e.op, CH_CKPT_OP_OPEN);
	cr_assert_eq(ch_ckpt_read_check(path, sizeof(buf) + 1, crc, scratch, sizeof(scratch), &e), CH_ERR_CHECK);
	cr_assert_eq(e.op, CH_CKPT_OP_SHORT);
	cr_assert_eq(ch_ckpt_corrupt_byte(path, 5000), 0);
	cr_assert_eq(ch_ckpt_read_check(path, sizeof(buf), crc, scratch, sizeof(scratch), &e), CH_ERR_CHECK);
	cr_assert_eq(e.op, CH_CKPT_OP_CRC);
}

Test(checkpoint, copy, .init = mkscratch, .fini = rmscratch)
{
	unsigned char buf[50000], scratch[1000];
	char src[128], dst[128];
	struct ch_ckpt_ioerr e;
	uint64_t done;
	int on_dst;

	ch_ckpt_fill(buf, sizeof(buf), 1);
	snprintf(src, sizeof(src), "%s/a", tmpl);
	snprintf(dst, sizeof(dst), "%s/b", tmpl);
	cr_assert_eq(ch_ckpt_write_file(src, buf, sizeof(buf), 8192, 0, &done, &e), 0);
	cr_assert_eq(ch_ckpt_copy_file(src, dst, scratch, sizeof(scratch), &done, &on_dst, &e), 0);
	cr_assert_eq(done, sizeof(buf));
	cr_assert_eq(ch_ckpt_read_check(dst, sizeof(buf), (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf, sizeof(buf)),
					scratch, sizeof(scratch), &e), 0);
	snprintf(src, sizeof(src), "%s/missing", tmpl);
	cr_assert_eq(ch_ckpt_copy_file(src, dst, scratch, sizeof(scratch), &done, &on_dst, &e), CH_ERR_RUNTIME);
	cr_assert_eq(on_dst, 0);
	cr_assert_eq(e.op, CH_CKPT_OP_OPEN);
}

Test(checkpoint, dir_prepare, .init = mkscratch, .fini = rmscratch)
{
	char d[128], f[160];
	uint64_t avail;
	int created, fd;

	cr_redirect_stderr();
	snprintf(d, sizeof(d), "%s/new", tmpl);
	cr_assert_eq(ch_ckpt_dir_prepare("--dir", d, 1, NULL, &created, &avail), 0);
	cr_assert_eq(created, 1);
	cr_assert_gt(avail, 0);
	/* our own leftovers are fine, and ch_ckpt_dir_clean removes them */
	snprintf(f, sizeof(f), "%s/checkpoint_io.copy.r00001.f000", d);
	fd = open(f, O_CREAT | O_WRONLY, 0644);
	close(fd);
	cr_assert_eq(ch_ckpt_dir_prepare("--dir", d, 1, NULL, &created, &avail), 0);
	cr_assert_eq(created, 0);
	cr_assert_eq(ch_ckpt_dir_clean(d), 1);
	/* a foreign file is refused */
	snprintf(f, sizeof(f), "%s/model.pt", d);
	fd = open(f, O_CREAT | O_WRONLY, 0644);
	close(fd);
	cr_assert_eq(ch_ckpt_dir_prepare("--dir", d, 1, NULL, &created, &avail), CH_ERR_USAGE);
	cr_assert_eq(ch_ckpt_dir_clean(d), 0);
	/* no room: more than the file system has */
	unlink(f);
	cr_assert_eq(ch_ckpt_dir_prepare("--dir", d, UINT64_MAX, NULL, &created, &avail), CH_ERR_USAGE);
	/* a file is not a directory; a missing parent is not created */
	cr_assert_eq(ch_ckpt_dir_prepare("--dir", "/proc/self/status", 1, NULL, &created, &avail), CH_ERR_USAGE);
	snprintf(d, sizeof(d), "%s/no/such", tmpl);
	cr_assert_eq(ch_ckpt_dir_prepare("--dir", d, 1, NULL, &created, &avail), CH_ERR_USAGE);
}

/* one run per directory: the lock file (two runs deleted each other's files) */
Test(checkpoint, lock_one_run_per_dir, .init = mkscratch, .fini = rmscratch)
{
	char f[160], me[256] = "", line[300];
	int made, fd;
	pid_t child;

	cr_redirect_stderr();
	gethostname(me, sizeof(me) - 1);
	cr_assert_eq(ch_ckpt_lock("--dir", tmpl, "hostA", 100, &made), 0);
	cr_assert_eq(made, 1);
	/* the same run (another node's rank, a shared --dir): fine, not made */
	cr_assert_eq(ch_ckpt_lock("--dir", tmpl, "hostA", 100, &made), 0);
	cr_assert_eq(made, 0);
	/* another run, whose rank 0 is elsewhere: refused */
	cr_assert_eq(ch_ckpt_lock("--dir", tmpl, "hostB", 200, &made), CH_ERR_USAGE);
	/* the lock file is not foreign to the emptiness check, and is kept by the clean */
	{
		uint64_t avail;
		int created;
		cr_assert_eq(ch_ckpt_dir_prepare("--dir", tmpl, 1, NULL, &created, &avail), 0);
		cr_assert_eq(ch_ckpt_dir_clean(tmpl), 0);
	}
	ch_ckpt_unlock(tmpl);
	/* a run of this host that is gone (a child that exited): replaced */
	child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	snprintf(f, sizeof(f), "%s/%s", tmpl, CH_CKPT_LOCK_NAME);
	fd = open(f, O_CREAT | O_WRONLY | O_EXCL, 0644);
	cr_assert(fd >= 0);
	snprintf(line, sizeof(line), "%s %ld\n", me, (long)child);
	cr_assert_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	close(fd);
	cr_assert_eq(ch_ckpt_lock("--dir", tmpl, "hostC", 300, &made), 0);
	cr_assert_eq(made, 1);
	/* a live run of this host (this process): refused */
	ch_ckpt_unlock(tmpl);
	fd = open(f, O_CREAT | O_WRONLY | O_EXCL, 0644);
	snprintf(line, sizeof(line), "%s %ld\n", me, (long)getpid());
	cr_assert_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	close(fd);
	cr_assert_eq(ch_ckpt_lock("--dir", tmpl, "hostC", 300, &made), CH_ERR_USAGE);
	ch_ckpt_unlock(tmpl);
}

Test(checkpoint, mount_of)
{
	struct ch_ckpt_mount m;
	cr_assert_eq(ch_ckpt_mount_of("/proc/self", &m), 0);
	cr_assert_str_eq(m.point, "/proc");
	cr_assert_str_eq(m.fstype, "proc");
	cr_assert_eq(ch_ckpt_mount_of("/no/such/path", &m), CH_ERR_RUNTIME);
}

Test(checkpoint, fill_differs_by_seed)
{
	unsigned char a[64], b[64], c[64];
	ch_ckpt_fill(a, sizeof(a), 1);
	ch_ckpt_fill(b, sizeof(b), 2);
	ch_ckpt_fill(c, sizeof(c), 1);
	cr_assert_neq(memcmp(a, b, sizeof(a)), 0);
	cr_assert_eq(memcmp(a, c, sizeof(a)), 0);
}
