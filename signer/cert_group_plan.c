/* cert_group_plan.c - see cert_group_plan.h. */
#include "signer/cert_group_plan.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "pki/cert_group.h"

/* group belongs to cid and is in the exact form. */
static int group_of(const char *group, const char *cid)
{
    tg_verdict v;

    tg_verdict_init(&v);
    return tg_cert_group_decide(group, cid, NULL, &v) == 0;
}

static void keep(json_object *out, const char *group, int64_t not_after)
{
    json_object *old = NULL;

    if (json_object_object_get_ex(out, group, &old) && json_object_get_int64(old) >= not_after)
        return;
    json_object_object_add(out, group, json_object_new_int64(not_after));
}

json_object *tg_cert_groups_next(const char *annotation, const char *cid, const char *current,
                                 int64_t current_not_after, json_object *revoked, int64_t now)
{
    json_object *out = json_object_new_object();
    json_object *prev = annotation ? tg_json_parse(annotation, strlen(annotation), NULL, 0) : NULL;

    if (prev && json_object_is_type(prev, json_type_object)) {
        json_object_object_foreach(prev, group, na) {
            int64_t t = json_object_is_type(na, json_type_int) ? json_object_get_int64(na) : 0;
            /* an entry without a readable NotAfter is dropped: the current group is re-added below */
            if (t > 0 && now <= t && group_of(group, cid) && !tg_cert_group_revoked(revoked, group))
                keep(out, group, t);
        }
    }
    json_object_put(prev);
    if (current && current[0] && group_of(current, cid) && !tg_cert_group_revoked(revoked, current))
        keep(out, current, current_not_after);
    return out;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_object *tg_cert_groups_subjects(json_object *groups)
{
    json_object *subjects = json_object_new_array();
    size_t n = 0, cap = (size_t)json_object_object_length(groups);
    const char **names = calloc(cap ? cap : 1, sizeof(*names));

    if (!names)
        return subjects;
    json_object_object_foreach(groups, group, na) {
        (void)na;
        names[n++] = group;
    }
    qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 0; i < n; i++) {
        json_object *s = json_object_new_object();
        json_object_object_add(s, "kind", json_object_new_string("Group"));
        json_object_object_add(s, "apiGroup", json_object_new_string("rbac.authorization.k8s.io"));
        json_object_object_add(s, "name", json_object_new_string(names[i]));
        json_object_array_add(subjects, s);
    }
    free(names);
    return subjects;
}

/* 1 when every subject of a is a Group named in b. */
static int groups_in(json_object *a, json_object *b)
{
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        json_object *s = json_object_array_get_idx(a, i);
        const char *kind = tg_json_path_string(s, "kind", NULL), *name = tg_json_path_string(s, "name", NULL);
        int found = 0;

        if (!kind || !name || strcmp(kind, "Group") != 0)
            return 0;
        for (size_t j = 0; j < json_object_array_length(b) && !found; j++) {
            const char *k2 = tg_json_path_string(json_object_array_get_idx(b, j), "kind", NULL);
            const char *n2 = tg_json_path_string(json_object_array_get_idx(b, j), "name", NULL);
            found = k2 && n2 && strcmp(k2, "Group") == 0 && strcmp(n2, name) == 0;
        }
        if (!found)
            return 0;
    }
    return 1;
}

int tg_cert_groups_same(json_object *subjects, json_object *subj)
{
    if (!subjects || !subj || !json_object_is_type(subjects, json_type_array) ||
        !json_object_is_type(subj, json_type_array) ||
        json_object_array_length(subjects) != json_object_array_length(subj))
        return 0;
    return groups_in(subjects, subj) && groups_in(subj, subjects);
}
