/* callplan.c - how one API call is paced against the command's --timeout:
 * how long a request may wait for its answer, and whether an answer that asks
 * to come back is asked again. Pure: times in, decisions out (kubectx.c does
 * the waiting).
 *
 * Why: --timeout is "for the whole handshake". Without a deadline here, one
 * request could wait CLI_CALL_TIMEOUT_MS for a server that never answers, and
 * the retries of one call could sleep CLI_CALL_RETRY_BUDGET_MS, both past it. */
#include "online.h"

#include <stdio.h>
#include <string.h>

#include "kube/json.h"

long cli_call_timeout_ms(long remaining_ms)
{
    if (remaining_ms == CLI_NO_DEADLINE || remaining_ms >= CLI_CALL_TIMEOUT_MS)
        return CLI_CALL_TIMEOUT_MS;
    /* Past or at the deadline a request still gets a short chance: the step
     * that made it reports the timeout right after, with what it waited for. */
    return remaining_ms > CLI_CALL_MIN_TIMEOUT_MS ? remaining_ms : CLI_CALL_MIN_TIMEOUT_MS;
}

long cli_call_retry_sleep_ms(long delay_ms, int retries_done, long slept_ms, long remaining_ms)
{
    if (delay_ms < 0 || retries_done >= CLI_CALL_RETRIES)
        return -1;
    if (slept_ms + delay_ms > CLI_CALL_RETRY_BUDGET_MS)
        return -1;
    /* Sleeping past the deadline only to fail with "timed out" would hide
     * the server's own answer: report that answer now instead. */
    if (remaining_ms != CLI_NO_DEADLINE && delay_ms >= remaining_ms)
        return -1;
    return delay_ms;
}

void cli_call_retry_note(char *buf, size_t len, long status, const char *body, long sleep_ms)
{
    json_object *doc = body ? tg_json_parse(body, strlen(body), NULL, 0) : NULL;
    const char *reason = doc ? tg_json_string(doc, "message") : NULL;
    char said[216] = "";

    if (reason == NULL || *reason == '\0')
        reason = doc ? tg_json_string(doc, "reason") : NULL;
    /* The message is the server's: one line of it, not all of it, and no
     * control character that a terminal would act on. */
    if (reason != NULL && *reason != '\0') {
        size_t n = strcspn(reason, "\r\n");
        snprintf(said, sizeof(said), " (%.*s)", (int)(n > 200 ? 200 : n), reason);
        for (char *p = said; *p != '\0'; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
    }
    snprintf(buf, len, "the API server answered HTTP %ld%s and asked to be asked again: asking "
             "again in %ld.%lds", status, said, sleep_ms / 1000, (sleep_ms % 1000) / 100);
    json_object_put(doc);
}
