/* nearsym.core._align: the alignment of a query in ASCII names, in C.
 *
 * The fast path of `align.align` when no positions are asked for (the
 * rerank's case): the same programme (see the design note of `align.py`),
 * run name by name over its own length instead of over a pool's padded
 * matrix, in whole tenths of points as 64-bit integers. `align.py` runs
 * the numpy programme for the names this one leaves out (those that are
 * not ASCII); tests/unit/test_match.py holds both to the slow reference.
 *
 * The points, gap costs, tail and separators come from `align.py` and
 * `words.py` as arguments, so they are written once. The programme holds
 * no Python object while it runs and releases the interpreter lock.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* What a cell no alignment reaches holds (numpy's -inf): far below any
 * score, so that adding points to it never makes it look reached. */
#define NONE (INT64_MIN / 4)
#define REACHED(x) ((x) > NONE / 2)

typedef struct {
    int64_t start, word, run, skip, mismatch, open, extend, to_word, carry;
    double tail, tail_cap, unit;
} Points;

/* Per byte: 1 separator, 2 upper, 4 lower, 8 digit (ASCII only). */
enum { SEP = 1, UPPER = 2, LOWER = 4, DIGIT = 8 };

static void
init_classes(unsigned char *classes, const unsigned char *separators, Py_ssize_t count)
{
    memset(classes, 0, 256);
    for (int c = 'A'; c <= 'Z'; c++)
        classes[c] = UPPER;
    for (int c = 'a'; c <= 'z'; c++)
        classes[c] = LOWER;
    for (int c = '0'; c <= '9'; c++)
        classes[c] = DIGIT;
    for (Py_ssize_t k = 0; k < count; k++)
        if (separators[k] < 128)
            classes[separators[k]] = SEP;
}

typedef struct {
    int64_t *base, *fresh, *scores, *carry, *next_scores, *next_carry;
    unsigned char *starts, *folded;
    unsigned char classes[256]; /* per call: the separators are an argument */
} Work;

/* `words.word_starts` of one ASCII name. */
static void
mark_starts(const unsigned char *classes, const unsigned char *s, Py_ssize_t n,
            unsigned char *starts)
{
    for (Py_ssize_t j = 0; j < n; j++) {
        unsigned char c = classes[s[j]];
        int prev_sep = j == 0 || (classes[s[j - 1]] & SEP);
        int start = prev_sep && !(c & SEP);
        if (c & UPPER && j > 0) {
            unsigned char p = classes[s[j - 1]];
            if (p & (LOWER | DIGIT))
                start = 1; /* getUser, utf8Decode */
            else if (p & UPPER && j + 1 < n && classes[s[j + 1]] & LOWER)
                start = 1; /* the S of HTTPServer */
        }
        starts[j] = (unsigned char)start;
    }
}

/* The best points of `typed` (folded: `query`) in `name`, or NONE. */
static int64_t
align_one(const unsigned char *name, Py_ssize_t n, const unsigned char *typed,
          const unsigned char *query, Py_ssize_t m, int smart, const Points *p, Work *w)
{
    if (n < m)
        return NONE;
    Py_ssize_t band = n - m + 1; /* the columns a level can take */
    mark_starts(w->classes, name, n, w->starts);
    for (Py_ssize_t j = 0; j < n; j++) {
        int64_t b = j == 0 ? p->start : (w->starts[j] ? p->word : p->skip);
        w->base[j] = b;
        int64_t capped = b < p->carry ? b : p->carry;
        w->fresh[j] = capped > p->run ? capped : p->run;
        unsigned char c = name[j];
        w->folded[j] = (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
    }
    int64_t *scores = w->scores, *carry = w->carry;
    int64_t *next_scores = w->next_scores, *next_carry = w->next_carry;
    for (Py_ssize_t t = 0; t < band; t++) {
        int64_t here = w->base[t] - ((smart && name[t] != typed[0]) ? p->mismatch : 0);
        scores[t] = w->folded[t] == query[0] ? here : NONE;
        carry[t] = w->fresh[t];
    }
    for (Py_ssize_t i = 1; i < m; i++) {
        /* The best of the level before over the cells left of t: plain,
         * and with the gap's extension credited (see the design note). */
        int64_t best_value = NONE, best_score = NONE;
        for (Py_ssize_t t = 0; t < band; t++) {
            Py_ssize_t j = i + t;
            int64_t off = (smart && name[j] != typed[i]) ? p->mismatch : 0;
            int64_t here = w->base[j] - off;
            int64_t gap = NONE;
            if (REACHED(best_value))
                gap = best_value + here - (p->open + p->extend * (int64_t)(j - 2));
            if (w->starts[j] && REACHED(best_score)) {
                int64_t to_word = best_score + here - p->to_word;
                if (to_word > gap)
                    gap = to_word;
            }
            int64_t before = scores[t];
            int64_t run = NONE;
            if (REACHED(before)) {
                int64_t points = carry[t] - off;
                run = before + (points > here ? points : here);
            }
            int is_run = run > gap;
            next_scores[t] = w->folded[j] == query[i] ? (is_run ? run : gap) : NONE;
            next_carry[t] = is_run ? carry[t] : w->fresh[j];
            if (REACHED(before)) {
                int64_t value = before + p->extend * (int64_t)(i - 1 + t);
                if (value > best_value)
                    best_value = value;
                if (before > best_score)
                    best_score = before;
            }
        }
        int64_t *swap = scores;
        scores = next_scores;
        next_scores = swap;
        swap = carry;
        carry = next_carry;
        next_carry = swap;
    }
    int64_t best = NONE;
    for (Py_ssize_t t = 0; t < band; t++)
        if (scores[t] > best)
            best = scores[t];
    return REACHED(best) ? best : NONE;
}

/* Whether `text` (a str) is ASCII; -1 with an exception set. */
static int
is_ascii(PyObject *text)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0)
        return -1;
#endif
    return PyUnicode_IS_ASCII(text) ? 1 : 0;
}

PyDoc_STRVAR(align_ascii_doc,
"align_ascii(typed, names, smart, points, separators) -> (raw, tail, ok, rest)\n\n"
"`align.align` of an ASCII `typed` in each ASCII name of `names`: raw and\n"
"tail as float64 bytes, ok as one byte a name; `rest` lists the names that\n"
"are not ASCII, left for numpy. `smart`: whether a matched character of\n"
"another case than typed costs `mismatch` (smart case, decided by the\n"
"caller: only a query with a capital asks for it). `points`: start, word, run, skip, mismatch,\n"
"open, extend, to_word, carry in whole units, then tail, tail_cap, unit.");

static PyObject *
align_ascii(PyObject *self, PyObject *args)
{
    PyObject *typed_obj, *names_obj, *points_obj;
    int smart;
    const char *separators;
    Py_ssize_t separators_len;
    Points p;
    if (!PyArg_ParseTuple(args, "UOpOy#", &typed_obj, &names_obj, &smart, &points_obj,
                          &separators, &separators_len))
        return NULL;
    if (!PyArg_ParseTuple(points_obj, "LLLLLLLLLddd", &p.start, &p.word, &p.run, &p.skip,
                          &p.mismatch, &p.open, &p.extend, &p.to_word, &p.carry, &p.tail,
                          &p.tail_cap, &p.unit))
        return NULL;
    int ascii = is_ascii(typed_obj);
    if (ascii < 0)
        return NULL;
    if (!ascii) {
        PyErr_SetString(PyExc_ValueError, "the query must be ASCII");
        return NULL;
    }
    PyObject *names = PySequence_Tuple(names_obj); /* holds every name while unlocked */
    if (names == NULL)
        return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(names);
    Py_ssize_t m = PyUnicode_GET_LENGTH(typed_obj);
    const unsigned char *typed = (const unsigned char *)PyUnicode_DATA(typed_obj);
    PyObject *result = NULL, *raw = NULL, *tail = NULL, *ok = NULL, *rest = NULL;
    const unsigned char **data = PyMem_Malloc(sizeof(*data) * (size_t)(count ? count : 1));
    Py_ssize_t *lengths = PyMem_Malloc(sizeof(*lengths) * (size_t)(count ? count : 1));
    unsigned char *query = PyMem_Malloc((size_t)(m ? m : 1));
    Work w = {0};
    void *block = NULL;
    if (data == NULL || lengths == NULL || query == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    rest = PyList_New(0);
    if (rest == NULL)
        goto done;
    Py_ssize_t widest = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *name = PyTuple_GET_ITEM(names, k);
        if (!PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "names must be str");
            goto done;
        }
        ascii = is_ascii(name);
        if (ascii < 0)
            goto done;
        if (!ascii) {
            data[k] = NULL;
            lengths[k] = 0;
            PyObject *at = PyLong_FromSsize_t(k);
            if (at == NULL || PyList_Append(rest, at) < 0) {
                Py_XDECREF(at);
                goto done;
            }
            Py_DECREF(at);
            continue;
        }
        data[k] = (const unsigned char *)PyUnicode_DATA(name);
        lengths[k] = PyUnicode_GET_LENGTH(name);
        if (lengths[k] > widest)
            widest = lengths[k];
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        unsigned char c = typed[i];
        query[i] = (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
    }
    size_t cells = (size_t)(widest ? widest : 1);
    block = PyMem_Malloc(cells * (6 * sizeof(int64_t) + 2));
    raw = PyByteArray_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(double));
    tail = PyByteArray_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(double));
    ok = PyByteArray_FromStringAndSize(NULL, count);
    if (block == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (raw == NULL || tail == NULL || ok == NULL)
        goto done;
    w.base = block;
    w.fresh = w.base + cells;
    w.scores = w.fresh + cells;
    w.carry = w.scores + cells;
    w.next_scores = w.carry + cells;
    w.next_carry = w.next_scores + cells;
    w.starts = (unsigned char *)(w.next_carry + cells);
    w.folded = w.starts + cells;
    double *raw_out = (double *)PyByteArray_AS_STRING(raw);
    double *tail_out = (double *)PyByteArray_AS_STRING(tail);
    char *ok_out = PyByteArray_AS_STRING(ok);
    init_classes(w.classes, (const unsigned char *)separators, separators_len);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t n = lengths[k];
        double beyond = n > m ? (double)(n - m) : 0.0;
        double charged = p.tail * beyond;
        tail_out[k] = charged < p.tail_cap ? charged : p.tail_cap;
        int64_t best = data[k] == NULL || m == 0
                           ? NONE
                           : align_one(data[k], n, typed, query, m, smart, &p, &w);
        ok_out[k] = REACHED(best);
        raw_out[k] = REACHED(best) ? (double)best / p.unit - tail_out[k] : 0.0;
    }
    Py_END_ALLOW_THREADS
    result = PyTuple_Pack(4, raw, tail, ok, rest);
done:
    Py_XDECREF(raw);
    Py_XDECREF(tail);
    Py_XDECREF(ok);
    Py_XDECREF(rest);
    PyMem_Free(block);
    PyMem_Free(query);
    PyMem_Free(lengths);
    PyMem_Free(data);
    Py_DECREF(names);
    return result;
}

static PyMethodDef align_methods[] = {
    {"align_ascii", align_ascii, METH_VARARGS, align_ascii_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef align_module = {
    PyModuleDef_HEAD_INIT, "_align",
    "The alignment of a query in ASCII names, in C (see nearsym.core.align).",
    -1, align_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__align(void)
{
    PyObject *module = PyModule_Create(&align_module);
    if (module == NULL)
        return NULL;
    /* Raised with any change to what the programme gives (`align.NATIVE`). */
    if (PyModule_AddIntConstant(module, "VERSION", 2) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
