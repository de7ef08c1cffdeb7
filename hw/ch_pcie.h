/*
 * ch_pcie.h - what a PCIe link can carry, for judging measured host<->device
 * copy bandwidth against the link the GPU trained to (its generation and
 * width from the inventory, hw/ch_nvml.h).
 *
 * Line rate per lane and direction (PCI-SIG, PCI Express Base Specification):
 * Gen1 2.5 GT/s and Gen2 5 GT/s with 8b/10b encoding, Gen3 8, Gen4 16 and
 * Gen5 32 GT/s with 128b/130b, Gen6 64 GT/s (PAM4, FLIT mode, 242/256 of a
 * FLIT is payload). A copy moves less than the line rate: TLP headers, data
 * link packets and flow control leave about 85-88% for data with 256-byte
 * payloads; measured host-to-device copies of pinned memory reach about
 * 55 GB/s on Gen5 x16 (H100; NVIDIA nvbandwidth, host_to_device_memcpy_ce,
 * NVIDIA technical blog "NVbandwidth", 2025) and about 26 GB/s on Gen4 x16
 * (A100; CUDA samples bandwidthTest). CH_PCIE_COPY_EFFICIENCY is that share,
 * so that the expectation of Gen5 x16 is 53.6 GB/s and of Gen4 x16 26.8.
 * Static inline, no state.
 */
#ifndef CH_PCIE_H
#define CH_PCIE_H

/* The share of the line rate a pinned copy reaches (given: see above). */
#define CH_PCIE_COPY_EFFICIENCY 0.85
/* Where the expectation comes from, for result files and verdicts. */
#define CH_PCIE_EXPECT_SOURCE "PCIe line rate x 0.85 (PCI-SIG rates; measured pinned copies: Gen5 x16 about 55 GB/s, nvbandwidth on H100; Gen4 x16 about 26 GB/s)"

/* Line rate of one lane in one direction, GB/s of payload bits after
 * encoding; 0 for an unknown generation. */
static inline double ch_pcie_lane_gbps(int gen)
{
	switch (gen) {
	case 1: return 2.5 * 8.0 / 10.0 / 8.0;
	case 2: return 5.0 * 8.0 / 10.0 / 8.0;
	case 3: return 8.0 * 128.0 / 130.0 / 8.0;
	case 4: return 16.0 * 128.0 / 130.0 / 8.0;
	case 5: return 32.0 * 128.0 / 130.0 / 8.0;
	case 6: return 64.0 * 242.0 / 256.0 / 8.0;
	default: return 0;
	}
}

/* The one-way copy bandwidth expected of a Gen @gen x @width link, GB/s;
 * 0 when either is unknown (not positive). */
static inline double ch_pcie_expected_gbps(int gen, int width)
{
	if (width <= 0)
		return 0;
	return CH_PCIE_COPY_EFFICIENCY * ch_pcie_lane_gbps(gen) * width;
}

#endif
