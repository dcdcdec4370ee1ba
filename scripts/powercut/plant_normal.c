/*
 * The planted bug of the power-cut trials' control: loaded with LD_PRELOAD into a process that
 * uses the system's libsqlite3, it turns every `PRAGMA synchronous = FULL` (or EXTRA, 2, 3) the
 * process asks for into `synchronous = 1` (NORMAL), the level at which a WAL commit is not
 * fsynced. A server run so must lose acknowledged uploads on the harness, or the harness could not
 * see a writer that skips its fsync. The rewrite keeps the SQL's length, so a statement tail returned
 * by sqlite3_prepare_* still points into the caller's own string.
 *
 * Built by scripts/powercut/trials.py: cc -shared -fPIC -o plant_normal.so plant_normal.c -ldl
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

/* A copy of sql with each durable synchronous level replaced by "1" and spaces, or NULL if none. */
static char *plant(const char *sql, int n) {
    if (sql == NULL) return NULL;
    size_t len = n < 0 ? strlen(sql) : (size_t)n;
    char *copy = NULL;
    for (size_t i = 0; i + 11 <= len; i++) {
        if (strncasecmp(sql + i, "synchronous", 11) != 0) continue;
        size_t j = i + 11;
        while (j < len && isspace((unsigned char)sql[j])) j++;
        if (j >= len || sql[j] != '=') continue;
        j++;
        while (j < len && isspace((unsigned char)sql[j])) j++;
        size_t v = j;
        while (j < len && isalnum((unsigned char)sql[j])) j++;
        size_t w = j - v;
        int durable = (w == 4 && strncasecmp(sql + v, "FULL", 4) == 0) || (w == 5 && strncasecmp(sql + v, "EXTRA", 5) == 0)
                      || (w == 1 && (sql[v] == '2' || sql[v] == '3'));
        if (!durable) continue;
        if (copy == NULL) {
            copy = malloc(len + 1);
            if (copy == NULL) return NULL;
            memcpy(copy, sql, len);
            copy[len] = 0;
        }
        copy[v] = '1';
        memset(copy + v + 1, ' ', w - 1);
    }
    return copy;
}

/* The real function: the next definition, or libsqlite3's own when it was loaded privately (dlopen). */
static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (f == NULL) {
        void *lib = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_NOLOAD);
        if (lib != NULL) f = dlsym(lib, name);
    }
    if (f == NULL) abort();
    return f;
}

typedef int (*prepare_v2_fn)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
typedef int (*prepare_v3_fn)(sqlite3 *, const char *, int, unsigned int, sqlite3_stmt **, const char **);
typedef int (*exec_fn)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *, char **);

int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int n, sqlite3_stmt **stmt, const char **tail) {
    static prepare_v2_fn real;
    if (!real) real = (prepare_v2_fn)next("sqlite3_prepare_v2");
    char *copy = plant(sql, n);
    if (!copy) return real(db, sql, n, stmt, tail);
    const char *t = NULL;
    int rc = real(db, copy, n, stmt, &t);
    if (tail) *tail = t ? sql + (t - copy) : NULL;
    free(copy);
    return rc;
}

int sqlite3_prepare_v3(sqlite3 *db, const char *sql, int n, unsigned int flags, sqlite3_stmt **stmt, const char **tail) {
    static prepare_v3_fn real;
    if (!real) real = (prepare_v3_fn)next("sqlite3_prepare_v3");
    char *copy = plant(sql, n);
    if (!copy) return real(db, sql, n, flags, stmt, tail);
    const char *t = NULL;
    int rc = real(db, copy, n, flags, stmt, &t);
    if (tail) *tail = t ? sql + (t - copy) : NULL;
    free(copy);
    return rc;
}

int sqlite3_exec(sqlite3 *db, const char *sql, int (*callback)(void *, int, char **, char **), void *arg, char **err) {
    static exec_fn real;
    if (!real) real = (exec_fn)next("sqlite3_exec");
    char *copy = plant(sql, -1);
    int rc = real(db, copy ? copy : sql, callback, arg, err);
    free(copy);
    return rc;
}
