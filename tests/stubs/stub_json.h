/* A minimal JSON reader for the stub libraries' scenario files (objects, arrays, strings,
 * numbers, true/false/null). Header-only and static so each stub stays one translation unit.
 * Parsed once; the tree is never freed (it lives as long as the process, like a driver's state).
 * catalogue.py passes a hash of this file as a -D define so build.py's cache sees edits here. */
#ifndef TFDOCTOR_STUB_JSON_H
#define TFDOCTOR_STUB_JSON_H

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jv {
    int type;
    double num;        /* J_NUM, J_BOOL (0/1) */
    char *str;         /* J_STR */
    int n;             /* J_ARR, J_OBJ: number of items */
    char **keys;       /* J_OBJ */
    struct jv *items;  /* J_ARR, J_OBJ */
} jv;

typedef struct { const char *p; int ok; } jparser;

static inline void j_ws(jparser *ps) { while (isspace((unsigned char)*ps->p)) ps->p++; }

static inline int j_value(jparser *ps, jv *out);

static inline char *j_string(jparser *ps) {
    size_t cap = 16, len = 0;
    char *s = malloc(cap);
    ps->p++; /* opening quote */
    while (*ps->p && *ps->p != '"') {
        char c = *ps->p++;
        if (c == '\\') {
            char e = *ps->p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': { /* ASCII only: scenario text is ASCII; anything else becomes '?' */
                unsigned code = 0;
                for (int i = 0; i < 4 && isxdigit((unsigned char)*ps->p); i++, ps->p++)
                    code = code * 16 + (unsigned)(isdigit((unsigned char)*ps->p) ? *ps->p - '0'
                                                  : (tolower((unsigned char)*ps->p) - 'a' + 10));
                c = code < 128 ? (char)code : '?';
                break;
            }
            case '\0': ps->ok = 0; free(s); return NULL;
            default: c = e; /* \" \\ \/ */
            }
        }
        if (len + 2 > cap) s = realloc(s, cap *= 2);
        s[len++] = c;
    }
    if (*ps->p != '"') { ps->ok = 0; free(s); return NULL; }
    ps->p++;
    s[len] = '\0';
    return s;
}

static inline int j_container(jparser *ps, jv *out, int is_obj) {
    char close = is_obj ? '}' : ']';
    out->type = is_obj ? J_OBJ : J_ARR;
    ps->p++;
    j_ws(ps);
    if (*ps->p == close) { ps->p++; return 1; }
    for (;;) {
        out->items = realloc(out->items, sizeof(jv) * (size_t)(out->n + 1));
        memset(&out->items[out->n], 0, sizeof(jv));
        if (is_obj) {
            j_ws(ps);
            if (*ps->p != '"') return ps->ok = 0;
            out->keys = realloc(out->keys, sizeof(char *) * (size_t)(out->n + 1));
            if (!(out->keys[out->n] = j_string(ps))) return 0;
            j_ws(ps);
            if (*ps->p++ != ':') return ps->ok = 0;
        }
        if (!j_value(ps, &out->items[out->n])) return 0;
        out->n++;
        j_ws(ps);
        if (*ps->p == ',') { ps->p++; continue; }
        if (*ps->p == close) { ps->p++; return 1; }
        return ps->ok = 0;
    }
}

static inline int j_value(jparser *ps, jv *out) {
    j_ws(ps);
    const char *p = ps->p;
    if (*p == '{' || *p == '[') return j_container(ps, out, *p == '{');
    if (*p == '"') { out->type = J_STR; out->str = j_string(ps); return out->str != NULL; }
    if (!strncmp(p, "true", 4)) { out->type = J_BOOL; out->num = 1; ps->p += 4; return 1; }
    if (!strncmp(p, "false", 5)) { out->type = J_BOOL; out->num = 0; ps->p += 5; return 1; }
    if (!strncmp(p, "null", 4)) { out->type = J_NULL; ps->p += 4; return 1; }
    char *end;
    out->num = strtod(p, &end);
    if (end == p) return ps->ok = 0;
    out->type = J_NUM;
    ps->p = end;
    return 1;
}

/* Parse the file at `path`; NULL (and a message on stderr) when missing or malformed. */
static inline jv *json_load_file(const char *path, const char *who) {
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) {
        fprintf(stderr, "%s: cannot open scenario file %s\n", who, path ? path : "(env var unset)");
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = calloc(1, (size_t)size + 1);
    size_t got = fread(text, 1, (size_t)size, f);
    fclose(f);
    text[got] = '\0';
    jv *root = calloc(1, sizeof(jv));
    jparser ps = {text, 1};
    if (!j_value(&ps, root) || !ps.ok) {
        fprintf(stderr, "%s: malformed JSON in %s near offset %ld\n", who, path, (long)(ps.p - text));
        return NULL;
    }
    return root;
}

static inline const jv *jget(const jv *obj, const char *key) {
    if (!obj || obj->type != J_OBJ) return NULL;
    for (int i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key)) return &obj->items[i];
    return NULL;
}

static inline const jv *jat(const jv *arr, int i) {
    if (!arr || arr->type != J_ARR || i < 0 || i >= arr->n) return NULL;
    return &arr->items[i];
}

static inline int jcount(const jv *arr) { return arr && arr->type == J_ARR ? arr->n : 0; }

/* A present, non-null value (absent fields mean "not supported" in the stubs). */
static inline int jhas(const jv *v) { return v && v->type != J_NULL; }

static inline double jnum(const jv *v, double fallback) {
    return v && (v->type == J_NUM || v->type == J_BOOL) ? v->num : fallback;
}

static inline const char *jstr(const jv *v, const char *fallback) {
    return v && v->type == J_STR ? v->str : fallback;
}

/* Whether the array `arr` holds the string `name`. */
static inline int jlist_has(const jv *arr, const char *name) {
    for (int i = 0; i < jcount(arr); i++)
        if (!strcmp(jstr(jat(arr, i), ""), name)) return 1;
    return 0;
}

#endif
