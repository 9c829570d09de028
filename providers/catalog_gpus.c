/*
 * catalog_gpus.c - peak dense TFLOPS per GPU model and precision, each row
 * with the vendor document it comes from. Datasheets print the tensor
 * figures "with sparsity" (2:4 structured sparsity, which dense training
 * does not use); the figures here are the dense ones, half of those. A 0
 * is a precision the model's tensor cores do not have: kiln does not size
 * a run on it in that precision.
 *
 * Every GPU model of every catalog needs a row (tests/test_workload.c
 * checks it): a model without one is one kiln says it cannot size.
 */
#include "catalog_gpus.h"

/* clang-format off */
static const struct catalog_gpu peaks[] = {
	/* model  bf16     fp8     source */
	{"H100",  989.4,  1978.9, "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: 1,979 BF16 and 3,958 FP8 TFLOPS with sparsity"},
	{"H200",  989.4,  1978.9, "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: 1,979 BF16 and 3,958 FP8 TFLOPS with sparsity"},
	{"B200", 2250.0,  4500.0, "NVIDIA HGX B200 datasheet, per GPU: 4.5 PFLOPS BF16 and 9 PFLOPS FP8 with sparsity"},
	{"A100",  312.0,     0.0, "NVIDIA A100 Tensor Core GPU datasheet, SXM: 312 BF16 TFLOPS dense (624 with sparsity); no FP8"},
	{"L40S",  362.05,  733.0, "NVIDIA L40S datasheet: 362.05 BF16 and 733 FP8 TFLOPS dense (733 and 1,466 with sparsity)"},
	{"L4",    121.0,   242.5, "NVIDIA L4 Tensor Core GPU datasheet: 242 BF16 and 485 FP8 TFLOPS with sparsity"},
	{"A10G",   70.0,     0.0, "NVIDIA publishes no A10G datasheet; 70 BF16 TFLOPS dense as NVIDIA's A10G figures are quoted in Baseten's \"NVIDIA A10 vs A10G\" (2023); Ampere: no FP8"},
	{"V100",    0.0,     0.0, "NVIDIA V100 Tensor Core GPU datasheet: 125 FP16 tensor TFLOPS (SXM2); no BF16 and no FP8"},
	{"TRN1",  190.0,   190.0, "AWS Neuron documentation, \"Trainium Architecture\": 190 FP16/BF16/cFP8/TF32 TFLOPS per chip"},
};
/* clang-format on */

/* Checked against the documents named in each row on this date. */
const struct catalog_gpus catalog_gpu_peaks = {
    .date = "2026-12-06",
    .rows = peaks,
    .nrows = sizeof(peaks) / sizeof(peaks[0]),
};
