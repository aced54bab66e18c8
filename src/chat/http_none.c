/* A build without libcurl: remote engines are not built in, and say so. */
#include "http_client.h"

bool http_available(cf_err *err)
{
    cf_fail_as(err, CF_E_USAGE, "remote endpoints are not built in: this confab was built "
               "without libcurl (install libcurl4-openssl-dev and build again)");
    return false;
}

int http_start(const http_opts *o, http_call **out, cf_err *err)
{
    (void)o;
    *out = NULL;
    http_available(err);
    return -1;
}

int http_pump(http_call *c, int wait_ms, const char **data, size_t *len, cf_err *err)
{
    (void)c, (void)wait_ms, (void)data, (void)len;
    return cf_fail(err, "no request");
}

int http_status(const http_call *c)
{
    (void)c;
    return 0;
}

const char *http_content_type(const http_call *c)
{
    (void)c;
    return "";
}

void http_end(http_call *c)
{
    (void)c;
}
