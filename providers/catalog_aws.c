/*
 * catalog_aws.c - the AWS instance types kiln knows, with their GPUs and
 * prices in us-east-1 (Linux, USD per hour).
 *
 * One table shared by the aws provider and the sim provider (which says it
 * uses AWS's catalog): one copy of the data, dated, so every cost kiln shows
 * can say where its prices come from. On-demand prices are AWS's published
 * list prices. AWS announced cuts of up to 45% to P4 and P5 on-demand prices
 * in June 2025; the p4d, p4de and p5 rows keep the long-standing list prices
 * until someone checks the price list and updates them with the date. p5e
 * and p5en are sold mostly through Capacity Blocks: their figures are
 * estimates. Spot prices move by the hour and by zone: the figures here are
 * typical, good for estimates only.
 *
 * Per-type facts: GPUs per node and memory per GPU (GiB), vCPUs, memory
 * (GiB), EFA support, local NVMe (GB), and the most EFA interfaces an
 * instance takes (one per network card; from EC2's DescribeInstanceTypes
 * answer, NetworkInfo.EfaInfo.MaximumEfaInterfaces, as of the same date),
 * and whether EC2 sells the type as Capacity Blocks for ML (the EC2 user
 * guide's "Capacity Blocks for ML" lists the supported types: of this
 * table, p5, p5e, p5en, p4d and trn1.32xlarge).
 * CPU-only types, for login and head nodes, have gpu NULL. The aws
 * provider asks EC2 at plan time and EC2's answer wins over this table for
 * everything but price.
 */
#include "catalog_aws.h"

#include "catalog_gpus.h"

/* clang-format off */
static const struct catalog_type aws_types[] = {
	/* name            gpu     gpus mem vcpu  mem_gib efa   nvme    on-demand  spot   efa_max block */
	{"p5.48xlarge",   "H100",  8,  80, 192,  2048, true,  30720,  98.32,    41.30, 32, true},
	{"p5e.48xlarge",  "H200",  8, 141, 192,  2048, true,  30720, 108.32,    47.66, 32, true},
	{"p5en.48xlarge", "H200",  8, 141, 192,  2048, true,  30720, 113.79,    50.07, 16, true},
	{"p4d.24xlarge",  "A100",  8,  40,  96,  1152, true,   8000,  32.7726,  13.11,  4, true},
	{"p4de.24xlarge", "A100",  8,  80,  96,  1152, true,   8000,  40.9657,  16.39,  4},
	{"p3.2xlarge",    "V100",  1,  16,   8,    61, false,     0,   3.06,     0.92,  0},
	{"p3.8xlarge",    "V100",  4,  16,  32,   244, false,     0,  12.24,     3.67,  0},
	{"p3.16xlarge",   "V100",  8,  16,  64,   488, false,     0,  24.48,     7.34,  0},
	{"p3dn.24xlarge", "V100",  8,  32,  96,   768, true,   1800,  31.212,    9.36,  1},
	{"g6e.xlarge",    "L40S",  1,  48,   4,    32, false,   250,   1.861,    0.74,  0},
	{"g6e.2xlarge",   "L40S",  1,  48,   8,    64, false,   450,   2.24208,  0.90,  0},
	{"g6e.4xlarge",   "L40S",  1,  48,  16,   128, false,   600,   3.00424,  1.20,  0},
	{"g6e.8xlarge",   "L40S",  1,  48,  32,   256, true,    900,   4.52856,  1.81,  1},
	{"g6e.12xlarge",  "L40S",  4,  48,  48,   384, true,   3800,  10.49264,  4.20,  1},
	{"g6e.16xlarge",  "L40S",  1,  48,  64,   512, true,   1900,   7.57719,  3.03,  1},
	{"g6e.24xlarge",  "L40S",  4,  48,  96,   768, true,   3800,  15.06559,  6.03,  2},
	{"g6e.48xlarge",  "L40S",  8,  48, 192,  1536, true,   7600,  30.13118, 12.05,  4},
	{"g6.xlarge",     "L4",    1,  24,   4,    16, false,   250,   0.8048,   0.32,  0},
	{"g6.2xlarge",    "L4",    1,  24,   8,    32, false,   450,   0.9776,   0.39,  0},
	{"g6.4xlarge",    "L4",    1,  24,  16,    64, false,   600,   1.3232,   0.53,  0},
	{"g6.8xlarge",    "L4",    1,  24,  32,   128, true,    450,   2.0144,   0.81,  1},
	{"g6.12xlarge",   "L4",    4,  24,  48,   192, true,   3760,   4.6016,   1.84,  1},
	{"g6.16xlarge",   "L4",    1,  24,  64,   256, true,   1880,   3.3968,   1.36,  1},
	{"g6.24xlarge",   "L4",    4,  24,  96,   384, true,   3760,   6.6752,   2.67,  1},
	{"g6.48xlarge",   "L4",    8,  24, 192,   768, true,   7520,  13.3504,   5.34,  1},
	{"g5.xlarge",     "A10G",  1,  24,   4,    16, false,   250,   1.006,    0.40,  0},
	{"g5.2xlarge",    "A10G",  1,  24,   8,    32, false,   450,   1.212,    0.48,  0},
	{"g5.4xlarge",    "A10G",  1,  24,  16,    64, false,   600,   1.624,    0.65,  0},
	{"g5.8xlarge",    "A10G",  1,  24,  32,   128, true,    900,   2.448,    0.98,  1},
	{"g5.12xlarge",   "A10G",  4,  24,  48,   192, true,   3800,   5.672,    2.27,  1},
	{"g5.16xlarge",   "A10G",  1,  24,  64,   256, true,   1900,   4.096,    1.64,  1},
	{"g5.24xlarge",   "A10G",  4,  24,  96,   384, true,   3800,   8.144,    3.26,  1},
	{"g5.48xlarge",   "A10G",  8,  24, 192,   768, true,   7600,  16.288,    6.52,  1},
	{"trn1.2xlarge",  "TRN1",  1,  32,   8,    32, false,   475,   1.34375,  0.54,  0},
	{"trn1.32xlarge", "TRN1", 16,  32, 128,   512, true,   7600,  21.50,     8.60,  8, true},
	{"m7i.large",     NULL,    0,   0,   2,     8, false,     0,   0.1008,   0.040,  0},
	{"m7i.xlarge",    NULL,    0,   0,   4,    16, false,     0,   0.2016,   0.080,  0},
	{"m7i.2xlarge",   NULL,    0,   0,   8,    32, false,     0,   0.4032,   0.160,  0},
	{"m7i.4xlarge",   NULL,    0,   0,  16,    64, false,     0,   0.8064,   0.320,  0},
	{"c7i.large",     NULL,    0,   0,   2,     4, false,     0,   0.08925,  0.035,  0},
	{"c7i.xlarge",    NULL,    0,   0,   4,     8, false,     0,   0.1785,   0.070,  0},
	{"c7i.2xlarge",   NULL,    0,   0,   8,    16, false,     0,   0.357,    0.140,  0},
	{"c7i.4xlarge",   NULL,    0,   0,  16,    32, false,     0,   0.714,    0.280,  0},
	{"r7i.large",     NULL,    0,   0,   2,    16, false,     0,   0.1323,   0.052,  0},
	{"r7i.xlarge",    NULL,    0,   0,   4,    32, false,     0,   0.2646,   0.104,  0},
	{"r7i.2xlarge",   NULL,    0,   0,   8,    64, false,     0,   0.5292,   0.208,  0},
};
/* clang-format on */

/*
 * Prices other than instance-hours, us-east-1, same date: EBS volumes by
 * the provisioned GB-month (gp3 includes its baseline 3,000 IOPS and
 * 125 MB/s; io1/io2 IOPS are charged on top and kiln does not price them),
 * a public IPv4 address by the hour (charged since 2024-02-01), and FSx for
 * Lustre PERSISTENT_2 SSD by the GB-month at each throughput per TiB. S3
 * and EFS are billed by use (GB stored, requests), which a spec does not
 * say: kiln lists them as not priced rather than guess.
 */
static const struct catalog_rate aws_rates[] = {
    {"ebs:gp3", "GB-month", 0.08},
    {"ebs:gp2", "GB-month", 0.10},
    {"ebs:io1", "GB-month", 0.125},
    {"ebs:io2", "GB-month", 0.125},
    {"ipv4:public", "hour", 0.005},
    {"fsx-lustre:persistent2:125", "GB-month", 0.145},
    {"fsx-lustre:persistent2:250", "GB-month", 0.210},
    {"fsx-lustre:persistent2:500", "GB-month", 0.290},
    {"fsx-lustre:persistent2:1000", "GB-month", 0.420},
};

const struct catalog catalog_aws = {
    .provider = "aws",
    .region = "us-east-1",
    .date = "2026-11-01",
    .types = aws_types,
    .ntypes = sizeof(aws_types) / sizeof(aws_types[0]),
    .rates = aws_rates,
    .nrates = sizeof(aws_rates) / sizeof(aws_rates[0]),
    .gpus = &catalog_gpu_peaks,
};
