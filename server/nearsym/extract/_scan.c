/* nearsym.extract._scan: the byte scans of extraction, in C.
 *
 * Each function here is the fast path of one in Python that stays beside
 * it and gives the same result (tests/unit/test_scan.py checks both on
 * random and on real sources); the Python one runs where this module was
 * not built (no compiler at install time). Design notes are at the Python
 * functions: `mentions.mentions_of`.
 *
 * The scans hold no Python object while they run, so they release the
 * interpreter lock: a server's thread that indexes an edit does not stop
 * its event loop.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIN_LENGTH 2
#define MAX_LENGTH 256
#define MULTIPLY 0xBF58476D1CE4E5B9ULL
#define FINAL 0x9E3779B97F4A7C15ULL
#define SHIFT 29

/* 1: a byte an identifier holds; 2: one it may start with. */
static unsigned char byte_class[256];

static void
init_classes(void)
{
    const char *heads = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_$";
    for (const char *c = heads; *c; c++)
        byte_class[(unsigned char)*c] = 3;
    for (int d = '0'; d <= '9'; d++)
        byte_class[d] = 1;
}

/* The low `n` bytes (1 to 8) at `p`, little-endian, as one word; `room`
 * is how many bytes may be read at `p`. */
static inline uint64_t
chunk(const unsigned char *p, Py_ssize_t n, Py_ssize_t room)
{
    uint64_t word = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (room >= 8) {
        memcpy(&word, p, 8);
        return n == 8 ? word : word & ((1ULL << (8 * n)) - 1);
    }
#endif
    for (Py_ssize_t k = 0; k < n; k++)
        word |= (uint64_t)p[k] << (8 * k);
    return word;
}

/* A token's key: `mentions.span_keys` of one token. */
static inline uint32_t
token_key(const unsigned char *p, Py_ssize_t length, Py_ssize_t room)
{
    uint64_t h = chunk(p, length < 8 ? length : 8, room);
    h *= MULTIPLY;
    h ^= h >> SHIFT;
    for (Py_ssize_t offset = 8; length > offset; offset += 8) {
        Py_ssize_t rest = length - offset;
        uint64_t c = chunk(p + offset, rest < 8 ? rest : 8, room - offset) ^ h;
        c *= MULTIPLY;
        c ^= c >> SHIFT;
        h = c;
    }
    h *= FINAL;
    return (uint32_t)(h >> 32);
}

/* Sort `keys` in place: four passes of a radix sort by 8 bits, through
 * `spare` (room for `count` keys); insertion for a few. */
static void
sort_keys(uint32_t *keys, uint32_t *spare, size_t count)
{
    if (count < 64) {
        for (size_t i = 1; i < count; i++) {
            uint32_t key = keys[i];
            size_t j = i;
            for (; j > 0 && keys[j - 1] > key; j--)
                keys[j] = keys[j - 1];
            keys[j] = key;
        }
        return;
    }
    size_t counts[256];
    for (int shift = 0; shift < 32; shift += 8) {
        memset(counts, 0, sizeof(counts));
        for (size_t i = 0; i < count; i++)
            counts[(keys[i] >> shift) & 0xFF]++;
        size_t total = 0;
        for (size_t b = 0; b < 256; b++) {
            size_t here = counts[b];
            counts[b] = total;
            total += here;
        }
        for (size_t i = 0; i < count; i++)
            spare[counts[(keys[i] >> shift) & 0xFF]++] = keys[i];
        uint32_t *swap = keys;
        keys = spare;
        spare = swap;
    }
}

/* A set of keys, open addressing on the key's own bits (keys are hashes),
 * doubled when half full; `distinct` holds them in the order first seen. */
typedef struct {
    uint32_t *slots;
    unsigned char *used;
    size_t mask;
    uint32_t *distinct;
    size_t count;
} KeySet;

static int
keyset_alloc(KeySet *set, size_t size)
{
    set->slots = malloc(size * sizeof(uint32_t));
    set->used = calloc(size, 1);
    set->distinct = realloc(set->distinct, (size / 2 + 1) * sizeof(uint32_t));
    set->mask = size - 1;
    return set->slots && set->used && set->distinct;
}

static void
keyset_free(KeySet *set)
{
    free(set->slots);
    free(set->used);
    free(set->distinct);
}

static inline void
keyset_place(KeySet *set, uint32_t key)
{
    size_t at = (key ^ (key >> 16)) & set->mask;
    while (set->used[at])
        at = (at + 1) & set->mask;
    set->used[at] = 1;
    set->slots[at] = key;
}

/* 0 on no memory. */
static int
keyset_add(KeySet *set, uint32_t key)
{
    size_t at = (key ^ (key >> 16)) & set->mask;
    while (set->used[at]) {
        if (set->slots[at] == key)
            return 1;
        at = (at + 1) & set->mask;
    }
    if (2 * (set->count + 1) > set->mask + 1) {
        free(set->slots);
        free(set->used);
        if (!keyset_alloc(set, 2 * (set->mask + 1)))
            return 0;
        for (size_t k = 0; k < set->count; k++)
            keyset_place(set, set->distinct[k]);
        keyset_place(set, key);
    }
    else {
        set->used[at] = 1;
        set->slots[at] = key;
    }
    set->distinct[set->count++] = key;
    return 1;
}

/* The sorted distinct keys of `text`'s identifiers (malloc'd; NULL on no
 * memory), their count into `count`. */
static uint32_t *
scan_mentions(const unsigned char *text, Py_ssize_t size, size_t *count)
{
    KeySet set = {NULL, NULL, 0, NULL, 0};
    int ok = keyset_alloc(&set, 1024);
    Py_ssize_t at = 0;
    while (ok && at < size) {
        unsigned char kind = byte_class[text[at]];
        if (!kind) {
            at++;
            continue;
        }
        Py_ssize_t start = at;
        while (at < size && byte_class[text[at]])
            at++;
        Py_ssize_t length = at - start;
        if ((kind & 2) && length >= MIN_LENGTH && length <= MAX_LENGTH)
            ok = keyset_add(&set, token_key(text + start, length, size - start));
    }
    if (!ok) {
        keyset_free(&set);
        return NULL;
    }
    /* The slots are spare room now: at least twice the keys. */
    sort_keys(set.distinct, set.slots, set.count);
    uint32_t *keys = set.distinct;
    set.distinct = NULL;
    *count = set.count;
    keyset_free(&set);
    return keys;
}

static PyObject *
keys_bytes(const uint32_t *keys, size_t count)
{
    PyObject *blob = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(count * 4));
    if (blob == NULL)
        return NULL;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(blob);
    for (size_t k = 0; k < count; k++) { /* little-endian, as numpy's "<u4" */
        uint32_t key = keys[k];
        out[4 * k] = (unsigned char)key;
        out[4 * k + 1] = (unsigned char)(key >> 8);
        out[4 * k + 2] = (unsigned char)(key >> 16);
        out[4 * k + 3] = (unsigned char)(key >> 24);
    }
    return blob;
}

PyDoc_STRVAR(mentions_of_doc,
"mentions_of(sources) -> list[bytes]\n\n"
"The sorted keys of the distinct identifiers of each source, as the bytes\n"
"of a little-endian uint32 array (`nearsym.extract.mentions.mentions_of`).");

static PyObject *
mentions_of(PyObject *module, PyObject *arg)
{
    PyObject *sources = PySequence_Fast(arg, "sources must be a sequence of bytes");
    if (sources == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(sources);
    PyObject *result = PyList_New(n);
    if (result == NULL) {
        Py_DECREF(sources);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_buffer view;
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(sources, i), &view, PyBUF_SIMPLE) < 0)
            goto fail;
        size_t count = 0;
        uint32_t *keys;
        Py_BEGIN_ALLOW_THREADS
        keys = scan_mentions((const unsigned char *)view.buf, view.len, &count);
        Py_END_ALLOW_THREADS
        PyBuffer_Release(&view);
        if (keys == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        PyObject *blob = keys_bytes(keys, count);
        free(keys);
        if (blob == NULL)
            goto fail;
        PyList_SET_ITEM(result, i, blob);
    }
    Py_DECREF(sources);
    return result;
fail:
    Py_DECREF(sources);
    Py_DECREF(result);
    return NULL;
}

static PyMethodDef scan_methods[] = {
    {"mentions_of", mentions_of, METH_O, mentions_of_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef scan_module = {
    PyModuleDef_HEAD_INIT, "_scan",
    "The byte scans of extraction, in C (see the Python functions they speed).",
    -1, scan_methods,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    init_classes();
    return PyModule_Create(&scan_module);
}
