/* Without a device (the tests run it with no Vulkan driver to find) or
 * without Vulkan built in: no devices, one line that starts "no GPU"
 * saying why, and every open fails with it; nothing crashes. */
#include "confab/gpu.h"
#include "harness.h"

int main(void)
{
    cf_err err = {0};
    CHECK(cf_gpu_count(&err) == 0);
    CHECKF(!strncmp(err.msg, "no GPU", 6), "%s", err.msg);
    CHECK(strchr(err.msg, '\n') == NULL);
    fprintf(stderr, "cf_gpu_count: %s\n", err.msg);
    cf_gpu_info info;
    memset(&err, 0, sizeof err);
    CHECK(cf_gpu_info_get(0, &info, &err) != 0);
    CHECKF(!strncmp(err.msg, "no GPU", 6), "%s", err.msg);
    memset(&err, 0, sizeof err);
    CHECK(cf_gpu_open(-1, &err) == NULL);
    CHECKF(!strncmp(err.msg, "no GPU", 6), "%s", err.msg);
    CHECK(cf_gpu_open(0, NULL) == NULL);
    return test_summary("gpu_none");
}
