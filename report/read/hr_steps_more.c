/*
 * hr_steps_more.c - the step-log reader's number helpers, Megatron timer
 * names, and the formats of one line each: NeMo 2.0, nanoGPT, nanotron,
 * DeepSpeed's engine lines, PyTorch Lightning's progress lines
 * (interface: hr_steps_more.h; every figure's meaning, per GPU or per job,
 * per step or per log interval: docs/canary.md, "Step logs").
 */
#include "report/read/hr_steps_more.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- numbers */

const char *hr_steps_skip_sp(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

int hr_steps_num(const char *s, double *v, const char **end)
{
	char tmp[64];
	size_t o = 0;
	const char *q = hr_steps_skip_sp(s);
	char *e;

	while (*q && o + 1 < sizeof(tmp)) {
		if (isdigit((unsigned char)*q) || *q == '.' || *q == '-' || *q == '+' ||
		    ((*q == 'e' || *q == 'E') && o > 0 && isdigit((unsigned char)tmp[o - 1])))
			tmp[o++] = *q;
		else if (*q == ',' && o > 0 && isdigit((unsigned char)tmp[o - 1]) && isdigit((unsigned char)q[1]) &&
			 isdigit((unsigned char)q[2]) && isdigit((unsigned char)q[3]) &&
			 !isdigit((unsigned char)q[4]))
			; /* thousands separator */
		else
			break;
		q++;
	}
	tmp[o] = '\0';
	if (!o)
		return -1;
	errno = 0;
	*v = strtod(tmp, &e);
	if (e == tmp || *e || errno || !isfinite(*v))
		return -1;
	if (end)
		*end = s + (q - s);
	return 0;
}

int hr_steps_num_si(const char *s, double *v, const char **end)
{
	const char *e;
	if (hr_steps_num(s, v, &e))
		return -1;
	if (*e == 'k' || *e == 'K')
		*v *= 1e3, e++;
	else if (*e == 'M')
		*v *= 1e6, e++;
	else if (*e == 'G')
		*v *= 1e9, e++;
	else if (*e == 'T')
		*v *= 1e12, e++;
	if (end)
		*end = e;
	return 0;
}

/* where "key:" starts a field in @from (see hr_steps_key_num), or NULL */
static const char *key_at(const char *from, const char *key)
{
	size_t kl = strlen(key);
	const char *q = from;

	while ((q = strstr(q, key))) {
		if ((q == from || q[-1] == ' ' || q[-1] == '\t' || q[-1] == ',' || q[-1] == '|') && q[kl] == ':')
			return q + kl + 1;
		q += kl;
	}
	return NULL;
}

int hr_steps_key_num(const char *from, const char *key, double *v, int *present)
{
	const char *q = key_at(from, key);

	if (present)
		*present = q != NULL;
	return q ? hr_steps_num(q, v, NULL) : -1;
}

/* a "key: 14.2K" field of nanotron (SI suffix), NAN when absent */
static double key_si(const char *from, const char *key)
{
	const char *q = key_at(from, key);
	double v;
	return q && !hr_steps_num_si(q, &v, NULL) ? v : NAN;
}

static double key_or_nan(const char *from, const char *key)
{
	double v;
	return hr_steps_key_num(from, key, &v, NULL) ? NAN : v;
}

/* ------------------------------------------------------ Megatron timers */

int hr_steps_timer_phase(const char *name, int *parent)
{
	static const struct { const char *n; int ph; } map[] = {
		{ "forward-compute", HR_PH_FORWARD },
		{ "backward-compute", HR_PH_BACKWARD },
		{ "forward-backward", HR_PH_FWDBWD },
		{ "optimizer", HR_PH_OPTIMIZER },
		{ "batch-generator", HR_PH_INPUT },
		{ "all-grads-sync", HR_PH_ALLREDUCE },
		{ "grads-all-reduce", HR_PH_ALLREDUCE },
		{ "grads-reduce-scatter", HR_PH_ALLREDUCE },
		{ "params-all-gather", HR_PH_ALLREDUCE },
		{ "layernorm-grads-all-reduce", HR_PH_ALLREDUCE },
		{ "embedding-grads-all-reduce", HR_PH_ALLREDUCE },
		{ "backward-params-all-reduce", HR_PH_ALLREDUCE },
		{ "backward-layernorm-all-reduce", HR_PH_ALLREDUCE },
		{ "backward-embedding-all-reduce", HR_PH_ALLREDUCE },
		/* Megatron-DeepSpeed: "forward | backward (= backward-backward +
		 * backward-allreduce) | optimizer | batch generator" */
		{ "forward", HR_PH_FORWARD },
		{ "backward-backward", HR_PH_BACKWARD },
		{ "backward-allreduce", HR_PH_ALLREDUCE },
		{ "batch generator", HR_PH_INPUT },
	};
	size_t i;

	*parent = !strcmp(name, "backward-reduce-model-grads");
	if (*parent)
		return HR_PH_ALLREDUCE;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(name, map[i].n))
			return map[i].ph;
	return -1;
}

/* --------------------------------------------------------------- NeMo 2.0 */

/* "Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 |
 * global_batch_size: 1 | global_step: 120 | reduced_train_loss: 1.233 |
 * train_step_timing in s: 0.03146" (NeMo 2.0's progress printer).
 * Read: step_sec = train_step_timing (one step, NeMo's timing callback),
 * loss, global_batch (samples, the job's). Not read: consumed_samples (the
 * job's, cumulative); no tokens. */
static int nemo_line(const char *s, struct hr_step_rec *r, char *why, size_t whyn)
{
	const char *q = strstr(s, "Training epoch ");
	long ep, it, total;
	int nch = 0;
	double v;

	if (!q || sscanf(q, "Training epoch %ld, iteration %ld/%ld%n", &ep, &it, &total, &nch) < 3 || !nch)
		return HR_SM_NOT_MINE;
	r->format = HR_SF_NEMO;
	r->step = it;
	if (!hr_steps_key_num(q, "global_step", &v, NULL) && v >= 0 && v == floor(v))
		r->step = v > (double)HR_STEPS_MAX_STEP ? HR_STEPS_MAX_STEP + 1 : (long)v;
	if (hr_steps_key_num(q, "train_step_timing in s", &r->step_sec, NULL) || !(r->step_sec > 0)) {
		r->step_sec = NAN;
		snprintf(why, whyn, "NeMo 2.0 progress line without a readable 'train_step_timing in s'");
		/* a whole line of five fields or more: a variant (log_step_timing off) */
		return strstr(q, "reduced_train_loss:") ? HR_SM_VARIANT : HR_SM_MALFORMED;
	}
	r->loss = key_or_nan(q, "reduced_train_loss");
	r->global_batch = key_or_nan(q, "global_batch_size");
	return HR_SM_RECORD;
}

/* ---------------------------------------------------------------- nanoGPT */

/* "iter 2920: loss 3.9883, time 1099.34ms, mfu 15.34%" (nanoGPT train.py).
 * Read: step_sec = time (the one iteration just ended, all its micro-steps),
 * loss, mfu (this process's: a running average against an A100's 312
 * TFLOP/s); no tokens. */
static int nanogpt_line(const char *s, struct hr_step_rec *r, char *why, size_t whyn)
{
	const char *q = strstr(s, "iter "), *t, *m;
	long it;
	int nch = 0;
	double v;

	if (!q || (q != s && q[-1] != ' ') || sscanf(q, "iter %ld: loss%n", &it, &nch) < 1 || !nch)
		return HR_SM_NOT_MINE;
	r->format = HR_SF_NANOGPT;
	r->step = it;
	if (hr_steps_num(q + nch, &v, NULL))
		r->loss = NAN; /* "loss nan" */
	else
		r->loss = v;
	t = strstr(q, ", time ");
	if (!t || hr_steps_num(t + 7, &v, &t) || strncmp(t, "ms", 2) || !(v > 0)) {
		snprintf(why, whyn, "nanoGPT iter line without a readable 'time Xms' (cut off?)");
		return HR_SM_MALFORMED;
	}
	r->step_sec = v / 1e3;
	/* the running MFU: -100% until its fifth iteration (not yet measured) */
	if ((m = strstr(q, ", mfu ")) && !hr_steps_num(m + 6, &v, NULL) && v >= 0)
		r->mfu = v / 100;
	return HR_SM_RECORD;
}

/* --------------------------------------------------------------- nanotron */

/* "[INFO|DP=0|PP=0|TP=0|host]: iteration: 991 / 1000 | consumed_tokens: 634K |
 * elapsed_time_per_iteration_ms: 45 | tokens_per_sec: 14.2K |
 * tokens_per_sec_per_gpu: 1.78K | global_batch_size: 20 | lm_loss: 10.6 |
 * ... | model_tflops_per_gpu: 0.00869 | ..."
 * Read: step_sec = elapsed_time_per_iteration_ms (one iteration), per GPU:
 * tokens_per_sec_per_gpu, model_tflops_per_gpu; tokens = the GPU's tokens
 * in the step; the host. Not read: tokens_per_sec, consumed_tokens (the
 * job's). */
static int nanotron_line(const char *s, struct hr_step_rec *r, char *why, size_t whyn)
{
	const char *q = strstr(s, "iteration: "), *h;
	double v;

	if (!q || !strstr(s, "|TP="))
		return HR_SM_NOT_MINE;
	r->format = HR_SF_NANOTRON;
	if (hr_steps_num(q + 11, &v, NULL) || v < 0 || v != floor(v)) {
		snprintf(why, whyn, "nanotron iteration line without an iteration number");
		return HR_SM_MALFORMED;
	}
	r->step = v > (double)HR_STEPS_MAX_STEP ? HR_STEPS_MAX_STEP + 1 : (long)v;
	r->step_sec = key_si(q, "elapsed_time_per_iteration_ms") / 1e3;
	if (!(r->step_sec > 0)) {
		r->step_sec = NAN;
		snprintf(why, whyn, "nanotron iteration line without a readable 'elapsed_time_per_iteration_ms' (cut off?)");
		return HR_SM_MALFORMED;
	}
	r->tokens_per_sec = key_si(q, "tokens_per_sec_per_gpu");
	if (r->tokens_per_sec > 0)
		r->tokens = r->tokens_per_sec * r->step_sec;
	r->tflops = key_si(q, "model_tflops_per_gpu");
	r->loss = key_si(q, "lm_loss");
	r->global_batch = key_si(q, "global_batch_size");
	/* the host name, the prefix's fifth field when logged */
	if ((h = strstr(s, "|TP=")) && (h = strchr(h + 4, '|'))) {
		size_t n = strcspn(h + 1, "]");
		if (n && n < sizeof(r->host) && h[1 + n] == ']') {
			memcpy(r->host, h + 1, n);
			r->host[n] = '\0';
		}
	}
	return HR_SM_RECORD;
}

/* -------------------------------------------------------------- DeepSpeed */

/* The engine's (pipeline) print every steps_per_print steps:
 * "steps: 200 loss: 5.5508 [lm loss: X moe loss: X] iter time (s): 0.936
 * samples/sec: 136.706" (newer: "step: N / M loss: ... eta: ..."); and its
 * throughput timer "... SamplesPerSec=83.48..." (no step time: seen only).
 * Read: step_sec = iter time (the mean over steps_per_print steps), loss.
 * Not read: samples/sec (the job's global batch over that time). */
static int deepspeed_line(const char *s, struct hr_step_rec *r, struct hr_steps_more *st, char *why,
			  size_t whyn)
{
	const char *q, *t;
	double v;

	if (strstr(s, "SamplesPerSec=")) {
		st->ds_throughput++;
		return HR_SM_SEEN;
	}
	if (!(t = strstr(s, "iter time (s):")))
		return HR_SM_NOT_MINE;
	q = strstr(s, "steps: ");
	if (!q)
		q = strstr(s, "step: ");
	if (!q || q > t)
		return HR_SM_NOT_MINE;
	r->format = HR_SF_DEEPSPEED;
	if (hr_steps_num(strchr(q, ':') + 1, &v, NULL) || v < 0 || v != floor(v)) {
		snprintf(why, whyn, "DeepSpeed engine line without a step number");
		return HR_SM_MALFORMED;
	}
	r->step = v > (double)HR_STEPS_MAX_STEP ? HR_STEPS_MAX_STEP + 1 : (long)v;
	if (hr_steps_num(t + 14, &r->step_sec, NULL) || !(r->step_sec > 0)) {
		r->step_sec = NAN;
		snprintf(why, whyn, "DeepSpeed engine line without a readable 'iter time (s)' (cut off?)");
		return HR_SM_MALFORMED;
	}
	r->loss = key_or_nan(q, "loss");
	return HR_SM_RECORD;
}

/* -------------------------------------------------------------- Lightning */

/* "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072,
 * v_num=193315]" (tqdm through PyTorch Lightning's TQDMProgressBar): one
 * record per batch count n (the bar's refreshes of the same n: seen).
 * Read: step_sec = tqdm's smoothed rate (per batch of this process), loss;
 * the step E x total + n. */
static int lightning_line(const char *s, struct hr_step_rec *r, struct hr_steps_more *st, char *why,
			  size_t whyn)
{
	const char *q = strstr(s, "Epoch "), *b, *c, *e;
	long ep, n, total;
	double v;
	int nch = 0;

	if (!q || sscanf(q, "Epoch %ld:%n", &ep, &nch) < 1 || !nch || !(b = strstr(q + nch, "| ")) ||
	    !strchr(b, '['))
		return HR_SM_NOT_MINE;
	if (sscanf(b + 2, "%ld/%ld", &n, &total) < 2 || n < 0 || total <= 0)
		return HR_SM_NOT_MINE;
	r->format = HR_SF_LIGHTNING;
	c = strchr(strchr(b, '['), ',');
	if (!c) {
		snprintf(why, whyn, "Lightning progress line without its rate (cut off?)");
		return HR_SM_MALFORMED;
	}
	if (hr_steps_num(c + 1, &v, &e) || !(v > 0))
		return HR_SM_SEEN; /* "?it/s": no rate yet */
	if (!strncmp(e, "s/it", 4))
		r->step_sec = v;
	else if (!strncmp(e, "it/s", 4))
		r->step_sec = 1 / v;
	else {
		snprintf(why, whyn, "Lightning progress line with a rate in neither s/it nor it/s");
		return HR_SM_MALFORMED;
	}
	if (ep == st->pl_last_epoch && n + 1 == st->pl_last_step)
		return HR_SM_SEEN; /* the same batch, refreshed with a new loss */
	st->pl_last_epoch = (int)ep;
	st->pl_last_step = n + 1;
	r->step = ep * total + n;
	if ((e = strstr(c, "loss=")) && !hr_steps_num(e + 5, &v, NULL))
		r->loss = v;
	return HR_SM_RECORD;
}

/* --------------------------------------------------------------- dispatch */

int hr_steps_more_line(const char *s, struct hr_step_rec *r, struct hr_steps_more *st, char *why,
		       size_t whyn)
{
	int rc = HR_SM_NOT_MINE;

	why[0] = '\0';
	if (strstr(s, "Training epoch "))
		rc = nemo_line(s, r, why, whyn);
	if (rc == HR_SM_NOT_MINE && strstr(s, "iter ") && strstr(s, ": loss"))
		rc = nanogpt_line(s, r, why, whyn);
	if (rc == HR_SM_NOT_MINE && strstr(s, "iteration: "))
		rc = nanotron_line(s, r, why, whyn);
	if (rc == HR_SM_NOT_MINE && (strstr(s, "iter time (s):") || strstr(s, "SamplesPerSec=")))
		rc = deepspeed_line(s, r, st, why, whyn);
	if (rc == HR_SM_NOT_MINE && strstr(s, "Epoch ") && strchr(s, '|'))
		rc = lightning_line(s, r, st, why, whyn);
	return rc;
}
