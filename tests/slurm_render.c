/*
 * slurm_render.c - the Slurm boot script kiln's aws provider generates for a
 * group's nodes (providers/aws/aws_slurm.c, providers/slurm.c), printed for
 * the real-Slurm end-to-end test (tests/e2e/slurm.sh), which runs it as a
 * node runs it. The files it reads (slurm.conf, gres.conf, the munge key)
 * are the ones kiln apply stored in SSM.
 *
 *   slurm_render SPEC WORKSPACE GROUP [CONTROLLER_ADDRESS]
 */
#include "testutil.h"

#include "aws/aws_int.h"
#include "catalog_aws.h"
#include "slurm.h"

int main(int argc, char **argv)
{
	struct diags d = {0};
	struct spec *spec = NULL;
	struct slurm_cluster c;
	struct kiln_error err = {0};
	struct prov_scope scope = {0};
	char *script;
	int rc = 1;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: slurm_render SPEC WORKSPACE GROUP [CONTROLLER_ADDRESS]\n");
		return 2;
	}
	if (validate_load(&spec, argv[1], NULL, &d) < 0) {
		diags_print(&d, stderr, false);
		goto out;
	}
	if (slurm_cluster_from_spec(&c, spec, &catalog_aws, &err) < 0) {
		fprintf(stderr, "slurm_render: %s\n", err.msg);
		goto out;
	}
	scope.cluster = spec->cluster;
	scope.workspace = argv[2];
	script = aws_slurm_boot_script(&c, argv[3], &scope, spec->provider.region,
				       argc == 5 ? argv[4] : "\"$KILN_SLURM_CONTROLLER\"");
	if (script) {
		fputs(script, stdout);
		free(script);
		rc = 0;
	} else {
		fprintf(stderr, "slurm_render: %s is neither the controller nor a partition\n",
			argv[3]);
	}
	slurm_cluster_free(&c);
out:
	spec_free(spec);
	diags_release(&d);
	return rc;
}
