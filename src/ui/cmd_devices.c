/* confab devices: the GPUs -ngl can offload to, numbered as --device
 * takes them. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "confab/gpu.h"

int cmd_devices(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: confab devices\n\n"
               "List the GPUs that -ngl / --gpu-layers can offload layers to, numbered as\n"
               "--device takes them (discrete GPUs first): name, type, device memory,\n"
               "subgroup size, and whether it has cooperative matrices.\n");
        return 0;
    }
    if (argc > 1) {
        cli_error("unexpected argument '%s' (confab devices takes none)", argv[1]);
        return CF_EXIT_USAGE;
    }
    cf_err err = {0};
    const int n = cf_gpu_count(&err);
    if (n == 0) {
        printf("%s\n", err.msg[0] ? err.msg : "no GPU");
        return 0;
    }
    printf("%-3s %-40s %-10s %10s %9s %8s\n", "#", "name", "type", "memory", "subgroup", "coopmat");
    for (int i = 0; i < n; i++) {
        cf_gpu_info info;
        if (cf_gpu_info_get(i, &info, &err)) {
            printf("%-3d %s\n", i, err.msg);
            continue;
        }
        printf("%-3d %-40.40s %-10s %6.1f GiB %9u %8s\n", i, info.name, info.type,
               (double)info.mem_bytes / (1u << 30), info.subgroup, info.coopmat ? "yes" : "no");
    }
    return 0;
}
