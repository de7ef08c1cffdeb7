/*
 * hr_input.h - what health_report reads: finding the input files, and the
 * list of input problems (skipped, truncated or partial input) that every
 * output of the report shows.
 */
#ifndef HR_INPUT_H
#define HR_INPUT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How bad an input problem is. */
enum hr_issue_kind {
	HR_ISSUE_SKIPPED = 0, /* input (a file, a row, a record) was not used:
				 unreadable, malformed, unknown or unsupported */
	HR_ISSUE_TRUNCATED,   /* understood and used, but the run or file ends
				 early (crash, cut-off log, killed run) */
	HR_ISSUE_NOTE         /* used as is; something the reader should know */
};

/* One input problem. line and column are 1-based, 0 when not known. */
struct hr_issue {
	char *path;
	int line;
	int column;
	int kind;   /* enum hr_issue_kind */
	char *msg;  /* git-style message: lower case, offending value in quotes */
};

/* A growable list of issues. Zero-initialise. */
struct hr_issues {
	struct hr_issue *v;
	size_t n, cap;
};

/**
 * hr_issue_add - record an input problem.
 * @l:    [in,out] list.
 * @kind: [in] enum hr_issue_kind.
 * @path: [in] file (copied); @line, @col: [in] 1-based position or 0.
 * @fmt:  [in] printf format of the message.
 * Returns 0, or -1 when out of memory (the issue is lost).
 */
int hr_issue_add(struct hr_issues *l, int kind, const char *path, int line,
		 int col, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/** hr_issues_count - number of issues of @kind (-1: all kinds). */
size_t hr_issues_count(const struct hr_issues *l, int kind);

/** hr_issue_kind_name - "skipped", "truncated" or "note". */
const char *hr_issue_kind_name(int kind);

/**
 * hr_issue_format - "PATH:LINE:COL: KIND: MSG" (LINE and COL left out
 * when 0) into @buf of @n bytes. Returns @buf.
 */
char *hr_issue_format(const struct hr_issue *is, char *buf, size_t n);

/** hr_issues_release - free every issue and zero @l. */
void hr_issues_release(struct hr_issues *l);

/* The input files, in a stable order. */
struct hr_file_list {
	char **paths;
	unsigned char *named;  /* 1: named on the command line; 0: found in a directory */
	size_t n, cap;
};

/**
 * hr_collect_inputs - expand the command line's inputs into files.
 * @args:        [in] files or directories.
 * @nargs:       [in] number of @args.
 * @exclude_dir: [in] the report's own output directory, or NULL (compared
 *               by device and inode): its profile.json, report.md,
 *               report.html and health.prom are left out; every other file
 *               in it and below it is an input like any other (an --out
 *               inside an input tree drops nothing).
 * @out:         [out] the files: every file named in @args, and below each
 *               directory (recursively, in name order, symbolic links
 *               followed, each directory once) every file whose name ends
 *               in .json, .txt, .log or .out and does not start with '.'.
 *               Free with hr_file_list_release().
 * @issues:      [in,out] unreadable subdirectories are recorded as skipped.
 * Returns 0; CH_ERR_USAGE when an argument does not exist or cannot be
 * read (message printed naming it); CH_ERR_RUNTIME when out of memory.
 */
int hr_collect_inputs(char *const *args, int nargs, const char *exclude_dir,
		      struct hr_file_list *out, struct hr_issues *issues);

/**
 * hr_collect_files - hr_collect_inputs() with the file names to look for.
 * @exts: [in] NULL-terminated list of name endings searched for in the
 *        directories (case-insensitive, e.g. ".json"); NULL: .json, .txt,
 *        .log, .out.
 * Only regular files are listed: a named pipe, socket or device (named on
 * the command line, or in a directory with a searched-for name) is recorded
 * as skipped and never opened, so it cannot block the walk. A directory met
 * again (a symbolic-link cycle, or named twice) is recorded as a note and
 * not read again. Returns as hr_collect_inputs().
 */
int hr_collect_files(char *const *args, int nargs, const char *exclude_dir,
		     const char *const *exts, struct hr_file_list *out,
		     struct hr_issues *issues);

/**
 * hr_issues_print - print the issues as "input problems (N):" and one
 * "  PATH:LINE:COL: KIND: MSG" line each (hr_issue_format()) to @f; nothing
 * when @l is empty.
 */
void hr_issues_print(FILE *f, const struct hr_issues *l);

/**
 * hr_inputs_verdict - the one rule of every entry point (health_report,
 * its canary and its history) on what the inputs gave: no input file found,
 * no usable input (no file contributed: each was skipped or is not an
 * input), and with --strict any skipped input problem, is a usage error
 * (exit 2). Notes (a file that is not an input, a directory visited twice)
 * never are.
 * @nfiles: [in] input files found; @nused: [in] files that contributed.
 * @is:     [in] the input problems; @strict: [in] --strict was given.
 * @msg:    [out] @n bytes: the error, without a program prefix; "" when none.
 * Returns 0, or CH_ERR_USAGE with @msg set (not printed).
 */
int hr_inputs_verdict(size_t nfiles, size_t nused, const struct hr_issues *is, int strict, char *msg, size_t n);

/** hr_file_list_release - free the list and zero it. */
void hr_file_list_release(struct hr_file_list *l);

#ifdef __cplusplus
}
#endif
#endif
