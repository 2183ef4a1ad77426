/* nearsym.extract._scan: the byte scans of extraction, in C.
 *
 * Each function here is the fast path of one in Python that stays beside
 * it and gives the same result (tests/unit/test_scan.py checks both on
 * random and on real sources); the Python one runs where this module was
 * not built (no compiler at install time). Design notes are at the Python
 * functions: `mentions.mentions_of`, `folds.find_folds`,
 * `folds.spelled_tokens`.
 *
 * The scans hold no Python object while they run, so they release the
 * interpreter lock: a server's thread that indexes an edit does not stop
 * its event loop.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE /* memmem, memrchr */
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
    uint32_t *distinct = realloc(set->distinct, (size / 2 + 1) * sizeof(uint32_t));
    if (distinct != NULL)
        set->distinct = distinct; /* else the old one stays, for keyset_free */
    set->mask = size - 1;
    return set->slots && set->used && distinct;
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
mentions_of(PyObject *Py_UNUSED(module), PyObject *arg)
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


/* ---- folds.find_folds ------------------------------------------------ */

/* The lines a skim lets stand at any indent inside a block (`Skim.flush`):
 * a preprocessor line, and a label (`name:`, not `name::`). */
#define FLUSH_HASH 1
#define FLUSH_LABEL 2

static inline int
is_space_tab(char c)
{
    return c == ' ' || c == '\t';
}

static inline int
is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static inline int
is_word_head(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* The last '\n' in [lo, hi), or lo - 1. */
static inline Py_ssize_t
last_newline(const char *s, Py_ssize_t lo, Py_ssize_t hi)
{
    if (hi <= lo)
        return lo - 1;
    const char *found = memrchr(s + lo, '\n', (size_t)(hi - lo));
    return found ? found - s : lo - 1;
}

/* The first '\n' in [lo, hi), or -1. */
static inline Py_ssize_t
next_newline(const char *s, Py_ssize_t lo, Py_ssize_t hi)
{
    if (hi <= lo)
        return -1;
    const char *found = memchr(s + lo, '\n', (size_t)(hi - lo));
    return found ? found - s : -1;
}

static inline int
contains(const char *s, Py_ssize_t lo, Py_ssize_t hi, const char *word, size_t size)
{
    return hi > lo && memmem(s + lo, (size_t)(hi - lo), word, size) != NULL;
}

/* The end of a flush line's lead at `at` (a `#`, or a label's `:`), or -1;
 * nothing at or past `end` is seen. */
static Py_ssize_t
flush_lead(const char *s, Py_ssize_t at, Py_ssize_t end, int flush)
{
    if (at >= end)
        return -1;
    if ((flush & FLUSH_HASH) && s[at] == '#')
        return at + 1;
    if ((flush & FLUSH_LABEL) && is_word_head(s[at])) {
        Py_ssize_t r = at + 1;
        while (r < end && is_word(s[r]))
            r++;
        if (r < end && s[r] == ':' && !(r + 1 < end && s[r + 1] == ':'))
            return r + 1;
    }
    return -1;
}

/* Where a line starting at `at` is blank (spaces and tabs, a '\r', then
 * '\n' or `end`): its newline or `end`; else -1. */
static inline Py_ssize_t
blank_line(const char *s, Py_ssize_t at, Py_ssize_t end)
{
    while (at < end && is_space_tab(s[at]))
        at++;
    if (at < end && s[at] == '\r')
        at++;
    return (at == end || s[at] == '\n') ? at : -1;
}

/* The non-overlapping occurrences of `word` in [lo, hi). */
static Py_ssize_t
count_of(const char *s, Py_ssize_t lo, Py_ssize_t hi, const char *word, Py_ssize_t size)
{
    Py_ssize_t count = 0;
    if (size == 1) {
        for (Py_ssize_t k = lo; k < hi; k++)
            count += s[k] == word[0];
        return count;
    }
    while (hi - lo >= size) {
        const char *found = memmem(s + lo, (size_t)(hi - lo), word, (size_t)size);
        if (found == NULL)
            break;
        count++;
        lo = (found - s) + size;
    }
    return count;
}

/* The start of the last occurrence of `word` (2 bytes) in [lo, hi), or -1. */
static Py_ssize_t
last_pair(const char *s, Py_ssize_t lo, Py_ssize_t hi, char a, char b)
{
    for (Py_ssize_t k = hi - 2; k >= lo; k--)
        if (s[k] == a && s[k + 1] == b)
            return k - lo;
    return -1;
}

/* A search for a close, kept with where it began (`folds._Found`). */
typedef struct {
    const char *key; /* the indent searched for, in the source */
    Py_ssize_t size, from, at;
} Found;

#define FOUND_SLOTS 8

typedef struct {
    const char *s;
    Py_ssize_t n;
    const Py_ssize_t *hits;
    Py_ssize_t nhits;
    int lone_brace;
    int flush;
    const char *raw_quote;
    Py_ssize_t raw_quote_size;
    /* `folds._Found`: the last searches for a close, by indent. */
    Found closes[FOUND_SLOTS], outdents[FOUND_SLOTS];
    int next_close, next_outdent;
} FoldScan;

/* The slot of `key` (`size` bytes) in `slots`, or a free or the oldest one
 * made its (with `at` unknown: its `from` past any start). */
static Found *
found_slot(Found *slots, int *next, const char *key, Py_ssize_t size)
{
    for (int i = 0; i < FOUND_SLOTS; i++)
        if (slots[i].key != NULL && slots[i].size == size && memcmp(slots[i].key, key, (size_t)size) == 0)
            return &slots[i];
    Found *slot = &slots[*next];
    *next = (*next + 1) % FOUND_SLOTS;
    slot->key = key;
    slot->size = size;
    slot->from = PY_SSIZE_T_MAX;
    slot->at = -1;
    return slot;
}

/* Whether a search from `from` is answered by the slot's last one. */
static inline int
found_answers(const Found *slot, Py_ssize_t from)
{
    return slot->from <= from && (slot->at == -1 || from <= slot->at);
}

/* The start of the first line at or after `q` (and before `end`) that is
 * neither blank nor flush: as `folds._first_indent` reads them. */
static Py_ssize_t
first_inner(const FoldScan *f, Py_ssize_t q, Py_ssize_t end)
{
    const char *s = f->s;
    for (;;) {
        Py_ssize_t r = blank_line(s, q, end);
        if (r != -1 && r < end) {
            q = r + 1;
            continue;
        }
        /* As the Python pattern reads its flush alternatives here: a label
         * line is skipped, but of preprocessor lines only a `#` alone; a
         * block that opens with `#ifdef X` is not folded. */
        if ((f->flush & FLUSH_HASH) && q < end && s[q] == '#') {
            if (q + 1 < end && s[q + 1] == '\n') {
                q += 2;
                continue;
            }
            break;
        }
        r = flush_lead(s, q, end, f->flush & FLUSH_LABEL);
        if (r != -1) {
            Py_ssize_t nl = next_newline(s, r, end);
            if (nl != -1) {
                q = nl + 1;
                continue;
            }
        }
        break;
    }
    return q;
}

/* No more than this many lines up is a wrapped head's first line looked for
 * (`folds.WRAPPED_HEAD_LINES`). */
#define WRAPPED_HEAD_LINES 16

/* Whether [brace + 1, close) balances its braces, closes every block
 * comment it opens and holds an even count of raw quotes
 * (`folds._closed_inside`). */
static int
closed_inside(const FoldScan *f, Py_ssize_t brace, Py_ssize_t close)
{
    const char *s = f->s;
    Py_ssize_t inside = brace + 1;
    return count_of(s, inside, close, "{", 1) == count_of(s, inside, close, "}", 1)
           && last_pair(s, inside, close, '/', '*') <= last_pair(s, inside, close, '*', '/')
           && count_of(s, inside, close, f->raw_quote, f->raw_quote_size) % 2 == 0;
}

/* The first hit at or after `at`, or `n`. */
static Py_ssize_t
first_hit(const FoldScan *f, Py_ssize_t at)
{
    Py_ssize_t lo = 0, hi = f->nhits;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (f->hits[mid] < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->nhits ? f->hits[lo] : f->n;
}

/* `folds._wrapped_fold_at`: the close brace of a block whose head is
 * wrapped (the line of `brace`, starting at `start`, continues a head
 * above; or, `lone`, the `{` stands alone below it), if it may be folded,
 * else 0. */
static Py_ssize_t
wrapped_fold_at(FoldScan *f, Py_ssize_t brace, Py_ssize_t start, int lone)
{
    const char *s = f->s;
    Py_ssize_t n = f->n;
    Py_ssize_t q = first_inner(f, brace + 2, n), deeper = 0;
    while (q + deeper < n && is_space_tab(s[q + deeper]))
        deeper++;
    if (deeper == 0 || q + deeper == n || s[q + deeper] == '}')
        return 0; /* an empty block, or none */
    /* The close: the first line, blank and flush ones aside, not indented
     * as deep as the first inside; a `}` at an indent the inside's begins
     * with. */
    Found *known = found_slot(f->outdents, &f->next_outdent, s + q, deeper);
    if (!found_answers(known, q)) {
        known->from = q;
        known->at = -1;
        for (Py_ssize_t nl = next_newline(s, q, n); nl != -1; nl = next_newline(s, nl + 1, n)) {
            Py_ssize_t at = nl + 1;
            if (at + deeper <= n && memcmp(s + at, s + q, (size_t)deeper) == 0)
                continue;
            if (blank_line(s, at, n) != -1 || flush_lead(s, at, n, f->flush) != -1)
                continue;
            known->at = nl;
            break;
        }
    }
    if (known->at == -1)
        return 0;
    Py_ssize_t line = known->at + 1;
    Py_ssize_t closing = 0;
    while (line + closing < n && is_space_tab(s[line + closing]))
        closing++;
    if (line + closing == n || s[line + closing] != '}' || closing >= deeper
        || memcmp(s + line, s + q, (size_t)closing) != 0)
        return 0;
    Py_ssize_t close = line + closing;
    Py_ssize_t at = start;
    if (lone) {
        if (start == 0 || start + closing > n || memcmp(s + start, s + line, (size_t)closing) != 0)
            return 0; /* a `{` alone stands at least as deep as its close */
        at = last_newline(s, 0, start - 1) + 1;
    }
    int found = 0;
    for (int i = 0; i < WRAPPED_HEAD_LINES && !found; i++) {
        Py_ssize_t end = next_newline(s, at, n);
        if (end == -1 || end > brace)
            end = brace;
        Py_ssize_t words = at;
        while (words < end && is_space_tab(s[words]))
            words++;
        Py_ssize_t depth = words - at, k = words;
        while (k < end && s[k] == '\r')
            k++;
        if (k == end || s[words] == '*' || s[words] == '/' || contains(s, words, end, "switch", 6)
            || contains(s, words, end, "select", 6) || depth < closing
            || memcmp(s + at, s + line, (size_t)closing) != 0)
            return 0;
        if (depth == closing)
            found = 1; /* the head's first line */
        else if (at == 0)
            return 0;
        else
            at = last_newline(s, 0, at - 1) + 1;
    }
    if (!found || first_hit(f, at) < close)
        return 0; /* a token in the head or inside */
    return closed_inside(f, brace, close) ? close : 0;
}

/* `folds._fold_at`: the close brace of the block opened at `brace` if it
 * may be folded, else 0. */
static Py_ssize_t
fold_at(FoldScan *f, Py_ssize_t brace)
{
    const char *s = f->s;
    Py_ssize_t n = f->n;
    Py_ssize_t start = last_newline(s, 0, brace) + 1;
    Py_ssize_t body = start;
    while (body < brace && is_space_tab(s[body]))
        body++;
    Py_ssize_t indent = body - start; /* s[start:body] */
    Py_ssize_t head_start = start, head_lo = body, head_hi = brace;
    Py_ssize_t k = body;
    while (k < brace && s[k] == '\r')
        k++;
    if (k == brace) { /* `{` alone: the line above is the head */
        if (!f->lone_brace)
            return wrapped_fold_at(f, brace, start, 1);
        if (start < 2)
            return 0;
        head_start = last_newline(s, 0, start - 1) + 1;
        head_lo = head_start;
        head_hi = start - 1;
        while (head_lo < head_hi && is_space_tab(s[head_lo]))
            head_lo++;
        k = head_lo;
        while (k < head_hi && s[k] == '\r')
            k++;
        if (k == head_hi || s[head_lo] == '#')
            return 0;
    }
    if (head_lo < head_hi && (s[head_lo] == '*' || s[head_lo] == '/'))
        return 0;
    if (contains(s, head_lo, head_hi, "switch", 6) || contains(s, head_lo, head_hi, "select", 6))
        return 0;
    Py_ssize_t hit = first_hit(f, head_start);
    if (hit < brace)
        return 0;
    /* The close: "\n" + indent + "}" from the brace on. */
    Found *known = found_slot(f->closes, &f->next_close, s + start, indent);
    if (!found_answers(known, brace)) {
        known->from = brace;
        known->at = -1;
        for (Py_ssize_t nl = next_newline(s, brace, n); nl != -1; nl = next_newline(s, nl + 1, n)) {
            if (nl + 1 + indent < n && memcmp(s + nl + 1, s + start, (size_t)indent) == 0
                && s[nl + 1 + indent] == '}') {
                known->at = nl;
                break;
            }
        }
    }
    Py_ssize_t close = known->at == -1 ? -1 : known->at + 1 + indent;
    if (close == -1)
        return wrapped_fold_at(f, brace, start, 0);
    if (hit < close)
        return 0;
    /* The indent of the first line inside that is neither blank nor flush. */
    Py_ssize_t q = first_inner(f, brace + 2, close);
    Py_ssize_t deeper_at = q, deeper = 0;
    while (q + deeper < close && is_space_tab(s[q + deeper]))
        deeper++;
    if (deeper <= indent || memcmp(s + deeper_at, s + start, (size_t)indent) != 0)
        return wrapped_fold_at(f, brace, start, 0);
    /* No line inside outdented below it (but blank and flush lines). */
    Py_ssize_t end = close - indent - 1;
    for (Py_ssize_t nl = next_newline(s, brace + 1, end); nl != -1; nl = next_newline(s, nl + 1, end)) {
        Py_ssize_t line = nl + 1;
        if (line + deeper <= end && memcmp(s + line, s + deeper_at, (size_t)deeper) == 0)
            continue;
        if (blank_line(s, line, end) != -1 || flush_lead(s, line, end, f->flush) != -1)
            continue;
        return 0;
    }
    return closed_inside(f, brace, close) ? close : 0;
}

/* Offsets found while the interpreter lock is released, in a buffer that
 * doubles as it fills (the raw allocator needs no lock). `failed` is set
 * once it could not grow; what was pushed after that is lost. */
typedef struct {
    Py_ssize_t *at;
    Py_ssize_t count, room;
    int failed;
} Offsets;

static void
offsets_init(Offsets *o)
{
    o->count = 0;
    o->room = 128;
    o->at = PyMem_RawMalloc((size_t)o->room * sizeof(Py_ssize_t));
    o->failed = o->at == NULL;
}

static void
offsets_push(Offsets *o, Py_ssize_t value)
{
    if (o->failed)
        return;
    if (o->count == o->room) {
        Py_ssize_t *grown = PyMem_RawRealloc(o->at, (size_t)o->room * 2 * sizeof(Py_ssize_t));
        if (grown == NULL) {
            o->failed = 1;
            return;
        }
        o->at = grown;
        o->room *= 2;
    }
    o->at[o->count++] = value;
}

/* The offsets as a list of ints, or with `pairs` of (a, b) tuples of
 * consecutive ones; NULL with MemoryError where the buffer failed. Frees
 * the buffer. */
static PyObject *
offsets_list(Offsets *o, int pairs)
{
    PyObject *result = NULL;
    if (o->failed) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t width = pairs ? 2 : 1, size = o->count / width;
    result = PyList_New(size);
    if (result == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < size; i++) {
        PyObject *item = pairs ? Py_BuildValue("(nn)", o->at[2 * i], o->at[2 * i + 1])
                               : PyLong_FromSsize_t(o->at[i]);
        if (item == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, i, item);
    }
done:
    PyMem_RawFree(o->at);
    o->at = NULL;
    return result;
}

PyDoc_STRVAR(find_folds_doc,
"find_folds(source, hits, lone_brace, flush, raw_quote) -> list[tuple[int, int]]\n\n"
"`nearsym.extract.folds.find_folds`, with the skim's fields as arguments:\n"
"`flush` is FLUSH_HASH | FLUSH_LABEL for the lines it lets stand.");

static PyObject *
find_folds(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer source, quote;
    PyObject *hit_list;
    int lone_brace, flush;
    if (!PyArg_ParseTuple(args, "y*Opiy*", &source, &hit_list, &lone_brace, &flush, &quote))
        return NULL;
    PyObject *result = NULL, *hits_seq = NULL;
    Py_ssize_t *hits = NULL;
    if (quote.len == 0) {
        PyErr_SetString(PyExc_ValueError, "raw_quote must not be empty");
        goto done;
    }
    hits_seq = PySequence_Fast(hit_list, "hits must be a sequence of ints");
    if (hits_seq == NULL)
        goto done;
    Py_ssize_t nhits = PySequence_Fast_GET_SIZE(hits_seq);
    hits = PyMem_Malloc((size_t)(nhits ? nhits : 1) * sizeof(Py_ssize_t));
    if (hits == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < nhits; i++) {
        hits[i] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(hits_seq, i));
        if (hits[i] == -1 && PyErr_Occurred())
            goto done;
    }
    FoldScan f = {source.buf, source.len, hits, nhits, lone_brace, flush, quote.buf, quote.len,
                  {{0}}, {{0}}, 0, 0};
    Offsets found; /* (open, close) of each fold, in turn */
    offsets_init(&found);
    Py_BEGIN_ALLOW_THREADS
    const char *s = f.s;
    const char *next = f.n >= 2 ? memmem(s, (size_t)f.n, "{\n", 2) : NULL;
    while (next != NULL && !found.failed) {
        Py_ssize_t at = next - s;
        Py_ssize_t close = fold_at(&f, at);
        if (close) {
            offsets_push(&found, at);
            offsets_push(&found, close);
        }
        Py_ssize_t from = close ? close : at + 2;
        next = from + 2 <= f.n ? memmem(s + from, (size_t)(f.n - from), "{\n", 2) : NULL;
    }
    Py_END_ALLOW_THREADS
    result = offsets_list(&found, 1);
done:
    PyMem_Free(hits);
    Py_XDECREF(hits_seq);
    PyBuffer_Release(&source);
    PyBuffer_Release(&quote);
    return result;
}

/* ---- fold_ranges: the parser's included ranges around the folds -------- */

/* Rows and columns of increasing offsets, counted once through the text. */
typedef struct {
    const char *s;
    Py_ssize_t n, counted, row, line; /* `row` newlines before `counted`;
                                         `line`: where the line of `counted` starts */
} Lines;

static PyObject *
point_at(Lines *lines, Py_ssize_t offset)
{
    if (offset > lines->n)
        offset = lines->n;
    while (lines->counted < offset) {
        const char *nl = memchr(lines->s + lines->counted, '\n', (size_t)(offset - lines->counted));
        if (nl == NULL) {
            lines->counted = offset;
            break;
        }
        lines->row++;
        lines->counted = nl - lines->s + 1;
        lines->line = lines->counted;
    }
    return Py_BuildValue("(nn)", lines->row, offset - lines->line);
}

PyDoc_STRVAR(fold_ranges_doc,
"fold_ranges(source, folds) -> list[tuple[tuple[int, int], tuple[int, int], int, int]]\n\n"
"`folds._included` as (start point, end point, start byte, end byte):\n"
"everything but the inside of each (open brace, close brace) of `folds`,\n"
"which are sorted and apart; the first may open at -1 (what is left out\n"
"starts the file).");

static PyObject *
fold_ranges(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer source;
    PyObject *fold_list;
    if (!PyArg_ParseTuple(args, "y*O", &source, &fold_list))
        return NULL;
    PyObject *result = NULL, *folds = PySequence_Fast(fold_list, "folds must be a sequence");
    if (folds == NULL)
        goto done;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(folds);
    result = PyList_New(0);
    if (result == NULL)
        goto done;
    Lines lines = {source.buf, source.len, 0, 0, 0};
    Py_ssize_t start = 0;
    PyObject *start_point = Py_BuildValue("(ii)", 0, 0);
    for (Py_ssize_t i = 0; i <= count && start_point != NULL; i++) {
        Py_ssize_t brace = 0xFFFFFFFFL - 1, close = 0;
        PyObject *item = NULL;
        if (i < count) {
            PyObject *fold = PySequence_Fast_GET_ITEM(folds, i);
            if (!PyArg_ParseTuple(fold, "nn", &brace, &close))
                break;
            int leading = i == 0 && brace == -1;
            if ((brace < start && !leading) || close <= brace || close > source.len) {
                PyErr_SetString(PyExc_ValueError, "folds must be sorted, apart and inside");
                break;
            }
            if (leading) { /* nothing before it: no range */
                Py_DECREF(start_point);
                start_point = point_at(&lines, close);
                start = close;
                continue;
            }
            PyObject *end_point = point_at(&lines, brace + 1);
            if (end_point != NULL)
                item = Py_BuildValue("(NNnn)", start_point, end_point, start, brace + 1);
            else
                Py_DECREF(start_point);
            start_point = item != NULL ? point_at(&lines, close) : NULL;
        } else {
            item = Py_BuildValue("(N(kk)nk)", start_point, 0xFFFFFFFFUL, 0xFFFFFFFFUL, start,
                                 0xFFFFFFFFUL);
            start_point = NULL;
        }
        if (item == NULL)
            break;
        int appended = PyList_Append(result, item);
        Py_DECREF(item);
        if (appended < 0)
            break;
        start = close;
    }
    if (PyErr_Occurred()) {
        Py_XDECREF(start_point);
        Py_CLEAR(result);
    }
done:
    Py_XDECREF(folds);
    PyBuffer_Release(&source);
    return result;
}

/* ---- spelled_tokens: where a skim's inner tokens are spelled -------------
 *
 * `folds.spelled_tokens` finds each token's word and matches its regex
 * there. Here each regex of the three skims below is a function written
 * from it: bytes patterns, so `\w` is [A-Za-z0-9_] and `\s` is
 * [ \t\n\r\f\v]. `SPELLED` carries the regexes these were written from;
 * `native.py` uses this scan only for a skim whose `inner` is one of them
 * word for word, so a pattern edited in `languages` falls back to Python
 * instead of being scanned by rules it no longer states. */

#define SKIM_GO 1
#define SKIM_JAVA 2
#define SKIM_C 3

static inline int
re_word(unsigned char c)
{
    return is_word((char)c);
}

static inline int
re_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static inline Py_ssize_t
skip_spaces(const unsigned char *s, Py_ssize_t n, Py_ssize_t j)
{
    while (j < n && re_space(s[j]))
        j++;
    return j;
}

/* `\b` after a word that ends at `e` (its last byte is a word byte). */
static inline int
word_ends(const unsigned char *s, Py_ssize_t n, Py_ssize_t e)
{
    return e >= n || !re_word(s[e]);
}

/* `(?<!\w)` at `i`. */
static inline int
word_starts(const unsigned char *s, Py_ssize_t i)
{
    return i == 0 || !re_word(s[i - 1]);
}

/* A scan for one skim's tokens: the text, and what its lookaheads found
 * before. A lookahead that a later token would repeat is answered from
 * there: a megabyte of `new new new` (or of C's `struct struct`) made each
 * run to the end of the text, 30 CPU seconds. */
typedef struct {
    const unsigned char *s;
    Py_ssize_t n;
    /* `java_new`: from a position its scan stepped on, 1 where the scan
     * ends without a hit, 2 with one, 0 not known. Allocated once the
     * scans have stepped over as many bytes as the text has; NULL before
     * (or where that failed: the scans then run as they are). */
    unsigned char *outcome;
    Py_ssize_t steps;
    /* `c_body`: the last run of word and space bytes, [run_from, run_end). */
    Py_ssize_t run_from, run_end;
} Spell;

/* Go's `(?<!\w)type\b(?!\s*\))`. */
static int
go_type(Spell *sp, Py_ssize_t i, Py_ssize_t size)
{
    const unsigned char *s = sp->s;
    Py_ssize_t n = sp->n;
    (void)size;
    if (!word_starts(s, i) || !word_ends(s, n, i + 4))
        return 0;
    Py_ssize_t j = skip_spaces(s, n, i + 4);
    return !(j < n && s[j] == ')');
}

/* Go's `(?<!\w)WORD\s*(?:/|\{\s*[^\s}])` (`struct`, `interface`). */
static int
go_body(Spell *sp, Py_ssize_t i, Py_ssize_t size)
{
    const unsigned char *s = sp->s;
    Py_ssize_t n = sp->n;
    if (!word_starts(s, i))
        return 0;
    Py_ssize_t j = skip_spaces(s, n, i + size);
    if (j < n && s[j] == '/')
        return 1;
    if (!(j < n && s[j] == '{'))
        return 0;
    j = skip_spaces(s, n, j + 1);
    return j < n && s[j] != '}';
}

/* C's `(?<!\w)WORD\b[\w\s]*+[{/]` (`struct`, `union`, `enum`). A run that
 * starts inside the last one ends where it ended. */
static int
c_body(Spell *sp, Py_ssize_t i, Py_ssize_t size)
{
    const unsigned char *s = sp->s;
    Py_ssize_t n = sp->n;
    if (!word_starts(s, i) || !word_ends(s, n, i + size))
        return 0;
    Py_ssize_t j = i + size;
    if (sp->run_from <= j && j <= sp->run_end) {
        j = sp->run_end;
    } else {
        sp->run_from = j;
        while (j < n && (re_word(s[j]) || re_space(s[j])))
            j++;
        sp->run_end = j;
    }
    return j < n && (s[j] == '{' || s[j] == '/');
}

/* Java's `(?<![\w$.])WORD\b` (`class`, `interface`, `enum`, `record`). */
static int
java_word(Spell *sp, Py_ssize_t i, Py_ssize_t size)
{
    const unsigned char *s = sp->s;
    if (i > 0 && (re_word(s[i - 1]) || s[i - 1] == '$' || s[i - 1] == '.'))
        return 0;
    return word_ends(s, sp->n, i + size);
}

/* The end of the literal opened by `quote` at `p`, or -1 where none closes
 * on its line: `"(?:\\.|[^"\\\n])*"` (a skim's `quiet`), and the same
 * with `'`; or, `clean`, `"(?:[^"\\\n;]++|\\.)*+"` (Java's `new`: no `;`
 * inside, and a backslash does not escape a line end). */
static Py_ssize_t
literal_end(const unsigned char *s, Py_ssize_t n, Py_ssize_t p, unsigned char quote, int clean)
{
    for (Py_ssize_t q = p + 1; q < n;) {
        unsigned char c = s[q];
        if (c == quote)
            return q + 1;
        if (c == '\n' || (clean && c == ';'))
            return -1;
        if (c == '\\') {
            if (q + 1 == n || (clean && s[q + 1] == '\n'))
                return -1;
            q += 2;
        } else {
            q++;
        }
    }
    return -1;
}

/* One step of `java_new`'s scan at `p`: where the next starts, or -1 where
 * the scan ends here, with `*hit`. What follows `p` decides alone, so the
 * scans from two positions that step on a same one end alike. */
static Py_ssize_t
java_new_step(const unsigned char *s, Py_ssize_t n, Py_ssize_t p, int *hit)
{
    switch (s[p]) {
    case ';':
        *hit = 0;
        return -1;
    case '-':
        if (p + 1 < n && s[p + 1] == '>') {
            *hit = 1;
            return -1;
        }
        return p + 1;
    case ')': {
        Py_ssize_t j = skip_spaces(s, n, p + 1);
        if (j < n && (s[j] == '{' || s[j] == '/')) {
            *hit = 1;
            return -1;
        }
        return p + 1;
    }
    case '"':
    case '\'': {
        Py_ssize_t q = literal_end(s, n, p, s[p], 1);
        if (q < 0) {
            *hit = 1;
            return -1;
        }
        return q;
    }
    default:
        return p + 1;
    }
}

/* Java's `new`: `(?<![\w$])new\b`, then possessively any run of bytes but
 * `;"'-)`, a `-` not before `>`, a `)` not before `\s*[{/]`, or a clean
 * string or char literal; and there a `)`, a `->` or a quote. */
static int
java_new(Spell *sp, Py_ssize_t i, Py_ssize_t size)
{
    const unsigned char *s = sp->s;
    Py_ssize_t n = sp->n;
    (void)size;
    if (i > 0 && (re_word(s[i - 1]) || s[i - 1] == '$'))
        return 0;
    if (!word_ends(s, n, i + 3))
        return 0;
    if (sp->outcome == NULL && sp->steps > n)
        sp->outcome = PyMem_RawCalloc((size_t)n + 1, 1);
    unsigned char *known = sp->outcome;
    int hit = 0;
    for (Py_ssize_t p = i + 3; p >= 0 && p < n;) {
        if (known != NULL && known[p]) {
            hit = known[p] - 1;
            break;
        }
        p = java_new_step(s, n, p, &hit);
        sp->steps++;
    }
    if (known != NULL) { /* the positions stepped on, again: each to the end found */
        int ignored;
        for (Py_ssize_t p = i + 3; p >= 0 && p < n && !known[p]; p = java_new_step(s, n, p, &ignored))
            known[p] = (unsigned char)(hit + 1);
    }
    return hit;
}

static int
c_directive(Spell *sp, Py_ssize_t i, Py_ssize_t size)
{
    return word_ends(sp->s, sp->n, i + size); /* `define\b`, `typedef\b` */
}

typedef struct {
    const char *word;
    int (*test)(Spell *, Py_ssize_t, Py_ssize_t);
} Token;

static const Token go_tokens[] = {
    {"type", go_type}, {"struct", go_body}, {"interface", go_body}, {NULL, NULL},
};
static const Token java_tokens[] = {
    {"new", java_new}, {"class", java_word}, {"interface", java_word},
    {"enum", java_word}, {"record", java_word}, {NULL, NULL},
};
static const Token c_tokens[] = {
    {"define", c_directive}, {"typedef", c_directive}, {"struct", c_body},
    {"union", c_body}, {"enum", c_body}, {NULL, NULL},
};

/* The regexes the functions above were written from, as `languages` spells
 * them, in the order of the tokens. */
static const char *go_patterns[] = {
    "(?<!\\w)type\\b(?!\\s*\\))",
    "(?<!\\w)struct\\s*(?:/|\\{\\s*[^\\s}])",
    "(?<!\\w)interface\\s*(?:/|\\{\\s*[^\\s}])",
};
static const char *java_patterns[] = {
    "(?<![\\w$])new\\b(?:[^;\\\"'\\-)]++|-(?!>)|\\)(?!\\s*[{/])|\\\"(?:[^\\\"\\\\\\n;]++|\\\\.)*+"
    "\\\"|'(?:[^'\\\\\\n;]|\\\\.)*+')*+(?:\\)|->|[\\\"'])",
    "(?<![\\w$.])class\\b",
    "(?<![\\w$.])interface\\b",
    "(?<![\\w$.])enum\\b",
    "(?<![\\w$.])record\\b",
};
static const char *c_patterns[] = {
    "define\\b",
    "typedef\\b",
    "(?<!\\w)struct\\b[\\w\\s]*+[{/]",
    "(?<!\\w)union\\b[\\w\\s]*+[{/]",
    "(?<!\\w)enum\\b[\\w\\s]*+[{/]",
};

/* ---- quiet: the comments and literals where a token is no hit ----------
 *
 * `Skim.quiet` is a regex of alternatives, found left to right as
 * `re.finditer` finds them; each function below is one alternative (with
 * `(?s)`: `.` matches a newline), giving the end of what it matches at
 * `i`, or -1. */

/* `//[^\n]*` */
static Py_ssize_t
line_comment_end(const unsigned char *s, Py_ssize_t n, Py_ssize_t i)
{
    if (!(i + 1 < n && s[i] == '/' && s[i + 1] == '/'))
        return -1;
    const unsigned char *nl = memchr(s + i + 2, '\n', (size_t)(n - i - 2));
    return nl ? nl - s : n;
}

/* `/\*.*?\*\/` */
static Py_ssize_t
block_comment_end(const unsigned char *s, Py_ssize_t n, Py_ssize_t i)
{
    if (!(i + 1 < n && s[i] == '/' && s[i + 1] == '*'))
        return -1;
    const unsigned char *close = i + 4 <= n ? memmem(s + i + 2, (size_t)(n - i - 2), "*/", 2) : NULL;
    return close ? close - s + 2 : -1;
}

/* Go's raw string: `` `[^`]*` ``. */
static Py_ssize_t
raw_string_end(const unsigned char *s, Py_ssize_t n, Py_ssize_t i)
{
    if (s[i] != '`' || i + 1 >= n)
        return -1;
    const unsigned char *close = memchr(s + i + 1, '`', (size_t)(n - i - 1));
    return close ? close - s + 1 : -1;
}

/* Java's text block: `"""(?:\\.|[^\\])*?"""`. */
static Py_ssize_t
text_block_end(const unsigned char *s, Py_ssize_t n, Py_ssize_t i)
{
    if (!(i + 2 < n && s[i] == '"' && s[i + 1] == '"' && s[i + 2] == '"'))
        return -1;
    for (Py_ssize_t q = i + 3; q < n;) {
        if (q + 2 < n && s[q] == '"' && s[q + 1] == '"' && s[q + 2] == '"')
            return q + 3;
        if (s[q] == '\\') {
            if (q + 1 == n)
                return -1;
            q += 2;
        } else {
            q++;
        }
    }
    return -1;
}

/* The end of the skim's comment or literal at `i`, or -1: its `quiet`
 * alternatives in their order. */
static Py_ssize_t
quiet_end(const unsigned char *s, Py_ssize_t n, Py_ssize_t i, int skim)
{
    Py_ssize_t end = line_comment_end(s, n, i);
    if (end < 0)
        end = block_comment_end(s, n, i);
    if (end < 0 && skim == SKIM_JAVA)
        end = text_block_end(s, n, i);
    if (end < 0)
        end = s[i] == '"' ? literal_end(s, n, i, '"', 0) : -1;
    if (end < 0 && skim == SKIM_GO)
        end = raw_string_end(s, n, i);
    if (end < 0)
        end = s[i] == '\'' ? literal_end(s, n, i, '\'', 0) : -1;
    return end;
}

/* Drops the sorted hits inside the skim's comments and literals. */
static void
drop_quiet(const unsigned char *s, Py_ssize_t n, Offsets *hits, int skim)
{
    Py_ssize_t k = 0, kept = 0, count = hits->count;
    const Py_ssize_t *at = hits->at;
    Py_ssize_t *out = hits->at;
    for (Py_ssize_t i = 0; i < n && k < count;) {
        unsigned char c = s[i];
        if (c != '/' && c != '"' && c != '\'' && c != '`') {
            i++;
            continue;
        }
        Py_ssize_t end = quiet_end(s, n, i, skim);
        if (end < 0) {
            i++;
            continue;
        }
        while (k < count && at[k] < i)
            out[kept++] = at[k++];
        while (k < count && at[k] < end)
            k++; /* in a comment or a literal */
        i = end;
    }
    while (k < count)
        out[kept++] = at[k++];
    hits->count = kept;
}

/* The `quiet` regexes `quiet_end` was written from, as `languages` spells
 * them. */
static const char *quiet_patterns[] = {
    "(?s)//[^\\n]*|/\\*.*?\\*/|\"(?:\\\\.|[^\"\\\\\\n])*\"|`[^`]*`|'(?:\\\\.|[^'\\\\\\n])*'",
    "(?s)//[^\\n]*|/\\*.*?\\*/|\"\"\"(?:\\\\.|[^\\\\])*?\"\"\"|\"(?:\\\\.|[^\"\\\\\\n])*\"|"
    "'(?:\\\\.|[^'\\\\\\n])*'",
    "(?s)//[^\\n]*|/\\*.*?\\*/|\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\\\n])*'",
};

static int
compare_offsets(const void *a, const void *b)
{
    Py_ssize_t x = *(const Py_ssize_t *)a, y = *(const Py_ssize_t *)b;
    return (x > y) - (x < y);
}

PyDoc_STRVAR(spelled_doc,
"spelled(source, skim) -> list[int]\n\n"
"`folds.spelled_tokens` for the skim numbered `skim` (see SPELLED), its\n"
"hits in comments and literals (`quiet`) dropped.");

static PyObject *
spelled(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer source;
    int skim;
    if (!PyArg_ParseTuple(args, "y*i", &source, &skim))
        return NULL;
    const Token *tokens = skim == SKIM_GO ? go_tokens
                          : skim == SKIM_JAVA ? java_tokens
                          : skim == SKIM_C ? c_tokens
                          : NULL;
    if (tokens == NULL) {
        PyBuffer_Release(&source);
        PyErr_Format(PyExc_ValueError, "no skim numbered %d", skim);
        return NULL;
    }
    const unsigned char *s = source.buf;
    Py_ssize_t n = source.len;
    Offsets found;
    offsets_init(&found);
    Spell sp = {s, n, NULL, 0, 1, 0};
    Py_BEGIN_ALLOW_THREADS
    for (const Token *t = tokens; t->word != NULL && !found.failed; t++) {
        Py_ssize_t size = (Py_ssize_t)strlen(t->word);
        const unsigned char *at = size <= n ? memmem(s, (size_t)n, t->word, (size_t)size) : NULL;
        while (at != NULL) {
            Py_ssize_t i = at - s;
            if (t->test(&sp, i, size))
                offsets_push(&found, i);
            at = i + 1 + size <= n ? memmem(at + 1, (size_t)(n - i - 1), t->word, (size_t)size) : NULL;
        }
    }
    if (!found.failed) {
        qsort(found.at, (size_t)found.count, sizeof(Py_ssize_t), compare_offsets);
        drop_quiet(s, n, &found, skim);
    }
    PyMem_RawFree(sp.outcome);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&source);
    return offsets_list(&found, 0);
}

/* Go's const blocks (`consts.names_in_python`, once `consts._PLAIN` took
 * the block): each spec line's names, from its first column on. */
static const char *const go_not_names[] = {
    "break", "case", "chan", "const", "continue", "default", "defer", "else",
    "fallthrough", "for", "func", "go", "goto", "if", "import", "interface",
    "map", "package", "range", "return", "select", "struct", "switch", "type",
    "var", "true", "false", "nil", "iota", NULL,
};

static int
go_not_name(const unsigned char *p, Py_ssize_t size)
{
    for (const char *const *word = go_not_names; *word != NULL; word++)
        if ((Py_ssize_t)strlen(*word) == size && memcmp(*word, p, (size_t)size) == 0)
            return 1;
    return 0;
}

/* Append a name's span; 0 when out of memory (an exception set). */
static int
spans_push(uint32_t **spans, Py_ssize_t *count, Py_ssize_t *room, Py_ssize_t row,
           Py_ssize_t column, Py_ssize_t size)
{
    if (*count + 4 > *room) {
        Py_ssize_t grown_room = *room ? 2 * *room : 256;
        uint32_t *grown = PyMem_Realloc(*spans, (size_t)grown_room * sizeof(uint32_t));
        if (grown == NULL) {
            PyErr_NoMemory();
            return 0;
        }
        *spans = grown;
        *room = grown_room;
    }
    uint32_t *at = *spans + *count;
    at[0] = at[2] = (uint32_t)row;
    at[1] = (uint32_t)column;
    at[3] = (uint32_t)(column + size);
    *count += 4;
    return 1;
}

PyDoc_STRVAR(const_names_doc,
"const_names(body, row) -> tuple[list[str], bytes] | None\n\n"
"`consts.names_in_python` of a plain block's inside `body` (ASCII, every\n"
"line plain), its first line on `row`: the names, and their spans as native\n"
"unsigned 32-bit (row, column, row, end column) each; None where a name is\n"
"a keyword or a line is no spec.");

static PyObject *
const_names(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer body;
    Py_ssize_t row;
    if (!PyArg_ParseTuple(args, "y*n", &body, &row))
        return NULL;
    const unsigned char *s = body.buf;
    Py_ssize_t n = body.len, count = 0, room = 0;
    uint32_t *spans = NULL;
    PyObject *result = NULL, *names = PyList_New(0);
    if (names == NULL)
        goto done;
    for (Py_ssize_t line = 0; line < n; row++) {
        const unsigned char *newline = memchr(s + line, '\n', (size_t)(n - line));
        if (newline == NULL)
            break; /* the inside ends with its last line's newline */
        Py_ssize_t first = line, end = newline - s, i = line;
        line = end + 1;
        while (i < end && is_space_tab((char)s[i]))
            i++;
        if (i == end || (s[i] == '/' && i + 1 < end && s[i + 1] == '/'))
            continue; /* blank, or a comment */
        if (!is_word_head((char)s[i])) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        for (;;) { /* names, then `[ \t]*,[ \t]*` and a name, each */
            Py_ssize_t start = i;
            while (i < end && is_word((char)s[i]))
                i++;
            if (go_not_name(s + start, i - start)) {
                result = Py_NewRef(Py_None);
                goto done;
            }
            PyObject *name = PyUnicode_FromStringAndSize((const char *)s + start, i - start);
            if (name == NULL || PyList_Append(names, name) < 0) {
                Py_XDECREF(name);
                goto done;
            }
            Py_DECREF(name);
            if (!spans_push(&spans, &count, &room, row, start - first, i - start))
                goto done;
            Py_ssize_t k = i;
            while (k < end && is_space_tab((char)s[k]))
                k++;
            if (k == end || s[k] != ',')
                break;
            k++;
            while (k < end && is_space_tab((char)s[k]))
                k++;
            if (k == end || !is_word_head((char)s[k]))
                break;
            i = k;
        }
    }
    result = Py_BuildValue(
        "(Oy#)", names, spans ? (const char *)spans : "", count * (Py_ssize_t)sizeof(uint32_t));
done:
    PyMem_Free(spans);
    PyBuffer_Release(&body);
    Py_XDECREF(names);
    return result;
}

/* ---- quiet_folds: whole-line comments left out of the parse ------------ */

static inline int
blank_byte(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Whether the comment [start, end) has its lines to itself: only spaces
 * and tabs before it on its first line, and after it on its last (and a
 * carriage return before the newline); a line comment ending in a
 * backslash does not (C reads the next line as more of it). */
static int
whole_lines(const unsigned char *s, Py_ssize_t n, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t k = start;
    while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t'))
        k--;
    if (k > 0 && s[k - 1] != '\n')
        return 0;
    k = end;
    while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'))
        k++;
    if (s[start + 1] == '/') { /* a line comment: C continues one ending in `\` */
        Py_ssize_t last = end - 1;
        while (last > start + 1 && s[last] == '\r')
            last--;
        if (s[last] == '\\')
            return 0;
    }
    return k == n || s[k] == '\n';
}

/* Whether [start, end) spells a deprecation marker in any case. */
static int
spells_marker(const unsigned char *s, Py_ssize_t start, Py_ssize_t end)
{
    static const char *markers[] = {"deprecat", "obsolete"};
    for (Py_ssize_t i = start; i + 8 <= end; i++) {
        unsigned char c = s[i] | 0x20;
        if (c != 'd' && c != 'o')
            continue;
        for (int m = 0; m < 2; m++) {
            int k = 0;
            while (k < 8 && (s[i + k] | 0x20) == (unsigned char)markers[m][k])
                k++;
            if (k == 8)
                return 1;
        }
    }
    return 0;
}

PyDoc_STRVAR(quiet_folds_doc,
"quiet_folds(source, skim, folds) -> list[tuple[int, int]]\n\n"
"`comments.quiet_folds_in_python` for the skim numbered `skim` (see SPELLED):\n"
"`folds` (sorted, apart) with each run of whole-line comments outside them\n"
"added as the fold (run start - 1, run end); a run that spells a\n"
"deprecation marker stays in the parse.");

static PyObject *
quiet_folds(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer source;
    int skim;
    PyObject *fold_list;
    if (!PyArg_ParseTuple(args, "y*iO", &source, &skim, &fold_list))
        return NULL;
    PyObject *result = NULL, *folds = NULL;
    Offsets given, out; /* (brace, close) of each fold, in turn */
    offsets_init(&given);
    offsets_init(&out);
    if (skim != SKIM_GO && skim != SKIM_JAVA && skim != SKIM_C) {
        PyErr_Format(PyExc_ValueError, "no skim numbered %d", skim);
        goto done;
    }
    folds = PySequence_Fast(fold_list, "folds must be a sequence");
    if (folds == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(folds); i++) {
        Py_ssize_t brace, close;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(folds, i), "nn", &brace, &close))
            goto done;
        offsets_push(&given, brace);
        offsets_push(&given, close);
    }
    if (given.failed) {
        PyErr_NoMemory();
        goto done;
    }
    const unsigned char *s = source.buf;
    Py_ssize_t n = source.len, next = 0; /* the next given fold */
    Py_ssize_t run = -1, run_end = -1;
    /* A run ends at a fold, at anything but blanks after it, or at the end;
     * it is added before the folds that follow it. */
#define FLUSH_RUN()                                                                    \
    do {                                                                               \
        if (run >= 0 && !spells_marker(s, run, run_end)) {                             \
            offsets_push(&out, run - 1);                                               \
            offsets_push(&out, run_end);                                               \
        }                                                                              \
        run = -1;                                                                      \
    } while (0)
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !out.failed;) {
        while (next < given.count && given.at[next + 1] <= i) { /* a fold passed */
            FLUSH_RUN();
            offsets_push(&out, given.at[next]);
            offsets_push(&out, given.at[next + 1]);
            next += 2;
        }
        if (next < given.count && i > given.at[next]) { /* inside a fold: to its close */
            FLUSH_RUN();
            i = given.at[next + 1];
            continue;
        }
        unsigned char c = s[i];
        if (c != '/' && c != '"' && c != '\'' && c != '`') {
            i++;
            continue;
        }
        Py_ssize_t end = quiet_end(s, n, i, skim);
        if (end < 0) {
            i++;
            continue;
        }
        int inside = next < given.count && end > given.at[next];
        if (c == '/' && !inside && whole_lines(s, n, i, end)) {
            Py_ssize_t k = run_end;
            while (run >= 0 && k < i && blank_byte(s[k]))
                k++;
            if (run >= 0 && k == i) {
                run_end = end;
            } else {
                FLUSH_RUN();
                run = i;
                run_end = end;
            }
        } else {
            FLUSH_RUN();
        }
        i = end;
    }
    FLUSH_RUN();
    Py_END_ALLOW_THREADS
#undef FLUSH_RUN
    for (; next < given.count; next++)
        offsets_push(&out, given.at[next]);
    result = offsets_list(&out, 1);
done:
    PyMem_RawFree(given.at);
    PyMem_RawFree(out.at); /* NULL once `offsets_list` took it */
    Py_XDECREF(folds);
    PyBuffer_Release(&source);
    return result;
}

/* ((number, ((word, pattern), ...), quiet), ...): what `spelled` scans for. */
static PyObject *
spelled_skims(void)
{
    const Token *tokens[] = {go_tokens, java_tokens, c_tokens};
    const char **patterns[] = {go_patterns, java_patterns, c_patterns};
    const int numbers[] = {SKIM_GO, SKIM_JAVA, SKIM_C};
    PyObject *all = PyTuple_New(3);
    if (all == NULL)
        return NULL;
    for (int k = 0; k < 3; k++) {
        Py_ssize_t size = 0;
        while (tokens[k][size].word != NULL)
            size++;
        PyObject *inner = PyTuple_New(size);
        if (inner == NULL) {
            Py_DECREF(all);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < size; i++) {
            PyObject *pair = Py_BuildValue("(yy)", tokens[k][i].word, patterns[k][i]);
            if (pair == NULL) {
                Py_DECREF(inner);
                Py_DECREF(all);
                return NULL;
            }
            PyTuple_SET_ITEM(inner, i, pair);
        }
        PyObject *entry = Py_BuildValue("(iNy)", numbers[k], inner, quiet_patterns[k]);
        if (entry == NULL) {
            Py_DECREF(all);
            return NULL;
        }
        PyTuple_SET_ITEM(all, k, entry);
    }
    return all;
}

static PyMethodDef scan_methods[] = {
    {"mentions_of", mentions_of, METH_O, mentions_of_doc},
    {"find_folds", find_folds, METH_VARARGS, find_folds_doc},
    {"spelled", spelled, METH_VARARGS, spelled_doc},
    {"fold_ranges", fold_ranges, METH_VARARGS, fold_ranges_doc},
    {"const_names", const_names, METH_VARARGS, const_names_doc},
    {"quiet_folds", quiet_folds, METH_VARARGS, quiet_folds_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef scan_module = {
    PyModuleDef_HEAD_INIT, "_scan",
    "The byte scans of extraction, in C (see the Python functions they speed).",
    -1, scan_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    init_classes();
    PyObject *module = PyModule_Create(&scan_module);
    if (module == NULL)
        return NULL;
    /* Raised with any change to what the scans give (`native.VERSION`). */
    if (PyModule_AddIntConstant(module, "VERSION", 6) < 0
        || PyModule_AddIntConstant(module, "FLUSH_HASH", FLUSH_HASH) < 0
        || PyModule_AddIntConstant(module, "FLUSH_LABEL", FLUSH_LABEL) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    PyObject *skims = spelled_skims();
    if (skims == NULL || PyModule_AddObjectRef(module, "SPELLED", skims) < 0) {
        Py_XDECREF(skims);
        Py_DECREF(module);
        return NULL;
    }
    Py_DECREF(skims);
    return module;
}
