/* Part of the optional _text_c extension: the Treebank chunk tokenizer's common case in C.
 *
 * ``plan_simple(sentences, firsts, middles, tails)`` follows ChunkTokenizer.tokenize_many
 * (averitec_tools/metrics/treebank.py) for a sentence of chunks separated by single spaces
 * (no other whitespace, none at either end): its first chunk, its middle chunks, and its
 * tail (the last chunk not made of closing quotes and brackets only, and those after it).
 * Each sentence's tokens are firsts[first] + middles[each middle] + tails[(1, tail)] -- the
 * remembered tokens the Python rules computed -- or, when one of them is not remembered yet,
 * None (and the missing chunks and tails are reported); False: not the common case (the
 * Python planner takes it). tests/test_tokenize.py checks it against the pure-Python path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "_text_c.h"

/* _CLOSING_ONLY: ] ) } > " ' » ” ’ */
static int is_closing(Py_UCS4 c) {
    return c == ']' || c == ')' || c == '}' || c == '>' || c == '"' || c == '\'' || c == 0xbb || c == 0x201d ||
           c == 0x2019;
}

/* Whether the sentence is the common case: non-empty, single spaces only, none at either end. */
static int simple(int kind, const void *data, Py_ssize_t n) {
    if (n == 0 || PyUnicode_READ(kind, data, 0) == ' ' || PyUnicode_READ(kind, data, n - 1) == ' ')
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c == ' ' ? PyUnicode_READ(kind, data, i + 1) == ' ' : Py_UNICODE_ISSPACE(c))
            return 0;
    }
    return 1;
}

/* Extend tokens by memo[key] (a tuple); 1: found, 0: missing (key added to missing), -1: error. */
static int extend(PyObject *tokens, PyObject *memo, PyObject *key, PyObject *missing, PyObject *report) {
    PyObject *found = PyDict_GetItemWithError(memo, key);
    if (found == NULL)
        return PyErr_Occurred() ? -1 : (PySet_Add(missing, report) < 0 ? -1 : 0);
    if (tokens == NULL)
        return 1;
    Py_ssize_t at = PyList_GET_SIZE(tokens);
    return PyList_SetSlice(tokens, at, at, found) < 0 ? -1 : 1;
}

typedef struct {
    PyObject *firsts, *middles, *tails;        /* the memos */
    PyObject *miss_first, *miss_mid, *miss_tail; /* sets */
} Memos;

/* The tail key (1, tail) and what a missing tail reports: (tail, one_chunk). */
static int tail_lookup(PyObject *tokens, PyObject *sentence, Py_ssize_t start, int one_chunk, Memos *m) {
    PyObject *tail = PyUnicode_Substring(sentence, start, PyUnicode_GET_LENGTH(sentence));
    PyObject *key = tail == NULL ? NULL : Py_BuildValue("(iO)", 1, tail);
    PyObject *report = key == NULL ? NULL : Py_BuildValue("(OO)", tail, one_chunk ? Py_True : Py_False);
    int got = report == NULL ? -1 : extend(tokens, m->tails, key, m->miss_tail, report);
    Py_XDECREF(tail);
    Py_XDECREF(key);
    Py_XDECREF(report);
    return got;
}

/* The chunk of sentence[a:b] looked up in memo (missing ones go to missing). */
static int chunk_lookup(PyObject *tokens, PyObject *sentence, Py_ssize_t a, Py_ssize_t b, PyObject *memo,
                        PyObject *missing) {
    PyObject *chunk = PyUnicode_Substring(sentence, a, b);
    if (chunk == NULL)
        return -1;
    int got = extend(tokens, memo, chunk, missing, chunk);
    Py_DECREF(chunk);
    return got;
}

/* One sentence: a list of tokens, None (something missing) or False (not the common case). */
static PyObject *plan_one(PyObject *sentence, Memos *m) {
    int kind = PyUnicode_KIND(sentence);
    const void *data = PyUnicode_DATA(sentence);
    Py_ssize_t n = PyUnicode_GET_LENGTH(sentence);
    if (!simple(kind, data, n))
        Py_RETURN_FALSE;
    /* the tail starts after the last space followed by a chunk that is not closers only */
    Py_ssize_t tail = n, first_end = n, chunk_end = n;
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        if (PyUnicode_READ(kind, data, i) != ' ')
            continue;
        int closing = 1;
        for (Py_ssize_t k = i + 1; k < chunk_end && closing; k++)
            closing = is_closing(PyUnicode_READ(kind, data, k));
        if (!closing && tail == n)
            tail = i + 1;
        chunk_end = i;
        first_end = i;
    }
    if (tail == n) /* one chunk, or all after the first are closers: the whole sentence is its tail */
        Py_RETURN_FALSE;
    int one_chunk = 1;
    for (Py_ssize_t k = tail; k < n && one_chunk; k++)
        one_chunk = PyUnicode_READ(kind, data, k) != ' ';
    PyObject *tokens = PyList_New(0);
    int complete = 1, got;
    if (tokens == NULL)
        return NULL;
    got = chunk_lookup(tokens, sentence, 0, first_end, m->firsts, m->miss_first);
    for (Py_ssize_t a = first_end + 1, b; got >= 0 && a < tail; a = b + 1) {
        complete &= got;
        for (b = a; PyUnicode_READ(kind, data, b) != ' '; b++)
            ;
        got = chunk_lookup(complete ? tokens : NULL, sentence, a, b, m->middles, m->miss_mid);
    }
    complete &= got;
    if (got >= 0) {
        got = tail_lookup(complete ? tokens : NULL, sentence, tail, one_chunk, m);
        complete &= got;
    }
    if (got < 0 || !complete) {
        Py_DECREF(tokens);
        if (got < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    return tokens;
}

PyObject *plan_simple(PyObject *self, PyObject *args) {
    PyObject *sentences;
    Memos m = {NULL, NULL, NULL, NULL, NULL, NULL};
    if (!PyArg_ParseTuple(args, "O!O!O!O!", &PyList_Type, &sentences, &PyDict_Type, &m.firsts, &PyDict_Type, &m.middles,
                          &PyDict_Type, &m.tails))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(sentences);
    PyObject *out = PyList_New(n), *result = NULL;
    m.miss_first = PySet_New(NULL);
    m.miss_mid = PySet_New(NULL);
    m.miss_tail = PySet_New(NULL);
    if (out == NULL || m.miss_first == NULL || m.miss_mid == NULL || m.miss_tail == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *sentence = PyList_GET_ITEM(sentences, i);
        if (!PyUnicode_Check(sentence)) {
            PyErr_SetString(PyExc_TypeError, "sentences must be str");
            goto done;
        }
        PyObject *planned = plan_one(sentence, &m);
        if (planned == NULL)
            goto done;
        PyList_SET_ITEM(out, i, planned);
    }
    result = Py_BuildValue("(OOOO)", out, m.miss_first, m.miss_mid, m.miss_tail);
done:
    Py_XDECREF(out);
    Py_XDECREF(m.miss_first);
    Py_XDECREF(m.miss_mid);
    Py_XDECREF(m.miss_tail);
    return result;
}
