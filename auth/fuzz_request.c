/* fuzz_request.c - libFuzzer: any bytes as a POST /identity/certificate body
 * through the parser and, when it parses, the CSR policy. Nothing may crash,
 * leak, or accept a CSR that is not the request's cluster's. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "auth/csr_policy.h"
#include "auth/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_auth_request r;
    tg_auth_reason reason;
    char why[400];

    if (tg_auth_request_parse((const char *)data, size, &r, &reason, why, sizeof(why)) == 0) {
        if (strlen(r.cluster_id) == 0)
            __builtin_trap();
        tg_auth_csr_check(r.csr_pem, r.csr_len, r.cluster_id, &reason, why, sizeof(why));
    } else if (strncmp(why, "expected", 8) != 0) {
        __builtin_trap();                 /* every refusal says what was expected */
    }
    tg_auth_request_clear(&r);
    return 0;
}
