/* Optional accelerator: NLTK 3.9.1's METEOR alignment on interned ids, for many pairs at once.
 *
 * ``counts`` takes the (hypothesis, reference) pairs as two lists of prepared strings, each
 * packed as bytes holding, per position, its int32 stem id then its int32 word id, and the WordNet synonym sets as
 * sorted id ranges per stem id; for each pair it returns NLTK's match count and chunk count.
 * The alignment is NLTK 3.9.1's ``_enum_align_words`` -- the exact stage (lower-cased
 * words), the stem stage (Porter stems of the words left), then the WordNet stage (stems
 * left that are the hypothesis stem or its synonyms), each visiting the hypothesis words
 * left from last to first and taking the last reference word left that qualifies; matches
 * sorted by hypothesis position, a new chunk wherever a match does not continue the
 * previous one -- with NLTK's scans replaced by per-key chains (see ``chain``), so the
 * time is linear in the two lengths however long they are.
 *
 * ``scores`` takes the same arguments and returns each pair's METEOR as a float64: the
 * formula of averitec_tools.metrics.meteor_align.meteor_formula with the same IEEE double
 * operations in the same order (each product stored before it is added, so that no compiler
 * fuses a multiply-add, and pow() for the cube as Python's float ** does), so the values are
 * those of the Python formula bit for bit.
 * tests/test_meteor_accel.py checks this against the pure-Python path and NLTK 3.9.1.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

/* A prepared string: per position its stem id then its word id (int32 pairs). */
typedef struct {
    const int32_t *sid; /* stem ids, stride 2 */
    const int32_t *wid; /* word ids, stride 2 */
    Py_ssize_t n;
} Text;

typedef struct {
    const int32_t *lo, *hi, *values; /* synonyms of stem s: values[lo[s]:hi[s]], ascending */
    Py_ssize_t n;                    /* stem ids below n have an entry */
} Synonyms;

typedef struct {
    int32_t *hm, *rm;       /* per position: the partner, or -1 */
    int32_t *prev;          /* per reference position: the previous free one of its word / stem */
    int32_t *head_w, *head_s; /* per word / stem id: its last free reference position, or -1 */
    Py_ssize_t n_w, n_s;    /* sizes of head_w and head_s */
} Scratch;

/* NLTK's _match_enums visits the hypothesis words left from last to first, each taking the
 * last reference word left with the same key. The reference positions of one key are then
 * taken from the last one down, so the free ones are always the key's first ones: a chain
 * from head[key] through prev[] (built over the free reference positions, ascending) gives
 * each hypothesis word its partner in one step. */
static void chain(const int32_t *key, Py_ssize_t n, const int32_t *rm, int32_t *head, int32_t *prev) {
    for (Py_ssize_t j = 0; j < n; j++) {
        if (rm[j] < 0) {
            prev[j] = head[key[2 * j]];
            head[key[2 * j]] = (int32_t)j;
        }
    }
}

static void match_key(const int32_t *hkey, Py_ssize_t hn, int32_t *head, Scratch *sc) {
    for (Py_ssize_t i = hn - 1; i >= 0; i--) {
        if (sc->hm[i] >= 0)
            continue;
        int32_t j = head[hkey[2 * i]];
        if (j >= 0) {
            sc->hm[i] = j;
            sc->rm[j] = (int32_t)i;
            head[hkey[2 * i]] = sc->prev[j];
        }
    }
}

/* NLTK's _enum_wordnetsyn_match on the stems left: a hypothesis word takes the last reference
 * word left whose stem is its stem or one of its stem's synonyms, i.e. the largest free head
 * among those stems (a stem's free positions are taken last first, as in match_key). Its own
 * stem has none left after the stem stage, and a stem without synonyms is skipped. */
static void match_synonyms(const Text *h, const Synonyms *syn, Scratch *sc) {
    for (Py_ssize_t i = h->n - 1; i >= 0; i--) {
        int32_t s = h->sid[2 * i];
        if (sc->hm[i] >= 0 || s >= syn->n || syn->lo[s] >= syn->hi[s])
            continue;
        int32_t best = sc->head_s[s], best_stem = s;
        for (Py_ssize_t k = syn->lo[s]; k < syn->hi[s]; k++) {
            int32_t v = syn->values[k];
            if (v >= 0 && v < sc->n_s && sc->head_s[v] > best) {
                best = sc->head_s[v];
                best_stem = v;
            }
        }
        if (best >= 0) {
            sc->hm[i] = best;
            sc->rm[best] = (int32_t)i;
            sc->head_s[best_stem] = sc->prev[best];
        }
    }
}

/* Matches and chunks of one pair (NLTK's _enum_align_words and _count_chunks), in time linear
 * in the two lengths (and the synonym counts); the head arrays are all -1 again on return. */
static void align(const Text *h, const Text *r, const Synonyms *syn, Scratch *sc, int32_t *out) {
    for (Py_ssize_t i = 0; i < h->n; i++)
        sc->hm[i] = -1;
    for (Py_ssize_t j = 0; j < r->n; j++)
        sc->rm[j] = -1;
    chain(r->wid, r->n, sc->rm, sc->head_w, sc->prev);
    match_key(h->wid, h->n, sc->head_w, sc);
    for (Py_ssize_t j = 0; j < r->n; j++)
        sc->head_w[r->wid[2 * j]] = -1;
    chain(r->sid, r->n, sc->rm, sc->head_s, sc->prev);
    match_key(h->sid, h->n, sc->head_s, sc);
    match_synonyms(h, syn, sc);
    for (Py_ssize_t j = 0; j < r->n; j++)
        sc->head_s[r->sid[2 * j]] = -1;
    int32_t matches = 0, chunks = 0;
    Py_ssize_t prev_h = -2;
    int32_t prev_r = -2;
    for (Py_ssize_t i = 0; i < h->n; i++) {
        if (sc->hm[i] < 0)
            continue;
        matches++;
        if (!(i == prev_h + 1 && sc->hm[i] == prev_r + 1))
            chunks++;
        prev_h = i;
        prev_r = sc->hm[i];
    }
    out[0] = matches;
    out[1] = chunks;
}

/* Text views of a list of packed strings (the list is a private copy, held through the call),
 * the longest length and the largest word and stem ids; -1 with an exception set on a malformed item. */
static int read_texts(PyObject *list, Text *texts, Py_ssize_t *longest, int32_t *max_w, int32_t *max_s) {
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(list); k++) {
        PyObject *item = PyList_GET_ITEM(list, k);
        if (k > 0 && item == PyList_GET_ITEM(list, k - 1)) { /* a batch's pairs come grouped by hypothesis */
            texts[k] = texts[k - 1];
            continue;
        }
        if (!PyBytes_Check(item) || PyBytes_GET_SIZE(item) % (Py_ssize_t)(2 * sizeof(int32_t)) != 0) {
            PyErr_Format(PyExc_ValueError, "string %zd is not packed int32 (stem id, word id) pairs", k);
            return -1;
        }
        const int32_t *data = (const int32_t *)PyBytes_AS_STRING(item);
        Text *t = &texts[k];
        t->n = PyBytes_GET_SIZE(item) / (Py_ssize_t)(2 * sizeof(int32_t));
        t->sid = data;
        t->wid = data + 1;
        for (Py_ssize_t i = 0; i < t->n; i++) {
            if (t->sid[2 * i] < 0 || t->wid[2 * i] < 0) {
                PyErr_Format(PyExc_ValueError, "string %zd holds a negative id", k);
                return -1;
            }
            if (t->sid[2 * i] > *max_s)
                *max_s = t->sid[2 * i];
            if (t->wid[2 * i] > *max_w)
                *max_w = t->wid[2 * i];
        }
        if (t->n > *longest)
            *longest = t->n;
    }
    return 0;
}

static int check_synonyms(const Synonyms *syn, Py_ssize_t hi_len, Py_ssize_t n_values) {
    if (hi_len != syn->n) {
        PyErr_SetString(PyExc_ValueError, "synonym lo and hi must be int32 arrays of one length");
        return -1;
    }
    for (Py_ssize_t s = 0; s < syn->n; s++) {
        if (syn->lo[s] < 0 || syn->hi[s] > n_values || syn->lo[s] > syn->hi[s]) {
            PyErr_Format(PyExc_ValueError, "synonym range of stem %zd out of bounds", s);
            return -1;
        }
    }
    return 0;
}

/* NLTK's score from the counts: meteor_formula's operations in its order (ALPHA 0.9, BETA 3.0,
 * GAMMA 0.5); 0.0 without a match. The volatile stores round every product to a double
 * before it is added or subtracted (no fused multiply-add) and keep pow() a call. */
static double formula(int32_t matches, Py_ssize_t hyp_len, Py_ssize_t ref_len, int32_t chunks) {
    if (matches == 0)
        return 0.0;
    const double alpha = 0.9, gamma = 0.5;
    volatile double beta = 3.0;
    double precision = (double)matches / (double)hyp_len;
    double recall = (double)matches / (double)ref_len;
    volatile double weighted_p = alpha * precision;
    volatile double weighted_r = (1 - alpha) * recall;
    double fmean = (precision * recall) / (weighted_p + weighted_r);
    double frag_frac = (double)chunks / (double)matches;
    volatile double penalty = gamma * pow(frag_frac, beta);
    return (1 - penalty) * fmean;
}

/* Align hyps[p] with refs[p] for every p into out[2p], out[2p+1]. */
static int run_pairs(const Text *hyps, const Text *refs, Py_ssize_t n_pairs, const Synonyms *syn, Py_ssize_t longest,
                     int32_t max_w, int32_t max_s, int32_t *out) {
    Scratch sc;
    sc.n_w = (Py_ssize_t)max_w + 1;
    sc.n_s = (Py_ssize_t)max_s + 1;
    size_t size = (size_t)(3 * (longest + 1) + sc.n_w + sc.n_s);
    int32_t *memory = PyMem_Malloc(sizeof(int32_t) * size);
    if (memory == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    sc.hm = memory;
    sc.rm = sc.hm + longest + 1;
    sc.prev = sc.rm + longest + 1;
    sc.head_w = sc.prev + longest + 1;
    sc.head_s = sc.head_w + sc.n_w;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < sc.n_w + sc.n_s; k++)
        sc.head_w[k] = -1;
    for (Py_ssize_t p = 0; p < n_pairs; p++)
        align(&hyps[p], &refs[p], syn, &sc, out + 2 * p);
    Py_END_ALLOW_THREADS
    PyMem_Free(memory);
    return 0;
}

/* The pairs' (matches, chunks) as int32 pairs (as_scores 0), or their METEOR as float64 (1). */
static PyObject *align_pairs(PyObject *args, int as_scores) {
    PyObject *hyp_list, *ref_list, *hyps = NULL, *refs = NULL, *result = NULL;
    Py_buffer lo, hi, values;
    Py_ssize_t longest = 0;
    int32_t max_w = 0, max_s = 0;
    Text *texts = NULL;
    int32_t *raw = NULL;
    if (!PyArg_ParseTuple(args, "O!O!y*y*y*", &PyList_Type, &hyp_list, &PyList_Type, &ref_list, &lo, &hi, &values))
        return NULL;
    Synonyms syn = {lo.buf, hi.buf, values.buf, lo.len / (Py_ssize_t)sizeof(int32_t)};
    Py_ssize_t n = PyList_GET_SIZE(hyp_list);
    if (PyList_GET_SIZE(ref_list) != n) {
        PyErr_SetString(PyExc_ValueError, "hyps and refs must be lists of one length");
        goto done;
    }
    if (check_synonyms(&syn, hi.len / (Py_ssize_t)sizeof(int32_t), values.len / (Py_ssize_t)sizeof(int32_t)) < 0)
        goto done;
    /* private copies of the lists pin their items while the GIL is released */
    hyps = PyList_GetSlice(hyp_list, 0, n);
    refs = PyList_GetSlice(ref_list, 0, n);
    texts = PyMem_Malloc(sizeof(Text) * (size_t)(2 * n + 1));
    raw = PyMem_Malloc(sizeof(int32_t) * (size_t)(2 * n + 1));
    if (hyps == NULL || refs == NULL || texts == NULL || raw == NULL) {
        if (texts == NULL || raw == NULL)
            PyErr_NoMemory();
        goto done;
    }
    if (read_texts(hyps, texts, &longest, &max_w, &max_s) < 0 || read_texts(refs, texts + n, &longest, &max_w, &max_s) < 0)
        goto done;
    if (run_pairs(texts, texts + n, n, &syn, longest, max_w, max_s, raw) < 0)
        goto done;
    if (!as_scores) {
        result = PyBytes_FromStringAndSize((const char *)raw, 2 * n * (Py_ssize_t)sizeof(int32_t));
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    if (result != NULL) {
        double *out = (double *)PyBytes_AS_STRING(result);
        for (Py_ssize_t p = 0; p < n; p++)
            out[p] = formula(raw[2 * p], texts[p].n, texts[n + p].n, raw[2 * p + 1]);
    }
done:
    PyMem_Free(raw);
    PyMem_Free(texts);
    Py_XDECREF(hyps);
    Py_XDECREF(refs);
    PyBuffer_Release(&lo);
    PyBuffer_Release(&hi);
    PyBuffer_Release(&values);
    return result;
}

static PyObject *counts(PyObject *self, PyObject *args) {
    (void)self;
    return align_pairs(args, 0);
}

static PyObject *scores(PyObject *self, PyObject *args) {
    (void)self;
    return align_pairs(args, 1);
}

static PyMethodDef methods[] = {
    {"counts", counts, METH_VARARGS,
     "counts(hyps, refs, syn_lo, syn_hi, syn_values) -> bytes: int32 (matches, chunks) per pair."},
    {"scores", scores, METH_VARARGS,
     "scores(hyps, refs, syn_lo, syn_hi, syn_values) -> bytes: float64 METEOR per pair (NLTK's formula)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_meteor_c", "NLTK 3.9.1 METEOR alignment in C.", -1, methods, NULL, NULL, NULL, NULL,
};

/* LAYOUT names what counts() and scores() read (3: layout 2, with scores()); averitec_tools.metrics.meteor_accel uses a build only when
 * it expects this value, so a stale build left in place after the layout changed is never used. */
PyMODINIT_FUNC PyInit__meteor_c(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "LAYOUT", 3) < 0)
        Py_CLEAR(m);
    return m;
}
