/* Optional accelerator of tokenising and interning: NLTK 3.9.1's Punkt sentence spans, and the
 * per-token table lookups that turn lower-cased words into stems, stem ids and packed codes.
 *
 * ``sentences_many(texts, memo, decide)`` is averitec_tools.metrics.punkt's ``one_sentence``
 * and ``SentenceSplitter.sentences`` for many texts: the candidate breaks of Punkt's
 * ``PERIOD_CONTEXT`` (a ``.``, ``?`` or ``!`` followed by punctuation or by whitespace and a
 * token), each with the context NLTK 3.9.1's ``_match_potential_end_contexts`` gives it, the
 * slices, then ``_realign_boundaries``. A ``?`` or ``!`` candidate always breaks; a period's
 * decision is ``memo[context]`` or, when absent, ``decide(context)`` (Python: Punkt's
 * ``text_contains_sentbreak``, remembered). ``\s`` and ``str.rstrip`` are Py_UNICODE_ISSPACE,
 * as in the ``re`` module and ``str``.
 *
 * ``plan_sentences`` (in _chunks_c.c) assembles the Treebank tokens of sentences from
 * remembered chunks.
 *
 * ``lookup_many``, ``join_many``, ``concat_many``, ``missing_many`` and ``analyse_many`` (in _lookup_c.c) look many
 * token lists up in a table at once.
 *
 * tests/test_tokenize.py checks the sentences against the pure-Python path and NLTK 3.9.1 on
 * every shared string and the adversarial set; tests/test_meteor_accel.py the lookups.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "_text_c.h"

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t n;
} Text;

#define CH(t, i) PyUnicode_READ((t)->kind, (t)->data, (i))

static int is_sent_end(Py_UCS4 c) { return c == '.' || c == '?' || c == '!'; }

/* Punkt's NonWord class: ) " ; } ] * : @ ' ( { [ ! ? */
static int is_non_word(Py_UCS4 c) {
    switch (c) {
    case ')': case '"': case ';': case '}': case ']': case '*': case ':': case '@':
    case '\'': case '(': case '{': case '[': case '!': case '?':
        return 1;
    default:
        return 0;
    }
}

static int is_ascii_ws(Py_UCS4 c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0b || c == 0x0c; }

static int is_closer(Py_UCS4 c) { return c == '"' || c == '\'' || c == ')' || c == ']' || c == '}'; }

/* PERIOD_CONTEXT's lookahead after the candidate at p: the end of after_tok and the start of
 * next_tok (-1: after_tok is one NonWord character); 0: no match. */
static int after_token(const Text *t, Py_ssize_t p, Py_ssize_t *end, Py_ssize_t *next) {
    Py_ssize_t q = p + 1;
    if (q >= t->n)
        return 0;
    if (is_non_word(CH(t, q))) {
        *end = q + 1;
        *next = -1;
        return 1;
    }
    while (q < t->n && Py_UNICODE_ISSPACE(CH(t, q)))
        q++;
    if (q == p + 1 || q >= t->n)
        return 0;
    *next = q;
    while (q < t->n && !Py_UNICODE_ISSPACE(CH(t, q)))
        q++;
    *end = q;
    return 1;
}

/* Punkt's _get_last_whitespace_index on text[a:b]: the last ASCII whitespace offset, 0 when none. */
static Py_ssize_t last_whitespace(const Text *t, Py_ssize_t a, Py_ssize_t b) {
    for (Py_ssize_t i = b - 1; i > a; i--)
        if (is_ascii_ws(CH(t, i)))
            return i - a;
    return 0;
}

typedef struct {
    Py_ssize_t start, end, next, word_start; /* the candidate, after_tok's end, next_tok's start (-1) */
} Candidate;

/* Whether a candidate is a break: ?/! always; a period by memo or decide(context). -1: error. */
static int is_break(PyObject *text, const Text *t, const Candidate *c, PyObject *memo, PyObject *decide) {
    if (CH(t, c->start) != '.')
        return 1;
    PyObject *context = PyUnicode_Substring(text, c->word_start, c->end);
    if (context == NULL)
        return -1;
    PyObject *known = PyDict_GetItemWithError(memo, context);
    int owned = 0;
    if (known == NULL) {
        if (PyErr_Occurred()) {
            Py_DECREF(context);
            return -1;
        }
        known = PyObject_CallOneArg(decide, context);
        owned = 1;
    }
    Py_DECREF(context);
    if (known == NULL)
        return -1;
    int value = PyObject_IsTrue(known);
    if (owned)
        Py_DECREF(known);
    return value;
}

/* Append (a, b) to the slices; grows *cap. -1: out of memory. */
static int push(Py_ssize_t **slices, Py_ssize_t *n, Py_ssize_t *cap, Py_ssize_t a, Py_ssize_t b) {
    if (*n == *cap) {
        Py_ssize_t grown = *cap ? 2 * *cap : 16;
        Py_ssize_t *more = PyMem_Realloc(*slices, sizeof(Py_ssize_t) * 2 * (size_t)grown);
        if (more == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        *slices = more;
        *cap = grown;
    }
    (*slices)[2 * *n] = a;
    (*slices)[2 * *n + 1] = b;
    (*n)++;
    return 0;
}

/* One decided candidate: slices gets (last_break, end of the punctuation). */
static int take(PyObject *text, const Text *t, const Candidate *c, PyObject *memo, PyObject *decide,
                Py_ssize_t **slices, Py_ssize_t *n, Py_ssize_t *cap, Py_ssize_t *last_break) {
    int brk = is_break(text, t, c, memo, decide);
    if (brk <= 0)
        return brk;
    if (push(slices, n, cap, *last_break, c->start + 1) < 0)
        return -1;
    *last_break = c->next >= 0 ? c->next : c->start + 1;
    return 0;
}

/* NLTK 3.9.1's _slices_from_text over _match_potential_end_contexts; *n slices. */
static int slices_of(PyObject *text, const Text *t, Py_ssize_t stripped, PyObject *memo, PyObject *decide,
                     Py_ssize_t **slices, Py_ssize_t *n, Py_ssize_t *cap) {
    Candidate prev = {0, 0, 0, 0}, cur;
    int have_prev = 0;
    Py_ssize_t prev_stop = 0, prev_start = 0, last_break = 0;
    for (Py_ssize_t p = 0; p < t->n; p++) {
        if (!is_sent_end(CH(t, p)) || !after_token(t, p, &cur.end, &cur.next))
            continue;
        cur.start = p;
        Py_ssize_t last = last_whitespace(t, prev_stop, p);
        cur.word_start = last ? last + prev_stop + 1 : prev_start;
        if (have_prev && prev_stop <= cur.word_start &&
            take(text, t, &prev, memo, decide, slices, n, cap, &last_break) < 0)
            return -1;
        prev = cur;
        have_prev = 1;
        prev_start = cur.word_start;
        prev_stop = p;
    }
    if (have_prev && take(text, t, &prev, memo, decide, slices, n, cap, &last_break) < 0)
        return -1;
    return push(slices, n, cap, last_break, stripped);
}

/* BOUNDARY_REALIGNMENT.match(text[a:b]): closers (lazily) then whitespace, "--" or the end/a newline.
 * Returns the match's end offset (0: no match); *closers: how many closing characters. */
static Py_ssize_t realignment(const Text *t, Py_ssize_t a, Py_ssize_t b, Py_ssize_t *closers) {
    for (Py_ssize_t k = a; k < b && is_closer(CH(t, k)); k++) {
        Py_ssize_t q = k + 1;
        *closers = q - a;
        if (q < b && Py_UNICODE_ISSPACE(CH(t, q))) {
            while (q < b && Py_UNICODE_ISSPACE(CH(t, q)))
                q++;
            return q - a;
        }
        if ((q + 1 < b && CH(t, q) == '-' && CH(t, q + 1) == '-') || q == b)
            return q - a;
    }
    return 0;
}

/* _realign_boundaries over the slices, then the sentences themselves. */
static PyObject *realigned(PyObject *text, const Text *t, const Py_ssize_t *s, Py_ssize_t n) {
    PyObject *out = PyList_New(0);
    Py_ssize_t realign = 0;
    for (Py_ssize_t k = 0; out != NULL && k < n; k++) {
        Py_ssize_t start = s[2 * k] + realign, stop = s[2 * k + 1], closers = 0, end = 0;
        if (k + 1 < n) {
            end = realignment(t, s[2 * k + 2], s[2 * k + 3], &closers);
            if (end) {
                stop = s[2 * k + 2] + closers;
                realign = end;
            } else {
                realign = 0;
            }
        }
        if (start < stop || end) {
            PyObject *sentence = PyUnicode_Substring(text, start, stop);
            if (sentence == NULL || PyList_Append(out, sentence) < 0)
                Py_CLEAR(out);
            Py_XDECREF(sentence);
        }
    }
    return out;
}

static Py_ssize_t rstripped(const Text *t) {
    Py_ssize_t n = t->n;
    while (n > 0 && Py_UNICODE_ISSPACE(CH(t, n - 1)))
        n--;
    return n;
}

/* one_sentence(text), else SentenceSplitter.sentences(text). */
static PyObject *sentences_of(PyObject *text, PyObject *memo, PyObject *decide, Py_ssize_t **buf, Py_ssize_t *cap) {
    Text t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)};
    Py_ssize_t stripped = rstripped(&t), candidates = 0;
    for (Py_ssize_t i = 0; i + 1 < stripped && !candidates; i++)
        candidates = is_sent_end(CH(&t, i));
    if (!candidates) {
        if (stripped == 0)
            return PyList_New(0);
        PyObject *whole = PyUnicode_Substring(text, 0, stripped);
        PyObject *out = whole == NULL ? NULL : PyList_New(1);
        if (out == NULL)
            Py_XDECREF(whole);
        else
            PyList_SET_ITEM(out, 0, whole);
        return out;
    }
    Py_ssize_t n = 0;
    if (slices_of(text, &t, stripped, memo, decide, buf, &n, cap) < 0)
        return NULL;
    return realigned(text, &t, *buf, n);
}

static PyObject *sentences_many(PyObject *self, PyObject *args) {
    PyObject *texts, *memo, *decide;
    if (!PyArg_ParseTuple(args, "O!O!O", &PyList_Type, &texts, &PyDict_Type, &memo, &decide))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(texts), cap = 0;
    Py_ssize_t *buf = NULL;
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *text = PyList_GET_ITEM(texts, i);
        if (require_str(text, "texts must be str") < 0) {
            Py_CLEAR(out);
            break;
        }
        Py_INCREF(text); /* decide() runs Python code that could drop the list's reference */
        PyObject *sentences = sentences_of(text, memo, decide, &buf, &cap);
        Py_DECREF(text);
        if (sentences == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, sentences);
    }
    PyMem_Free(buf);
    return out;
}

static PyMethodDef methods[] = {
    {"sentences_many", sentences_many, METH_VARARGS,
     "sentences_many(texts, memo, decide) -> list of each text's Punkt sentences (NLTK 3.9.1)."},
    {"lookup_many", lookup_many, METH_VARARGS, "lookup_many(lists, mapping) -> [[mapping[x] for x in xs] for xs in lists]."},
    {"join_many", join_many, METH_VARARGS, "join_many(lists, codes) -> [b''.join(codes[x] for x in xs) for xs in lists]."},
    {"concat_many", concat_many, METH_VARARGS, "concat_many(lists, mapping) -> [[y for x in xs for y in mapping[x]] for xs in lists]."},
    {"missing_many", missing_many, METH_VARARGS, "missing_many(lists, mapping) -> {x for xs in lists for x in xs if x not in mapping}."},
    {"analyse_many", analyse_many, METH_VARARGS, "analyse_many(lists, info) -> (stems, stem ids, packed codes) of each list."},
    {"inert_many", inert_many, METH_VARARGS, "inert_many(chunks) -> per chunk True/False (treebank.is_inert) or None (undecided)."},
    {"plan_sentences", plan_sentences, METH_VARARGS,
     "plan_sentences(sentences, chunks, tails, holes=False) -> (tokens|None|False (holes: pieces instead of None) "
     "per sentence, missing chunks, missing tails)."},
    {"fill_plans", fill_plans, METH_VARARGS, "fill_plans(plans, chunks, tails) -> each plan's tokens (its holes filled)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_text_c", "NLTK 3.9.1 Punkt sentence spans and table lookups in C.", -1, methods,
    NULL, NULL, NULL, NULL,
};

/* API names what this build offers; averitec_tools.metrics.text_accel uses a build only when it
 * expects this value (a stale build left in place is never used). */
PyMODINIT_FUNC PyInit__text_c(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "API", 7) < 0)
        Py_CLEAR(m);
    return m;
}
