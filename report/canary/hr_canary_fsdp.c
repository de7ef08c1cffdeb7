/*
 * hr_canary_fsdp.c - a training step's communication as the parallelism
 * has it: data parallelism's all-reduce of the gradient, or FSDP's
 * reduce-scatter of the gradient and all-gathers of the parameters, from
 * the one all-reduce model fitted or given (interface: hr_canary.h;
 * docs/canary.md, "FSDP").
 */
#include "report/canary/hr_canary.h"
#include "report/canary/hr_fit.h"

double hr_canary_comm_sec(const struct hr_canary_in *in, int level, double bytes, double n, double *always)
{
	const struct hr_fit *f = &in->comm[level].fit;
	double ag;

	if (always)
		*always = 0;
	if (in->parallelism != HR_PAR_FSDP)
		return hr_fit_predict_us(f, bytes, (int)n) * 1e-6;
	/* the same busbw B: a reduce-scatter and an all-gather each move
	 * (n-1)/n x S over every rank's link, the all-reduce twice that */
	ag = hr_fit_predict_half_us(f, bytes, (int)n) * 1e-6;
	if (always)
		*always = ag;
	return 3 * ag;
}

double hr_canary_comm_busbw(const struct hr_canary_in *in, double bytes, double n, double sec)
{
	if (in->parallelism != HR_PAR_FSDP)
		return hr_fit_busbw_gbps(bytes, (int)n, sec * 1e6);
	if (!(sec > 0) || n < 2)
		return 0;
	return (n - 1) / n * 3 * bytes / (sec * 1e9);
}

const char *hr_canary_model_text(const struct hr_canary_in *in)
{
	return in->parallelism == HR_PAR_FSDP ? "model: FSDP (reduce-scatter + 2 all-gathers, first all-gather exposed)" :
						"model: data parallel (one all-reduce of the gradient per step)";
}
