/* kubeconfig.c - kubeconfig files and the in-cluster configuration. */
#include "kube/kubeconfig.h"
#include "errbuf.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "kube/yaml.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One parsed file: its tree, and where its relative paths start. */
typedef struct kc_doc {
    json_object *root;
    const char *name;      /* for messages: the file name or "<memory>" */
    const char *dir;       /* NULL: working directory */
} kc_doc;

int tg_kube_read_file(const char *path, size_t max, char **buf, size_t *len, char *err, size_t err_len)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return tg_errf(err, err_len, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return tg_errf(err, err_len, "%s: not a regular file", path);
    }
    if ((unsigned long long)st.st_size > max) {
        close(fd);
        return tg_errf(err, err_len, "%s: larger than %zu bytes", path, max);
    }
    /* Read to EOF rather than trusting st_size: the file may change under us
     * (a rotating token is replaced by a symlink swap, but be safe). */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *b = malloc(cap + 1);
    if (b == NULL) {
        close(fd);
        return tg_errf(err, err_len, "%s: out of memory", path);
    }
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                free(b);
                close(fd);
                return tg_errf(err, err_len, "%s: larger than %zu bytes", path, max);
            }
            char *nb = realloc(b, cap * 2 + 1);
            if (nb == NULL) {
                free(b);
                close(fd);
                return tg_errf(err, err_len, "%s: out of memory", path);
            }
            b = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(b);
            close(fd);
            return tg_errf(err, err_len, "%s: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (n > max) {
        free(b);
        return tg_errf(err, err_len, "%s: larger than %zu bytes", path, max);
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int tg_kube_read_token(const char *path, char **token, char *err, size_t err_len)
{
    char *b;
    size_t n;
    *token = NULL;
    if (tg_kube_read_file(path, TG_KUBE_FILE_MAX, &b, &n, err, err_len) != 0)
        return -1;
    size_t start = 0;
    while (start < n && is_space(b[start]))
        start++;
    while (n > start && is_space(b[n - 1]))
        n--;
    for (size_t i = start; i < n; i++) {
        /* It goes into an HTTP header: no control characters. */
        if ((unsigned char)b[i] < 0x20 || b[i] == 0x7f) {
            OPENSSL_cleanse(b, n);
            free(b);
            return tg_errf(err, err_len, "%s: token contains control characters", path);
        }
    }
    if (n == start) {
        free(b);
        return tg_errf(err, err_len, "%s: token file is empty", path);
    }
    memmove(b, b + start, n - start);
    OPENSSL_cleanse(b + (n - start), start); /* the moved-from tail */
    b[n - start] = '\0';
    *token = b;
    return 0;
}

/* base64 (strict, as Go's StdEncoding writes it) -> malloc'd bytes, NUL-terminated. */
static int decode_base64(const char *in, char **out, size_t *out_len, char *why, size_t why_len)
{
    size_t n;
    unsigned char *raw = tg_base64_decode(in, strlen(in), &n, why, why_len);
    if (raw == NULL)
        return -1;
    if (n == 0 || n > TG_KUBE_FILE_MAX) {
        snprintf(why, why_len, "%s", n ? "too large" : "empty");
        free(raw);
        return -1;
    }
    char *buf = malloc(n + 1);
    if (buf != NULL) {
        memcpy(buf, raw, n);
        buf[n] = '\0';
    }
    OPENSSL_cleanse(raw, n);   /* it may be a private key */
    free(raw);
    if (buf == NULL)
        return -1;
    *out = buf;
    *out_len = n;
    return 0;
}

/* A string member, "" treated as absent (kubectl does the same). Returns
 * -1 when the member exists with another type. */
static int get_str(const kc_doc *d, json_object *obj, const char *what, const char *key, const char **out,
                   char *err, size_t err_len)
{
    json_object *v;
    *out = NULL;
    if (obj == NULL || !json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null))
        return 0;
    const char *s = tg_json_string(obj, key);
    if (s == NULL)
        return tg_errf(err, err_len, "%s: %s: \"%s\" must be a string", d->name, what, key);
    if (*s != '\0')
        *out = s;
    return 0;
}

/* The named entry of a list like clusters: [{name: x, cluster: {...}}]:
 * the first document that defines the name wins. */
static json_object *find_named(const kc_doc *docs, size_t n, const char *list, const char *field,
                               const char *name, const kc_doc **from, char *err, size_t err_len, int *bad)
{
    *bad = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *arr;
        if (!json_object_object_get_ex(docs[i].root, list, &arr) || json_object_is_type(arr, json_type_null))
            continue;
        if (!json_object_is_type(arr, json_type_array)) {
            *bad = 1;
            tg_errf(err, err_len, "%s: \"%s\" must be a list", docs[i].name, list);
            return NULL;
        }
        size_t len = json_object_array_length(arr);
        for (size_t j = 0; j < len; j++) {
            json_object *e = json_object_array_get_idx(arr, j);
            const char *en = tg_json_string(e, "name");
            if (en == NULL || strcmp(en, name) != 0)
                continue;
            json_object *body;
            if (!json_object_object_get_ex(e, field, &body) || !json_object_is_type(body, json_type_object)) {
                *bad = 1;
                tg_errf(err, err_len, "%s: %s \"%s\" has no \"%s\" mapping", docs[i].name, list, name, field);
                return NULL;
            }
            *from = &docs[i];
            return body;
        }
    }
    return NULL;
}

/* A file named by a kubeconfig, relative to the kubeconfig's directory. */
static int read_referenced(const kc_doc *d, const char *what, const char *file, char **buf, size_t *len,
                           char *err, size_t err_len)
{
    char path[PATH_MAX], why[PATH_MAX + 96];
    if (file[0] != '/' && d->dir != NULL) {
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", d->dir, file) >= sizeof(path))
            return tg_errf(err, err_len, "%s: %s: path too long", d->name, what);
    } else {
        if (strlen(file) >= sizeof(path))
            return tg_errf(err, err_len, "%s: %s: path too long", d->name, what);
        strcpy(path, file);
    }
    if (tg_kube_read_file(path, TG_KUBE_FILE_MAX, buf, len, why, sizeof(why)) != 0)
        return tg_errf(err, err_len, "%s: %s: %s", d->name, what, why);
    return 0;
}

/* "<key>-data" (base64) wins over "<key>" (a file), as in client-go. */
static int data_or_file(const kc_doc *d, json_object *obj, const char *what, const char *file_key,
                        const char *data_key, char **buf, size_t *len, char *err, size_t err_len)
{
    const char *data, *file;
    if (get_str(d, obj, what, data_key, &data, err, err_len) != 0 ||
        get_str(d, obj, what, file_key, &file, err, err_len) != 0)
        return -1;
    if (data != NULL) {
        char why[96] = "";
        if (decode_base64(data, buf, len, why, sizeof(why)) != 0)
            return tg_errf(err, err_len, "%s: %s: \"%s\" is not valid base64: %s", d->name, what, data_key, why);
        return 0;
    }
    if (file != NULL)
        return read_referenced(d, what, file, buf, len, err, err_len);
    return 0;
}

static int resolve_cluster(tg_kube_config *cfg, const kc_doc *d, json_object *c, const char *name,
                           char *err, size_t err_len)
{
    char what[160];
    snprintf(what, sizeof(what), "cluster \"%.100s\"", name);
    const char *server, *proxy, *sni;
    if (get_str(d, c, what, "server", &server, err, err_len) != 0 ||
        get_str(d, c, what, "proxy-url", &proxy, err, err_len) != 0 ||
        get_str(d, c, what, "tls-server-name", &sni, err, err_len) != 0)
        return -1;
    if (server == NULL)
        return tg_errf(err, err_len, "%s: %s has no server", d->name, what);
    if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)
        return tg_errf(err, err_len, "%s: %s: server \"%.100s\" is not an http(s) URL", d->name, what, server);

    json_object *v;
    if (json_object_object_get_ex(c, "insecure-skip-tls-verify", &v) && !json_object_is_type(v, json_type_null)) {
        if (!json_object_is_type(v, json_type_boolean))
            return tg_errf(err, err_len, "%s: %s: insecure-skip-tls-verify must be true or false", d->name, what);
        cfg->insecure_skip_tls_verify = json_object_get_boolean(v);
    }
    if (data_or_file(d, c, what, "certificate-authority", "certificate-authority-data", &cfg->ca, &cfg->ca_len,
                     err, err_len) != 0)
        return -1;
    if (cfg->insecure_skip_tls_verify && cfg->ca != NULL)
        return tg_errf(err, err_len, "%s: %s: a CA and insecure-skip-tls-verify together are not allowed "
                    "(kubectl refuses them too)", d->name, what);

    cfg->server = strdup(server);
    if (cfg->server == NULL)
        return tg_errf(err, err_len, "out of memory");
    size_t sl = strlen(cfg->server);
    while (sl > 0 && cfg->server[sl - 1] == '/')
        cfg->server[--sl] = '\0';
    if ((proxy && !(cfg->proxy_url = strdup(proxy))) || (sni && !(cfg->tls_server_name = strdup(sni))))
        return tg_errf(err, err_len, "out of memory");
    return 0;
}

static int resolve_user(tg_kube_config *cfg, const kc_doc *d, json_object *u, const char *name,
                        char *err, size_t err_len)
{
    char what[160];
    snprintf(what, sizeof(what), "user \"%.100s\"", name);
    json_object *v;
    if (json_object_object_get_ex(u, "exec", &v) && !json_object_is_type(v, json_type_null))
        return tg_errf(err, err_len, "%s: %s: exec credential plugins are not supported", d->name, what);
    if (json_object_object_get_ex(u, "auth-provider", &v) && !json_object_is_type(v, json_type_null))
        return tg_errf(err, err_len, "%s: %s: auth-provider plugins are not supported", d->name, what);

    if (data_or_file(d, u, what, "client-certificate", "client-certificate-data", &cfg->cert, &cfg->cert_len,
                     err, err_len) != 0 ||
        data_or_file(d, u, what, "client-key", "client-key-data", &cfg->key, &cfg->key_len, err, err_len) != 0)
        return -1;
    if ((cfg->cert == NULL) != (cfg->key == NULL))
        return tg_errf(err, err_len, "%s: %s: a client certificate needs a client key and vice versa", d->name, what);

    const char *token, *token_file;
    if (get_str(d, u, what, "token", &token, err, err_len) != 0 ||
        get_str(d, u, what, "tokenFile", &token_file, err, err_len) != 0)
        return -1;
    if (token_file != NULL) {
        char path[PATH_MAX];
        if (token_file[0] != '/' && d->dir != NULL)
            snprintf(path, sizeof(path), "%s/%s", d->dir, token_file);
        else
            snprintf(path, sizeof(path), "%s", token_file);
        cfg->token_file = strdup(path);
        if (cfg->token_file == NULL)
            return tg_errf(err, err_len, "out of memory");
        /* Fail now, with the file name, rather than on the first request. */
        char why[PATH_MAX + 96];
        if (tg_kube_read_token(cfg->token_file, &cfg->token, why, sizeof(why)) != 0)
            return tg_errf(err, err_len, "%s: %s: tokenFile: %s", d->name, what, why);
    } else if (token != NULL) {
        for (const char *p = token; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                return tg_errf(err, err_len, "%s: %s: token contains control characters", d->name, what);
        if ((cfg->token = strdup(token)) == NULL)
            return tg_errf(err, err_len, "out of memory");
    }
    return 0;
}

static int resolve(tg_kube_config *cfg, const kc_doc *docs, size_t n, const char *context,
                   char *err, size_t err_len)
{
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < n; i++)
        if (!json_object_is_type(docs[i].root, json_type_object))
            return tg_errf(err, err_len, "%s: not a kubeconfig (expected a mapping)", docs[i].name);

    const char *ctx_name = context && *context ? context : NULL;
    for (size_t i = 0; ctx_name == NULL && i < n; i++)
        if (get_str(&docs[i], docs[i].root, "kubeconfig", "current-context", &ctx_name, err, err_len) != 0)
            return -1;
    if (ctx_name == NULL)
        return tg_errf(err, err_len, "%s: no current-context and no context given", n ? docs[0].name : "kubeconfig");

    int bad;
    const kc_doc *from = NULL;
    json_object *ctx = find_named(docs, n, "contexts", "context", ctx_name, &from, err, err_len, &bad);
    if (ctx == NULL)
        return bad ? -1 : tg_errf(err, err_len, "context \"%.100s\" not found in %s%s", ctx_name,
                                n ? docs[0].name : "kubeconfig", n > 1 ? " and the other KUBECONFIG files" : "");
    const char *cluster_name, *user_name, *ns;
    if (get_str(from, ctx, "context", "cluster", &cluster_name, err, err_len) != 0 ||
        get_str(from, ctx, "context", "user", &user_name, err, err_len) != 0 ||
        get_str(from, ctx, "context", "namespace", &ns, err, err_len) != 0)
        return -1;
    if (cluster_name == NULL)
        return tg_errf(err, err_len, "%s: context \"%.100s\" names no cluster", from->name, ctx_name);

    if ((cfg->context = strdup(ctx_name)) == NULL || (ns && (cfg->namespace = strdup(ns)) == NULL))
        goto oom;

    json_object *cluster = find_named(docs, n, "clusters", "cluster", cluster_name, &from, err, err_len, &bad);
    if (cluster == NULL) {
        if (!bad)
            tg_errf(err, err_len, "context \"%.100s\": cluster \"%.100s\" not found", ctx_name, cluster_name);
        goto out_fail;
    }
    if (resolve_cluster(cfg, from, cluster, cluster_name, err, err_len) != 0)
        goto out_fail;

    if (user_name != NULL) {
        json_object *user = find_named(docs, n, "users", "user", user_name, &from, err, err_len, &bad);
        if (user == NULL) {
            if (!bad)
                tg_errf(err, err_len, "context \"%.100s\": user \"%.100s\" not found", ctx_name, user_name);
            goto out_fail;
        }
        if (resolve_user(cfg, from, user, user_name, err, err_len) != 0)
            goto out_fail;
    }
    return 0;
oom:
    tg_errf(err, err_len, "out of memory");
out_fail:
    tg_kube_config_free(cfg);
    return -1;
}

static json_object *parse_doc(const char *name, const char *text, size_t len, char *err, size_t err_len)
{
    char why[160];
    json_object *root = tg_doc_parse(text, len, why, sizeof(why));
    if (root == NULL)
        tg_errf(err, err_len, "%s: %s", name, why);
    return root;
}

int tg_kube_config_parse(tg_kube_config *cfg, const char *text, size_t len, const char *base_dir,
                         const char *context, char *err, size_t err_len)
{
    memset(cfg, 0, sizeof(*cfg));
    kc_doc d = {.name = "kubeconfig", .dir = base_dir};
    if ((d.root = parse_doc(d.name, text, len, err, err_len)) == NULL)
        return -1;
    int rc = resolve(cfg, &d, 1, context, err, err_len);
    json_object_put(d.root);
    return rc;
}

int tg_kube_config_load_files(tg_kube_config *cfg, const char *const *paths, size_t n, const char *context,
                              char *err, size_t err_len)
{
    memset(cfg, 0, sizeof(*cfg));
    kc_doc *docs = calloc(n ? n : 1, sizeof(*docs));
    char **dirs = calloc(n ? n : 1, sizeof(*dirs));
    size_t used = 0;
    int rc = -1;
    if (docs == NULL || dirs == NULL) {
        tg_errf(err, err_len, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (paths[i] == NULL || paths[i][0] == '\0')
            continue;
        char *text;
        size_t len;
        if (tg_kube_read_file(paths[i], 4u << 20, &text, &len, err, err_len) != 0)
            goto out;
        kc_doc *d = &docs[used];
        d->name = paths[i];
        d->root = parse_doc(paths[i], text, len, err, err_len);
        OPENSSL_cleanse(text, len);   /* it may hold keys and tokens */
        free(text);
        if (d->root == NULL)
            goto out;
        const char *slash = strrchr(paths[i], '/');
        if (slash != NULL) {
            dirs[used] = strndup(paths[i], slash == paths[i] ? 1 : (size_t)(slash - paths[i]));
            if (dirs[used] == NULL) {
                json_object_put(d->root);
                tg_errf(err, err_len, "out of memory");
                goto out;
            }
            d->dir = dirs[used];
        }
        used++;
    }
    if (used == 0) {
        tg_errf(err, err_len, "no kubeconfig file given");
        goto out;
    }
    rc = resolve(cfg, docs, used, context, err, err_len);
out:
    for (size_t i = 0; i < used; i++) {
        json_object_put(docs[i].root);
        free(dirs[i]);
    }
    free(docs);
    free(dirs);
    return rc;
}

int tg_kube_config_in_cluster(tg_kube_config *cfg, const char *sa_dir, char *err, size_t err_len)
{
    memset(cfg, 0, sizeof(*cfg));
    if (sa_dir == NULL)
        sa_dir = TG_KUBE_SA_DIR;
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (host == NULL || *host == '\0' || port == NULL || *port == '\0')
        return tg_errf(err, err_len, "not running in a cluster: KUBERNETES_SERVICE_HOST and "
                    "KUBERNETES_SERVICE_PORT must both be set");
    for (const char *p = port; *p; p++)
        if (*p < '0' || *p > '9')
            return tg_errf(err, err_len, "KUBERNETES_SERVICE_PORT \"%.20s\" is not a port number", port);
    if (strpbrk(host, "/@?# ") != NULL)
        return tg_errf(err, err_len, "KUBERNETES_SERVICE_HOST \"%.60s\" is not a host", host);

    char path[PATH_MAX];
    int v6 = strchr(host, ':') != NULL;
    size_t sl = strlen(host) + strlen(port) + 16;
    if ((cfg->server = malloc(sl)) == NULL)
        goto oom;
    snprintf(cfg->server, sl, v6 ? "https://[%s]:%s" : "https://%s:%s", host, port);
    cfg->context = strdup("");
    snprintf(path, sizeof(path), "%s/token", sa_dir);
    cfg->token_file = strdup(path);
    if (cfg->context == NULL || cfg->token_file == NULL)
        goto oom;
    if (tg_kube_read_token(cfg->token_file, &cfg->token, err, err_len) != 0)
        goto out_fail;
    snprintf(path, sizeof(path), "%s/ca.crt", sa_dir);
    if (tg_kube_read_file(path, TG_KUBE_FILE_MAX, &cfg->ca, &cfg->ca_len, err, err_len) != 0)
        goto out_fail;
    /* The namespace file is a convenience; its absence is not an error. */
    snprintf(path, sizeof(path), "%s/namespace", sa_dir);
    char *ns;
    size_t nl;
    if (tg_kube_read_file(path, 256, &ns, &nl, NULL, 0) == 0) {
        while (nl > 0 && is_space(ns[nl - 1]))
            ns[--nl] = '\0';
        if (nl > 0)
            cfg->namespace = ns;
        else
            free(ns);
    }
    return 0;
oom:
    tg_errf(err, err_len, "out of memory");
out_fail:
    tg_kube_config_free(cfg);
    return -1;
}

/* Split a ':'-separated list (KUBECONFIG's syntax) and load it. */
static int load_path_list(tg_kube_config *cfg, const char *list, const char *context, char *err, size_t err_len)
{
    char *copy = strdup(list);
    if (copy == NULL)
        return tg_errf(err, err_len, "out of memory");
    size_t n = 1;
    for (const char *p = copy; *p; p++)
        n += *p == ':';
    const char **paths = calloc(n, sizeof(*paths));
    if (paths == NULL) {
        free(copy);
        return tg_errf(err, err_len, "out of memory");
    }
    size_t i = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
        paths[i++] = tok;
    int rc = tg_kube_config_load_files(cfg, paths, i, context, err, err_len);
    free(paths);
    free(copy);
    return rc;
}

int tg_kube_config_load(tg_kube_config *cfg, const char *kubeconfig, const char *context,
                        char *err, size_t err_len)
{
    memset(cfg, 0, sizeof(*cfg));
    if (kubeconfig != NULL && *kubeconfig != '\0')
        return load_path_list(cfg, kubeconfig, context, err, err_len);
    const char *env = getenv("KUBECONFIG");
    if (env != NULL && *env != '\0')
        return load_path_list(cfg, env, context, err, err_len);
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    if (host != NULL && *host != '\0' && (context == NULL || *context == '\0'))
        return tg_kube_config_in_cluster(cfg, NULL, err, err_len);
    const char *home = getenv("HOME");
    if (home == NULL || *home == '\0')
        return tg_errf(err, err_len, "no kubeconfig: not in a cluster, KUBECONFIG and HOME are unset");
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/.kube/config", home);
    const char *one = path;
    return tg_kube_config_load_files(cfg, &one, 1, context, err, err_len);
}

static void free_secret(char *p, size_t len)
{
    if (p != NULL) {
        OPENSSL_cleanse(p, len);
        free(p);
    }
}

void tg_kube_config_free(tg_kube_config *cfg)
{
    free(cfg->server);
    free(cfg->tls_server_name);
    free(cfg->ca);
    free(cfg->cert);
    free_secret(cfg->key, cfg->key_len);
    free_secret(cfg->token, cfg->token ? strlen(cfg->token) : 0);
    free(cfg->token_file);
    free(cfg->proxy_url);
    free(cfg->namespace);
    free(cfg->context);
    memset(cfg, 0, sizeof(*cfg));
}
