/*
 * hr_steps_text.c - the step-log reader's names and text helpers: format
 * and phase names, a log's text clipped and escaped for a message, the
 * terminal and JSON (interface: hr_steps.h).
 */
#include "report/read/hr_steps.h"
#include "report/hr_util.h"

#include <stdio.h>
#include <string.h>

const char *hr_steps_format_name(int f)
{
	static const char *const n[] = { "none", "clusterhealth JSON lines", "torchtitan", "Megatron-LM",
					 "MaxText", "Hugging Face Trainer", "plain step lines", "NeMo 2.0",
					 "nanoGPT", "nanotron", "DeepSpeed engine", "PyTorch Lightning" };
	return f >= 0 && f < HR_SF_N ? n[f] : "?";
}

const char *hr_steps_phase_name(int p)
{
	static const char *const n[] = { "forward", "backward", "forward+backward", "optimizer",
					 "all-reduce", "input wait" };
	return p >= 0 && p < HR_PH_N ? n[p] : "?";
}

char *hr_steps_clip(const char *s, size_t n, size_t max, char *out, size_t outn)
{
	size_t i;

	if (!outn)
		return out;
	out[0] = '\0';
	if (!s)
		return out;
	for (i = 0; i < n && i < max && i + 4 < outn && s[i]; i++)
		out[i] = s[i];
	if (i < n && i + 4 <= outn) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
	return out;
}

char *hr_steps_escape(const char *s, size_t n, size_t max, char *out, size_t outn)
{
	size_t i, o = 0;

	if (!outn)
		return out;
	out[0] = '\0';
	if (!s)
		return out;
	for (i = 0; i < n && i < max; i++) {
		unsigned char c = (unsigned char)s[i];
		if (o + 8 >= outn)
			break;
		if (c >= 0x20 && c < 0x7f)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outn - o, "\\x%02x", c);
	}
	if ((i < n) && o + 4 < outn) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

char *hr_steps_term_text(const char *s, size_t max, char *out, size_t outn)
{
	char clip[1032];

	if (max > 1024)
		max = 1024;
	snprintf(out, outn, "%s", hr_term(hr_steps_clip(s, s ? strlen(s) : 0, max, clip, sizeof(clip))));
	return out;
}

const char *hr_steps_json_text(const char *s, size_t max, char *out, size_t outn)
{
	size_t i = 0, len, m = s ? strlen(s) : 0;

	while (i < m && hr_utf8_next(s + i, m - i, &len) >= 0)
		i += len;
	if (i == m)
		return s ? s : "";
	return hr_steps_escape(s, m, max, out, outn);
}
