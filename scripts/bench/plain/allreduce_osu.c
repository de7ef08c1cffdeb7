/*
 * allreduce_osu.c - the plain all-reduce loop `make bench` compares
 * allreduce_bw with: OSU Micro-Benchmarks' osu_allreduce timing (MPI_Init,
 * warm-up, then a timestamp around each MPI_Allreduce, the times summed
 * and averaged over iterations and over ranks), float sum, out-of-place.
 *
 * Usage: allreduce_osu MINBYTES MAXBYTES ITERS WARMUP   (sizes x2)
 * Prints per size: "BYTES AVG_US" (rank 0).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, n, iters, warmup, i;
	unsigned long long minb, maxb, s;
	float *a, *b;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (argc != 5) {
		if (rank == 0)
			fprintf(stderr, "usage: allreduce_osu MINBYTES MAXBYTES ITERS WARMUP\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	minb = strtoull(argv[1], NULL, 10);
	maxb = strtoull(argv[2], NULL, 10);
	iters = atoi(argv[3]);
	warmup = atoi(argv[4]);
	if (minb < 4 || maxb < minb || iters < 1 || warmup < 0)
		MPI_Abort(MPI_COMM_WORLD, 2);
	a = malloc(maxb);
	b = malloc(maxb);
	if (!a || !b)
		MPI_Abort(MPI_COMM_WORLD, 4);
	for (s = 0; s < maxb / sizeof(float); s++) {
		a[s] = 1.0f;
		b[s] = 0.0f;
	}
	for (s = minb; s <= maxb; s *= 2) {
		int count = (int)(s / sizeof(float));
		double t0, timer = 0, lat, sum = 0;
		for (i = 0; i < warmup; i++)
			MPI_Allreduce(a, b, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		for (i = 0; i < iters; i++) {
			t0 = MPI_Wtime();
			MPI_Allreduce(a, b, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
			timer += MPI_Wtime() - t0;
		}
		lat = timer * 1e6 / iters;
		MPI_Reduce(&lat, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		if (rank == 0)
			printf("%llu %.6f\n", (unsigned long long)count * sizeof(float), sum / n);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	free(a);
	free(b);
	MPI_Finalize();
	return 0;
}
